"""stream-json reader and writers: golden captures -> Common, deduplication, prompts,
permissions, cut-off streams, and Common -> stream-json -> Common round trips."""

from __future__ import annotations

import json
import os

import pytest
from support.paths import GOLDEN

from txcodec import api
from txcodec.harnesses.stream_json import read
from txcodec.harnesses.stream_json import write
from txcodec.harnesses.stream_json import write_input
from txcodec.harnesses.stream_json.read import MISSING_PROMPT_TEXT
from txcodec.kit.changes import to_json
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.common_json import from_json
from txcodec.model.loss import LossReport

CASES = sorted(p.parent.name for p in (GOLDEN / "stream_json").glob("*/capture.jsonl"))
UPDATE = os.environ.get("TXCODEC_UPDATE_GOLDEN") == "1"


def _read(data: bytes, prompts=None, **kw) -> tuple[Conversation, LossReport]:
    loss = LossReport()
    return read(api.load(data, "stream_json"), loss, prompts=prompts, **kw), loss


def _lines(*values) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


@pytest.mark.parametrize("case", CASES)
def test_golden_capture_to_common(case):
    folder = GOLDEN / "stream_json" / case
    prompts = json.loads((folder / "prompts.json").read_text())
    conversation, loss = _read((folder / "capture.jsonl").read_bytes(), prompts)
    got = json.dumps(json.loads(to_json(conversation)), indent=1, sort_keys=True) + "\n"
    got_loss = json.dumps(loss.counts(), indent=1) + "\n"
    if UPDATE:
        (folder / "common.json").write_text(got)
        (folder / "loss.json").write_text(got_loss)
    assert got == (folder / "common.json").read_text(), "TXCODEC_UPDATE_GOLDEN=1 pytest ... rewrites it"
    assert got_loss == (folder / "loss.json").read_text()


@pytest.mark.parametrize("case", CASES)
def test_golden_round_trip_through_stream_json_output(case):
    """Common -> stream-json output -> Common keeps every message, the prompts included
    (written as replayed user lines)."""
    folder = GOLDEN / "stream_json" / case
    first, _ = _read((folder / "capture.jsonl").read_bytes(), json.loads((folder / "prompts.json").read_text()))
    written = write(first, LossReport(), WriteOptions())
    assert written.session_id == first.meta.id
    second, loss = _read(written.files[written.main])
    assert "prompt:missing" not in loss.counts()
    strip = lambda ms: [(m.role, m.content, m.api_error, m.stop_reason) for m in ms]  # noqa: E731
    assert strip(second.messages) == strip(first.messages)
    assert [(c.link.tool_use_id, strip(c.conversation.messages)) for c in second.children] == [
        (c.link.tool_use_id, strip(c.conversation.messages)) for c in first.children
    ]


def test_missing_prompts_are_marked_and_reported():
    data = (GOLDEN / "stream_json" / "two_runs" / "capture.jsonl").read_bytes()
    conversation, loss = _read(data)
    users = [m for m in conversation.messages if m.role == "user" and isinstance(m.content[0], Text)]
    assert [m.extra.get("missing_prompt") for m in users] == [True, True]
    assert users[0].content == [Text(MISSING_PROMPT_TEXT)]
    assert loss.counts()["prompt:missing"] == 2 and len(loss.lines("prompt:missing")) == 2
    conversation, loss = _read(data, ["only the first"])
    assert [
        m.content[0].text for m in conversation.messages if m.role == "user" and isinstance(m.content[0], Text)
    ] == ["only the first", MISSING_PROMPT_TEXT]
    assert loss.counts()["prompt:missing"] == 1


def test_partial_deltas_are_folded_not_duplicated():
    data = (GOLDEN / "stream_json" / "parallel_tools" / "capture.jsonl").read_bytes()
    assert b'"stream_event"' in data
    conversation, _ = _read(data, ["p"])
    first = conversation.messages[1]
    assert [b.__struct_config__.tag for b in first.content] == ["text", "tool_use", "tool_use"]
    assert first.stop_reason == "tool_use" and first.usage == Usage(10, 5)  # from message_delta
    assert len([m for m in conversation.messages if m.role == "assistant"]) == 2


