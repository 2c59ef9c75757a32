"""Gemini CLI codec: byte-identical round trips (JSONL and the legacy .json document),
records classified as the CLI's loader does, unknown records riding along."""

from __future__ import annotations

import json

import msgspec
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import GOLDEN

from txcodec import api
from txcodec.harnesses.gemini_cli import HARNESS
from txcodec.harnesses.gemini_cli import detect
from txcodec.harnesses.gemini_cli import records as R
from txcodec.harnesses.gemini_cli.codec import CODEC
from txcodec.model.native import Opaque
from txcodec.model.native import decode_document
from txcodec.model.native import decode_session

CASES = GOLDEN / "gemini_cli"
GENUINE = next((CASES / "tool_call_resumed").glob("session-*.jsonl"))
LEGACY = next((CASES / "legacy_json").glob("session-*.json"))
REWIND = next((CASES / "rewind_and_checkpoint").glob("session-*.jsonl"))


def roundtrip(data: bytes) -> bytes:
    return decode_session(data, CODEC, "gemini_cli").dump()


@given(st.binary(max_size=2000))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_any_bytes_roundtrip(data):
    assert roundtrip(data) == data
    assert decode_document(data, CODEC, "gemini_cli").dump() == data


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_part = st.fixed_dictionaries(
    {},
    optional={
        "text": st.text(),
        "thought": st.booleans(),
        "functionCall": st.fixed_dictionaries({"name": st.text(), "args": _json}),
    },
)
_record = st.one_of(
    st.fixed_dictionaries(
        {"id": st.text(), "type": st.sampled_from(["user", "gemini", "info", "x"])},
        optional={"content": st.text() | st.lists(_part, max_size=3), "timestamp": st.text(), "extra": _json},
    ),
    st.fixed_dictionaries(
        {"$set": st.dictionaries(st.sampled_from(["lastUpdated", "summary", "kind", "new"]), st.text())}
    ),
    st.fixed_dictionaries({"$rewindTo": st.text()}),
    st.fixed_dictionaries({"sessionId": st.text(), "projectHash": st.text()}, optional={"kind": st.text()}),
    _json,
)
_separators = st.sampled_from([(",", ":"), (", ", ": ")])


@given(st.lists(st.tuples(_record, _separators, st.booleans(), st.booleans()), max_size=6), st.booleans())
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_structured_lines_roundtrip(records, final_newline):
    """Real-looking records, compact or spaced, ASCII-escaped or not, with CRLF."""
    lines = []
    for value, seps, ascii_only, crlf in records:
        line = json.dumps(value, separators=seps, ensure_ascii=ascii_only).encode()
        lines.append(line + (b"\r" if crlf else b""))
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    assert roundtrip(data) == data


def test_genuine_session_is_typed_and_byte_identical():
    data = GENUINE.read_bytes()
    session = api.load(GENUINE)
    assert session.harness == "gemini_cli"
    assert session.dump() == data
    assert not session.diagnostics
    kinds = [type(r).__name__ for r in session]
    assert kinds[0] == "Metadata" and {"SetRecord", "MessageRecord"} <= set(kinds)
    call = next(r for r in session if isinstance(r, R.MessageRecord) and r.tool_calls)
    assert call.tool_calls[0].name == "read_file"
    assert call.tool_calls[0].result[0].function_response.response == {"output": "hi there\n"}


def test_classification_follows_the_cli_order():
    # $rewindTo wins over id; id over $set; $set over metadata (loadConversationRecord)
    assert isinstance(CODEC.decode(b'{"$rewindTo":"a","id":"b"}'), R.Rewind)
    assert isinstance(CODEC.decode(b'{"id":"a","$set":{}}'), R.MessageRecord)
    assert isinstance(CODEC.decode(b'{"$set":{"x":1},"sessionId":"s","projectHash":"p"}'), R.SetRecord)
    assert isinstance(CODEC.decode(b'{"sessionId":"s","projectHash":"p"}'), R.Metadata)
    unknown = CODEC.decode(b'{"future":"record"}')
    assert isinstance(unknown, Opaque) and "not a Gemini CLI record" in unknown.diagnostic
    assert isinstance(CODEC.decode(b'{"id": 5}'), Opaque)
    bad = CODEC.decode(b'{"id":"a","content":42}')
    assert isinstance(bad, Opaque) and "MessageRecord" in bad.diagnostic


def test_unknown_records_ride_along_and_are_reported():
    session = decode_session(REWIND.read_bytes(), CODEC, "gemini_cli")
    assert session.dump() == REWIND.read_bytes()
    lines = [n for n, _ in session.diagnostics]
    assert lines == [9, 13], session.diagnostics


def test_legacy_document_is_one_typed_record():
    data = LEGACY.read_bytes()
    assert data.count(b"\n") > 20  # pretty-printed over many lines
    session = api.load(LEGACY)
    assert session.harness == "gemini_cli"
    assert len(session) == 1 and isinstance(session[0], R.Metadata)
    assert [m.id for m in session[0].messages] == ["m1", "m2", "m3", "m4"]
    assert session.dump() == data


def test_legacy_document_is_detected_from_bytes_and_from_any_file_name(tmp_path):
    """No line of a pretty-printed document is JSON by itself: detection must look at the
    whole (bytes from a pipe, a backup named ``.bak``)."""
    data = LEGACY.read_bytes()
    for session in (api.load(data), api.load(data.rstrip(b"\n")), api.load(_copy(tmp_path / "session.bak", data))):
        assert session.harness == "gemini_cli" and len(session) == 1 and not session.diagnostics
        assert isinstance(session[0], R.Metadata)
    assert api.load(data).dump() == data
    conversation = api.to_common(api.load(data))
    assert [m.role for m in conversation.messages][:2] == ["user", "assistant"]
    # a pretty-printed object of no harness stays generic JSON lines, byte for byte
    other = b'{\n  "hello": 1\n}\n'
    assert api.load(other).harness == "jsonl" and api.load(other).dump() == other


def _copy(path, data: bytes):
    path.write_bytes(data)
    return path


def test_edited_record_keeps_unknown_keys():
    line = b'{"id":"a","type":"user","content":"hi","newField":{"x":1}}'
    session = decode_session(line + b"\n", CODEC, "gemini_cli")
    session[0] = msgspec.structs.replace(session[0], content="bye")
    out = json.loads(session.dump())
    assert out == {"id": "a", "type": "user", "content": "bye", "newField": {"x": 1}}


def test_detect_prefers_gemini_over_other_shapes():
    assert detect([{"sessionId": "s", "projectHash": "p", "startTime": "t"}]) >= 10
    assert detect([{"uuid": "u", "parentUuid": None, "sessionId": "s", "type": "user"}]) == 0
    assert api.detect(GENUINE.read_bytes()) == "gemini_cli"
    assert HARNESS.detect([None, None]) == 0
