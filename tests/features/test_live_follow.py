"""``txcodec show --follow`` and :mod:`txcodec.live`: a session followed while it is written
(docs/live.md): appended bytes read from an offset, a partial last line waiting for its LF,
a file cut shorter, replaced or deleted, a document store re-read and diffed by message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from support.paths import GOLDEN
from support.paths import ROOT

from txcodec import api
from txcodec import live
from txcodec.export import terminal
from txcodec.kit import registry
from txcodec.live import Follower
from txcodec.live import Notice
from txcodec.live import Update
from txcodec.model.common import ToolUse

CLAUDE = next((GOLDEN / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))
STREAMED = next((GOLDEN / "claude_code" / "streaming_duplication").glob("*.jsonl"))
CODEX = GOLDEN / "codex" / "scenarios" / "three_turns" / "rollout.jsonl"


def _printed(follower: Follower, view: terminal.FollowView) -> list[str]:
    return [text for event in follower.poll() for _, text in view.lines(event)]


def _show(path: Path) -> list[str]:
    return terminal.render(api.to_common(api.load(path))).splitlines()


@pytest.mark.parametrize("source", [CLAUDE, CODEX], ids=["claude_code", "codex"])
def test_written_line_by_line_in_halves_prints_what_show_prints(tmp_path: Path, source: Path) -> None:
    """Each line written in two halves: the half waits for its LF (nothing is printed for
    it), and the whole follow prints, in order, exactly what ``show`` prints afterwards."""
    path = tmp_path / source.name
    path.write_bytes(b"")
    follower, view, out = Follower(path), terminal.FollowView(), []
    for line in source.read_bytes().splitlines(keepends=True):
        with path.open("ab") as file:
            file.write(line[: len(line) // 2])
        assert not [e for e in follower.poll() if type(e) is Update]
        with path.open("ab") as file:
            file.write(line[len(line) // 2 :])
        out += _printed(follower, view)
    assert out == _show(path)
    assert not any(text.startswith(("⚠", "↻")) for text in out)


def test_only_appended_bytes_are_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[int] = []
    real = live.decode_session
    monkeypatch.setattr(live, "decode_session", lambda data, *a: decoded.append(len(data)) or real(data, *a))
    data = CLAUDE.read_bytes()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    follower = Follower(path)
    for line in data.splitlines(keepends=True):
        with path.open("ab") as file:
            file.write(line)
        follower.poll()
        follower.poll()  # nothing new: nothing decoded
    assert sum(decoded) == len(data)  # every byte decoded once
    assert len(decoded) == data.count(b"\n")


def test_streamed_reply_grows_its_message(tmp_path: Path) -> None:
    """Claude Code writes one API reply as several records (one per content block, the same
    message id): a later fragment changes the message already printed, which then holds
    the usage of its last fragment, as ``show`` reads it."""
    whole = api.to_common(api.load(STREAMED))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    follower = Follower(path)
    changed, last = [], None
    for line in STREAMED.read_bytes().splitlines(keepends=True):
        with path.open("ab") as file:
            file.write(line)
        for event in follower.poll():
            if type(event) is Update:
                changed += event.changed
                last = event.conversation
    assert changed
    assert last is not None and [m.usage for m in last.messages] == [m.usage for m in whole.messages]
    assert len(last.messages) == len(whole.messages)


def test_cut_shorter_replaced_deleted_and_nul_lines(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    follower, view = Follower(path), terminal.FollowView()
    first = _printed(follower, view)
    assert first == _show(path)

    path.write_bytes(b"".join(lines[:3]))  # cut shorter, same file
    out = _printed(follower, view)
    assert [t for t in out if t.startswith("⚠")] == [f"⚠ {path}: cut shorter; reading it again from the start"]

    path.write_bytes(b"\x00" * 64 + b"\n")  # written over in place, and a NUL run
    with path.open("ab") as file:
        file.write(b"".join(lines))
    out = _printed(follower, view)
    assert [t for t in out if t.startswith("⚠")] == [
        f"⚠ {path}: written over; reading it again from the start",
        f"⚠ {path}: line 1: a run of NUL bytes; skipped",
    ]
    assert not [t for t in out if t.startswith("↻")]  # the same messages as before: none printed again

    other = tmp_path / "other.jsonl"
    other.write_bytes(b"".join(lines))
    os.replace(other, path)  # replaced by another file (a new inode)
    out = _printed(follower, view)
    assert out == [f"⚠ {path}: replaced; reading it again from the start"]  # the same messages: none reprinted

    path.unlink()
    assert _printed(follower, view) == [f"⚠ {path}: deleted; waiting for it to come back"]
    assert _printed(follower, view) == []  # said once
    path.write_bytes(b"".join(lines[:2]))
    out = _printed(follower, view)
    assert out[0] == f"⚠ {path}: back; reading it again"
    with path.open("ab") as file:
        file.write(b"".join(lines[2:]))
    _printed(follower, view)
    assert follower.offset == len(b"".join(lines))


def test_append_only_is_declared_by_each_harness() -> None:
    found = {name for name, h in registry.harnesses().items() if h.append_only}
    assert {"claude_code", "codex", "gemini_cli", "qwen_code", "pi", "kimi_cli", "droid", "copilot_cli"} <= found
    assert not found & {"continue_cli", "opencode", "kilo", "cline", "openhands", "mistral_vibe"}


def test_a_document_store_is_reread_and_diffed_by_message(tmp_path: Path) -> None:
    """Continue keeps a session as one JSON document it rewrites: the follow re-reads it
    when it changes and prints only the messages that are new."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    early, _ = api.convert(b"".join(lines[:4]), "continue_cli", session_id="live-doc")
    full, _ = api.convert(CLAUDE, "continue_cli", session_id="live-doc")
    path = tmp_path / "live-doc.json"
    path.write_bytes(early.files[early.main])
    follower, view = Follower(path, "continue_cli"), terminal.FollowView()
    assert not follower.tails
    before = _printed(follower, view)
    assert before == _show(path)
    time.sleep(0.01)
    path.write_bytes(full.files[full.main])
    after = _printed(follower, view)
    assert after and before[1:] + after == _show(path)[1:]  # the new messages only, in order


