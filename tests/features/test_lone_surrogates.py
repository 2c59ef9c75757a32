"""JavaScript clients write a lone UTF-16 surrogate (half of an emoji cut by truncation)
as a ``\\udXXX`` escape. msgspec refuses such a string; the codecs decode the line with
U+FFFD in its place instead of giving up on the whole record, and keep its bytes."""

from __future__ import annotations

import pytest

import txcodec
from txcodec.model.native import Opaque
from txcodec.model.native import without_lone_surrogates

LINES = {
    "claude_code": b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s",'
    b'"message":{"role":"user","content":"cut \\ud83d here"}}',
    "codex": b'{"timestamp":"2026-01-01T00:00:00Z","type":"response_item",'
    b'"payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"cut \\ud83d here"}]}}',
    "stream_json": b'{"type":"user","session_id":"s","parent_tool_use_id":null,'
    b'"message":{"role":"user","content":"cut \\ud83d here"}}',
    "qwen_code": b'{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","type":"user",'
    b'"cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"cut \\ud83d here"}]}}',
    "pi": b'{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:00Z",'
    b'"message":{"role":"user","content":"cut \\ud83d here"}}',
}


@pytest.mark.parametrize("harness", sorted(LINES))
def test_line_with_a_lone_surrogate_is_typed_and_kept(harness):
    data = LINES[harness] + b"\n"
    session = txcodec.load(data, harness)
    assert not isinstance(session[0], Opaque), session[0]
    assert session.dump() == data


@pytest.mark.parametrize(
    "line, expected",
    [
        (b'"x\\ud800y"', b'"x\\ufffdy"'),  # lone high half
        (b'"\\udc00"', b'"\\ufffd"'),  # lone low half
        (b'"\\ud83d\\ude00"', None),  # a valid pair is left alone
        (b'"\\\\ud800"', None),  # an escaped backslash, then plain text
        (b'"\\\\\\ud800"', b'"\\\\\\ufffd"'),  # an escaped backslash, then a lone half
    ],
)
def test_without_lone_surrogates(line, expected):
    assert without_lone_surrogates(line) == expected


@pytest.mark.parametrize("harness", sorted(LINES))
def test_a_line_still_refused_after_repair_keeps_its_own_bytes(harness):
    # an unknown record type with a lone surrogate: opaque either way, and the bytes kept
    # are the line's, not the repaired copy's
    data = b'{"type":"brand-new","uuid":"x","id":"x","text":"\\ud800"\n'
    session = txcodec.load(data, harness)
    assert isinstance(session[0], Opaque) and session[0].raw == data[:-1]
    assert session.dump() == data


def test_common_json_keeps_a_lone_surrogate():
    # issue 31 item 10: msgspec refuses to write or read one; Common JSON escapes it and
    # reads it back as the lone surrogate it was, and Claude Code gets its \\ud83d escape
    from txcodec.kit.changes import to_json
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Text
    from txcodec.model.common_json import from_json

    conversation = Conversation(messages=[Message("user", [Text("cut \ud83d here, é")])])
    data = to_json(conversation)
    assert b'"cut \\ud83d here, \xc3\xa9"' in data
    assert from_json(data).messages == conversation.messages
    written, _ = txcodec.convert(data, "claude_code", from_="common")
    assert b'"content":"cut \\ud83d here, \xc3\xa9"' in written.files[written.main]
