"""The CLI as a user runs it, proven with the real clients (gemini 0.61.0, qwen 0.24.4,
pi 0.73.1 against loopback mocks):

- ``txcodec convert --install`` into a fake HOME, then the printed resume command run
  from the project folder: the client sends the converted history;
- ``txcodec check-resume FILE`` on each harness's golden session: exit 0 and
  "resumed"; on a file the client silently starts over from: exit 1."""

from __future__ import annotations

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
from txcodec.resume_check import gemini_cli as g
from txcodec.resume_check import pi as pi_client
from txcodec.resume_check import qwen_code as qwen_client
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client

SOURCE = GOLDEN / "pi" / "tool_call" / "session.jsonl"
TIMEOUT = 90
CLIENTS = {"gemini_cli": "gemini", "qwen_code": "qwen", "pi": "pi"}


@pytest.fixture(scope="module", autouse=True)
def _clients_installed():
    missing = [name for name in CLIENTS.values() if find_client(name) is None]
    if missing:
        pytest.fail(f"missing clients {missing}: npm install --prefix clients (clients/package.json pins them)")


def _install(target: str, home: Path, cwd: Path) -> str:
    env = {
        "HOME": str(home),
        "GEMINI_CLI_HOME": None,
        "QWEN_HOME": None,
        "QWEN_RUNTIME_DIR": None,
        "PI_CODING_AGENT_DIR": None,
        "PI_CODING_AGENT_SESSION_DIR": None,
    }
    result = CliRunner().invoke(main, ["convert", "--to", target, "--install", "--cwd", str(cwd), str(SOURCE)], env=env)
    assert result.exit_code == 0, result.output
    cd = f"cd {shlex.quote(str(cwd))} && "  # the client runs in the project folder (the box's cwd)
    assert result.stdout.startswith(cd), result.stdout
    return result.stdout.strip().removeprefix(cd)


def _resume(target: str, box, command: str):
    """Run the printed command (its arguments) in the client's sandbox; the history sent."""
    session = command.split()[-1]
    if target == "gemini_cli":
        assert command == f"gemini --resume {session}"
        run = box.run("continue", "--resume", session, timeout=TIMEOUT)
        sent = g.contents_to_messages(run.contents[0] if run.contents else [])
        # the CLI's own turns: the <session_context> it adds, the prompt
        for m in sent:
            m.content = [b for b in m.content if not getattr(b, "text", "").startswith("<session_context>")]
        sent = [m for m in sent if m.content]
        if sent and getattr(sent[-1].content[-1], "text", None) == "continue":
            sent = sent[:-1]
        _startup_file_beside(run, session)
    elif target == "qwen_code":
        assert command == f"qwen --resume {session}"
        run = box.qwen("continue", resume=session, timeout=TIMEOUT)
        sent = qwen_client.history_sent(run.bodies[0], "continue", qwen_client.injected) if run.bodies else []
    else:
        assert command == f"pi --session {session}"
        run = box.pi("continue", session=session, timeout=TIMEOUT)
        sent = pi_client.history_sent(run.bodies[0], "continue") if run.bodies else []
    return run.exit_code, sent, run.stderr


def _startup_file_beside(run, session: str) -> None:
    """The installed file is named after its start (06:32); before it takes that file
    over, gemini records the session's start to ``session-<current minute>-<sid8>.jsonl``:
    a second file holding only metadata and its own ``<session_context>``."""
    files = run.sessions()
    assert len(files) == 2 and all(f.name.endswith(f"-{session[:8]}.jsonl") for f in files), files
    startup = [f for f in files if "continue" not in f.read_text(encoding="utf-8")]
    (startup,) = startup
    conversation = api.to_common(api.load(startup))
    assert conversation.meta.id == session and all(m.meta for m in conversation.messages)


def test_installed_sessions_resume_with_the_printed_command():
    expected = view(api.to_common(api.load(SOURCE)).messages)
    boxes = {"gemini_cli": g.Sandbox(), "qwen_code": qwen_client.Qwen(), "pi": pi_client.Pi()}
    try:
        for box in boxes.values():
            box.__enter__()
        # one after the other: CliRunner's environment is the process's
        commands = {target: _install(target, box.home, box.cwd) for target, box in boxes.items()}
        with ThreadPoolExecutor(3) as pool:
            results = dict(zip(boxes, pool.map(_resume, boxes, boxes.values(), commands.values())))
    finally:
        for box in boxes.values():
            box.__exit__(None, None, None)
    for target, (code, sent, stderr) in results.items():
        assert code == 0, (target, stderr[-2000:])
        assert view(sent) == expected, (target, commands[target])


def _check_resume_cli(path: Path, *options: str) -> subprocess.CompletedProcess:
    code = "from txcodec.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "check-resume", str(path), *options],
        capture_output=True,
        text=True,
        timeout=3 * TIMEOUT,
    )


def test_check_resume_cli_on_each_harness(tmp_path):
    good = [
        next((GOLDEN / "gemini_cli" / "tool_call_resumed").glob("session-*.jsonl")),
        GOLDEN / "qwen_code" / "tool_call_resumed" / "session.jsonl",
        GOLDEN / "pi" / "tool_call" / "session.jsonl",
    ]
    # pi starts over, exit 0, in a file whose first line is not its header
    headless = tmp_path / "headless.jsonl"
    headless.write_bytes(good[2].read_bytes().split(b"\n", 1)[1])
    with ThreadPoolExecutor(4) as pool:
        bad_run = pool.submit(_check_resume_cli, headless, "--harness", "pi")
        runs = list(pool.map(_check_resume_cli, good))
        bad = bad_run.result()
    for path, run in zip(good, runs):
        assert run.returncode == 0 and run.stdout.rstrip().endswith("\nresumed"), (path, run.stdout, run.stderr[-2000:])
        assert "tool_result" in run.stdout  # the history, with the call's result, was sent
    assert bad.returncode == 1 and "NOT resumed" in bad.stdout, (bad.stdout, bad.stderr[-2000:])