def _writer(path: Path, lines: list[bytes], pause: float) -> threading.Thread:
    def write() -> None:
        for line in lines:
            with path.open("ab") as file:
                file.write(line[:7])
                file.flush()
                time.sleep(pause / 2)
                file.write(line[7:])
            time.sleep(pause / 2)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_follow_yields_while_a_writer_thread_appends_and_stops_when_idle(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    thread = _writer(path, lines, 0.02)
    view, out = terminal.FollowView(), []
    for event in live.follow(path, idle=1.0, interval=0.05):
        assert type(event) in (Update, Notice)
        out += [text for _, text in view.lines(event)]
    thread.join()
    assert out[1:] == _show(path)[1:]  # the heading is what the first line tells


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "txcodec", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )


class _Waited(Exception):
    pass


@pytest.mark.parametrize("carries_on", [True, False], ids=["carries_on", "read_again"])
def test_a_costly_look_holds_back_the_next_only_when_the_session_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, carries_on: bool
) -> None:
    """Each reading of the CPU clock is a second later: a follow whose reader carries on
    (a look costs what was appended) then waits the interval after its first look; one
    that reads the session again (a document) waits twice what the look cost."""
    if carries_on:
        path, harness = tmp_path / CLAUDE.name, None
        path.write_bytes(CLAUDE.read_bytes())
    else:
        written, _ = api.convert(CLAUDE, "continue_cli", session_id="live-doc")
        path, harness = tmp_path / "live-doc.json", "continue_cli"
        path.write_bytes(written.files[written.main])
    clock = iter(range(10**6))
    monkeypatch.setattr(live.time, "process_time", lambda: float(next(clock)))
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        raise _Waited

    follower = live.follow(path, harness, notify=False, interval=0.2, sleep=sleep)
    assert type(next(follower)) is Update
    with pytest.raises(_Waited):
        next(follower)
    assert waits == [0.2] if carries_on else waits[0] >= 2.0


