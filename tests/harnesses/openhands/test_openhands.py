"""OpenHands harness without the real client: codec, detection, the folder session, reader,
writer, store and hostile input. Each client fact the harness relies on is pinned here
(test_openhands_real.py proves the writer's output resumes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec import sessions
from txcodec.cli import main
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.openhands import CODEC
from txcodec.harnesses.openhands import HARNESS
from txcodec.harnesses.openhands import detect
from txcodec.harnesses.openhands import store
from txcodec.harnesses.openhands.write import SYSTEM_PROMPT
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.native import Opaque
from txcodec.model.native import decode_document

CASES = sorted(p for p in (GOLDEN / "openhands").iterdir() if p.is_dir())
GENUINE = GOLDEN / "openhands" / "tool_call_resumed" / "1124e205b2e047d19cd605c88100e9ff"
HANDWRITTEN = GOLDEN / "openhands" / "handwritten" / "5e5510110000400080000000000c4a03"


def folder_of(case: Path) -> Path:
    (folder,) = [p for p in case.iterdir() if p.is_dir()]
    return folder


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_document(data, CODEC, "openhands").dump() == data


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """Every file of the folder comes back byte for byte; the folder reads to
    ``common.json``, which writes to ``written.jsonl`` (the events, one a line)
    (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    folder = folder_of(case)
    session = api.load(folder)
    assert session.harness == "openhands" and not session.diagnostics
    on_disk = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.json")}
    assert session.files() == on_disk
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    events = b"\n".join(written.files.values()) + b"\n"
    for name, data in {"common.json": pretty(conversation), "written.jsonl": events}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_the_client_writes_one_compact_line_per_file_without_newline():
    for path in GENUINE.rglob("*.json"):
        data = path.read_bytes()
        assert data.startswith(b'{"id":"') and b"\n" not in data, path.name
    names = sorted(p.name for p in (GENUINE / "events").iterdir())
    assert [n[:12] for n in names] == [f"event-{i:05d}-" for i in range(11)]
    state = json.loads((GENUINE / "base_state.json").read_bytes())
    assert state["agent"]["llm"]["api_key"] == "**********"  # masked by the client: nothing secret to carry


def test_one_session_from_the_folder_its_events_folder_or_any_file_in_it():
    whole = api.to_common(api.load(GENUINE))
    for path in (GENUINE / "events", GENUINE / "base_state.json", *sorted((GENUINE / "events").iterdir())[3:5]):
        assert store.session_folder(path) == GENUINE
        assert api.to_common(api.load(path)) == whole
    assert store.session_folder(GENUINE.parent) is None and store.session_folder(GENUINE / "nope.json") is None


def test_detection():
    for path in GENUINE.rglob("*.json"):
        assert api.detect(path.read_bytes()) == "openhands", path.name
    assert detect([json.loads(p.read_bytes()) for p in (HANDWRITTEN / "events").iterdir()]) >= 30
    for other in ("continue_cli", "copilot_cli", "codex"):
        for path in (GOLDEN / other).rglob("*.json*"):
            data = path.read_bytes()
            lines = (
                [json.loads(data)]
                if path.suffix == ".json"
                else [json.loads(x) for x in data.splitlines() if x.startswith(b"{")][:40]
            )
            assert detect(lines) == 0, path


def test_genuine_session_reads_as_the_client_replays_it():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    assert c.meta.id == "1124e205-b2e0-47d1-9cd6-05c88100e9ff" and c.meta.models == ["openai/mock-model"]
    assert c.meta.cwd.endswith("/project")
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant", "user"] * 2
    text, call = c.messages[1].content
    assert text == Text("Reading.") and (call.id, call.name, call.input) == (
        "call_mock_1",
        "terminal",
        {"command": "cat hello.txt", "security_risk": "LOW", "summary": "read the file"},
    )
    assert c.messages[2].content == [ToolResult("call_mock_1", "hello world", is_error=None)]
    assert c.messages[3].content[0].name == "finish"
    # the system prompt is the client's own, sent as stored: kept for OpenHands, declared
    assert loss.counts() == {"record:SystemPromptEvent": 1}
    kept = c.meta.extra["openhands"]["system_prompt_event"]
    assert kept["system_prompt"]["text"].startswith("You are OpenHands agent")


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi"), Image(media_type="image/png", data="AAAA")], timestamp="2026-11-01T10:00:00Z"),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("let me look"),
                    ToolUse("c1", "Bash", {"command": "ls"}),
                    ToolUse("c2", "Read", {"filepath": "x"}),
                ],
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), ToolResult("zz", "lost"), Text("and?")]),
            Message("assistant", [ToolUse("c3", "Bash", {"command": "pwd"})]),
            Message("user", [ToolResult("c3", "/p")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_events_are_what_the_client_needs():
    loss = LossReport()
    written = HARNESS.write(_conversation(id="../bad id"), loss, WriteOptions())
    sid = written.session_id
    folder = sid.replace("-", "")
    assert all(name.startswith(f"{folder}/events/event-") for name in written.files)
    events = [json.loads(data) for data in written.files.values()]
    assert [e["kind"] for e in events] == [
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ActionEvent",
        "AgentErrorEvent",
        "AgentErrorEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "MessageEvent",
    ]
    # a system prompt first (the client refuses a user message before one): ours, declared
    assert events[0]["system_prompt"]["text"] == SYSTEM_PROMPT
    assert events[1]["timestamp"] == "2026-11-01T10:00:00"  # the SDK's zone-less form
    assert events[1]["llm_message"]["content"][1] == {"type": "image", "image_urls": ["data:image/png;base64,AAAA"]}
    first, second = events[2], events[3]
    assert first["llm_response_id"] == second["llm_response_id"]  # sent back as one message with two calls
    assert first["thought"] == [{"type": "text", "text": "let me look"}] and second["thought"] == []
    assert first["reasoning_content"] == "hmm" and "action" not in first
    assert json.loads(first["tool_call"]["arguments"]) == {"command": "ls"}
    # an error result is an AgentErrorEvent (sent as its text); a call without result gets one too
    assert (events[4]["tool_call_id"], events[4]["error"]) == ("c1", "a.txt")
    assert events[5]["tool_call_id"] == "c2" and "interrupted" in events[5]["error"]
    assert events[6]["llm_message"]["content"][0]["text"] == "[tool result zz]\nlost"
    assert events[8]["observation"]["kind"] == "MCPToolObservation" and events[8]["action_id"] == events[7]["id"]
    assert {"write:system-prompt", "write:synthetic-result", "write:orphan-result", "write:session-id"} <= set(
        loss.counts()
    )
    back = api.to_common(api.load(written.files[written.main] + b"\n" + b"\n".join(list(written.files.values())[1:])))
    assert [m.role for m in back.messages] == ["user", "assistant", "user", "user", "assistant", "user", "assistant"]
    assert back.messages[2].content[:2] == [
        ToolResult("c1", "a.txt", is_error=True),
        ToolResult("c2", "[Tool call interrupted: no result was recorded]", is_error=True),
    ]


def test_an_openhands_conversation_gets_its_own_system_prompt_actions_and_observations_back():
    loss = LossReport()
    source = api.load(GENUINE)
    written = HARNESS.write(api.to_common(source), loss, WriteOptions())
    assert written.session_id == "1124e205-b2e0-47d1-9cd6-05c88100e9ff" and "write:system-prompt" not in loss.counts()
    original = [json.loads(d) for name, d in source.files().items() if name.startswith("events/")]
    events = [json.loads(d) for d in written.files.values()]
    assert events[0] == original[0]
    assert [e.get("action") for e in events] == [e.get("action") for e in original]
    assert [e.get("observation") for e in events] == [e.get("observation") for e in original]


def test_writer_ids():
    assert (
        HARNESS.write(
            _conversation(), LossReport(), WriteOptions(session_id="5E551011-0000-4000-8000-000000000C4A")
        ).session_id
        == "5e551011-0000-4000-8000-000000000c4a"
    )
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="../x"))


