"""``show --follow`` on a session a real client writes in the background against the mock
model (``claude`` 2.1.332 and the Messages API, ``codex`` 0.171 and the Responses API): each
line it writes is read within a second, and the messages printed are, in order, the ones
``show`` prints afterwards (docs/live.md)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest

from txcodec import api
from txcodec.export import terminal
from txcodec.live import Follower
from txcodec.live import Update
from txcodec.resume_check.claude_code import munge_cwd
from txcodec.resume_check.claude_code import run_claude
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.anthropic import tool_use
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client


def _claude(tmp_path: Path):
    """Start ``claude -p`` in the background; the session file it writes, and the thread."""
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    session_id = str(uuid.uuid4())
    script = [
        tool_use("Bash", {"command": "sleep 1; echo one"}, "toolu_live_1", say="First step."),
        tool_use("Bash", {"command": "sleep 1; echo two"}, "toolu_live_2", say="Second step."),
        text("Both steps done."),
    ]
    path = home / ".claude" / "projects" / munge_cwd(str(cwd.resolve())) / f"{session_id}.jsonl"
    result: list = []

    def run() -> None:
        with MockServer(AnthropicMock(script, strict=False)) as server:
            ran = run_claude(["-p", "do two steps", "--session-id", session_id], cwd, home, server, timeout=90)
        result.append((ran.exit_code, ran.stderr))

    return (lambda: path), run, result, "Both steps done.", lambda: None


def _codex(tmp_path: Path):
    """Start ``codex exec`` in the background; its rollout (found once written), and the thread."""
    from txcodec.resume_check.codex import Sandbox
    from txcodec.resume_check.mock import responses as r

    if find_client("codex") is None:
        pytest.fail("the codex CLI is missing: npm install --prefix clients (see clients/package.json)")
    box = Sandbox(root=tmp_path / "codex")
    box.__enter__()
    script = [
        [r.function_call("exec_command", {"cmd": "sleep 1; echo one"}, "call_live_1")],
        [r.function_call("exec_command", {"cmd": "sleep 1; echo two"}, "call_live_2")],
        [r.text("Both steps done.")],
    ]
    result: list = []

    def run() -> None:
        ran = box.run(["do two steps"], script, timeout=120)
        result.append((ran.exit_code, ran.stderr))

    def path() -> Path | None:
        found = sorted((box.home / "sessions").rglob("rollout-*.jsonl"))
        return found[0] if found else None

    return path, run, result, "Both steps done.", lambda: box.__exit__(None, None, None)


def _gemini(tmp_path: Path):
    """Start ``gemini -p`` in the background; its session file (the one holding the prompt)."""
    from txcodec.resume_check import gemini_cli as g

    if find_client("gemini") is None:
        pytest.fail("the gemini CLI is missing: npm install --prefix clients (see clients/package.json)")
    box = g.Sandbox(root=tmp_path / "gemini")
    box.__enter__()
    script = [
        g.call("run_shell_command", {"command": "sleep 1; echo one"}, say="First step."),
        g.call("run_shell_command", {"command": "sleep 1; echo two"}, say="Second step."),
        g.text("Both steps done."),
    ]
    result: list = []

    def run() -> None:
        ran = box.run("do two steps", script=script, timeout=120)
        result.append((ran.exit_code, ran.stderr))

    def path() -> Path | None:
        for found in sorted(box.gemini_home.rglob("session-*.jsonl")):
            try:
                if b"do two steps" in found.read_bytes():
                    return found
            except OSError:
                continue
        return None

    return path, run, result, "Both steps done.", lambda: box.__exit__(None, None, None)


@pytest.mark.parametrize("client", [_claude, _codex, _gemini], ids=["claude", "codex", "gemini"])
def test_a_real_client_writing_in_the_background_is_followed_within_a_second(tmp_path: Path, client) -> None:
    find_path, run, result, last_words, cleanup = client(tmp_path)
    try:
        _follow_while_it_runs(find_path, run, result, last_words)
    finally:
        cleanup()


def _follow_while_it_runs(find_path, run, result, last_words) -> None:
    seen: dict[int, float] = {}  # line end offset -> when the file first held it
    polls: list[tuple[float, int]] = []  # when the follower had read up to an offset
    done = threading.Event()
    where: list[Path] = []

    def watch() -> None:  # when each whole line appears, looked at every 10 ms
        while not done.is_set():
            if not where:
                found = find_path()
                if found is not None and found.exists():
                    where.append(found)
                time.sleep(0.01)
                continue
            data = where[0].read_bytes()
            end = data.rfind(b"\n") + 1
            if end and end not in seen:
                seen[end] = time.monotonic()
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    client_thread = threading.Thread(target=run)
    client_thread.start()
    while not where and client_thread.is_alive():
        time.sleep(0.02)
    assert where, f"the client wrote no session: {result}"
    path = where[0]
    # a window of one message: what show --follow does with its 64, on a session this short
    follower, view, out = Follower(path, window=1), terminal.FollowView(), []
    while client_thread.is_alive():
        events = follower.poll()
        polls.append((time.monotonic(), follower.offset))
        out += [t for e in events for _, t in view.lines(e)]
        time.sleep(0.2)
    client_thread.join()
    time.sleep(0.3)
    out += [t for e in follower.poll() for _, t in view.lines(e)]
    polls.append((time.monotonic(), follower.offset))
    done.set()
    watcher.join()

    assert result and result[0][0] == 0, result and result[0][1][-2000:]
    # the session was written over time, not at once (on a loaded machine the 10 ms look can
    # miss a state or two of a fast client: two states are what the check needs)
    assert len(seen) >= 2
    for end, when in seen.items():
        read = min((t for t, offset in polls if offset >= end), default=None)
        assert read is not None and read - when < 1.0, f"line ending at {end} read {read and read - when:.2f}s late"
    shown = terminal.render(api.to_common(api.load(path))).splitlines()
    assert out[1:] == shown[1:]
    assert not [t for t in out if t.startswith("⚠")]
    assert f"  {last_words}" in out


def test_opencode_s_database_followed_read_only_while_it_runs(tmp_path: Path) -> None:
    """opencode keeps its sessions in one SQLite database it rewrites as it goes: the follow
    re-reads the session when the database (or its WAL) changes, prints each message within
    a second of a reader seeing it, and changes nothing in the database."""
    from txcodec.core.errors import TxcodecError
    from txcodec.resume_check import opencode
    from txcodec.resume_check.mock.openai_chat import Call
    from txcodec.resume_check.mock.openai_chat import Reply

    if find_client("opencode") is None:
        pytest.fail("the opencode CLI is missing: npm install --prefix clients (see clients/package.json)")
    script = [
        Reply(calls=[Call("call_live_1", "bash", {"command": "sleep 1; echo one", "description": "run"})]),
        Reply(calls=[Call("call_live_2", "bash", {"command": "sleep 1; echo two", "description": "run"})]),
        Reply(text="Both steps done."),
    ]
    with opencode.Opencode() as box:
        result: list = []
        client = threading.Thread(target=lambda: result.append(box.run("do two steps", script, timeout=300)))
        client.start()

        def sessions() -> list[str]:
            try:
                return box.sessions()
            except TxcodecError:  # the client is still making its tables
                return []

        while client.is_alive() and not sessions():
            time.sleep(0.05)
        [sid] = sessions()
        path = Path(f"{box.database}#{sid}")
        seen: dict[int, float] = {}  # message count -> when a reader of its own first saw it
        shown: dict[int, float] = {}  # message count -> when the follow first had it
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                try:
                    n = len(api.to_common(api.load(path, "opencode")).messages)
                except Exception:  # noqa: BLE001 - mid-write: the next look reads it
                    n = 0
                seen.setdefault(n, time.monotonic())
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()
        follower, view, out = Follower(path, "opencode"), terminal.FollowView(), []
        assert not follower.tails
        while client.is_alive():
            for event in follower.poll():
                out += [t for _, t in view.lines(event)]
                if type(event) is Update:
                    shown.setdefault(len(event.conversation.messages), time.monotonic())
            time.sleep(0.2)
        client.join()
        done.set()
        watcher.join()
        time.sleep(0.3)

        def files() -> list:
            # the database and its WAL as they are (a reader of a WAL database marks its read
            # in the -shm shared memory, which SQLite keeps for every connection)
            return [
                (p.name, p.stat().st_size, p.stat().st_mtime_ns if not p.name.endswith("-shm") else None)
                for p in sorted(box.data.glob("*.db*"))
            ]

        stamp = files()
        for event in follower.poll():
            out += [t for _, t in view.lines(event)]
        api.to_common(api.load(path, "opencode"))
        assert files() == stamp  # nothing written, no journal nor WAL made

    assert result and result[0].exit_code == 0, result and result[0].stderr[-2000:]
    assert len([n for n in seen if n]) >= 3  # written over time
    for n, when in seen.items():
        if n == 0:
            continue
        got = min((t for m, t in shown.items() if m >= n), default=None)
        assert got is not None and got - when < 1.0, f"{n} messages shown {got and got - when:.2f}s late"
    assert "  Both steps done." in out
    assert not [t for t in out if t.startswith("⚠")]
