"""stream-json codec: byte-identical round trips, typed lines, verbatim unknowns, and
detection of a capture versus a Claude Code session file."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.harnesses.claude_code.records import TextBlock
from txcodec.harnesses.claude_code.records import ToolResultBlock
from txcodec.harnesses.stream_json import CODEC
from txcodec.harnesses.stream_json import detect
from txcodec.harnesses.stream_json.records import AssistantLine
from txcodec.harnesses.stream_json.records import ControlCancelRequestLine
from txcodec.harnesses.stream_json.records import ControlRequestLine
from txcodec.harnesses.stream_json.records import ControlResponseLine
from txcodec.harnesses.stream_json.records import RateLimitEventLine
from txcodec.harnesses.stream_json.records import ResultLine
from txcodec.harnesses.stream_json.records import StreamEventLine
from txcodec.harnesses.stream_json.records import SystemLine
from txcodec.harnesses.stream_json.records import UserLine
from txcodec.model.native import Opaque
from txcodec.model.native import decode_session

CAPTURES = sorted((GOLDEN / "stream_json").glob("*/capture.jsonl"))
INPUTS = sorted((GOLDEN / "stream_json").glob("*/input.jsonl"))


def _load(data: bytes):
    return decode_session(data, CODEC, "stream_json")


# --- bytes in, same bytes out ---------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
TYPES = [
    "system",
    "assistant",
    "user",
    "result",
    "stream_event",
    "rate_limit_event",
    "control_request",
    "control_response",
    "control_cancel_request",
    "keep_alive",
    "tool_progress",
    "something_new",
]


@st.composite
def protocol_lines(draw) -> bytes:
    kind = draw(st.sampled_from(TYPES))
    body = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "session_id",
                    "uuid",
                    "subtype",
                    "message",
                    "event",
                    "result",
                    "request",
                    "response",
                    "request_id",
                    "parent_tool_use_id",
                    "usage",
                    "modelUsage",
                    "isReplay",
                    "x",
                ]
            ),
            json_values,
            max_size=5,
        )
    )
    value = {"type": kind, **body}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1])))
    return text.replace("\n", " ").encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(protocol_lines() | st.binary(max_size=40), max_size=8), st.booleans(), st.booleans())
def test_any_lines_round_trip_byte_identical(lines, crlf, final_newline):
    data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\n" if final_newline else b"")
    assert _load(data).dump() == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_round_trip(data):
    assert _load(data).dump() == data


@pytest.mark.parametrize("path", CAPTURES + INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_genuine_captures_round_trip_and_type_every_line(path):
    data = path.read_bytes()
    session = _load(data)
    assert session.dump() == data
    assert session.diagnostics == []  # every line the real CLI printed is typed


@pytest.mark.parametrize("path", corpus_files("claude_code")[:20], ids=lambda p: p.name)
def test_session_files_round_trip_through_this_codec_too(path):
    data = api.read_bytes(path)
    assert _load(data).dump() == data


# --- typed where known ----------------------------------------------------------------

GENUINE_TYPES = {
    "system": SystemLine,
    "assistant": AssistantLine,
    "user": UserLine,
    "result": ResultLine,
    "stream_event": StreamEventLine,
}


def test_genuine_captures_cover_the_observed_types():
    seen = {type(r) for p in CAPTURES for r in _load(p.read_bytes())}
    assert set(GENUINE_TYPES.values()) <= seen


def test_init_and_result_fields_are_typed():
    session = _load((GOLDEN / "stream_json" / "parallel_tools" / "capture.jsonl").read_bytes())
    init = session[0]
    assert isinstance(init, SystemLine) and init.subtype == "init"
    assert init.claude_code_version == "2.1.332" and "Bash" in init.tools
    assert isinstance(init.cwd, str) and isinstance(init.session_id, str) and isinstance(init.model, str)
    result = session[-1]
    assert isinstance(result, ResultLine) and result.subtype == "success" and result.is_error is False
    # observed: 3 for one prompt with two parallel tool calls (2 API calls)
    assert result.session_id == init.session_id and result.num_turns == 3
    assert isinstance(result.total_cost_usd, float) and isinstance(result.model_usage_camel, dict)
    assert isinstance(result.model_usage_since_last_result, dict) and result.result == "Both printed."


SEED_LINES = {  # one line per control-plane type (docs/stream_json.md#line-types)
    b'{"type":"control_request","request_id":"req_123","request":{"subtype":"can_use_tool","tool_name":"Bash",'
    b'"tool_use_id":"toolu_abc","input":{"command":"rm -rf /tmp/test"},'
    b'"blocked_paths":"/etc,/usr"}}': ControlRequestLine,
    b'{"type":"control_response","request_id":"req_123","response":{"subtype":"success","result":'
    b'{"behavior":"allow","updatedPermissions":[],"message":""}}}': ControlResponseLine,
    b'{"type":"control_cancel_request","request_id":"req_123"}': ControlCancelRequestLine,
    b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1771390800},'
    b'"uuid":"u1","session_id":"s1"}': RateLimitEventLine,
    b'{"type":"result","subtype":"success","cost_usd":0.0234,"duration_ms":15234,"is_error":false,"num_turns":3,'
    b'"model_usage":{"claude-sonnet-4-5":{"context_window":200000}},'
    b'"result":{"text":"done","session_id":"s"}}': ResultLine,
}


@pytest.mark.parametrize("line,cls", SEED_LINES.items())
def test_seed_lines_are_typed(line, cls):
    assert isinstance(CODEC.decode(line), cls)


def test_unknown_type_is_kept_verbatim_with_its_type():
    line = b'{"type":"brand_new_event","session_id":"s","x":[1,2]}'
    record = CODEC.decode(line)
    assert isinstance(record, Opaque) and record.type == "brand_new_event" and record.raw == line


def test_unknown_block_is_kept_as_raw_inside_a_typed_line():
    line = (
        b'{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"hi"},'
        b'{"type":"fancy_block","z":1}]},"session_id":"s","uuid":"u","parent_tool_use_id":null}'
    )
    record = CODEC.decode(line)
    assert isinstance(record, AssistantLine)
    assert isinstance(record.message.content[0], TextBlock)
    assert isinstance(record.message.content[1], msgspec.Raw)
    assert _load(line).dump() == line


def test_odd_tool_result_content_keeps_the_rest_typed():
    line = (
        b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
        b'"content":{"stdout":"x"}}]},"session_id":"s","uuid":"u"}'
    )
    record = CODEC.decode(line)
    assert isinstance(record, UserLine) and isinstance(record.message.content[0], ToolResultBlock)
    assert isinstance(record.message.content[0].content, msgspec.Raw)


def test_edited_line_keeps_the_keys_the_struct_does_not_name():
    line = b'{"type":"result","subtype":"success","result":"a","brand_new_key":{"k":1},"session_id":"s"}'
    session = _load(line + b"\n")
    session[0].result = "b"
    out = json.loads(session.dump())
    assert out == {"type": "result", "subtype": "success", "result": "b", "brand_new_key": {"k": 1}, "session_id": "s"}


# --- detection ------------------------------------------------------------------------


@pytest.mark.parametrize("path", CAPTURES + INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_captures_and_input_sides_are_detected_as_stream_json(path):
    assert api.detect(path.read_bytes()) == "stream_json"


def _sample(data: bytes) -> list:
    out = []
    for line in data.split(b"\n")[:40]:
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append(None)
    return out


@pytest.mark.parametrize("path", corpus_files("claude_code", (".jsonl",))[:30], ids=lambda p: p.name)
def test_session_files_are_not_detected_as_stream_json(path):
    data = api.read_bytes(path)
    assert detect(_sample(data)) == 0
    assert api.detect(data) != "stream_json"


def test_detect_scores():
    assert detect([{"type": "system", "subtype": "init", "session_id": "s"}]) > 0
    assert detect([{"type": "user", "message": {"role": "user", "content": "hi"}}]) > 0  # stdin side
    assert detect([{"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": None, "message": {}}]) == 0
    assert detect([{"type": "summary", "summary": "t", "leafUuid": "u"}]) == 0
    assert detect([{"timestamp": "t", "type": "session_meta", "payload": {}}]) == 0
