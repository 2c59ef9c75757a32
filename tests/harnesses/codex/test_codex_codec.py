"""Codex rollout codec: byte-identical round trips, typed views, older generations."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import CORPUS
from support.paths import corpus_files
from support.paths import manifest_sha256
from support.paths import sha256

from txcodec import api
from txcodec.harnesses.codex import HARNESS
from txcodec.harnesses.codex import records as R
from txcodec.harnesses.codex.codec import CODEC
from txcodec.model.native import Opaque
from txcodec.model.native import decode_session

CODEX_FILES = corpus_files("codex", suffixes=(".jsonl",))


def roundtrip(data: bytes) -> bytes:
    return decode_session(data, CODEC, "codex").dump()


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name[:50])
def test_corpus_roundtrip_is_byte_identical(path):
    data = path.read_bytes()
    assert sha256(data) == manifest_sha256()[str(path.relative_to(CORPUS))]
    assert roundtrip(data) == data
    session = api.load(path)
    assert session.harness == "codex", "the detector must pick codex for every codex corpus file"
    assert session.dump() == data


def test_corpus_is_typed_not_opaque():
    """Real rollouts have no opaque lines; unknown payloads keep their line typed."""
    for path in CODEX_FILES:
        if "schema_drift" in path.name or "malformed" in str(path):
            continue
        session = decode_session(path.read_bytes(), CODEC, "codex")
        assert not session.diagnostics, (path, session.diagnostics[:3])


def test_malformed_last_line_is_opaque_with_line_number():
    (path,) = [p for p in CODEX_FILES if "malformed" in str(p)]
    session = decode_session(path.read_bytes(), CODEC, "codex")
    assert [n for n, _ in session.diagnostics] == [3]
    assert isinstance(session[0], R.SessionMetaLine) and session[0].payload.id.startswith("6666")


LINES = {
    "meta": b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta",'
    b'"payload":{"id":"x","cwd":"/w","originator":"o","cli_version":"1"}}',
    "fc": b'{"timestamp":"t","ordinal":3,"type":"response_item",'
    b'"payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}","call_id":"c1"}}',
    "unknown_item": b'{"timestamp":"t","type":"response_item",'
    b'"payload":{"type":"tool_search_call","call_id":"c","arguments":{"q":1}}}',
    "unknown_event": b'{"timestamp":"t","type":"event_msg","payload":{"type":"brand_new_event","x":[1,2]}}',
    "bad_known_event": b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":42}}',
    "unknown_line": b'{"timestamp":"t","type":"world_state","payload":{"full":true}}',
    "legacy_meta": b'{"id":"c3c4b301-27c8-4c70-b6e4-46b99fdf0236",'
    b'"timestamp":"2025-04-01T00:00:00Z","instructions":null}',
    "legacy_state": b'{"record_type":"state"}',
    "legacy_item": b'{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"hi"}]}',
}


def test_typed_views():
    d = {k: CODEC.decode(v) for k, v in LINES.items()}
    assert isinstance(d["meta"], R.SessionMetaLine) and d["meta"].payload.cli_version == "1"
    assert isinstance(d["fc"].payload, R.FunctionCallItem) and d["fc"].ordinal == 3
    assert json.loads(d["fc"].payload.arguments) == {"cmd": "ls"}
    # unknown payload types keep the envelope typed, the payload as its bytes
    for key in ("unknown_item", "unknown_event", "bad_known_event"):
        assert not isinstance(d[key], Opaque), key
        assert isinstance(d[key].payload, msgspec.Raw), key
    assert isinstance(d["unknown_item"], R.ResponseItemLine)
    assert isinstance(d["unknown_line"], R.OtherLine) and d["unknown_line"].type == "world_state"
    assert isinstance(d["legacy_meta"], R.LegacyMeta) and d["legacy_meta"].instructions is None
    assert isinstance(d["legacy_state"], R.LegacyState)
    assert isinstance(d["legacy_item"], R.MessageItem) and d["legacy_item"].content[0].text == "hi"


def test_legacy_generation_is_detected_and_roundtrips():
    data = b"\n".join([LINES["legacy_meta"], LINES["legacy_state"], LINES["legacy_item"]]) + b"\n"
    assert api.detect(data) == "codex"
    assert api.load(data).dump() == data


def test_edit_keeps_unknown_fields():
    line = (
        b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user",'
        b'"content":[{"type":"input_text","text":"a"}],"internal_x":{"k":1}},"metadata":{"m":2}}'
    )
    session = decode_session(line + b"\n", CODEC, "codex")
    session[0].payload.content[0].text = "b"
    out = json.loads(session.dump())
    assert out["payload"]["content"][0]["text"] == "b"
    assert out["payload"]["internal_x"] == {"k": 1} and out["metadata"] == {"m": 2}


def test_detect_scores():
    assert HARNESS.detect([json.loads(LINES["meta"]), json.loads(LINES["fc"])]) > 0
    assert HARNESS.detect([{"type": "user", "uuid": "u", "sessionId": "s", "message": {}}]) == 0
    assert HARNESS.detect([None, 3, "x"]) == 0


# --- properties -------------------------------------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert roundtrip(data) == data


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20) | st.sampled_from(
    ["\u2028", "\r", "é", "\x00", '"\\']
)
_part = st.builds(lambda t, k: {"type": k, "text": t}, _text, st.sampled_from(["input_text", "output_text"]))
_item = st.one_of(
    st.builds(
        lambda r, c: {"type": "message", "role": r, "content": c},
        st.sampled_from(["user", "assistant", "developer"]),
        st.lists(_part, max_size=3),
    ),
    st.builds(
        lambda s, e: {"type": "reasoning", "summary": [{"type": "summary_text", "text": s}], "encrypted_content": e},
        _text,
        st.none() | _text,
    ),
    st.builds(
        lambda n, a, c: {"type": "function_call", "name": n, "arguments": json.dumps(a), "call_id": c},
        _text,
        st.dictionaries(_text, _text, max_size=2),
        _text,
    ),
    st.builds(
        lambda c, o: {"type": "function_call_output", "call_id": c, "output": o},
        _text,
        _text | st.lists(_part, max_size=2),
    ),
    st.builds(lambda c, i: {"type": "custom_tool_call", "call_id": c, "name": "apply_patch", "input": i}, _text, _text),
    st.builds(lambda t, x: {"type": t, "x": x}, st.sampled_from(["future_item", "message"]), _text),
)
_event = st.one_of(
    st.builds(lambda m: {"type": "user_message", "message": m}, _text),
    st.builds(lambda m: {"type": "agent_message", "message": m}, _text),
    st.builds(
        lambda n: {"type": "token_count", "info": {"total_token_usage": {"input_tokens": n, "output_tokens": 1}}},
        st.integers(0, 10**6),
    ),
    st.builds(lambda t: {"type": t}, st.sampled_from(["task_started", "context_compacted", "novel_event"])),
)
_line = st.one_of(
    st.builds(lambda p: {"type": "response_item", "payload": p}, _item),
    st.builds(lambda p: {"type": "event_msg", "payload": p}, _event),
    st.builds(lambda m: {"type": "turn_context", "payload": {"model": m, "cwd": "/w"}}, _text),
    st.builds(lambda m: {"type": "compacted", "payload": {"message": m}}, _text),
    st.just({"type": "world_state", "payload": {"full": True}}),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(_line, st.booleans(), st.booleans()), max_size=8),
    st.sampled_from([b"\n", b"\r\n"]),
    st.booleans(),
)
def test_generated_rollouts_roundtrip(lines, eol, final):
    meta = {
        "timestamp": "2026-01-01T00:00:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "01990000-0000-7000-8000-000000000001",
            "cwd": "/w",
            "originator": "o",
            "cli_version": "0.171.0",
        },
    }
    raws = [json.dumps(meta).encode()]
    for n, (line, ascii_, ordinal) in enumerate(lines):
        line = {"timestamp": "2026-01-01T00:00:01.000Z", **({"ordinal": n} if ordinal else {}), **line}
        raws.append(json.dumps(line, ensure_ascii=ascii_, separators=(",", ":") if ascii_ else (", ", ": ")).encode())
    data = eol.join(raws) + (eol if final else b"")
    session = api.load(data)
    assert session.harness == "codex"
    assert session.dump() == data
    assert not [d for d in session.diagnostics if not d[1].partial]
