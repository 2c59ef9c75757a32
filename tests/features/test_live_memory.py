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
    few = SeenIds(4096)
    for key in keys[:4000]:
        few.add(key)
    assert not few.bits and not few.runs  # a session of fewer ids (one followed by watch) pays no bitmap


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


# --- what a follow cannot hand on: pi's and Qwen Code's branches -----------------------


def _follow_pieces(path: Path, harness: str, lines: list[bytes], window: int = 1) -> list:
    """``lines`` written one at a time to ``path``, followed with a window as ``show
    --follow`` follows: the session's messages as the follow last gave them."""
    path.write_bytes(b"")
    follower, held = Follower(path, harness, window=window), []
    for line in lines:
        with path.open("ab") as file:
            file.write(line)
        for event in follower.poll():
            if type(event) is Update:
                held = held[: event.base - len(event.passed)] + [m for m, _ in event.passed]
                held += event.conversation.messages
    return held


def test_a_pi_branch_can_go_back_to_the_first_entry_after_any_number_of_messages(tmp_path) -> None:
    """pi appends each entry as a child of the leaf, and ``/tree`` moves the leaf to any
    entry before the next append (docs/pi.md): after 150 messages an entry whose parent is
    the first one makes the conversation two messages. No message is ever final, so pi's
    reader hands none on: the follow, asked for a window of one, still holds them all."""
    header = {"type": "session", "version": 3, "id": SID, "timestamp": "2026-12-01T00:00:00.000Z", "cwd": "/work"}
    lines, parent = [json.dumps(header).encode() + b"\n"], None
    for n in range(150):
        role = "user" if n % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": f"say {n}"}], "timestamp": 1796088300000 + n}
        if role == "assistant":
            message.update(api="anthropic-messages", provider="anthropic", model="m", stopReason="stop")
            message["usage"] = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
        entry = {"type": "message", "id": f"{n:08x}", "parentId": parent, "timestamp": "2026-12-01T00:00:01.000Z"}
        lines.append(json.dumps({**entry, "message": message}).encode() + b"\n")
        parent = entry["id"]
    branch = {"role": "user", "content": [{"type": "text", "text": "back to the start"}], "timestamp": 1796088400000}
    entry = {"type": "message", "id": "b0000001", "parentId": "00000000", "timestamp": "2026-12-01T00:01:00.000Z"}
    lines.append(json.dumps({**entry, "message": branch}).encode() + b"\n")
    path = tmp_path / "2026-12-01T00-00-00-000Z_session.jsonl"
    held = _follow_pieces(path, "pi", lines)
    whole = api.to_common(api.load(path, "pi"))
    assert [b.text for m in whole.messages for b in m.content] == ["say 0", "back to the start"]
    assert [b.text for m in held for b in m.content] == ["say 0", "back to the start"]


def test_a_qwen_rewind_can_go_back_to_the_first_turn_after_any_number_of_messages(tmp_path) -> None:
    """Qwen Code 0.24.4's ``rewindRecording(targetTurnIndex)`` sets the next record's
    parent to the one before that user turn (0: before the first), writing a ``rewind``
    system record there (docs/qwen_code.md): the chain back from the last record then
    leaves out every message after it, however many. Its reader hands none on."""
    lines, parent = [], None
    for n in range(150):
        kind = "user" if n % 2 == 0 else "assistant"
        record = {
            "uuid": str(uuid.UUID(int=n + 1, version=4)),
            "parentUuid": parent,
            "sessionId": SID,
            "timestamp": f"2026-12-01T04:{n // 60:02d}:{n % 60:02d}.000Z",
            "type": kind,
            "cwd": "/work",
            "version": "0.24.4",
            "message": {"role": "user" if kind == "user" else "model", "parts": [{"text": f"say {n}"}]},
        }
        if kind == "assistant":
            record["model"] = "m"
        lines.append(json.dumps(record).encode() + b"\n")
        parent = record["uuid"]
    rewind = {
        "uuid": str(uuid.UUID(int=1000, version=4)),
        "parentUuid": None,  # turnParentUuids[0]: what came before the first user turn
        "sessionId": SID,
        "timestamp": "2026-12-01T05:00:00.000Z",
        "type": "system",
        "subtype": "rewind",
        "cwd": "/work",
        "version": "0.24.4",
        "systemPayload": {},
    }
    again = dict(json.loads(lines[0]), uuid=str(uuid.UUID(int=1001, version=4)), parentUuid=rewind["uuid"])
    again["message"] = {"role": "user", "parts": [{"text": "from the start"}]}
    lines += [json.dumps(rewind).encode() + b"\n", json.dumps(again).encode() + b"\n"]
    path = tmp_path / f"{SID}.jsonl"
    held = _follow_pieces(path, "qwen_code", lines)
    whole = api.to_common(api.load(path, "qwen_code"))
    assert [b.text for m in whole.messages for b in m.content] == ["from the start"]
    assert [b.text for m in held for b in m.content] == ["from the start"]
