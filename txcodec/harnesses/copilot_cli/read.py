"""Copilot CLI event log -> Common conversation.

The conversation is what the client replays when it resumes (1.0.102): the events in
**file order** (``parentId`` is checked for its format only, docs/copilot_cli.md#format-facts). A
``user.message`` is a user message (its ``content``, what the user typed; the
``transformedContent`` the model was sent, a ``<current_datetime>`` block before it, is kept
in ``extra``); an ``assistant.message`` an assistant message (``reasoningText`` -> Thinking,
``content`` -> Text, each ``toolRequests`` entry -> ToolUse); consecutive
``tool.execution_complete`` events one user message of ToolResults (``result.content`` on
success, ``error.message`` on failure). ``session.compaction_complete`` with a summary opens
a compaction epoch.

Usage comes from ``session.usage_record`` alone, the durable accounting receipt written
just before the assistant message of the same model call (``apiCallId``): one per call, so
a resumed session never counts a call twice. ``session.shutdown`` snapshots are running
totals (a resumed session's second snapshot includes the first) and are never summed.
``inputTokens`` includes the cached tokens (the client computes ``inputTokensUncached`` as
``inputTokens - cacheReadTokens - cacheWriteTokens``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...kit.read import LastMessageCarryOn
from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...model.common import Conversation
from ...model.common import Epoch
from ...model.common import Message
from ...model.common import Meta
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.loss import UnreadLoss
from ...model.native import NativeSession
from ...model.tools import tool_kind

_STOP = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}
# events the client writes around the conversation, not part of what it replays
_BOOKKEEPING = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "tool.execution_start",
        "session.shutdown",
        "session.resume",
        "session.permissions_changed",
        "session.model_change",
        "session.info",
        "session.idle",
        "assistant.idle",
        "session.title_changed",
        "session.compaction_start",
        "session.usage_checkpoint",
        "session.usage_info",
        "session.background_tasks_changed",
        "session.mode_changed",
        "session.plan_changed",
        "session.todos_changed",
    }
)


def _envelope(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("timestamp"), str)
        and "parentId" in value
        and isinstance(value.get("data", {}), dict)
    )


def read(session: NativeSession, loss: LossReport) -> Conversation:
    reader = _Reader(str(session.path) if session.path else None, loss)
    for n, value in line_dicts(session):
        reader.step(n, value)
    return reader.conversation


def carry_on(path: Any = None, window: int | None = None) -> Any:
    """A followed events file's reader (Harness.carry_on): an event adds a message, or a
    tool result to the results message before it."""
    from .codec import CODEC

    return LastMessageCarryOn(
        _Reader(str(path) if path else None, UnreadLoss()), "copilot_cli", CODEC, path, window=window
    )


class _Reader:
    """An event at a time (``step``)."""

    def __init__(self, file: str | None, loss: LossReport) -> None:
        self.file, self.loss = file, loss
        self.meta = Meta(source_harness="copilot_cli")
        self.conversation = Conversation(meta=self.meta)
        self.usage_records: list[dict] = []  # receipts not yet matched to their assistant message
        self.handed = 0  # messages handed on before conversation.messages[0] (LastMessageCarryOn)

    def step(self, n: int, value: Any) -> None:
        file, loss, meta, conversation = self.file, self.loss, self.meta, self.conversation
        messages, usage_records = conversation.messages, self.usage_records
        if not _envelope(value):
            loss.add("record:invalid", "not a Copilot CLI event (the client refuses the file)", file=file, line=n)
            return
        with malformed(loss, file, n):  # an event of an unexpected shape is reported, the next one read
            kind, data = value["type"], value.get("data") or {}
            if "agentId" in value:
                loss.add("event:subagent", "an event of a subagent (not in the main conversation)", file=file, line=n)
                return
            if meta.started_at is msgspec.UNSET:
                meta.started_at = value["timestamp"]
            meta.ended_at = value["timestamp"]
            if kind == "session.start":
                _start(meta, data)
            elif kind == "user.message":
                messages.append(_user(value, data))
            elif kind == "assistant.message":
                message = _assistant(value, data, usage_records)
                messages.append(message)
                if isinstance(message.model, str) and message.model not in meta.models:
                    meta.models.append(message.model)
            elif kind == "tool.execution_complete":
                result = _result(data)
                if (
                    messages
                    and messages[-1].role == "user"
                    and messages[-1].content
                    and all(isinstance(b, ToolResult) for b in messages[-1].content)
                ):
                    messages[-1].content.append(result)
                    messages[-1].source_ids.append(value["id"])
                else:
                    messages.append(Message("user", [result], source_ids=[value["id"]], timestamp=value["timestamp"]))
            elif kind == "session.usage_record":
                if isinstance(data.get("usage"), dict):
                    usage_records.append(data["usage"])
            elif kind == "session.compaction_complete":
                _compaction(conversation, value, data, loss, file, n, self.handed)
            elif kind == "system.message":
                loss.add(
                    "event:system.message", "the client's system prompt (it sends its own on resume)", file=file, line=n
                )
            elif kind in _BOOKKEEPING:
                return
            else:
                loss.add(f"event:{kind}", "an event Common has no place for", file=file, line=n)


def _start(meta: Meta, data: dict) -> None:
    if isinstance(data.get("sessionId"), str):
        meta.id = data["sessionId"]
    if isinstance(data.get("copilotVersion"), str):
        meta.client_version = data["copilotVersion"]
    if isinstance(data.get("startTime"), str):
        meta.started_at = data["startTime"]
    context = data.get("context")
    if isinstance(context, dict):
        if isinstance(context.get("cwd"), str):
            meta.cwd = context["cwd"]
        if isinstance(context.get("branch"), str):
            meta.git_branch = context["branch"]
    if isinstance(data.get("selectedModel"), str):
        meta.extra["selectedModel"] = data["selectedModel"]


def _user(value: dict, data: dict) -> Message:
    content = data.get("content") if isinstance(data.get("content"), str) else ""
    message = Message(
        "user", [Text(content)] if content else [], source_ids=[value["id"]], timestamp=value["timestamp"]
    )
    transformed = data.get("transformedContent")
    if isinstance(transformed, str) and transformed != content:
        message.extra["transformedContent"] = transformed
    if isinstance(data.get("attachments"), list) and data["attachments"]:
        message.extra["attachments"] = data["attachments"]
    if isinstance(data.get("source"), str):
        message.origin = data["source"]
    if data.get("isAutopilotContinuation") is True:
        message.synthetic = True
    return message


def _assistant(value: dict, data: dict, usage_records: list[dict]) -> Message:
    blocks: list[Any] = []
    if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
        thinking = Thinking(data["reasoningText"])
        if isinstance(data.get("reasoningOpaque"), str):
            thinking.signature = data["reasoningOpaque"]
        if isinstance(data.get("encryptedContent"), str):
            thinking.encrypted = data["encryptedContent"]
        blocks.append(thinking)
    if isinstance(data.get("content"), str) and data["content"]:
        blocks.append(Text(data["content"]))
    for request in data.get("toolRequests") or []:
        if not isinstance(request, dict):
            continue
        name = request.get("name") if isinstance(request.get("name"), str) else ""
        blocks.append(ToolUse(str(request.get("toolCallId", "")), name, request.get("arguments"), tool_kind(name)))
    message = Message("assistant", blocks, source_ids=[value["id"]], timestamp=value["timestamp"])
    if isinstance(data.get("messageId"), str):
        message.id = data["messageId"]
    if isinstance(data.get("model"), str):
        message.model = data["model"]
    record = _matching_usage(data, usage_records)
    last_chunk = not isinstance(data.get("chunkCount"), int) or data.get("chunkIndex") == data["chunkCount"] - 1
    if record is not None and last_chunk:
        usage_records.remove(record)
        message.usage = _usage(record)
        reason = record.get("finishReason")  # a receipt is any object: only a string names a reason
        message.stop_reason = _STOP.get(reason, reason) if isinstance(reason, str) else None
        if message.model is msgspec.UNSET and isinstance(record.get("model"), str):
            message.model = record["model"]
    elif last_chunk:
        message.stop_reason = implied_stop(blocks)
    return message


def _matching_usage(data: dict, records: list[dict]) -> dict | None:
    """The receipt of this message's call: the oldest unmatched one with its ``apiCallId``
    (ids repeat across resumes of a session, so only unmatched receipts count)."""
    call = data.get("apiCallId")
    for record in records:
        if call is None or record.get("apiCallId") in (None, call):
            return record
    return None


def _count(record: dict, key: str) -> int:
    value = record.get(key)
    return value if isinstance(value, int) and value >= 0 else 0


def _usage(record: dict) -> Usage:
    cache_read, cache_write = _count(record, "cacheReadTokens"), _count(record, "cacheWriteTokens")
    usage = Usage(
        input_tokens=max(_count(record, "inputTokens") - cache_read - cache_write, 0),
        output_tokens=_count(record, "outputTokens"),
        cache_creation_input_tokens=cache_write,
        cache_read_input_tokens=cache_read,
    )
    if isinstance(record.get("reasoningTokens"), int):
        usage.reasoning_output_tokens = record["reasoningTokens"]
    return usage


def _result(data: dict) -> ToolResult:
    ident = str(data.get("toolCallId", ""))
    success = data.get("success")
    result, error = data.get("result"), data.get("error")
    if isinstance(result, dict) and isinstance(result.get("content"), str):
        text = result["content"]
    elif isinstance(error, dict) and isinstance(error.get("message"), str):
        text = error["message"]
    else:
        text = ""
    block = ToolResult(ident, text, is_error=(not success) if isinstance(success, bool) else None)
    if (
        isinstance(result, dict)
        and isinstance(result.get("detailedContent"), str)
        and result["detailedContent"] != text
    ):
        block.structured = {"detailedContent": result["detailedContent"]}
    return block


def _compaction(
    conversation: Conversation, value: dict, data: dict, loss: LossReport, file: str | None, n: int, handed: int = 0
) -> None:
    summary = data.get("summaryContent")
    if data.get("success") is not True or not isinstance(summary, str):
        loss.add("event:session.compaction_complete", "a compaction without a summary", file=file, line=n)
        return
    start = handed + len(conversation.messages)  # epochs count from the session's first message
    conversation.messages.append(
        Message(
            "user",
            [Text(summary)],
            source_ids=[value["id"]],
            timestamp=value["timestamp"],
            synthetic=True,
            compact_summary=True,
        )
    )
    epoch = Epoch(start=start, boundary_id=value["id"])
    if isinstance(data.get("trigger"), str):
        epoch.trigger = data["trigger"]
    if isinstance(data.get("preCompactionTokens"), int):
        epoch.pre_tokens = data["preCompactionTokens"]
    conversation.epochs.append(epoch)