def test_an_edited_event_is_the_only_file_rewritten():
    session = api.load(HANDWRITTEN)
    before = session.files()
    session[1].id = "edited"
    after = session.files()
    changed = [name for name in before if before[name] != after[name]]
    assert changed == ["events/event-00001-00000000-0000-4000-8000-000000000001.json"]
    assert json.loads(after[changed[0]])["llm_message"]["content"][0]["text"] == "HW question: what is here?"


def test_store_discovery_and_its_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENHANDS_CONVERSATIONS_DIR", str(tmp_path / "c"))
    assert store.default_root() == tmp_path / "c"
    monkeypatch.delenv("OPENHANDS_CONVERSATIONS_DIR")
    monkeypatch.setenv("OPENHANDS_PERSISTENCE_DIR", str(tmp_path / "p"))
    assert store.default_root() == tmp_path / "p" / "conversations"
    monkeypatch.delenv("OPENHANDS_PERSISTENCE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "home" / ".openhands" / "conversations"
    assert store.default_root() == root
    written = api.convert(GENUINE, "openhands", session_id="7f0d2c44-1b2a-4c3d-8e9f-0a1b2c3d4e5f")[0]
    api.install(written, "openhands")
    shutil.copytree(HANDWRITTEN, root / HANDWRITTEN.name)
    (root / "not-a-conversation").mkdir()
    rows = sessions.discover("openhands")
    assert {r.session_id for r in rows} == {
        "7f0d2c44-1b2a-4c3d-8e9f-0a1b2c3d4e5f",
        "5e551011-0000-4000-8000-0000000c4a03",
    }
    # the user's and the model's turns (txcodec.model.summary): tool results and their runs are not counted
    assert {r.messages for r in rows} == {6, 3}
    assert sessions.resolve("7f0d2c44") == root / "7f0d2c441b2a4c3d8e9f0a1b2c3d4e5f"
    result = CliRunner().invoke(main, ["show", "5e551011"])
    assert result.exit_code == 0 and "HW-ANSWER: there is a.txt" in result.output, result.output
    result = CliRunner().invoke(main, ["verify", str(root / HANDWRITTEN.name)])
    assert result.exit_code == 0 and "5 files: all byte-identical" in result.output, result.output


def test_cli_takes_the_folder_or_a_file_in_it(tmp_path):
    for path in (GENUINE, next((GENUINE / "events").iterdir())):
        result = CliRunner().invoke(main, ["show", str(path)])
        assert result.exit_code == 0 and "count the words" in result.output, result.output
    result = CliRunner().invoke(main, ["convert", "--to", "claude_code", str(GENUINE), "-o", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        main, ["convert", "--to", "openhands", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "o").iterdir()
    assert api.to_common(api.load(folder)).messages[0].content == [Text("read hello.txt")]


def test_hostile_event_files(tmp_path):
    folder = tmp_path / ("ab" * 16)
    shutil.copytree(HANDWRITTEN, folder)
    events = sorted((folder / "events").iterdir())
    events[1].write_bytes(b'{"id": "x", "kind": {"a": 1}, "source": "user"}')
    events[2].write_bytes(b"\xff\xfe not json")
    (folder / "events" / "event-00009-..%2f..json").write_bytes(b"{}")  # not an event name: left alone
    session = api.load(folder)
    assert [type(r) for r in session.records].count(Opaque) == 2
    assert len(session.lines) == 5
    assert b"".join(session.files().values()) == b"".join(p.read_bytes() for p in events)
    loss = LossReport()
    conversation = api.to_common(session, loss)
    assert "opaque" in loss.counts() or "record:invalid" in loss.counts()
    assert [m.role for m in conversation.messages] == ["user", "assistant"]
    result = CliRunner().invoke(main, ["show", str(events[2])])
    assert result.exit_code == 0, result.output


def test_a_wrong_shape_is_reported_not_raised(tmp_path):
    folder = tmp_path / ("cd" * 16)
    shutil.copytree(HANDWRITTEN, folder)
    path = sorted((folder / "events").iterdir())[2]
    value = json.loads(path.read_bytes())
    value["tool_call"] = {"id": 5, "name": ["x"], "arguments": 7}
    value["thought"] = "not a list"
    path.write_text(json.dumps(value))
    loss = LossReport()
    conversation = api.to_common(api.load(folder), loss)
    assert conversation.messages[1].role == "assistant"


def test_registered():
    assert registry.get("openhands") is HARNESS and HARNESS.check_resume is not None
