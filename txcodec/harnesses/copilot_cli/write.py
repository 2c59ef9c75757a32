"""Common conversation -> a Copilot CLI event log that ``copilot --resume <id>`` replays.

What 1.0.102 needs (docs/copilot_cli.md#format-facts: a 5-line hand-written file resumes; its schema; the
cases it refused): every line an envelope ``{type, data, id (UUID), timestamp (ISO with a
zone), parentId (UUID or null)}``, a ``session.start`` first (``sessionId``, ``version: 1``,
``producer``, ``copilotVersion``, ``startTime``, ``context.cwd``), then ``user.message``
(``content``), ``assistant.message`` (``messageId``, ``content``, ``toolRequests`` with
``arguments`` as an object) and ``tool.execution_complete`` (``toolCallId``, ``success``,
``result.content`` or ``error.message``). The folder is ``session-state/<id>/`` and the id
a UUID. Resume is not tied to a folder: the recorded cwd is only information.

A call's usage goes in a ``session.usage_record`` just before its message, as the client
writes it (``inputTokens`` counting the cached tokens too). A user message's text blocks
are joined into one ``content``; a ``transformedContent`` the reader kept is written back
(the client sends it instead of ``content``). What an event cannot hold (images, documents,
thinking without text, thinking signatures from another provider) is in the loss report.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from datetime import timezone
from typing import Any

import msgspec

from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .store import UUID
from .store import session_relpath

CLIENT_VERSION = "1.0.102"
DEFAULT_CWD = "/"
_NAMESPACE = uuid.UUID("0c9d5f2e-6a41-4c1b-9a0e-2f6f1c3b7d55")
_FINISH = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    return writekit.asked_or_kept_id(
        options.session_id,
        conversation,
        loss,
        lambda s: s.lower() if UUID.match(s) else None,
        _NAMESPACE,
        "cannot name a folder",
        "Copilot CLI session ids are UUIDs (the session's folder name)",
        plain_is_usual=True,
    )


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    cwd = options.cwd or (conversation.meta.cwd if isinstance(conversation.meta.cwd, str) else None)
    cwd = writekit.cwd_or_default(cwd, loss, DEFAULT_CWD, "copilot resumes from any folder")
    writekit.flattened(conversation, loss)
    writer = _Writer(sid, loss, conversation)
    start: dict[str, Any] = {
        "sessionId": sid,
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": CLIENT_VERSION,
        "startTime": writer.clock,
        "context": {"cwd": cwd},
    }
    models = conversation.meta.models
    if models:
        start["selectedModel"] = models[-1]
    writer.event("session.start", start, None)
    for message in conversation.messages:
        writer.message(message)
    data = b"".join(msgspec.json.encode(e) + b"\n" for e in writer.events)
    return Written(sid, {session_relpath(sid): data})


class _Writer:
    def __init__(self, sid: str, loss: LossReport, conversation: Conversation) -> None:
        self.sid, self.loss = sid, loss
        self.events: list[dict[str, Any]] = []
        self.pending: set[str] = set()
        started = conversation.meta.started_at
        self.clock = started if isinstance(started, str) and _has_zone(started) else _now()

    def _id(self, salt: str = "") -> str:
        return str(uuid.uuid5(uuid.UUID(self.sid), f"{len(self.events)}{salt}"))

    def event(self, kind: str, data: dict[str, Any], message: Message | None) -> None:
        if message is not None and isinstance(message.timestamp, str) and _has_zone(message.timestamp):
            self.clock = message.timestamp
        parent = self.events[-1]["id"] if self.events else None
        self.events.append({"type": kind, "data": data, "id": self._id(), "timestamp": self.clock, "parentId": parent})

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(message)
            return
        texts: list[str] = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.pending:
                self.pending.discard(block.tool_use_id)
                self.result(block, message)
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                texts.append(f"[tool result {block.tool_use_id}]\n{self.result_text(block)}")
            elif isinstance(block, Text):
                if block.text:
                    texts.append(block.text)
            else:
                texts.append(self.as_text(block))
        if texts:
            data: dict[str, Any] = {"content": "\n\n".join(texts)}
            transformed = message.extra.get("transformedContent")
            if isinstance(transformed, str) and len(texts) == 1 and transformed.endswith(texts[0]):
                data["transformedContent"] = transformed
            self.event("user.message", data, message)

    def assistant(self, message: Message) -> None:
        content: list[str] = []
        reasoning: list[str] = []
        requests: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, Text):
                content.append(block.text)
            elif isinstance(block, Thinking):
                if (thought := writekit.thinking_text(block, self.loss)) is not None:
                    reasoning.append(thought)
            elif isinstance(block, ToolUse):
                args = writekit.object_input(block, self.loss)
                requests.append({"toolCallId": block.id, "name": block.name, "arguments": args, "type": "function"})
                self.pending.add(block.id)
            else:
                content.append(self.as_text(block))
        if not (content or reasoning or requests):
            self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        model = message.model if isinstance(message.model, str) else None
        call = f"call-{len(self.events)}"
        if message.usage is not msgspec.UNSET:
            u = message.usage
            usage: dict[str, Any] = {
                "model": model or "unknown",
                "inputTokens": u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
                "outputTokens": u.output_tokens,
                "cacheReadTokens": u.cache_read_input_tokens,
                "cacheWriteTokens": u.cache_creation_input_tokens,
                "apiCallId": call,
            }
            if isinstance(u.reasoning_output_tokens, int):
                usage["reasoningTokens"] = u.reasoning_output_tokens
            if isinstance(message.stop_reason, str):
                usage["finishReason"] = _FINISH.get(message.stop_reason, message.stop_reason)
            self.event("session.usage_record", {"usage": usage}, message)
        data: dict[str, Any] = {
            "messageId": self._id("message"),
            "content": "\n\n".join(content),
            "toolRequests": requests,
        }
        if model:
            data["model"] = model
        if reasoning:
            data["reasoningText"] = "\n\n".join(reasoning)
        if message.usage is not msgspec.UNSET:
            data["apiCallId"] = call
        self.event("assistant.message", data, message)

    def result(self, block: ToolResult, message: Message) -> None:
        text = self.result_text(block)
        data: dict[str, Any] = {"toolCallId": block.tool_use_id, "success": block.is_error is not True}
        if block.is_error is True:
            data["error"] = {"message": text}
        else:
            data["result"] = {"content": text}
        self.event("tool.execution_complete", data, message)

    def result_text(self, block: ToolResult) -> str:
        return writekit.result_text(block, self.loss)

    def as_text(self, block: Any) -> str:
        return writekit.as_text(block, self.loss, "a Copilot CLI event")


def _has_zone(stamp: str) -> bool:
    """The client refuses a timestamp without a timezone offset."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).tzinfo is not None
    except ValueError:
        return False


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
