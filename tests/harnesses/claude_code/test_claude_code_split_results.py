"""Issue 31 item 9: parallel results a source split over several messages (Qwen Code writes
a tool_result record per result) attach to their calls in Claude Code: no synthetic
"[Tool result missing...]" and no result turned into user text."""

from __future__ import annotations

import json

from txcodec import api
from txcodec.harnesses.claude_code.write import MISSING_RESULT
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse


def split_results() -> Conversation:
    calls = [ToolUse("c1", "read_file", {"absolute_path": "/a"}), ToolUse("c2", "read_file", {"absolute_path": "/b"})]
    return Conversation(
        meta=Meta(source_harness="qwen_code", cwd="/w"),
        messages=[
            Message("user", [Text("go")]),
            Message("assistant", calls),
            Message("user", [ToolResult("c1", "A")]),
            Message("user", [ToolResult("c2", "B")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_qwen_split_results_attach_to_their_calls():
    qwen, _ = api.convert(split_results(), "qwen_code")
    types = [json.loads(line)["type"] for line in qwen.files[qwen.main].splitlines()]
    assert types.count("tool_result") == 2  # the shape Qwen Code writes
    written, loss = api.convert(qwen.files[qwen.main], "claude_code")
    body = written.files[written.main]
    assert MISSING_RESULT.encode() not in body and b"[tool result" not in body
    assert not {"write:missing-tool-result", "write:orphan-result"} & set(loss.counts())
    back = api.to_common(api.load(body, "claude_code"))
    results = [[b.tool_use_id for b in m.content if isinstance(b, ToolResult)] for m in back.messages]
    assert [ids for ids in results if ids] == [["c1", "c2"]]  # both answer their calls, in one message


def test_a_result_after_another_message_is_still_an_orphan():
    conversation = split_results()
    conversation.messages.insert(3, Message("user", [Text("wait")]))
    _, loss = api.convert(conversation, "claude_code")
    assert loss.counts().get("write:missing-tool-result") == 1 and loss.counts().get("write:orphan-result") == 1
