"""Qwen Code harness without the real client: codec, detection, reader, writer, store."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import check_golden
from support.chat_views import session_of
from support.paths import GOLDEN

from txcodec import api
from txcodec.harnesses.claude_code import detect as claude_detect
from txcodec.harnesses.qwen_code import CODEC
from txcodec.harnesses.qwen_code import HARNESS
from txcodec.harnesses.qwen_code import detect
from txcodec.harnesses.qwen_code import store
from txcodec.harnesses.qwen_code.records import Record
from txcodec.harnesses.qwen_code.write import CLIENT_VERSION
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
from txcodec.model.native import Opaque
from txcodec.model.native import decode_session

CASES = sorted(p for p in (GOLDEN / "qwen_code").iterdir() if p.is_dir() and p.name != "scenarios")


def load(data: bytes):
    return decode_session(data, CODEC, "qwen_code")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert load(data).dump() == data


_text = st.text(max_size=30)
_part = st.one_of(
    st.builds(lambda t: {"text": t}, _text),
    st.builds(lambda t: {"text": t, "thought": True}, _text),
    st.builds(lambda n, a: {"functionCall": {"id": "c1", "name": n, "args": {"a": a}}}, _text, _text),
    st.builds(lambda o: {"functionResponse": {"id": "c1", "name": "x", "response": {"output": o}}}, _text),
    st.dictionaries(_text, _text, max_size=2),
)
_record = st.builds(
    lambda kind, parts, extra: {
        "uuid": "u",
        "parentUuid": None,
        "sessionId": "s",
        "type": kind,
        "cwd": "/p",
        "message": {"role": "user", "parts": parts},
        **extra,
    },
    st.sampled_from(["user", "assistant", "tool_result", "system", "other"]),
    st.lists(_part, max_size=3),
    st.dictionaries(st.sampled_from(["x", "timestamp", "version", "zz"]), _text, max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_record, max_size=6), st.booleans(), st.sampled_from([",", ", "]))
def test_structured_lines_roundtrip(records, final_newline, sep):
    data = b"\n".join(json.dumps(r, separators=(sep, ":"), ensure_ascii=False).encode() for r in records)
    data += b"\n" if final_newline and records else b""
    assert load(data).dump() == data


def test_genuine_session_is_typed_and_byte_identical():
    path = GOLDEN / "qwen_code" / "tool_call_resumed" / "session.jsonl"
    session = session_of("qwen_code", path)
    assert session.dump() == path.read_bytes()
    assert session.diagnostics == []
    assert {r.type for r in session.records} == {"user", "assistant", "tool_result", "system"}


def test_unknown_record_rides_along_and_edit_keeps_unknown_keys():
    data = (
        b'{"type":"future","uuid":"f"}\n'
        b'{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","zz":1,'
        b'"message":{"role":"user","parts":[{"text":"hi"}]}}\n'
    )
    session = load(data)
    assert isinstance(session[0], Opaque) and isinstance(session[1], Record)
    session[1].cwd = "/new"
    out = session.dump().split(b"\n")
    assert out[0] == b'{"type":"future","uuid":"f"}'
    edited = json.loads(out[1])
    assert edited["zz"] == 1 and edited["cwd"] == "/new"


QWEN_LINE = {
    "uuid": "a",
    "parentUuid": None,
    "sessionId": "s",
    "timestamp": "2025-01-01T00:00:00Z",
    "type": "user",
    "cwd": "/p",
    "version": "0.24.4",
    "message": {"role": "user", "parts": [{"text": "hi"}]},
}
CLAUDE_LINE = {
    "uuid": "a",
    "parentUuid": None,
    "sessionId": "s",
    "timestamp": "2025-01-01T00:00:00Z",
    "type": "user",
    "cwd": "/p",
    "version": "2.1.0",
    "message": {"role": "user", "content": "hi"},
}


def test_detect_tells_qwen_parts_from_claude_content():
    qwen = [QWEN_LINE, dict(QWEN_LINE, type="assistant", message={"role": "model", "parts": [{"text": "yo"}]})]
    claude = [
        CLAUDE_LINE,
        dict(CLAUDE_LINE, type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "yo"}]}),
    ]
    assert detect(qwen) > claude_detect(qwen)
    assert detect(claude) == 0 < claude_detect(claude)
    assert api.detect(b"\n".join(json.dumps(v).encode() for v in qwen)) == "qwen_code"
    assert api.detect(b"\n".join(json.dumps(v).encode() for v in claude)) == "claude_code"


def test_detect_genuine_file():
    data = (GOLDEN / "qwen_code" / "tool_call_resumed" / "session.jsonl").read_bytes()
    assert api.detect(data) == "qwen_code"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    check_golden("qwen_code", case)


def test_reader_follows_the_chain_joins_fragments_and_opens_an_epoch():
    loss = LossReport()
    c = HARNESS.read(
        session_of("qwen_code", GOLDEN / "qwen_code" / "compression_and_fragments" / "session.jsonl"), loss
    )
    texts = [(m.role, [type(b).__name__ for b in m.content]) for m in c.messages]
    assert texts == [
        ("user", ["Text"]),
        ("assistant", ["Text"]),  # before the compression
        ("user", ["Text"]),
        ("assistant", ["Text"]),  # the compressed history
        ("user", ["Text"]),
        ("assistant", ["Thinking", "ToolUse"]),
        ("user", ["ToolResult"]),
        ("assistant", ["Text"]),
    ]
    assert c.epochs[0].start == 2 and c.epochs[0].pre_tokens == 5000 and c.messages[2].compact_summary
    joined = c.messages[5]
    assert joined.usage == Usage(
        input_tokens=200, output_tokens=12, cache_read_input_tokens=100, reasoning_output_tokens=4
    )
    assert c.messages[6].content[0] == ToolResult("call_1", "a.txt\nb.txt", is_error=False)
    assert c.meta.title == "ls demo" and c.meta.models == ["qwen3-coder"]
    counts = loss.counts()
    assert counts["record:off-branch"] == 1 and counts["record:invalid"] == 1


def test_reader_survives_a_cycle():
    lines = [
        dict(QWEN_LINE, uuid="a", parentUuid="b"),
        dict(
            QWEN_LINE, uuid="b", parentUuid="a", type="assistant", message={"role": "model", "parts": [{"text": "x"}]}
        ),
    ]
    loss = LossReport()
    c = HARNESS.read(load(b"\n".join(json.dumps(v).encode() for v in lines)), loss)
    assert len(c.messages) == 2 and "chain:cycle" in loss.counts()


def _conversation() -> Conversation:
    return Conversation(
        meta=Meta(id="not-a-uuid", cwd="/work/proj", started_at="2025-01-01T00:00:00.000Z"),
        messages=[
            Message("user", [Text("go")]),
            Message(
                "assistant",
                [
                    Thinking("hmm", signature="s"),
                    Text("ok"),
                    ToolUse("t1", "Bash", {"command": "ls"}),
                    ToolUse("t2", "Read", "oops"),
                ],
                model="m",
                usage=Usage(10, 2, 0, 5),
            ),
            Message(
                "user", [ToolResult("t1", "a\nb"), ToolResult("t2", [Text("bad")], is_error=True), Text("and now?")]
            ),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_fields_roles_parents_and_path():
    loss = LossReport()
    written = HARNESS.write(_conversation(), loss, WriteOptions())
    ((rel, data),) = written.files.items()
    assert rel == f"projects/-work-proj/chats/{written.session_id}.jsonl"
    assert store.SESSION_FILE.match(rel.rsplit("/", 1)[1])
    records = [json.loads(line) for line in data.splitlines()]
    seen: set[str | None] = {None}
    for r in records:
        assert r["parentUuid"] in seen, "a parent must be written before its child"
        seen.add(r["uuid"])
        assert r["cwd"] == "/work/proj" and r["sessionId"] == written.session_id and r["version"] == CLIENT_VERSION
        assert r["message"]["role"] in ("user", "model") and "parts" in r["message"] and "content" not in r["message"]
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "user", "assistant"]
    parts = records[1]["message"]["parts"]
    assert parts[0] == {"text": "hmm", "thought": True}
    assert parts[3]["functionCall"]["args"] == {"input": "oops"}
    assert records[2]["message"]["parts"][1]["functionResponse"] == {
        "id": "t2",
        "name": "Read",
        "response": {"error": "bad"},
    }
    assert records[1]["usageMetadata"]["promptTokenCount"] == 15
    assert "write:wrapped-input" in loss.counts()
    # deterministic: the same conversation writes the same bytes
    assert HARNESS.write(_conversation(), LossReport(), WriteOptions()).files == written.files


def test_writer_then_reader_keeps_the_history():
    original = _conversation()
    written = HARNESS.write(original, LossReport(), WriteOptions())
    back = HARNESS.read(load(written.files[written.main]), LossReport())
    assert [m.role for m in back.messages] == ["user", "assistant", "user", "user", "assistant"]
    assert back.messages[2].content == [
        ToolResult("t1", "a\nb", is_error=False),
        ToolResult("t2", "bad", is_error=True),
    ]
    assert back.meta.cwd == "/work/proj"


def test_writer_without_a_cwd_says_where_it_wrote():
    loss = LossReport()
    written = HARNESS.write(Conversation(messages=[Message("user", [Text("x")])]), loss, WriteOptions())
    assert written.main.startswith("projects/-/chats/") and "write:cwd" in loss.counts()


def test_writer_answers_unanswered_calls_and_carries_orphan_results_as_text():
    """Qwen Code drops a call without a result, and a result without its call, from the
    request (``cleanOrphanedToolCalls``): neither may vanish silently."""
    conversation = Conversation(
        meta=Meta(cwd="/p"),
        messages=[
            Message("user", [ToolResult("ghost", "boo"), Text("hi")]),
            Message("assistant", [ToolUse("c1", "run_shell_command", {"command": "ls"})]),
            Message("user", [Text("never mind")]),
            Message("assistant", [ToolUse("c2", "read_file", {"file_path": "x"})]),
        ],
    )
    loss = LossReport()
    written = HARNESS.write(conversation, loss, WriteOptions())
    records = [json.loads(line) for line in written.files[written.main].splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "user", "assistant", "tool_result"]
    assert records[0]["message"]["parts"] == [{"text": "[tool result ghost]\nboo"}, {"text": "hi"}]
    for r, call in ((records[2], "c1"), (records[5], "c2")):
        (part,) = r["message"]["parts"]
        assert part["functionResponse"]["id"] == call and "error" in part["functionResponse"]["response"]
    assert loss.counts()["write:synthetic-result"] == 2 and loss.counts()["write:orphan-result"] == 1


def test_store_root_overrides_and_discover(tmp_path, monkeypatch):
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qh"))
    assert store.default_root() == (tmp_path / "qh").resolve()
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "rt"))
    assert store.default_root() == (tmp_path / "rt").resolve()
    written = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    api.install(written, "qwen_code")
    (tmp_path / "rt" / "projects" / "-work-proj" / "chats" / "notes.jsonl").write_text("{}")
    found = store.discover()
    assert [f.id for f in found] == [written.session_id]
    assert found[0].cwd == "/work/proj" and found[0].messages == 5
    with pytest.raises(FileExistsError):
        api.install(written, "qwen_code")


def test_munge_matches_the_client():
    assert store.munge("/tmp/my_proj.v2 x") == "-tmp-my-proj-v2-x"


def test_session_id_is_one_qwen_resume_accepts():
    """``qwen --resume`` takes UUIDs of versions 1-5 only (``isValidSessionId``): a pi or
    Codex id (UUIDv7) gets a UUIDv5 derived from it; an explicit bad id is refused."""
    v7 = "01a22b27-cff0-775a-a765-ec94d7b57cbe"
    written = HARNESS.write(
        Conversation(meta=Meta(id=v7, cwd="/p"), messages=[Message("user", [Text("x")])]), LossReport(), WriteOptions()
    )
    assert written.session_id != v7 and written.session_id[14] == "5"
    v4 = "5d06eef2-06f8-4930-a0d8-9c3fa21aa3e0"
    assert HARNESS.write(Conversation(meta=Meta(id=v4, cwd="/p")), LossReport(), WriteOptions()).session_id == v4
    with pytest.raises(ValueError, match="versions 1-5"):
        HARNESS.write(Conversation(meta=Meta(cwd="/p")), LossReport(), WriteOptions(session_id=v7))


@pytest.mark.parametrize("parts", [-1, True, "text", {"text": "x"}])
def test_parts_that_are_not_a_list_are_named_not_a_crash(parts):
    # found by the long views fuzz run: one reply written as two fragments, the second's parts a number
    lines = [
        {"uuid": "u1", "parentUuid": None, "type": "user", "message": {"role": "user", "parts": [{"text": "hi"}]}},
        {
            "uuid": "a1",
            "parentUuid": "u1",
            "type": "assistant",
            "message": {"role": "model", "parts": [{"text": "one"}]},
        },
        {"uuid": "a1", "parentUuid": "u1", "type": "assistant", "message": {"role": "model", "parts": parts}},
        {"uuid": "u2", "parentUuid": "a1", "type": "user", "message": {"role": "user", "parts": parts}},
    ]
    data = "".join(json.dumps(dict(line, sessionId="s", timestamp="2025-10-01T09:00:00Z")) + "\n" for line in lines)
    loss = LossReport()
    conversation = api.to_common(decode_session(data.encode(), CODEC, "qwen_code"), loss)
    assert [[b.text for b in m.content] for m in conversation.messages] == [["hi"], ["one"], []]
    assert ("read:malformed", 4) in {(e.kind, e.line) for e in loss.entries}