def test_cli_show_follow_prints_as_written_and_ctrl_c_ends_without_traceback(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(lines[0])
    proc = _cli("show", "--follow", "--no-color", str(path))
    thread = _writer(path, lines[1:], 0.02)
    thread.join()
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err and err == ""
    assert out.splitlines()[1:] == _show(path)[1:]


def test_cli_show_follow_idle_exits(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE.read_bytes())
    proc = _cli("show", "-f", "--idle", "0.5", "--no-color", str(path))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.splitlines() == _show(path)


def _long_session(source: Path, turns: int) -> list[bytes]:
    """``source``'s conversation lines again and again, with fresh ids: a session far longer
    than the window ``show --follow`` holds."""
    lines = [json.loads(raw) for raw in source.read_bytes().splitlines()]
    out = []
    for n in range(turns):
        for line in lines:
            if n and line.get("type") not in ("user", "assistant"):
                continue
            line = json.loads(json.dumps(line))
            for key in ("uuid", "parentUuid"):
                if isinstance(line.get(key), str):
                    line[key] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{n}/{line[key]}"))
            message = line.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                message["id"] = f"{message['id']}_{n}"
            out.append(json.dumps(line).encode() + b"\n")
    return out


def _show_cli(path: Path) -> list[str]:
    proc = _cli("show", "--no-color", str(path))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out.splitlines()


@pytest.mark.parametrize("source", [CLAUDE, CODEX], ids=["claude_code", "codex"])
def test_cli_show_follow_of_a_session_longer_than_its_window_prints_what_show_prints(
    tmp_path: Path, source: Path
) -> None:
    """Opened whole, then written on while followed: ``show --follow`` holds a window of
    messages and prints exactly what ``show`` prints of the finished file."""
    if source is CODEX:
        raw = source.read_bytes().splitlines(keepends=True)
        lines = raw[:2] + raw[2:] * 40
    else:
        lines = _long_session(source, 40)
    path = tmp_path / source.name
    cut = len(lines) * 2 // 5
    path.write_bytes(b"".join(lines[:cut]))
    proc = _cli("show", "--follow", "--no-color", str(path))
    time.sleep(1.0)
    with path.open("ab") as file:
        for line in lines[cut:]:
            file.write(line)
            file.flush()
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    shown = _show_cli(path)
    assert len(shown) > 4 * live.WINDOW  # (the window was passed)
    assert out.splitlines() == shown
    idle = _cli("show", "-f", "--idle", "0.5", "--no-color", str(path))
    assert idle.communicate(timeout=60)[0].splitlines() == shown
    view, held = terminal.FollowView(), 0
    for event in live.follow(path, idle=0.3, notify=False, window=live.WINDOW):
        view.lines(event)
        if type(event) is Update:
            held = max(held, len(event.conversation.messages), len(view.shown))
    assert 0 < held <= 4 * live.WINDOW < len(shown) // 2  # the follow held a window, not the session


def test_a_subagent_appears_under_its_call_as_it_writes(tmp_path: Path) -> None:
    """A Claude Code subagent writes its own transcript in the session's side folder while
    the parent's file is still: the follow reads its side files again when they change, and
    the subagent's messages appear under the call that started it."""
    case = GOLDEN / "claude_code" / "scenarios" / "foreground_subagent"
    main = next(case.glob("*.jsonl"))
    agent = next(case.rglob("agent-*.jsonl"))
    lines = main.read_bytes().splitlines(keepends=True)
    # the first lines holding the Agent call as a message (its subagent not yet written)
    call = next(
        k
        for k in range(1, len(lines))
        if any(
            type(b) is ToolUse and b.name == "Agent"
            for m in api.to_common(api.load(b"".join(lines[:k]), "claude_code")).messages
            for b in m.content
        )
    )
    path = tmp_path / main.name
    path.write_bytes(b"".join(lines[:call]))
    side = tmp_path / main.stem / "subagents" / agent.name
    side.parent.mkdir(parents=True)
    follower, view = Follower(path), terminal.FollowView()
    assert not any("┌ subagent" in t for t in _printed(follower, view))
    agent_lines = agent.read_bytes().splitlines(keepends=True)
    with side.open("ab") as file:  # the subagent starts: its first line
        file.write(agent_lines[0])
    out = _printed(follower, view)  # the parent's file has not changed
    assert any("┌ subagent" in t for t in out)
    with side.open("ab") as file:
        file.write(b"".join(agent_lines[1:]))
    more = _printed(follower, view)
    assert "      sub: there is 1 file" in more and not any("┌ subagent" in t for t in more)
    assert follower.offset == len(b"".join(lines[:call]))
    # under its call: the subagent's lines come right after the Agent call's line
    at = next(i for i, t in enumerate(out) if "┌ subagent" in t)
    assert at == 0 or "▸ Agent" in out[at - 1]


@pytest.mark.parametrize("case", ["subagent", "parallel_tools"])
def test_a_stream_json_capture_on_a_pipe_is_followed_until_it_closes(tmp_path: Path, case: str) -> None:
    """``claude -p --output-format stream-json | txcodec show -f -``: the capture is read as
    it comes, a whole line at a time, and the follow ends when the pipe closes. A reply
    streamed in partial messages (parallel_tools) is shown once it ends, not while it reads
    as interrupted."""
    capture = GOLDEN / "stream_json" / case / "capture.jsonl"
    lines = capture.read_bytes().splitlines(keepends=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "txcodec", "show", "-f", "-", "--no-color"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    for line in lines:
        proc.stdin.write(line[:5])
        proc.stdin.flush()
        time.sleep(0.01)
        proc.stdin.write(line[5:])
        proc.stdin.flush()
        time.sleep(0.02)
    proc.stdin.close()
    proc.wait(timeout=30)
    out, err = proc.stdout.read(), proc.stderr.read().decode()
    assert proc.returncode == 0, err
    printed = out.decode().splitlines()
    assert printed[-1] == "⚠ <stdin>: the input was closed"
    assert printed[1:-1] == _show(capture)[1:]
    refused = subprocess.run(
        [sys.executable, "-m", "txcodec", "show", "-"], capture_output=True, text=True, env=env, input=""
    )
    assert refused.returncode == 2 and "--follow" in refused.stderr