def test_cut_off_stream_is_rebuilt_from_deltas():
    sid, mid = "s1", "msg_1"
    ev = lambda e: {
        "type": "stream_event",
        "event": e,
        "session_id": sid,
        "parent_tool_use_id": None,  # noqa: E731
        "uuid": "u",
        "api_message_id": mid,
    }
    data = _lines(
        {"type": "system", "subtype": "init", "session_id": sid, "cwd": "/w", "model": "m", "tools": []},
        ev({"type": "message_start", "message": {"id": mid, "model": "m", "role": "assistant", "content": []}}),
        ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
        ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}}),
        {
            "type": "assistant",
            "message": {"id": mid, "role": "assistant", "model": "m", "content": [{"type": "text", "text": "Hello"}]},
            "session_id": sid,
            "parent_tool_use_id": None,
            "uuid": "a1",
        },
        ev(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
            }
        ),
        ev(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"command":'},
            }
        ),
        ev(
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ' "ls"}'}}
        ),
    )
    conversation, loss = _read(data, ["go"])
    message = conversation.messages[1]
    assert message.content == [Text("Hello"), ToolUse("t1", "Bash", {"command": "ls"}, kind="shell_exec")]
    assert message.interrupted and message.extra["from_stream_events"]
    assert loss.counts()["stream:unfinished-message"] == 1


def test_result_text_only_when_nothing_streamed():
    sid = "s"
    init = {"type": "system", "subtype": "init", "session_id": sid}
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "the answer",
        "session_id": sid,
        "total_cost_usd": 0.5,
        "num_turns": 1,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    conversation, _ = _read(_lines(init, result), ["q"])
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", [Text("q")]),
        ("assistant", [Text("the answer")]),
    ]
    assert (
        conversation.messages[1].extra["from_result"]
        and conversation.messages[1].extra["turn"]["total_cost_usd"] == 0.5
    )
    streamed = {
        "type": "assistant",
        "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "the answer"}]},
        "session_id": sid,
        "parent_tool_use_id": None,
        "uuid": "a",
    }
    conversation, _ = _read(_lines(init, streamed, result), ["q"])
    assert [m.content for m in conversation.messages if m.role == "assistant"] == [[Text("the answer")]]
    # the result shape docs/stream_json.md#line-types names: {"text", "session_id"}
    seed = dict(result, result={"text": "seed text", "session_id": sid})
    conversation, _ = _read(_lines(init, seed), ["q"])
    assert conversation.messages[-1].content == [Text("seed text")]


def test_permission_requests_and_denials_are_recorded():
    sid = "s"
    data = _lines(
        {"type": "system", "subtype": "init", "session_id": sid},
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_w", "name": "Write", "input": {"file_path": "x", "content": "x"}}
                ],
            },
            "session_id": sid,
            "parent_tool_use_id": None,
            "uuid": "a",
        },
        {
            "type": "control_request",
            "request_id": "r1",
            "request": {
                "subtype": "can_use_tool",
                "tool_name": "Write",
                "tool_use_id": "toolu_w",
                "input": {"file_path": "x"},
            },
        },
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": "r1",
                "response": {"behavior": "deny", "message": "no writes today"},
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_w", "content": "no writes today", "is_error": True}
                ],
            },
            "session_id": sid,
            "parent_tool_use_id": None,
            "uuid": "u1",
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "",
            "session_id": sid,
            "permission_denials": [{"tool_name": "Write", "tool_use_id": "toolu_w", "tool_input": {"file_path": "x"}}],
        },
    )
    conversation, loss = _read(data, ["write"])
    [entry] = conversation.meta.extra["permissions"]
    assert entry["tool_use_id"] == "toolu_w" and entry["decision"] == "deny" and entry["message"] == "no writes today"
    assert entry["sources"] == ["control_request", "result.permission_denials"]
    # and they come back out on the written result line
    written = write(conversation, LossReport(), WriteOptions())
    result = json.loads(written.files[written.main].splitlines()[-1])
    assert result["permission_denials"] == [
        {"tool_name": "Write", "tool_use_id": "toolu_w", "tool_input": {"file_path": "x", "content": "x"}}
    ]


