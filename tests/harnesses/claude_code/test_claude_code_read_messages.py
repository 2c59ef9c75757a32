"""The Claude Code reader a message at a time (``Harness.read_messages``, what ``show`` reads):
the messages, epochs, title and loss report are the whole-file reader's, the first message
comes before the file is read to its end, and the reader holds a window of messages."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.cli import main
from txcodec.export import terminal
from txcodec.harnesses.claude_code.stream import MessageStream
from txcodec.harnesses.claude_code.stream import _has_sidechains
from txcodec.harnesses.claude_code.stream import read_messages
from txcodec.kit import registry
from txcodec.kit.read import StreamedConversation
from txcodec.model.loss import LossReport

GOLDENS = sorted((GOLDEN / "claude_code").rglob("*.jsonl"))
CORPUS_FILES = [p for p in corpus_files("claude_code", (".jsonl",)) if p.suffix == ".jsonl"]
SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
_encode = msgspec.json.encode


def _streamed(path: Path, window: int, loss: LossReport) -> StreamedConversation | None:
    session = api.load_once(path, "claude_code")
    stream = read_messages(session, loss, window)
    if stream is None:
        return None
    return StreamedConversation(stream.meta, api._conformed(stream, session, "Claude Code", loss), stream.tail)


# Codex too: show now loads every session as read once (its rollouts streamed, not whole)
@pytest.mark.parametrize(
    "path", GOLDENS + sorted((GOLDEN / "codex").rglob("*.jsonl")), ids=lambda p: str(p.relative_to(GOLDEN))
)
def test_show_prints_every_golden_as_the_whole_file_reader_does(path):
    whole = terminal.render(api.to_common(api.load(path)))
    result = CliRunner().invoke(main, ["show", "--raw", "--no-color", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output == whole


@pytest.mark.parametrize("window", [1, 64])
@pytest.mark.parametrize("path", GOLDENS + CORPUS_FILES, ids=lambda p: p.name)
def test_the_streamed_conversation_is_the_whole_one(path, window):
    whole_loss, loss = LossReport(), LossReport()
    whole = api.to_common(api.load(path, "claude_code"), whole_loss)
    stream = _streamed(path, window, loss)
    if stream is None:  # subagent files beside it, or a client that wrote sidechains in the main file: read whole
        assert whole.children or _has_sidechains(path.read_bytes()) or (path.parent / path.stem).is_dir()
        return
    pairs = list(stream.messages)
    tail = stream.tail()
    assert _encode([m for m, _ in pairs]) == _encode(whole.messages)
    assert [i for i, (_, compacted) in enumerate(pairs) if compacted] == sorted(
        {e.start for e in whole.epochs if e.start < len(whole.messages)}
    )
    assert _encode(tail.epochs) == _encode(whole.epochs)
    assert (tail.meta.title, tail.meta.id, tail.meta.models) == (whole.meta.title, whole.meta.id, whole.meta.models)
    assert loss.counts() == whole_loss.counts()


def _record(n: int, kind: str, text: str, message_id: str | None = None) -> dict:
    message: dict = {"role": kind, "content": [{"type": "text", "text": text}] if kind == "assistant" else text}
    if kind == "assistant":
        message.update(id=message_id or f"msg_{n}", model="claude-opus-4-1", stop_reason="end_turn")
    return {
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "parentUuid": None,
        "sessionId": SID,
        "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
        "message": message,
    }


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    return path


def test_the_first_message_comes_before_the_file_is_read_and_a_window_is_held(tmp_path):
    records = [_record(n, "user" if n % 2 else "assistant", f"turn {n}") for n in range(1, 3001)]
    path = _write(tmp_path, records)
    session = api.load_once(path, "claude_code")
    stream = api.to_common_streamed(session)
    assert isinstance(stream, StreamedConversation)
    first, _ = next(stream.messages)
    assert first.content[0].text == "turn 1"
    assert session.origin is None  # set once the last batch is read: the file is not read to its end
    assert len(list(stream.messages)) == 2999

    # fed a line at a time, the reader holds the window and the call it is in, never more
    lines = list(api.load(path, "claude_code").lines)
    reader = MessageStream(api.load(path, "claude_code"), LossReport(), str(path), {}, window=4)
    handed: list = []
    for n, line in enumerate(lines, 1):
        handed += reader.feed([(n, line)])
        assert len(reader.messages) <= 4
        assert reader.base + len(reader.messages) == n
    handed += reader.close()
    assert [m.content[0].text for m, _ in handed] == [f"turn {n}" for n in range(1, 3001)]


def test_a_fragment_later_than_the_window_is_shown_apart_and_reported(tmp_path):
    records = [_record(1, "user", "go"), _record(2, "assistant", "first part", "msg_A")]
    records += [_record(n, "user" if n % 2 else "assistant", f"turn {n}") for n in range(3, 9)]
    records.append(_record(9, "assistant", "late part", "msg_A"))
    path = _write(tmp_path, records)
    whole = api.to_common(api.load(path))
    assert [b.text for b in whole.messages[1].content] == ["first part", "late part"]

    loss = LossReport()
    session = api.load(path, "claude_code")
    reader = MessageStream(session, loss, str(path), {}, window=2)
    messages = [m for n, line in enumerate(session.lines, 1) for m, _ in reader.feed([(n, line)])]
    messages += [m for m, _ in reader.close()]
    assert [b.text for b in messages[1].content] == ["first part"]
    assert [b.text for b in messages[-1].content] == ["late part"]
    assert loss.lines("stream:late") == [9]
    # with a window wider than the distance, the streamed read is the whole one
    assert _encode([m for m, _ in _streamed(path, 64, LossReport()).messages]) == _encode(whole.messages)


def test_a_session_with_subagents_is_read_whole_and_the_harness_declares_the_hook():
    path = next(p for p in GOLDENS if p.parent.name == "agent_launch")
    assert read_messages(api.load_once(path), LossReport()) is None
    assert isinstance(api.to_common_streamed(api.load_once(path)), msgspec.Struct)  # a Conversation
    assert registry.get("claude_code").read_messages is not None
    assert registry.get("codex").read_messages is None


def test_the_title_is_known_before_the_first_message(tmp_path):
    records = [_record(n, "user" if n % 2 else "assistant", f"turn {n}") for n in range(1, 600)]
    records.insert(300, {"type": "custom-title", "customTitle": "old name", "sessionId": SID})
    records.append({"type": "custom-title", "customTitle": "renamed at the end", "sessionId": SID})
    records.append({"type": "summary", "summary": "a summary", "leafUuid": "x"})
    path = _write(tmp_path, records)
    stream = api.to_common_streamed(api.load_once(path))
    next(stream.messages)
    assert stream.meta.title == "renamed at the end" == api.to_common(api.load(path)).meta.title
    assert "".join(terminal.chunks(api.to_common_streamed(api.load_once(path)))) == terminal.render(
        api.to_common(api.load(path))
    )
