"""What a follow with a window keeps besides its window (docs/live.md#cost): Claude Code's
record ids, which a client may copy again at any distance, packed in a few bytes each and
still checked exactly; and of the tool calls, only the names of those not answered yet."""

from __future__ import annotations

import json
import tracemalloc
import uuid
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from txcodec import api
from txcodec.cli import main
from txcodec.export import terminal
from txcodec.kit.read import SeenIds
from txcodec.live import Follower
from txcodec.live import Update

SID = "5c0ffee0-55a8-4e57-9d4c-2f1e1a7d9c01"

_uuids = st.uuids().map(str)
_ids = st.one_of(
    _uuids,
    _uuids.map(str.upper),  # another string: not the same id
    _uuids.map(lambda u: "0x" + u.replace("-", "")),  # what int(..., 16) would take
    st.text(max_size=6),
)


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 30)), max_size=120), pool=st.lists(_ids, min_size=1))
def test_seen_ids_answer_as_a_set_of_the_strings(ops, pool) -> None:
    for batch in (1, 3, 64):
        seen, plain = SeenIds(batch), set()
        for add, i in ops:
            key = pool[i % len(pool)]
            assert (key in seen) == (key in plain)
            if add:
                seen.add(key)
                plain.add(key)
        assert all((key in seen) == (key in plain) for key in pool)
        assert len(seen) == len(plain)


def test_seen_ids_keep_about_sixteen_bytes_an_id() -> None:
    keys = [str(uuid.UUID(int=i * 0x9E3779B97F4A7C15F39CC0605CEDC834 % (1 << 128), version=4)) for i in range(60_000)]
    tracemalloc.start()
    try:
        seen = SeenIds(4096)
        for key in keys:
            seen.add(key)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the bitmap (1 MiB), the last batch as strings, 16 bytes for every other id; a set of
    # the strings would take over 110 bytes an id (6.6 MB here)
    assert size < (1 << 20) + 4096 * 130 + 60_000 * 20
    assert all(key in seen for key in keys[::97])
    assert str(uuid.UUID(int=12345, version=4)) not in seen


def _line(n: int, kind: str, content, message_id: str | None = None, **extra) -> dict:
    message: dict = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=message_id or f"msg_{n}", model="claude-opus-4-1", stop_reason="tool_use")
    return {
        "type": kind,
        "uuid": str(uuid.UUID(int=n, version=4)),
        "parentUuid": None,
        "sessionId": SID,
        "cwd": "/work",
        "timestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
        "message": message,
        **extra,
    }


def _turns(first: int, count: int) -> list[dict]:
    """``count`` turns of a prompt, a tool call and its result, from line number ``first``."""
    out = []
    for t in range(count):
        n = first + 3 * t
        call = f"toolu_{n:08d}"
        out.append(_line(n, "user", f"prompt {n}"))
        out.append(_line(n + 1, "assistant", [{"type": "tool_use", "id": call, "name": "Bash", "input": {"n": n}}]))
        out.append(
            _line(
                n + 2, "user", [{"type": "tool_result", "tool_use_id": call, "content": f"out {n}"}], toolUseResult={}
            )
        )
    return out


def _follow(path: Path, window: int) -> tuple[Follower, terminal.FollowView, list[str]]:
    follower, view = Follower(path, "claude_code", window=window), terminal.FollowView()
    out = [text for event in follower.poll() for _, text in view.lines(event)]
    return follower, view, out


def test_a_record_copied_again_far_back_is_read_once_by_show_and_the_follow(tmp_path, monkeypatch) -> None:
    """A client copies a session's records again long after them (a reopened editor
    appends them once more, same uuid, another cwd): ``show`` and a follow with a window
    of one message, whose ids were packed long before, drop them as the whole-file reader
    does."""
    monkeypatch.setattr(SeenIds, "BATCH", 8)
    records = _turns(1, 100)
    copies = [dict(r, cwd="/work/sub") for r in records[:6]]
    records += copies + _turns(1000, 20)
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))

    whole = api.to_common(api.load(path))
    assert len(whole.messages) == 3 * 120  # the copies are dropped
    shown = CliRunner().invoke(main, ["show", "--raw", "--no-color", str(path)]).output
    assert shown == terminal.render(whole)

    follower, view, out = _follow(path, window=1)
    assert len(follower.carry.stream.seen.runs) > 10  # the ids were packed, the copies' among them
    assert "\n".join(out) + "\n" == shown


def test_a_follow_keeps_the_names_of_the_calls_not_answered_only(tmp_path) -> None:
    records = _turns(1, 200)
    records.append(_line(5000, "user", "last prompt"))
    records.append(
        _line(5001, "assistant", [{"type": "tool_use", "id": "toolu_open", "name": "Read", "input": {}}], "msg_open")
    )
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    follower, view, out = _follow(path, window=1)
    assert view.base > 300  # the messages before the window were handed on, printed, forgotten
    assert view.names == {}  # every call handed on was answered
    assert "  ◂ Bash result: out 598" in out
    with path.open("ab") as file:  # its result, and a turn after it to hand it on
        file.write(
            json.dumps(
                _line(5002, "user", [{"type": "tool_result", "tool_use_id": "toolu_open", "content": "late"}])
            ).encode()
            + b"\n"
        )
        for r in _turns(6000, 2):
            file.write(json.dumps(r).encode() + b"\n")
    more = [text for event in follower.poll() if type(event) is Update for _, text in view.lines(event)]
    assert "  ◂ Read result: late" in more
    assert set(view.names) <= {"toolu_00006003"}  # at most the last call, whose result is in the window
