"""``show --follow`` on a session the real ``claude`` (2.1.332) writes in the background
against the mock Messages API: each line it writes is read within a second, and the
messages printed are, in order, the ones ``show`` prints afterwards (docs/live.md)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest

from txcodec import api
from txcodec.export import terminal
from txcodec.live import Follower
from txcodec.resume_check.claude_code import munge_cwd
from txcodec.resume_check.claude_code import run_claude
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.anthropic import tool_use
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client


def test_claude_writing_in_the_background_is_followed_within_a_second(tmp_path: Path) -> None:
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
    seen: dict[int, float] = {}  # line end offset -> when the file first held it
    polls: list[tuple[float, int]] = []  # when the follower had read up to an offset
    done = threading.Event()

    with MockServer(AnthropicMock(script, strict=False)) as server:
        result: list = []
        client = threading.Thread(
            target=lambda: result.append(
                run_claude(["-p", "do two steps", "--session-id", session_id], cwd, home, server, timeout=90)
            )
        )
        client.start()

        def watch() -> None:  # when each whole line appears, looked at every 10 ms
            while not done.is_set():
                try:
                    data = path.read_bytes()
                except FileNotFoundError:
                    data = b""
                end = data.rfind(b"\n") + 1
                if end and end not in seen:
                    seen[end] = time.monotonic()
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        while not path.exists() and client.is_alive():
            time.sleep(0.05)
        follower, view, out = Follower(path), terminal.FollowView(), []
        while client.is_alive():
            events = follower.poll()
            polls.append((time.monotonic(), follower.offset))
            out += [t for e in events for _, t in view.lines(e)]
            time.sleep(0.2)
        client.join()
        time.sleep(0.3)
        out += [t for e in follower.poll() for _, t in view.lines(e)]
        polls.append((time.monotonic(), follower.offset))
        done.set()
        watcher.join()

    assert result and result[0].exit_code == 0, result and result[0].stderr[-2000:]
    assert len(seen) >= 6  # the session was written over time, not at once
    for end, when in seen.items():
        read = min((t for t, offset in polls if offset >= end), default=None)
        assert read is not None and read - when < 1.0, f"line ending at {end} read {read and read - when:.2f}s late"
    shown = terminal.render(api.to_common(api.load(path))).splitlines()
    assert out[1:] == shown[1:]
    assert not [t for t in out if t.startswith("⚠")]
    assert "  Both steps done." in out