def test_opaque_and_unknown_lines_are_reported_not_dropped():
    data = b'{"type":"system","subtype":"init","session_id":"s"}\nnot json\n{"type":"future_thing","session_id":"s"}\n'
    _, loss = _read(data, ["q"])
    assert loss.lines("opaque") == [2] and loss.lines("record:future_thing") == [3]


def test_any_conversation_writes_stream_json_that_reads_back():
    """A Codex-like conversation (freeform input, thinking, nested subagent)."""
    child = Child(
        ChildLink(via="x", tool_use_id="t_agent", agent_id="ag1"),
        Conversation(
            messages=[
                Message("user", [Text("sub task")]),
                Message("assistant", [ToolUse("t_sub", "Bash", {"command": "ls"}, kind="shell_exec")]),
                Message("user", [ToolResult("t_sub", "a b", is_error=False)]),
                Message("assistant", [Text("found a and b")]),
            ]
        ),
        agent_type="general-purpose",
        description="list",
    )
    conversation = Conversation(
        meta=Meta(id="0b0e0e0e-1111-4222-8333-444455556666", cwd="/proj", models=["gpt-x"]),
        messages=[
            Message("user", [Text("patch it")]),
            Message("assistant", [Thinking("plan", signature="sig"), ToolUse("t1", "apply_patch", "*** Begin Patch")]),
            Message("user", [ToolResult("t1", [Text("done")], is_error=False)]),
            Message("assistant", [ToolUse("t_agent", "Agent", {"prompt": "sub task"}, kind="subagent_task")]),
            Message("user", [ToolResult("t_agent", "found a and b")]),
            Message("assistant", [Text("all done")], usage=Usage(5, 6), stop_reason="end_turn"),
            Message("user", [Text("thanks")]),
            Message("assistant", [Text("bye")]),
        ],
        children=[child],
    )
    loss = LossReport()
    written = write(conversation, loss, WriteOptions())
    assert loss.counts() == {"write:wrapped-input": 1}
    back, back_loss = _read(written.files[written.main])
    assert [m.content for m in back.messages] == [
        m.content
        if i != 1
        else [
            Thinking("plan", signature="sig"),
            ToolUse("t1", "apply_patch", {"input": "*** Begin Patch"}, kind="modify_file"),
        ]
        for i, m in enumerate(conversation.messages)
    ]
    assert back.meta.id == conversation.meta.id and back.meta.cwd == "/proj"
    assert len(back.meta.extra["runs"]) == 2
    [c] = back.children
    assert c.link.tool_use_id == "t_agent" and c.agent_type == "general-purpose"
    assert [m.content for m in c.conversation.messages] == [m.content for m in child.conversation.messages]
    assert api.detect(written.files[written.main]) == "stream_json"


def test_write_input_sends_only_prompts():
    conversation = Conversation(
        messages=[
            Message("user", [Text("one")]),
            Message("assistant", [Text("a")]),
            Message("user", [Text(MISSING_PROMPT_TEXT)], extra={"missing_prompt": True}),
            Message("assistant", [Text("b")]),
            Message("user", [Text("look"), Text("twice")]),
        ]
    )
    loss = LossReport()
    lines = [json.loads(x) for x in write_input(conversation, loss).splitlines()]
    assert lines == [
        {"type": "user", "message": {"role": "user", "content": "one"}, "parent_tool_use_id": None, "session_id": ""},
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "look"}, {"type": "text", "text": "twice"}],
            },
            "parent_tool_use_id": None,
            "session_id": "",
        },
    ]
    assert loss.counts() == {"write:input-side": 1, "write:missing-prompt": 1}


def test_common_json_round_trip_of_a_golden_read():
    folder = GOLDEN / "stream_json" / "subagent"
    conversation, _ = _read((folder / "capture.jsonl").read_bytes())
    assert from_json(to_json(conversation)) == conversation
