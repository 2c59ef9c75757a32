"""Kimi CLI 1.51.0, run for real against the loopback Chat Completions mock.

A genuine session (two prompts, each with a ``Shell`` call the CLI really runs, the second
a ``-r`` resume) is generated; it and the golden ones are converted and resumed. "Same
history" compares the first request of each resume. A session the client silently starts
over from (no ``kimi.json`` entry: it empties the file and exits 0) must be reported as
not resumed.

CI cost: about ten kimi runs of 5-15 s each (two claude runs besides).
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
from txcodec.resume_check import kimi_cli as kimi
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

GOLDEN_FILE = GOLDEN / "kimi_cli" / "tool_call_resumed" / "context.jsonl"
HANDWRITTEN = GOLDEN / "kimi_cli" / "handwritten" / "context.jsonl"
TIMEOUT = 240


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        kimi.kimi_binary()
    except kimi.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("kimi") / "genuine" / "context.jsonl"
    out.parent.mkdir()
    with kimi.Kimi() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.kimi(
            "read hello.txt",
            [tool_call("Shell", {"command": "cat hello.txt"}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr
        (path,) = box.sessions()
        # the folder is the md5 of the work folder, registered in kimi.json; stderr names the id
        from txcodec.harnesses.kimi_cli.store import work_dir_hash

        assert path.parent.parent.name == work_dir_hash(str(box.cwd))
        assert f"kimi -r {path.parent.name}" in first.stdout + first.stderr
        registry = json.loads((box.store / "kimi.json").read_text())
        assert registry["work_dirs"] == [{"path": str(box.cwd), "kaos": "local", "last_session_id": path.parent.name}]
        assert {p.name for p in path.parent.iterdir()} == {"context.jsonl", "wire.jsonl", "state.json"}
        second = box.kimi(
            "count the words",
            [tool_call("Shell", {"command": "wc -w hello.txt"}, id="call_mock_2"), text("Two.")],
            resume=path.parent.name,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr
        # the resume sent the first prompt's history and the file's own system prompt, verbatim
        body = second.bodies[0]
        assert view(kimi.history_sent(body, "count the words")) == view(api.to_common(api.load(path)).messages[:4])
        first_line = json.loads(path.read_bytes().split(b"\n", 1)[0])
        assert first_line["role"] == "_system_prompt" and body["messages"][0] == {
            "role": "system",
            "content": first_line["content"],
        }
        out.write_bytes(path.read_bytes())
    return out


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    out = tmp / target / Path(written.main).name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_session_reads_and_roundtrips(genuine):
    session = api.load(genuine)
    assert session.harness == "kimi_cli" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    results = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert [r.content[-1].text for r in results] == ["hello world\n", "2 hello.txt\n"]


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    copies = [
        _convert(genuine, "kimi_cli", "kimi_cli", tmp_path / "g"),
        _convert(GOLDEN_FILE, "kimi_cli", "kimi_cli", tmp_path / "f"),
        _convert(HANDWRITTEN, "kimi_cli", "kimi_cli", tmp_path / "h"),
    ]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(
                lambda p: kimi.check_resume(p, timeout=TIMEOUT),
                [genuine, copies[0], GOLDEN_FILE, copies[1], HANDWRITTEN, copies[2]],
            )
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    for i, source in enumerate([genuine, GOLDEN_FILE, HANDWRITTEN]):
        expected = view(api.to_common(api.load(source)).messages)
        assert view(reports[2 * i + 1].sent) == view(reports[2 * i].sent) == expected
    assert [r for r, _ in view(reports[0].sent)] == ["user", "assistant", "user", "assistant"] * 2
    assert reports[0].client == "kimi 1.51.0"


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = view(api.to_common(api.load(genuine)).messages)
    claude_file = _convert(genuine, "kimi_cli", "claude_code", tmp_path)
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
    # Claude Code -> Kimi CLI: the Claude file just made, written back, resumes in kimi
    back = _convert(claude_file, "claude_code", "kimi_cli", tmp_path / "back")
    report = kimi.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == expected


def test_installed_session_resumes_with_the_printed_command():
    expected = view(api.to_common(api.load(GOLDEN_FILE)).messages)
    with kimi.Kimi() as box:
        env = {"HOME": str(box.home), "KIMI_SHARE_DIR": None}
        result = CliRunner().invoke(
            main, ["convert", "--to", "kimi_cli", "--install", "--cwd", str(box.cwd), str(GOLDEN_FILE)], env=env
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        session = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && kimi -r {session}"
        run = box.kimi("continue", resume=session, timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr
        assert view(kimi.history_sent(run.bodies[0], "continue")) == expected


def _check_resume_cli(path: Path, *options: str) -> subprocess.CompletedProcess:
    code = "from txcodec.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "check-resume", str(path), *options],
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT,
    )


def test_check_resume_cli_on_the_handwritten_file():
    """The guide's 4-line hand-written file (no ``_system_prompt``, a folder name that is
    not a UUID) resumes through the CLI."""
    good = _check_resume_cli(HANDWRITTEN, "--harness", "kimi_cli")
    assert good.returncode == 0 and good.stdout.rstrip().endswith("\nresumed"), (good.stdout, good.stderr[-2000:])
    assert "tool_result call_h1" in good.stdout


def test_an_unregistered_work_folder_is_a_silent_new_session():
    """Without its ``kimi.json`` entry, kimi 1.51.0 empties the context file, starts a new
    session and exits 0: check_resume must say NOT resumed (the install registers it)."""
    with kimi.Kimi() as box:
        from txcodec.harnesses.kimi_cli.store import install_files_for

        folder = install_files_for(
            box.store, str(box.cwd), "hw-kimi-1", {"context.jsonl": HANDWRITTEN.read_bytes()}, register_dir=False
        )
        run = box.kimi("continue", resume="hw-kimi-1", timeout=TIMEOUT)
        assert run.exit_code == 0 and kimi.history_sent(run.bodies[0], "continue") == []
        assert b"HW question" not in (folder / "context.jsonl").read_bytes()  # the file was emptied
    report = kimi.check_resume(HANDWRITTEN, register=False, timeout=TIMEOUT)
    assert report.exit_code == 0 and not report.resumed and not report.sent
    assert any("new session" in r for r in report.rejected)
