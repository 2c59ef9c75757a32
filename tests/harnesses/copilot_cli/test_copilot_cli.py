"""GitHub Copilot CLI harness without the real client: codec, detection, reader, writer,
store. Each client fact the harness relies on is pinned here (the real-client tests in
test_copilot_cli_real.py prove the writer's output resumes)."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.copilot_cli import CODEC
from txcodec.harnesses.copilot_cli import HARNESS
from txcodec.harnesses.copilot_cli import detect
from txcodec.harnesses.copilot_cli import store
from txcodec.harnesses.copilot_cli.records import Event
from txcodec.harnesses.copilot_cli.write import CLIENT_VERSION
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session

CASES = sorted(
    p for p in (GOLDEN / "copilot_cli").iterdir() if p.is_dir() and p.name != "scenarios"
)  # scenarios: test_scenarios.py
GENUINE = GOLDEN / "copilot_cli" / "tool_call_resumed" / "events.jsonl"


def load(data: bytes):
    return decode_session(data, CODEC, "copilot_cli")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert load(data).dump() == data


_event = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["session.start", "user.message", "assistant.message", "x.y", "other"]),
        "data": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
        "id": st.text(max_size=10),
        "timestamp": st.text(max_size=10),
        "parentId": st.one_of(st.none(), st.text(max_size=5)),
    },
    optional={"ephemeral": st.booleans(), "zz": st.integers()},
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_event, max_size=6), st.booleans(), st.sampled_from([",", ", "]))
def test_structured_lines_roundtrip(events, final_newline, sep):
    data = b"\n".join(json.dumps(e, separators=(sep, ":"), ensure_ascii=False).encode() for e in events)
    data += b"\n" if final_newline and events else b""
    assert load(data).dump() == data


def test_an_edited_event_keeps_keys_the_typed_view_does_not_know(tmp_path):
    data = GENUINE.read_bytes()
    session = load(data)
    session[2] = Event(
        **{
            **{f: getattr(session[2], f) for f in ("type", "id", "timestamp", "parent_id", "data")},
            "timestamp": "2026-01-01T00:00:00Z",
        }
    )
    out = session.dump().split(b"\n")
    assert json.loads(out[2])["timestamp"] == "2026-01-01T00:00:00Z"
    assert json.loads(out[2])["data"] == json.loads(data.split(b"\n")[2])["data"]
    assert out[3:] == data.split(b"\n")[3:]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """``events.jsonl`` round-trips byte for byte, reads to ``common.json``, which writes
    to ``written.jsonl`` (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    path = case / "events.jsonl"
    session = api.load(path)
    assert session.harness == "copilot_cli" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_detection_is_decisive():
    values = [json.loads(line) for line in GENUINE.read_bytes().splitlines()]
    assert detect(values) >= 20 and api.detect(GENUINE.read_bytes()) == "copilot_cli"
    for other in ("qwen_code", "pi", "codex"):
        for case in (GOLDEN / other).iterdir():
            for f in case.glob("*.jsonl"):
                assert detect([json.loads(x) for x in f.read_bytes().splitlines() if x.strip()][:40]) == 0, f


def test_genuine_session_reads_as_the_client_replays_it():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    assert c.meta.id == "5298ddd0-2c86-4e2f-a0b7-9053a2e97148" and c.meta.client_version == "1.0.102"
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    first = c.messages[0]
    assert first.content == [Text("read hello.txt")]
    # the model was sent the prompt after a <current_datetime> block: kept beside it
    assert re.match(r"<current_datetime>.*</current_datetime>\n\nread hello.txt$", first.extra["transformedContent"])
    call = c.messages[1].content[1]
    assert (
        isinstance(call, ToolUse)
        and call.name == "bash"
        and call.input == {"command": "cat hello.txt", "description": "show file"}
    )
    result = c.messages[2].content[0]
    assert isinstance(result, ToolResult) and result.is_error is False
    assert result.content == "hello world\n<shellId: 0 completed with exit code 0>"
    assert loss.counts() == {"event:system.message": 1}


def test_usage_comes_from_usage_records_once_per_call_across_resumes():
    """The genuine file was resumed once: its two ``session.shutdown`` snapshots count 2
    and then 4 calls (running totals), and the mock's ``apiCallId``s repeat after the
    resume. Only the four ``session.usage_record`` receipts count, one per call."""
    data = GENUINE.read_bytes()
    events = [json.loads(x) for x in data.splitlines()]
    shutdowns = [
        e["data"]["accountingSnapshot"]["modelMetrics"]["mock-model"]["requests"]["count"]
        for e in events
        if e["type"] == "session.shutdown"
    ]
    assert shutdowns == [2, 4]
    ids = [e["data"]["usage"]["apiCallId"] for e in events if e["type"] == "session.usage_record"]
    assert len(ids) == 4 and len(set(ids)) == 2
    c = api.to_common(api.load(GENUINE))
    usages = [m.usage for m in c.messages if m.role == "assistant"]
    assert usages == [Usage(input_tokens=20, output_tokens=5)] * 4
    assert [m.stop_reason for m in c.messages if m.role == "assistant"] == ["tool_use", "end_turn"] * 2
    from txcodec.usage import session_usage

    (row,) = session_usage(c)
    assert row.calls == 4 and row.input_tokens == 80 and row.output_tokens == 20


def test_input_tokens_include_the_cached_ones():
    """1.0.102 (cli-main.js): ``inputTokensUncached = inputTokens - cacheReadTokens -
    cacheWriteTokens``; Common's input_tokens are the uncached ones."""
    lines = GOLDEN.joinpath("copilot_cli/handwritten/events.jsonl").read_bytes().splitlines()
    usage = {
        "type": "session.usage_record",
        "data": {
            "usage": {
                "model": "m",
                "inputTokens": 100,
                "cacheReadTokens": 60,
                "cacheWriteTokens": 10,
                "outputTokens": 7,
                "reasoningTokens": 3,
                "finishReason": "stop",
            }
        },
        "id": str(uuid.uuid4()),
        "timestamp": "2026-11-01T00:00:04.500Z",
        "parentId": None,
    }
    data = b"\n".join([*lines[:4], json.dumps(usage).encode(), lines[4]]) + b"\n"
    c = api.to_common(api.load(data))
    assert c.messages[-1].usage == Usage(
        input_tokens=30,
        output_tokens=7,
        cache_creation_input_tokens=10,
        cache_read_input_tokens=60,
        reasoning_output_tokens=3,
    )
    # and written back the client's way
    written = HARNESS.write(c, LossReport(), WriteOptions())
    record = [json.loads(x) for x in written.files[written.main].splitlines() if b"usage_record" in x][0]["data"][
        "usage"
    ]
    assert (record["inputTokens"], record["cacheReadTokens"], record["cacheWriteTokens"]) == (100, 60, 10)


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi")]),
            Message(
                "assistant",
                [Thinking("hmm", signature="sig"), Text("let me look"), ToolUse("c1", "bash", {"command": "ls"})],
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True)]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_envelope_is_what_the_client_checks():
    """Every line: ``id`` a UUID, ``timestamp`` ISO with a zone, ``parentId`` key present
    (UUID or null); a ``session.start`` first with the fields the schema requires."""
    loss = LossReport()
    written = HARNESS.write(_conversation(id="not-a-uuid"), loss, WriteOptions(cwd="/p"))
    sid = written.session_id
    assert uuid.UUID(sid) and written.main == f"session-state/{sid}/events.jsonl"
    events = [json.loads(x) for x in written.files[written.main].splitlines()]
    start = events[0]
    assert start["type"] == "session.start" and start["parentId"] is None
    assert {"sessionId", "version", "producer", "copilotVersion", "startTime"} <= set(start["data"])
    assert (
        start["data"]["sessionId"] == sid
        and start["data"]["copilotVersion"] == CLIENT_VERSION
        and start["data"]["context"] == {"cwd": "/p"}
    )
    for before, event in zip(events, events[1:]):
        assert uuid.UUID(event["id"]) and event["parentId"] == before["id"]
        assert re.search(r"(Z|[+-]\d\d:\d\d)$", event["timestamp"])
    kinds = [e["type"] for e in events]
    assert kinds == [
        "session.start",
        "user.message",
        "assistant.message",
        "tool.execution_complete",
        "assistant.message",
    ]
    assert events[2]["data"]["toolRequests"] == [
        {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls"}, "type": "function"}
    ]
    assert events[2]["data"]["reasoningText"] == "hmm"
    assert events[3]["data"] == {"toolCallId": "c1", "success": False, "error": {"message": "a.txt"}}
    assert "write:thinking-signature" in loss.counts()
    back = api.to_common(api.load(written.files[written.main]))
    assert back.messages[2].content == [ToolResult("c1", "a.txt", is_error=True)]


def test_writer_keeps_a_uuid_id_and_refuses_an_unsafe_one():
    sid = "5e551011-0000-4000-8000-0000000c0a02"
    assert HARNESS.write(_conversation(id=sid), LossReport(), WriteOptions()).session_id == sid
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="../escape"))
    loss = LossReport()
    HARNESS.write(_conversation(), loss, WriteOptions())
    assert "write:cwd" in loss.counts()


def test_store_discovery_honours_copilot_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "ch"))
    assert store.default_root() == tmp_path / "ch"
    monkeypatch.delenv("COPILOT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.default_root() == tmp_path / "home" / ".copilot"
    written = api.convert(GENUINE, "copilot_cli")[0]
    (path,) = api.install(written, "copilot_cli", tmp_path / "ch")
    (tmp_path / "ch" / "session-state" / "not-a-session").mkdir()
    (info,) = store.discover(tmp_path / "ch")
    assert info.id == written.session_id and info.path == str(path) and info.messages == 6
    assert info.cwd == "/tmp/txcodec-copilot-ofgquf27/project" and info.version == CLIENT_VERSION


def test_registered():
    assert registry.get("copilot_cli") is HARNESS and HARNESS.check_resume is not None
