"""Factory droid harness without the real client: codec, detection, reader, writer, store.
Each client fact the harness relies on is pinned here (test_droid_real.py proves the
writer's output forks with its history)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.droid import CODEC
from txcodec.harnesses.droid import HARNESS
from txcodec.harnesses.droid import detect
from txcodec.harnesses.droid import store
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session

CASES = sorted(p for p in (GOLDEN / "droid").iterdir() if p.is_dir())
(GENUINE,) = (GOLDEN / "droid" / "tool_call_resumed").glob("*-*.jsonl")
(HANDWRITTEN,) = (GOLDEN / "droid" / "handwritten").glob("*-*.jsonl")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_session(data, CODEC, "droid").dump() == data


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """The session round-trips byte for byte, reads to ``common.json``, which writes to
    ``written.jsonl`` (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    (path,) = case.glob("*-*.jsonl")
    session = api.load(path)
    assert session.harness == "droid" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_detection():
    lines = [json.loads(line) for line in GENUINE.read_bytes().splitlines()[:3]]
    assert lines[0]["type"] == "session_start" and "owner" in lines[0] and lines[0]["version"] == 2
    assert detect(lines) == 30 and api.load(GENUINE).harness == "droid"
    assert detect(lines[1:]) == 0  # message lines alone look like pi's
    pi = next((GOLDEN / "pi").rglob("*.jsonl"))
    assert api.detect(pi.read_bytes()) == "pi"


def test_genuine_session_reads_as_the_client_sends_it():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    first = json.loads(GENUINE.read_bytes().splitlines()[0])
    assert c.meta.id == first["id"] == GENUINE.stem and c.meta.cwd == first["cwd"] and c.meta.title == "read a.txt"
    assert c.messages[0].meta and c.messages[0].source_ids[0].startswith("context-")  # the <system-reminder> tool list
    assert c.messages[0].content[0].text.startswith("<system-reminder>")
    talk = [m for m in c.messages if not m.meta]
    assert [m.role for m in talk] == ["user", "assistant", "user", "assistant"] * 2
    call = talk[1].content[1]
    assert isinstance(call, ToolUse) and call.name == "Read"
    assert talk[2].content == [ToolResult("call_mock_1", "hello world\n", is_error=False)]
    assert c.meta.models == ["custom:Mock-0"] and set(loss.counts()) == {"record:agent_turn_outcome"}


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi")], timestamp="2026-12-01T03:00:00.000Z"),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("let me look"),
                    ToolUse("c1", "Execute", {"command": "ls"}),
                    ToolUse("c2", "Read", "x"),
                ],
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), ToolResult("zz", "stray"), Text("and?")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_records_are_what_the_client_needs():
    loss = LossReport()
    written = HARNESS.write(_conversation(id="not-a-uuid", title="T"), loss, WriteOptions(cwd="/home/u/my proj"))
    sid = written.session_id
    assert store.UUID.match(sid) and written.main == f"sessions/-home-u-my-proj/{sid}.jsonl"
    lines = [json.loads(line) for line in written.files[written.main].splitlines()]
    assert lines[0] == {
        "type": "session_start",
        "id": sid,
        "title": "T",
        "owner": "unknown",
        "version": 2,
        "cwd": "/home/u/my proj",
    }
    messages = lines[1:]
    assert all(m["type"] == "message" and m["timestamp"] for m in messages)  # a message without one is refused
    assert [m.get("parentId") for m in messages[1:]] == [m["id"] for m in messages[:-1]]
    assert [m["message"]["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["message"]["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "c1", "is_error": True, "content": "a.txt"},
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "is_error": True,
            "content": "[Tool call interrupted: no result was recorded]",
        },
    ]
    assert {
        "write:session-id",
        "write:thinking",
        "write:wrapped-input",
        "write:orphan-result",
        "write:missing-tool-result",
    } <= set(loss.counts())
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="../x"))


def test_store_discovers_sessions(tmp_path):
    written = HARNESS.write(_conversation(id="x"), LossReport(), WriteOptions(cwd="/p"))
    paths = api.install(written, "droid", tmp_path)
    (info,) = store.discover(tmp_path)
    assert info.id == written.session_id and info.path == str(paths[0]) and info.cwd == "/p" and info.messages == 4


def test_hostile_input_is_reported_not_raised():
    data = (
        b'{"type":"session_start","id":"../x"}\n{"type":"message","message":{"role":"tool"}}\n'
        b'{"type":"message","message":{"role":"user","content":7}}\n{"type":"message","message":{"role":"assistant","content":[{"type":"weird"}]}}\n'
        b"not json\n[1]\n"
    )
    loss = LossReport()
    session = api.load(data, "droid")
    assert session.dump() == data
    c = HARNESS.read(session, loss)
    assert [m.role for m in c.messages] == ["assistant"]
    assert {"message:tool", "read:malformed", "block:weird"} <= set(loss.counts())


def test_registered():
    assert registry.get("droid") is HARNESS
