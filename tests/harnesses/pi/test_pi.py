"""pi harness without the real client: codec, detection, reader (v1-v3), writer, store."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import check_golden
from support.chat_views import session_of
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.harnesses.pi import CODEC
from txcodec.harnesses.pi import HARNESS
from txcodec.harnesses.pi import detect
from txcodec.harnesses.pi import store
from txcodec.harnesses.pi.records import MessageEntry
from txcodec.harnesses.pi.records import SessionHeader
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
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

CASES = sorted(p for p in (GOLDEN / "pi").iterdir() if p.is_dir() and p.name != "scenarios")
HEADER = {
    "type": "session",
    "version": 3,
    "id": "0190a0b0-0000-7000-8000-000000000001",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/p",
}


def load(data: bytes):
    return decode_session(data, CODEC, "pi")


def lines(*values) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def user(ident, parent, text):
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def assistant(ident, parent, text):
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "a",
            "provider": "p",
            "model": "m",
            "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
            "stopReason": "stop",
            "timestamp": 2,
        },
    }


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert load(data).dump() == data


_text = st.text(max_size=20)
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _text),
    st.builds(lambda n: {"type": "toolCall", "id": "c", "name": n, "arguments": {"x": n}}, _text),
    st.builds(lambda t: {"type": t}, _text),
)
_entry = st.builds(
    lambda kind, role, blocks, extra: {
        "type": kind,
        "id": "abcd1234",
        "parentId": None,
        "message": {"role": role, "content": blocks},
        **extra,
    },
    st.sampled_from(["message", "compaction", "label", "brand_new"]),
    st.sampled_from(["user", "assistant", "toolResult", "weird"]),
    st.lists(_block, max_size=3),
    st.dictionaries(st.sampled_from(["timestamp", "zz", "summary"]), _text, max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, max_size=6), st.booleans())
def test_structured_lines_roundtrip(entries, final_newline):
    data = b"\n".join(json.dumps(e, ensure_ascii=False).encode() for e in [HEADER, *entries])
    data += b"\n" if final_newline else b""
    assert load(data).dump() == data


def test_typed_entries_and_unknown_ride_along():
    data = lines(HEADER, user("a", None, "hi"), {"type": "brand_new", "id": "b", "parentId": "a"})
    session = load(data)
    assert isinstance(session[0], SessionHeader) and isinstance(session[1], MessageEntry)
    assert isinstance(session[2], Opaque) and session.dump() == data


@pytest.mark.parametrize("path", corpus_files("pi"), ids=lambda p: p.parent.name)
def test_corpus_reads_byte_identical(path):
    session = session_of("pi", path)
    assert session.dump() == path.read_bytes() and session.diagnostics == []
    c = HARNESS.read(session, LossReport())
    assert c.messages and c.meta.id and api.detect(path.read_bytes()) == "pi"


def test_detect_needs_the_header():
    assert detect([HEADER, user("a", None, "x")]) > 10
    assert detect([user("a", None, "x")]) == 0


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    check_golden("pi", case)


def test_last_line_is_the_leaf_and_off_branch_is_reported():
    data = lines(HEADER, user("a", None, "q"), assistant("b", "a", "first"), assistant("c", "a", "second"))
    loss = LossReport()
    c = HARNESS.read(load(data), loss)
    assert [m.content[0].text for m in c.messages] == ["q", "second"]
    assert loss.counts()["record:off-branch"] == 1


def test_unknown_entry_on_the_path_does_not_break_the_chain():
    data = lines(
        HEADER, user("a", None, "q"), {"type": "brand_new", "id": "n", "parentId": "a"}, assistant("b", "n", "yes")
    )
    loss = LossReport()
    c = HARNESS.read(load(data), loss)
    assert [m.role for m in c.messages] == ["user", "assistant"] and "record:brand_new" in loss.counts()


def test_version1_is_linked_in_file_order_with_compaction_and_hook_messages():
    loss = LossReport()
    c = HARNESS.read(session_of("pi", GOLDEN / "pi" / "v1_compaction" / "session.jsonl"), loss)
    roles = [(m.role, m.compact_summary, m.origin if isinstance(m.origin, str) else None) for m in c.messages]
    assert roles == [
        ("user", False, None),
        ("assistant", False, None),
        ("user", False, None),
        ("assistant", False, None),
        ("user", False, "custom:reminder"),
        ("user", True, None),
        ("user", False, None),
        ("assistant", False, None),
    ]
    epoch = c.epochs[0]
    assert epoch.start == 5 and epoch.pre_tokens == 4200
    # firstKeptEntryIndex 5 = the fifth line after the header... counted over all lines, header included
    assert epoch.preserved_ids == [c.messages[3].source_ids[0], c.messages[4].source_ids[0]]
    assert c.messages[1].usage == Usage(100, 20, 10, 50) and isinstance(c.messages[1].content[0], Thinking)
    assert c.meta.extra["model_changes"] == [{"at": 0, "provider": "anthropic", "model": "claude-sonnet-4-5"}]


def test_version2_tree_with_hook_message_reads_as_version3():
    """Version 2 added ``id``/``parentId`` (kept as written); version 3 renamed the
    ``hookMessage`` role to ``custom`` (pi's ``migrateV2ToV3``)."""
    header = dict(HEADER, version=2)
    hook = {
        "type": "message",
        "id": "h",
        "parentId": "a",
        "message": {"role": "hookMessage", "customType": "note", "content": "remember"},
    }
    side = user("s", "a", "a sibling branch")
    data = lines(header, user("a", None, "q"), side, hook, assistant("b", "h", "yes"))
    session = api.load(data)
    assert session.harness == "pi" and session.dump() == data and not session.diagnostics
    loss = LossReport()
    c = HARNESS.read(session, loss)
    assert [(m.role, m.origin if isinstance(m.origin, str) else None) for m in c.messages] == [
        ("user", None),
        ("user", "custom:note"),
        ("assistant", None),
    ]
    assert [m.source_ids for m in c.messages] == [["a"], ["h"], ["b"]]
    assert c.meta.extra["pi_version"] == 2 and "record:off-branch" in loss.counts()


def test_version1_without_ids_from_bytes():
    data = (GOLDEN / "pi" / "v1_compaction" / "session.jsonl").read_bytes()
    session = api.load(data)
    assert session.harness == "pi" and session.dump() == data
    assert json.loads(data.split(b"\n")[1]).get("id") is None  # really version 1: no ids
    assert api.to_common(session).epochs


def _conversation() -> Conversation:
    return Conversation(
        meta=Meta(id="claude-session", cwd="/work/proj", started_at="2025-01-01T00:00:00.000Z", title="T"),
        messages=[
            Message("user", [Text("go")], source_ids=["m1"]),
            Message(
                "assistant",
                [
                    Thinking("hmm", signature="s"),
                    Text("ok"),
                    ToolUse("t1", "Bash", {"command": "ls"}),
                    ToolUse("t2", "Read", {"file_path": "x"}),
                ],
                model="m",
                source_ids=["m2"],
            ),
            Message(
                "user",
                [ToolResult("t1", "a\nb"), ToolResult("t2", [Text("bad")], is_error=True), Text("and now?")],
                source_ids=["m3"],
            ),
            Message("assistant", [Text("done")], source_ids=["m4"], usage=Usage(5, 1)),
            Message("user", [Text("summary of it all")], compact_summary=True, synthetic=True),
            Message("user", [Text("next")]),
        ],
        epochs=[Epoch(start=4, preserved_ids=["m3"], pre_tokens=999)],
    )


def test_writer_header_ids_usage_and_path():
    written = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    ((rel, data),) = written.files.items()
    folder, name = rel.split("/")
    assert folder == "--work-proj--" and name == f"2025-01-01T00-00-00-000Z_{written.session_id}.jsonl"
    assert written.session_id[14] == "7", "pi's session ids are UUIDv7"
    entries = [json.loads(line) for line in data.splitlines()]
    assert entries[0] == {
        "type": "session",
        "version": 3,
        "id": written.session_id,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/work/proj",
    }
    ids = {None}
    for e in entries[1:]:
        assert e["parentId"] in ids and len(e["id"]) == 8
        ids.add(e["id"])
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
        "user",
    ]
    assert all("usage" in m and m["usage"]["totalTokens"] >= 0 for m in messages if m["role"] == "assistant")
    assert (
        messages[1]["stopReason"] == "toolUse" and messages[3]["toolName"] == "Read" and messages[3]["isError"] is True
    )
    compaction = next(e for e in entries if e["type"] == "compaction")
    third = next(e for e in entries if e.get("message", {}).get("role") == "toolResult")
    assert compaction["firstKeptEntryId"] == third["id"] and compaction["summary"] == "summary of it all"
    assert entries[-1] == {**entries[-1], "type": "session_info", "name": "T"}
    assert HARNESS.write(_conversation(), LossReport(), WriteOptions()).files == written.files


def test_written_file_reads_back_as_pi_would_send_it():
    written = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    back = HARNESS.read(load(written.files[written.main]), LossReport())
    assert [m.role for m in back.messages] == ["user", "assistant", "user", "user", "assistant", "user", "user"]
    assert back.messages[2].content == [
        ToolResult("t1", [Text("a\nb")], is_error=False),
        ToolResult("t2", [Text("bad")], is_error=True),
    ]
    assert back.epochs[0].start == 5 and back.meta.title == "T"


def test_store_root_override_and_discover(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "flat"))
    assert store.default_root() == tmp_path / "agent" / "sessions"
    written = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    api.install(written, "pi")
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "x.jsonl").write_bytes(lines(dict(HEADER, id="flat-one")))
    (tmp_path / "flat" / "bad.jsonl").write_bytes(b"not a header\n")
    found = store.discover()
    assert sorted(f.id for f in found) == sorted([written.session_id, "flat-one"])
    assert store.project_folder("C:\\a\\b") == "--C--a-b--"
