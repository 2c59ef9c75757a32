"""Continue CLI harness without the real client: codec, detection, reader, writer, store.
Each client fact the harness relies on is pinned here (test_continue_cli_real.py proves
the writer's output resumes)."""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.continue_cli import CODEC
from txcodec.harnesses.continue_cli import HARNESS
from txcodec.harnesses.continue_cli import detect
from txcodec.harnesses.continue_cli import store
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
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_document
from txcodec.model.native import decode_session

CASES = sorted(
    p for p in (GOLDEN / "continue_cli").iterdir() if p.is_dir() and p.name != "scenarios"
)  # scenarios: test_scenarios.py
GENUINE = GOLDEN / "continue_cli" / "tool_call_resumed" / "session.json"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert decode_session(data, CODEC, "continue_cli").dump() == data
    assert decode_document(data, CODEC, "continue_cli").dump() == data


_item = st.fixed_dictionaries(
    {
        "message": st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "x"]), "content": st.text(max_size=10)}
        ),
        "contextItems": st.just([]),
    },
    optional={"zz": st.integers()},
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_item, max_size=4), st.sampled_from([None, 2]), st.booleans())
def test_documents_roundtrip(history, indent, final_newline):
    data = json.dumps({"sessionId": "s", "history": history, "extra": 1}, indent=indent, ensure_ascii=False).encode()
    data += b"\n" if final_newline else b""
    assert decode_document(data, CODEC, "continue_cli").dump() == data


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """``session.json`` round-trips byte for byte, reads to ``common.json``, which writes
    to ``written.jsonl`` (one line) (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    path = case / "session.json"
    session = api.load(path)
    assert session.harness == "continue_cli" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions())
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_the_client_pretty_prints_its_files_and_the_writer_writes_one_line():
    data = GENUINE.read_bytes()
    assert data.startswith(b'{\n  "sessionId": ') and not data.endswith(b"\n")  # JSON.stringify(session, null, 2)
    assert api.detect(data) == "jsonl" and api.load(data).harness == "continue_cli"  # found as one document
    written = api.convert(GENUINE, "continue_cli")[0].files
    (one,) = written.values()
    assert one.count(b"\n") == 1 and api.detect(one) == "continue_cli"


def test_detection():
    assert detect([json.loads(GENUINE.read_bytes())]) == 30
    assert detect([{"sessionId": "s", "history": [{"message": {"role": "user"}}]}]) == 0  # no contextItems
    for other in ("gemini_cli",):
        path = GOLDEN / other / "legacy_json"
        for f in path.glob("*.json"):
            assert detect([json.loads(f.read_bytes())]) == 0


def test_genuine_session_reads_as_the_client_replays_it():
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    assert c.meta.id == "2d282287-cc9a-411b-97a7-1c75226dd231" and c.meta.title == "Untitled Session"
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    call = c.messages[1].content[1]
    assert isinstance(call, ToolUse) and call.name == "Read" and call.input == {"filepath": "hello.txt"}
    # the result lives in the assistant item's toolCallStates; it becomes the next user turn
    assert c.messages[2].content == [ToolResult("call_mock_1", "Content of hello.txt:\nhello world\n", is_error=False)]
    assert [m.usage for m in c.messages if m.role == "assistant"] == [Usage(input_tokens=20, output_tokens=5)] * 4
    assert c.meta.models == ["mock-model"] and not loss.counts()
    # the session's own usage is the running total of the calls, not more to add
    total = json.loads(GENUINE.read_bytes())["usage"]
    assert (total["promptTokens"], total["completionTokens"]) == (80, 20)


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi"), Image(media_type="image/png", data="AAAA")]),
            Message(
                "assistant",
                [
                    Thinking("hmm"),
                    Text("let me look"),
                    ToolUse("c1", "Bash", {"command": "ls"}),
                    ToolUse("c2", "Read", {"filepath": "x"}),
                ],
                usage=Usage(input_tokens=5, output_tokens=2, cache_read_input_tokens=10),
                model="m",
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), Text("and?")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_items_are_what_the_client_needs():
    loss = LossReport()
    written = HARNESS.write(_conversation(id="../bad id"), loss, WriteOptions(cwd="/p"))
    sid = written.session_id
    assert store.SAFE_ID.match(sid) and written.main == f"{sid}.json"
    doc = json.loads(written.files[written.main])
    assert doc["sessionId"] == sid and doc["workspaceDirectory"] == "/p"
    history = doc["history"]
    assert all(item["contextItems"] == [] for item in history)  # required by the client
    assert [i["message"]["role"] for i in history] == ["user", "assistant", "user", "assistant"]
    assert history[0]["message"]["content"][1] == {
        "type": "imageUrl",
        "imageUrl": {"url": "data:image/png;base64,AAAA"},
    }
    assistant = history[1]
    assert assistant["message"]["toolCalls"][0]["function"] == {"name": "Bash", "arguments": '{"command":"ls"}'}
    states = assistant["toolCallStates"]
    assert [(s["toolCallId"], s["status"], s["output"][0]["content"]) for s in states] == [
        ("c1", "errored", "a.txt"),
        ("c2", "errored", "[Tool call interrupted: no result was recorded]"),
    ]
    assert assistant["message"]["usage"] == {
        "prompt_tokens": 15,
        "completion_tokens": 2,
        "total_tokens": 17,
        "prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 0},
        "model": "m",
    }
    assert history[2]["message"]["content"] == "and?" and history[2]["editorState"] == "and?"
    assert {"write:thinking", "write:synthetic-result"} <= set(loss.counts())
    back = api.to_common(api.load(written.files[written.main]))
    assert back.messages[1].usage == Usage(input_tokens=5, output_tokens=2, cache_read_input_tokens=10)
    assert back.messages[2].content[0] == ToolResult("c1", "a.txt", is_error=True)


def test_writer_ids():
    assert HARNESS.write(_conversation(id="hw-session-1"), LossReport(), WriteOptions()).session_id == "hw-session-1"
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="a/b"))


def test_store_honours_continue_global_dir_and_install_makes_the_newest(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "g"))
    assert store.default_root() == tmp_path / "g" / "sessions"
    monkeypatch.delenv("CONTINUE_GLOBAL_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.default_root() == tmp_path / "home" / ".continue" / "sessions"
    root = tmp_path / "sessions"
    root.mkdir()
    other = root / "other.json"
    other.write_text(json.dumps({"sessionId": "other", "history": []}))
    os.utime(other, (time.time() - 3600, time.time() - 3600))
    (root / "sessions.json").write_text(json.dumps([{"sessionId": "other", "title": "x"}]))
    written = api.convert(GENUINE, "continue_cli")[0]
    (path,) = api.install(written, "continue_cli", root)
    # cn --resume takes the newest *.json by mtime (sessions.json aside): now the installed one
    assert max(store.session_files(root), key=lambda p: p.stat().st_mtime) == path
    assert abs(path.stat().st_mtime - time.time()) < 60
    index = json.loads((root / "sessions.json").read_text())
    assert [e["sessionId"] for e in index] == ["other", written.session_id] and index[1]["messageCount"] == 6
    assert {i.id for i in store.discover(root)} == {"other", written.session_id}


def test_registered():
    assert registry.get("continue_cli") is HARNESS and HARNESS.check_resume is not None
