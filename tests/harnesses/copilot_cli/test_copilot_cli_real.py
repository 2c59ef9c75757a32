"""GitHub Copilot CLI 1.0.102, run for real against the loopback Chat Completions mock.

A genuine session (two prompts, each with a ``bash`` call the CLI really runs, the second
a ``--resume``) is generated; it and the golden one are converted and resumed. "Same
history" compares the first request of each resume. A file the client silently starts
over from (exit 0, no history sent) must be reported as not resumed.

CI cost: about ten copilot runs of 3-10 s each (one claude, one codex run besides); the
first run of a fresh sandbox unpacks the CLI (about 1 s).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.chat_views import view
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.resume_check import copilot_cli as copilot
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

GOLDEN_FILE = GOLDEN / "copilot_cli" / "tool_call_resumed" / "events.jsonl"
HANDWRITTEN = GOLDEN / "copilot_cli" / "handwritten" / "events.jsonl"
TIMEOUT = 180


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        copilot.copilot_binary()
    except copilot.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("copilot") / "events.jsonl"
    with copilot.Copilot() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.copilot(
            "read hello.txt",
            [
                tool_call("bash", {"command": "cat hello.txt", "description": "show"}, say="Reading."),
                text("It says hello world."),
            ],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr
        (path,) = box.sessions()
        # the last stdout line names the session (docs/copilot_cli.md#how-the-real-client-is-driven)
        assert json.loads(first.stdout.strip().splitlines()[-1])["sessionId"] == path.parent.name
        second = box.copilot(
            "count the words",
            [tool_call("bash", {"command": "wc -w hello.txt"}, id="call_mock_2"), text("Two.")],
            resume=path.parent.name,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr
        # the resume sent the first prompt's history, a <current_datetime> block before each user turn
        sent = copilot.sent_history(second, "count the words")
        assert view(sent) == view(api.to_common(api.load(path)).messages[:4])
        assert second.bodies[0]["messages"][1]["content"].startswith("<current_datetime>")
        out.write_bytes(path.read_bytes())
    return out


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    out = tmp / f"{target}-{Path(written.main).name}"
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_session_reads_with_both_tool_calls(genuine):
    session = api.load(genuine)
    assert session.harness == "copilot_cli" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    kinds = [e["type"] for e in map(json.loads, genuine.read_bytes().splitlines())]
    assert kinds.count("session.resume") == 1 and kinds.count("session.usage_record") == 4
    results = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert [r.content.split("\n")[0] for r in results] == ["hello world", "2 hello.txt"]
    assert all(r.is_error is False for r in results)
    assert sum(1 for m in c.messages if m.usage) == 4


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    (tmp_path / "genuine").mkdir()
    copies = [
        _convert(genuine, "copilot_cli", "copilot_cli", tmp_path / "genuine"),
        _convert(GOLDEN_FILE, "copilot_cli", "copilot_cli", tmp_path),
    ]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda p: copilot.check_resume(p, timeout=TIMEOUT), [genuine, copies[0], GOLDEN_FILE, copies[1]])
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    assert view(reports[1].sent) == view(reports[0].sent) == view(api.to_common(api.load(genuine)).messages)
    assert view(reports[3].sent) == view(reports[2].sent) == view(api.to_common(api.load(GOLDEN_FILE)).messages)
    assert [r for r, _ in view(reports[0].sent)] == ["user", "assistant", "user", "assistant"] * 2


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = view(api.to_common(api.load(genuine)).messages)
    claude_file = _convert(genuine, "copilot_cli", "claude_code", tmp_path)
    report = claude.check_resume(claude_file)
    assert report.resumed, report.stderr
    sent = report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(sent)
    ]
    assert [m for m in claude_view if m[1]] == expected
    # Claude Code -> Copilot CLI: the Claude file just made, written back, resumes in copilot
    back = _convert(claude_file, "claude_code", "copilot_cli", tmp_path)
    report = copilot.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == expected


def test_to_codex_resumes_in_codex(genuine, tmp_path):
    from txcodec.resume_check import codex

    codex_file = _convert(genuine, "copilot_cli", "codex", tmp_path)
    report = codex.check_resume(codex_file, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    sent = codex.comparable(report.sent)
    expected = codex.comparable(api.to_common(api.load(genuine)).messages)

    def texts(view_):  # the tools are renamed to codex's own (write:tool-mapped): compare texts and outputs
        return [(role, [b for b in blocks if b[0] in ("text", "output")]) for role, blocks in view_]

    assert texts(sent) == texts(expected)
    assert sum(b[0] == "call" for _, blocks in sent for b in blocks) == 2


def test_installed_session_resumes_with_the_printed_command():
    expected = view(api.to_common(api.load(GOLDEN_FILE)).messages)
    with copilot.Copilot() as box:
        env = {"HOME": str(box.home), "COPILOT_HOME": None}
        result = CliRunner().invoke(
            main, ["convert", "--to", "copilot_cli", "--install", "--cwd", str(box.cwd), str(GOLDEN_FILE)], env=env
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        session = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && copilot --resume {session}"
        assert (box.store / "session-state" / session / "events.jsonl").is_file()
        run = box.copilot("continue", resume=session, timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr
        assert view(copilot.sent_history(run, "continue")) == expected


def _check_resume_cli(path: Path, *options: str) -> subprocess.CompletedProcess:
    code = "from txcodec.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "check-resume", str(path), *options],
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT,
    )


def test_check_resume_cli_and_a_silent_new_session(tmp_path):
    """The guide's 5-line hand-written file resumes; the same file with its message events
    renamed is accepted by the client with exit 0, which then starts over: NOT resumed."""
    events = [json.loads(x) for x in HANDWRITTEN.read_bytes().splitlines()]
    for e in events:
        e["type"] = {"user.message": "user.note", "assistant.message": "assistant.note"}.get(e["type"], e["type"])
    silent = tmp_path / "events.jsonl"
    silent.write_text("".join(json.dumps(e) + "\n" for e in events))
    with ThreadPoolExecutor(2) as pool:
        good, bad = pool.map(lambda p: _check_resume_cli(p, "--harness", "copilot_cli"), [HANDWRITTEN, silent])
    assert good.returncode == 0 and good.stdout.rstrip().endswith("\nresumed"), (good.stdout, good.stderr[-2000:])
    assert "tool_result call_h1" in good.stdout
    assert bad.returncode == 1 and "NOT resumed" in bad.stdout and "new session" in bad.stdout, (
        bad.stdout,
        bad.stderr[-2000:],
    )
