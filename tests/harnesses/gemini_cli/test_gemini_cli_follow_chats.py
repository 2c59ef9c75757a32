"""A followed Gemini CLI session (``Harness.carry_on``) reads its subagents' chats again
only when their file changed (docs/live.md#cost)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN

from txcodec.harnesses.gemini_cli import read as gemini_read
from txcodec.kit import registry
from txcodec.model.native import decode_session

MAIN = GOLDEN / "gemini_cli" / "scenarios" / "three_turns"
CHILD = GOLDEN / "gemini_cli" / "scenarios" / "read_and_think"


def test_a_subagent_chat_is_read_again_only_when_its_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = next(MAIN.glob("*.jsonl"))
    data = source.read_bytes()
    session_id = json.loads(data.splitlines()[0])["sessionId"]
    path = tmp_path / source.name
    path.write_bytes(data)
    chat = tmp_path / session_id / "agent-1.jsonl"
    chat.parent.mkdir()
    child_lines = next(CHILD.glob("*.jsonl")).read_bytes().splitlines(keepends=True)
    chat.write_bytes(b"".join(child_lines[: len(child_lines) // 2]))
    loads: list[Path] = []
    real = gemini_read.load_file
    monkeypatch.setattr(gemini_read, "load_file", lambda p, *a, **k: loads.append(p) or real(p, *a, **k))
    h = registry.get("gemini_cli")
    reader = h.carry_on(path)
    reader.feed(decode_session(data, h.codec, "gemini_cli", path).lines)
    first, _ = reader.conversation()
    assert loads == [chat] and len(first.children) == 1
    half = len(first.children[0].conversation.messages)
    reader.feed([])
    again, _ = reader.conversation()
    assert loads == [chat]  # unchanged: not read again
    assert len(again.children[0].conversation.messages) == half
    with chat.open("ab") as file:
        file.write(b"".join(child_lines[len(child_lines) // 2 :]))
    grown, _ = reader.conversation()
    assert loads == [chat, chat]
    assert len(grown.children[0].conversation.messages) > half


def test_a_rewind_reads_again_only_from_the_message_rewound_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewind (``$rewindTo``) or a newer version of an earlier message takes the reader
    back to where that message began: the entries before it are not read again, and what it
    gives is what the whole-file reader gives."""
    from txcodec import api

    h = registry.get("gemini_cli")
    data = next(MAIN.glob("*.jsonl")).read_bytes()
    ids = [v["id"] for v in map(json.loads, data.splitlines()) if "id" in v and "type" in v]
    assert len(ids) >= 4
    added: list[str] = []
    real = gemini_read._Reader.add
    monkeypatch.setattr(
        gemini_read._Reader, "add", lambda self, record, line: added.append(record.id) or real(self, record, line)
    )
    reader = h.carry_on(None)
    reader.feed(decode_session(data, h.codec, "gemini_cli", None).lines)
    reader.conversation()
    added.clear()
    rewind = json.dumps({"$rewindTo": ids[-2]}).encode() + b"\n"
    reader.feed(decode_session(rewind, h.codec, "gemini_cli", None).lines)
    conv, _ = reader.conversation()
    assert added == []  # the two last messages went; nothing before them was read again
    whole = api.to_common(decode_session(data + rewind, h.codec, "gemini_cli", None))
    assert msgspec.json.encode(conv.messages) == msgspec.json.encode(whole.messages)
    again = [line for line in data.splitlines(keepends=True) if json.loads(line).get("id") == ids[-2]]
    reader.feed(decode_session(b"".join(again), h.codec, "gemini_cli", None).lines)
    added.clear()  # (the whole-file reader above added every message too)
    conv, _ = reader.conversation()
    assert added == [ids[-2]]
    whole = api.to_common(decode_session(data + rewind + b"".join(again), h.codec, "gemini_cli", None))
    assert msgspec.json.encode(conv.messages) == msgspec.json.encode(whole.messages)
