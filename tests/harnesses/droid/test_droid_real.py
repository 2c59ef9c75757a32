"""Factory droid 0.225.2, run for real against the loopback Chat Completions mock.

A genuine session (two prompts with a tool call each, the second an ``exec --fork``) is
generated; it, the golden one and the guide's hand-written one are converted and forked.
"Same history" compares the first request of each fork with what the file reads to (the
``<system-reminder>`` context the client adds afresh on every run aside). A session whose
``session_start`` has no ``owner`` forks silently empty: check_resume must say so.

CI cost: about eight droid runs of 5-15 s each, one claude run.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.chat_views import view
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.core.atomic import install_files
from txcodec.resume_check import droid
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

(GOLDEN_FILE,) = (GOLDEN / "droid" / "tool_call_resumed").glob("*-*.jsonl")
(HANDWRITTEN,) = (GOLDEN / "droid" / "handwritten").glob("*-*.jsonl")
TIMEOUT = 180
FINAL = "Two words."


def make_genuine(out: Path) -> Path:
    with droid.Droid() as box:
        (box.cwd / "a.txt").write_text("hello world\n")
        first = box.exec(
            "read a.txt",
            [tool_call("Read", {"file_path": str(box.cwd / "a.txt")}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr[-2000:]
        (path,) = box.sessions()
        second = box.exec(
            "count the words",
            [
                tool_call(
                    "Execute",
                    {"command": "wc -w a.txt", "riskLevel": "low", "riskLevelReason": "It only reads a file."},
                    id="call_mock_2",
                ),
                text(FINAL),
            ],
            fork=path.stem,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr[-2000:]
        (forked,) = [p for p in box.sessions() if p != path]  # the fork is a new session
        assert FINAL.encode() in forked.read_bytes()
        out.mkdir(parents=True, exist_ok=True)
        (out / forked.name).write_bytes(forked.read_bytes())
        return out / forked.name


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        droid.droid_binary()
    except droid.ClientMissing as exc:
        pytest.fail(str(exc))
    return make_genuine(tmp_path_factory.mktemp("droid"))


def conversation_view(messages):
    """The view without the client's ``<system-reminder>`` context (re-made on each run)."""
    out = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(messages)
    ]
    return [m for m in out if m[1]]


def _expected(path: Path):
    return conversation_view(api.to_common(api.load(path)).messages)


def _convert(path: Path, target: str, tmp: Path, source: str | None = None) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    folder = tmp / f"{target}-out"
    install_files(folder, written.files)
    return folder / written.main


def test_genuine_session_reads_with_both_tool_calls(genuine):
    session = api.load(genuine)
    assert session.harness == "droid" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    results = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert [r.content for r in results][-1].strip().startswith("2")
    assert [m.role for m in c.messages if not m.meta][-8:] == ["user", "assistant", "user", "assistant"] * 2


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    for path in (genuine, _convert(genuine, "droid", tmp_path), GOLDEN_FILE, HANDWRITTEN):
        report = droid.check_resume(path, timeout=TIMEOUT)
        assert report.resumed, (path, report.rejected, report.stderr[-3000:])
        assert conversation_view(report.sent) == _expected(path), path


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = _expected(genuine)
    claude_file = _convert(genuine, "claude_code", tmp_path)
    report = claude.check_resume(claude_file)
    assert report.resumed, report.stderr
    sent = report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    assert conversation_view(sent) == expected
    back = _convert(claude_file, "droid", tmp_path, source="claude_code")
    report = droid.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr[-3000:])
    assert conversation_view(report.sent) == expected


def test_without_owner_the_fork_is_silent_and_reported(tmp_path):
    """``session_start`` without ``owner``: the fork exits 0 and sends only the new prompt;
    check_resume must say NOT resumed."""
    lines = HANDWRITTEN.read_bytes().split(b"\n")
    first = json.loads(lines[0])
    del first["owner"]
    lines[0] = json.dumps(first).encode()
    path = tmp_path / HANDWRITTEN.name
    path.write_bytes(b"\n".join(lines))
    report = droid.check_resume(path, timeout=TIMEOUT)
    assert report.exit_code == 0 and report.requests >= 1 and not conversation_view(report.sent)
    assert not report.resumed and "new session" in " ".join(report.rejected)


def test_installed_session_forks_with_the_printed_command():
    expected = _expected(GOLDEN_FILE)
    with droid.Droid() as box:
        result = CliRunner().invoke(
            main,
            ["convert", "--to", "droid", "--install", "--cwd", str(box.cwd), str(GOLDEN_FILE)],
            env={"HOME": str(box.home)},
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        session = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && droid exec --fork {session}"
        run = box.exec("continue", fork=session, timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr[-2000:]
        assert conversation_view(droid.history_sent(run.bodies[0], "continue")) == expected
