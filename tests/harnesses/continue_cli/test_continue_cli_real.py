"""Continue CLI (``cn``) 1.5.47, run for real against the loopback Chat Completions mock.

A genuine session (two prompts with a tool call each, the second a ``--resume``) is
generated; it and the golden one are converted and resumed. "Same history" compares the
first request of each resume. A file the client silently starts over from (exit 0, no
history sent) must be reported as not resumed.

CI cost: about ten cn runs of 3-6 s each, one claude and one codex run.
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
from txcodec.resume_check import continue_cli as cn
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

GOLDEN_FILE = GOLDEN / "continue_cli" / "tool_call_resumed" / "session.json"
HANDWRITTEN = GOLDEN / "continue_cli" / "handwritten" / "session.json"
TIMEOUT = 120


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    try:
        cn.cn_binary()
    except cn.ClientMissing as exc:
        pytest.fail(str(exc))
    out = tmp_path_factory.mktemp("cn") / "session.json"
    with cn.Continue() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.cn(
            "read hello.txt",
            [tool_call("Read", {"filepath": "hello.txt"}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr
        (path,) = box.sessions()
        second = box.cn(
            "count the words",
            [tool_call("Bash", {"command": "wc -w hello.txt"}, id="call_mock_2"), text("Two.")],
            resume=True,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr
        assert box.sessions() == [path]  # --resume continued the same file
        sent = cn.history_sent(second.bodies[0], "count the words")
        assert view(sent) == view(api.to_common(api.load(path)).messages[:4])
        index = json.loads((box.store / "sessions" / "sessions.json").read_text())
        assert [e["sessionId"] for e in index] == [path.stem]
        out.write_bytes(path.read_bytes())
    return out


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    out = tmp / f"{target}-{Path(written.main).name}"
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_session_reads_with_both_tool_calls(genuine):
    session = api.load(genuine)
    assert session.harness == "continue_cli" and session.dump() == genuine.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    results = [b for m in c.messages for b in m.content if type(b).__name__ == "ToolResult"]
    assert [r.content for r in results] == ["Content of hello.txt:\nhello world\n", "2 hello.txt\n"]
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2


def test_roundtrip_resumes_with_the_same_history(genuine, tmp_path):
    (tmp_path / "g").mkdir()
    copies = [
        _convert(genuine, "continue_cli", "continue_cli", tmp_path / "g"),
        _convert(GOLDEN_FILE, "continue_cli", "continue_cli", tmp_path),
    ]
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda p: cn.check_resume(p, timeout=TIMEOUT), [genuine, copies[0], GOLDEN_FILE, copies[1]])
        )
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    assert view(reports[1].sent) == view(reports[0].sent) == view(api.to_common(api.load(genuine)).messages)
    assert view(reports[3].sent) == view(reports[2].sent) == view(api.to_common(api.load(GOLDEN_FILE)).messages)


def test_to_claude_and_back_resume_with_the_history_sent(genuine, tmp_path):
    from txcodec.resume_check import claude_code as claude

    expected = view(api.to_common(api.load(genuine)).messages)
    claude_file = _convert(genuine, "continue_cli", "claude_code", tmp_path)
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
    back = _convert(claude_file, "claude_code", "continue_cli", tmp_path)
    report = cn.check_resume(back, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == expected


def test_to_codex_resumes_in_codex(genuine, tmp_path):
    from txcodec.resume_check import codex

    codex_file = _convert(genuine, "continue_cli", "codex", tmp_path)
    report = codex.check_resume(codex_file, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    sent = codex.comparable(report.sent)
    expected = codex.comparable(api.to_common(api.load(genuine)).messages)

    def texts(view_):  # tool names may be mapped to codex's own: compare texts and outputs
        return [(role, [b for b in blocks if b[0] in ("text", "output")]) for role, blocks in view_]

    assert texts(sent) == texts(expected)
    assert sum(b[0] == "call" for _, blocks in sent for b in blocks) == 2


def test_installed_session_resumes_with_the_printed_command():
    """``--install`` prints ``cn --fork <id>`` (bound to the id, whatever else is in the
    folder); ``cn --resume`` also takes it, as install made it the newest file."""
    expected = view(api.to_common(api.load(GOLDEN_FILE)).messages)
    with cn.Continue() as box:
        env = {"HOME": str(box.home), "CONTINUE_GLOBAL_DIR": None}
        result = CliRunner().invoke(
            main, ["convert", "--to", "continue_cli", "--install", "--cwd", str(box.cwd), str(GOLDEN_FILE)], env=env
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        session = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && cn --fork {session}"
        assert (box.store / "sessions" / f"{session}.json").is_file()
        fork = box.cn("continue", fork=session, timeout=TIMEOUT)
        assert fork.exit_code == 0, fork.stderr
        assert view(cn.history_sent(fork.bodies[0], "continue")) == expected
        assert len(box.sessions()) == 2  # the fork is a new session beside the installed one


def _check_resume_cli(path: Path, *options: str) -> subprocess.CompletedProcess:
    code = "from txcodec.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "check-resume", str(path), *options],
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT,
    )


def test_client_facts_and_a_silent_new_session(tmp_path):
    """The guide's hand-written file resumes; an errored tool state is sent like a done one;
    a call without a state is sent without its answer (why the writer answers it); a file
    whose items are all ``system`` is accepted with exit 0 and no history: NOT resumed."""
    hw = json.loads(HANDWRITTEN.read_bytes())
    errored = json.loads(json.dumps(hw))
    errored["history"][1]["toolCallStates"][0]["status"] = "errored"
    stateless = json.loads(json.dumps(hw))
    del stateless["history"][1]["toolCallStates"]
    silent = json.loads(json.dumps(hw))
    for item in silent["history"]:
        item["message"]["role"] = "system"
        item.pop("toolCallStates", None)
    files = []
    for name, value in (("errored", errored), ("stateless", stateless), ("silent", silent)):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(value))
    with ThreadPoolExecutor(4) as pool:
        good = pool.submit(_check_resume_cli, HANDWRITTEN)
        errored_report, stateless_report = pool.map(lambda p: cn.check_resume(p, timeout=TIMEOUT), files[:2])
        bad = pool.submit(_check_resume_cli, files[2], "--harness", "continue_cli")
        good, bad = good.result(), bad.result()
    assert good.returncode == 0 and good.stdout.rstrip().endswith("\nresumed"), (good.stdout, good.stderr[-2000:])
    assert "tool_result call_h1" in good.stdout
    assert errored_report.resumed and ("tool_result", "call_h1", "HW a.txt") in view(errored_report.sent)[2][1]
    assert not stateless_report.resumed and "without a tool message" in " ".join(stateless_report.rejected)
    assert bad.returncode == 1 and "NOT resumed" in bad.stdout and "new session" in bad.stdout, (
        bad.stdout,
        bad.stderr[-2000:],
    )
