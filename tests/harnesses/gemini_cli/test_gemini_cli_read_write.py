"""Gemini CLI reader and writer: effective history, no doubled results, thoughts,
tokens, model; a writer whose files the CLI resumes; golden cases; store and install."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from support.paths import GOLDEN

from txcodec import api
from txcodec.harnesses.gemini_cli import HARNESS
from txcodec.harnesses.gemini_cli import store
from txcodec.harnesses.gemini_cli.codec import CODEC
from txcodec.kit.changes import to_json
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

CASES = sorted(p for p in (GOLDEN / "gemini_cli").iterdir() if p.is_dir() and p.name != "scenarios")
GOLDEN_CWD = "/work/project"
UPDATE = os.environ.get("TXCODEC_UPDATE_GOLDEN") == "1"


def source_of(case):
    return next(p for p in case.iterdir() if p.name.startswith("session-"))


def read(data: bytes, path=None):
    loss = LossReport()
    session = decode_session(data, CODEC, "gemini_cli", path)
    return HARNESS.read(session, loss), loss


def summary(conversation, known=False):
    out = []
    for m in conversation.messages:
        blocks = []
        for b in m.content:
            if isinstance(b, Text):
                blocks.append(("text", b.text))
            elif isinstance(b, Thinking):
                blocks.append(("thinking", b.thinking))
            elif isinstance(b, ToolUse):
                blocks.append(("tool_use", b.id, b.name, b.input))
            elif isinstance(b, ToolResult):
                blocks.append(("tool_result", b.tool_use_id, b.content, bool(b.is_error) if known else b.is_error))
        out.append((m.role, blocks))
    return out


# --- golden --------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden_read_and_write(case):
    """``common.json`` is what the reader makes of the case; ``written.jsonl`` is what the
    writer makes of that (cwd /work/project). TXCODEC_UPDATE_GOLDEN=1 rewrites them."""
    source = source_of(case)
    session = api.load(source, "gemini_cli")
    assert session.dump() == source.read_bytes()
    loss = LossReport()
    conversation = HARNESS.read(session, loss)
    common = json.dumps(json.loads(to_json(conversation)), indent=1, ensure_ascii=False).encode() + b"\n"
    written = HARNESS.write(conversation, LossReport(), WriteOptions(cwd=GOLDEN_CWD))
    native = written.files[written.main]
    if UPDATE:
        (case / "common.json").write_bytes(common)
        (case / "written.jsonl").write_bytes(native)
    assert common == (case / "common.json").read_bytes()
    assert native == (case / "written.jsonl").read_bytes()
    # what we write reads back to the same conversation (ids and bookkeeping aside)
    # (an unknown is_error is written as status "success", so it reads back False)
    again, _ = read(native)
    assert summary(again, known=True) == summary(conversation, known=True)


# --- effective history -----------------------------------------------------------------


def test_genuine_session_results_are_not_doubled():
    case = GOLDEN / "gemini_cli" / "tool_call_resumed"
    conversation, loss = read(source_of(case).read_bytes())
    got = summary(conversation)
    results = [b for _, blocks in got for b in blocks if b[0] == "tool_result"]
    assert results == [("tool_result", "read_file__read_file_1796020357965_0", "hi there\n", None)]
    assert got[1] == ("user", [("text", "read hello.txt then say done")])
    assert got[2][1][0] == ("thinking", "I should read it")
    assert conversation.messages[0].meta  # <session_context> is injected, not typed
    # tokens and model survive the resume's checkpoint, which dropped them
    first_answer = conversation.messages[2]
    assert first_answer.model == "gemini-2.5-pro"
    assert first_answer.usage == Usage(input_tokens=12, output_tokens=5, reasoning_output_tokens=0)
    assert conversation.meta.id == "c72f91ab-4d8d-44f4-b930-223fb3ac62ee"
    assert conversation.meta.started_at == "2026-11-30T06:32:37.751Z"
    assert not loss


def test_rewind_checkpoint_and_upsert():
    case = GOLDEN / "gemini_cli" / "rewind_and_checkpoint"
    conversation, loss = read(source_of(case).read_bytes())
    assert summary(conversation) == [
        ("user", [("text", "first question")]),
        ("assistant", [("text", "first answer")]),
        ("user", [("text", "second question (masked)")]),
        ("assistant", [("thinking", "thinking it over"), ("text", "second answer")]),
    ]
    assert conversation.messages[1].usage == Usage(input_tokens=20, output_tokens=4, reasoning_output_tokens=0)
    assert conversation.meta.title == "Questions and answers"
    assert conversation.meta.ended_at == "2026-01-02T03:04:13.000Z"
    assert loss.counts() == {"record:opaque": 2, "rewind:dropped": 1}
    assert loss.lines("record:opaque") == [9, 13]


def test_rewind_to_unknown_id_clears_everything():
    lines = [
        {"sessionId": "s", "projectHash": "p"},
        {"id": "a", "type": "user", "content": "one"},
        {"$rewindTo": "nope"},
        {"id": "b", "type": "user", "content": "two"},
    ]
    conversation, _ = read(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    assert summary(conversation) == [("user", [("text", "two")])]


def test_upsert_keeps_first_position():
    lines = [
        {"sessionId": "s", "projectHash": "p"},
        {"id": "a", "type": "user", "content": "one"},
        {"id": "b", "type": "gemini", "content": "draft"},
        {"id": "c", "type": "user", "content": "three"},
        {"id": "b", "type": "gemini", "content": "final"},
    ]
    conversation, _ = read(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    assert [b[1] for _, blocks in summary(conversation) for b in blocks] == ["one", "final", "three"]


def test_legacy_json_thoughts_tokens_and_info():
    case = GOLDEN / "gemini_cli" / "legacy_json"
    source = source_of(case)
    loss = LossReport()
    conversation = HARNESS.read(api.load(source), loss)
    got = summary(conversation)
    assert got[1][1][0] == ("thinking", "**Plan** use ls")  # as the CLI resends it
    assert got[2] == ("user", [("tool_result", "call-1", "a.txt\nb.txt", False)])
    assert conversation.messages[1].usage == Usage(
        input_tokens=60, output_tokens=17, cache_read_input_tokens=40, reasoning_output_tokens=7
    )
    assert loss.counts() == {"message:info": 1}


def test_modern_content_results_from_user_records_once():
    """After a resume's checkpoint the gemini turn holds functionCall parts and no
    toolCalls; results come from user records, which may repeat (``<id>_response``)."""
    fr = {"functionResponse": {"id": "c1", "name": "ls", "response": {"error": "denied"}}}
    lines = [
        {"sessionId": "s", "projectHash": "p"},
        {
            "id": "g",
            "type": "gemini",
            "content": [{"text": "t"}, {"functionCall": {"id": "c1", "name": "ls", "args": {}}}],
        },
        {"id": "g_response", "type": "user", "content": [fr]},
        {"id": "u", "type": "user", "content": [fr]},
    ]
    conversation, _ = read(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    assert summary(conversation) == [
        ("assistant", [("text", "t"), ("tool_use", "c1", "ls", {})]),
        ("user", [("tool_result", "c1", "denied", True)]),
    ]
    assert conversation.messages[1].source_ids == ["g_response", "u"]


# --- writer ----------------------------------------------------------------------------


def _conversation():
    return Conversation(
        meta=Meta(
            id="7d4f3a2b-1111-4222-8333-944445555666", cwd="/home/me/My Project", started_at="2026-02-03T04:05:06Z"
        ),
        messages=[
            Message("user", [Text("run it")], timestamp="2026-02-03T04:05:06Z"),
            Message(
                "assistant",
                [
                    Thinking("plan"),
                    Text("Running."),
                    ToolUse("t1", "Bash", {"command": "ls"}),
                    ToolUse("t2", "Weird", "not-an-object"),
                ],
                model="claude-x",
                usage=Usage(input_tokens=10, output_tokens=3, cache_read_input_tokens=5),
            ),
            Message("user", [ToolResult("t1", "a\nb"), ToolResult("t2", "bad", is_error=True), Text("thanks")]),
            Message("assistant", [ToolUse("t3", "Read", {"path": "x"})]),
        ],
    )


def test_writer_fields_naming_and_results_only_in_tool_calls():
    loss = LossReport()
    written = HARNESS.write(_conversation(), loss, WriteOptions())
    names = list(written.files)
    cwd = "/home/me/My Project"
    assert names == [
        "tmp/my-project/chats/session-2026-02-03T04-05-7d4f3a2b.jsonl",
        "tmp/my-project/.project_root",
        "projects.json",
    ]
    assert written.files["tmp/my-project/.project_root"] == cwd.encode()
    assert json.loads(written.files["projects.json"]) == {"projects": {cwd: "my-project"}}
    lines = [json.loads(x) for x in written.files[names[0]].splitlines()]
    assert lines[0] == {
        "sessionId": written.session_id,
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "startTime": "2026-02-03T04:05:06.000Z",
        "lastUpdated": lines[-1]["timestamp"],
        "kind": "main",
    }
    assert written.session_id == "7d4f3a2b-1111-4222-8333-944445555666"
    types = [x["type"] for x in lines[1:]]
    assert types == ["user", "gemini", "user", "gemini"]  # no functionResponse user records
    gemini = lines[2]
    assert gemini["content"] == "Running." and gemini["model"] == "claude-x"
    assert gemini["thoughts"][0]["description"] == "plan"
    assert gemini["tokens"] == {"input": 15, "output": 3, "cached": 5, "thoughts": 0, "tool": 0, "total": 18}
    c1, c2 = gemini["toolCalls"]
    assert c1["result"] == [{"functionResponse": {"id": "t1", "name": "Bash", "response": {"output": "a\nb"}}}]
    assert c1["status"] == "success" and c2["status"] == "error"
    assert c2["args"] == {"input": "not-an-object"}
    assert c2["result"][0]["functionResponse"]["response"] == {"error": "bad"}
    assert lines[3]["content"] == [{"text": "thanks"}]
    assert lines[4]["toolCalls"][0]["status"] == "cancelled"  # no result: the API needs one
    for record in lines[1:]:
        assert {"id", "timestamp", "type", "content"} <= set(record)
    assert loss.counts() == {"write:synthetic-result": 1, "write:wrapped-input": 1}


def test_writer_reports_what_the_client_hides():
    conversation = Conversation(meta=Meta(cwd="/p"), messages=[Message("user", [Text("/help")])])
    loss = LossReport()
    HARNESS.write(conversation, loss, WriteOptions())
    assert "write:hidden-by-client" in loss.counts()


def test_writer_is_deterministic():
    a = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    b = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    assert a.files == b.files


# --- store -----------------------------------------------------------------------------


def test_default_root_honours_gemini_cli_home(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert store.default_root() == tmp_path / ".gemini"
    monkeypatch.delenv("GEMINI_CLI_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert store.default_root() == tmp_path / "h" / ".gemini"


def test_slugify_matches_the_cli():
    assert store.slugify("/a/My Project.v2") == "my-project-v2"
    assert store.slugify("/a/__") == "project"
    assert store.slugify("/") == "project"


def test_install_merges_registry_and_reuses_existing_slug(tmp_path):
    root = tmp_path / ".gemini"
    root.mkdir()
    other = {"projects": {"/elsewhere/my-project": "my-project"}}
    (root / "projects.json").write_text(json.dumps(other))
    (root / "tmp" / "my-project").mkdir(parents=True)
    (root / "tmp" / "my-project" / ".project_root").write_text("/elsewhere/my-project")
    written = HARNESS.write(_conversation(), LossReport(), WriteOptions())
    (path,) = api.install(written, "gemini_cli", root)
    # the slug is taken by another project: the next free one, as the CLI would pick
    assert path.parent.parent.name == "my-project-1"
    registry = json.loads((root / "projects.json").read_text())
    assert registry == {"projects": {"/elsewhere/my-project": "my-project", "/home/me/My Project": "my-project-1"}}
    assert (root / "tmp" / "my-project-1" / ".project_root").read_text() == "/home/me/My Project"
    # a second session for the same cwd lands in the same folder; the first is never overwritten
    second = HARNESS.write(
        _conversation(), LossReport(), WriteOptions(session_id="0e0e0e0e-aaaa-4bbb-8ccc-dddddddddddd")
    )
    (path2,) = api.install(second, "gemini_cli", root)
    assert path2.parent == path.parent
    from txcodec.core.atomic import TargetExists

    with pytest.raises(TargetExists):
        api.install(written, "gemini_cli", root)
    found = {s.id: s for s in store.discover(root)}
    assert set(found) == {written.session_id, second.session_id}
    assert found[written.session_id].cwd == "/home/me/My Project"


def test_discover_lists_main_legacy_and_subagent_chats(tmp_path):
    chats = tmp_path / "tmp" / "proj" / "chats"
    (chats / "parent-id").mkdir(parents=True)
    (tmp_path / "tmp" / "proj" / ".project_root").write_text("/w/proj")
    (chats / "session-2026-01-01T00-00-aaaa.jsonl").write_bytes(
        b'{"sessionId":"aaaa","projectHash":"h","startTime":"t0","kind":"main"}\n{"$set":{"summary":"S"}}\n'
    )
    (chats / "session-2025-01-01T00-00-bbbb.json").write_text(
        json.dumps({"sessionId": "bbbb", "projectHash": "h", "messages": []}, indent=2)
    )
    (chats / "parent-id" / "cccc.jsonl").write_bytes(b'{"sessionId":"cccc","projectHash":"h","kind":"subagent"}\n')
    (chats / "notes.txt").write_text("x")
    found = {s.id: s for s in store.discover(tmp_path)}
    assert set(found) == {"aaaa", "bbbb", "cccc"}
    assert found["aaaa"].summary == "S" and found["aaaa"].cwd == "/w/proj"
    assert found["bbbb"].legacy
    assert found["cccc"].kind == "subagent" and found["cccc"].parent_id == "parent-id"
    assert store.discover(tmp_path / "missing") == []
