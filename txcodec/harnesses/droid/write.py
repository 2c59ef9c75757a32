"""Common conversation -> a Factory droid session that ``droid exec --fork <id>`` continues.

What 0.225.2 needs (docs/droid.md#format-facts, and the real-client tests): a first record
``session_start`` with **``owner``** (without it the fork silently sends no history, exit
0) and the project folder; every ``message`` needs a **``timestamp``** (without it:
"Existing session message is invalid", exit 1); ``id`` / ``parentId`` may be any strings.
The file goes to ``sessions/<munged cwd>/<uuid>.jsonl``.

Blocks are written Anthropic-style as the client stores them. Thinking is left out
(``write:thinking``: a custom Chat Completions model has no place to resend it); a call
left without a result is answered with an error result (``write:missing-tool-result``);
a result whose call is not in the previous turn is written as text
(``write:orphan-result``); other blocks as text (``write:block:*``).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import msgspec

from ...core.errors import UnsafeId
from ...core.ids import is_safe_relpath
from ...core.ids import shown
from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .store import UUID
from .store import session_relpath

INTERRUPTED = "[Tool call interrupted: no result was recorded]"
EPOCH = "1970-01-01T00:00:00.000Z"
_NAMESPACE = uuid.UUID("7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    if options.session_id:
        if not UUID.match(options.session_id):
            raise UnsafeId(f"a droid session id is a UUID; got {options.session_id!r}")
        return options.session_id
    return writekit.kept_or_derived_id(
        conversation, loss, lambda s: s.lower() if UUID.match(s) else None, _NAMESPACE, "is not a UUID"
    )


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    meta = conversation.meta
    cwd = options.cwd or (meta.cwd if isinstance(meta.cwd, str) else "")
    if not cwd:
        cwd = os.getcwd()
        loss.add("write:cwd", f"the conversation names no project folder: {cwd} was used")
    writekit.flattened(conversation, loss)
    owner = meta.extra.get("droid_owner")
    start = {
        "type": "session_start",
        "id": sid,
        "title": meta.title if isinstance(meta.title, str) else "",
        "owner": owner if isinstance(owner, str) else "unknown",
        "version": 2,
        "cwd": cwd,
    }
    writer = _Writer(loss, sid)
    for message in conversation.messages:
        writer.message(message)
    writer.answer_pending()
    lines = [msgspec.json.encode(start)] + [msgspec.json.encode(r) for r in writer.records]
    relpath = session_relpath(sid, cwd)
    if not is_safe_relpath(relpath):  # the munged project folder is longer than a file name may be
        raise UnsafeId(f"project folder {shown(cwd)} cannot name a droid sessions folder (too long)")
    return Written(sid, {relpath: b"\n".join(lines) + b"\n"})


class _Writer:
    def __init__(self, loss: LossReport, sid: str) -> None:
        self.loss = loss
        self.sid = sid
        self.records: list[dict[str, Any]] = []
        self.pending: set[str] = set()
        self.stamp = EPOCH

    def add(self, role: str, content: list[dict[str, Any]], message: Message | None) -> None:
        if message is not None and isinstance(message.timestamp, str):
            self.stamp = message.timestamp
        ident = str(uuid.uuid5(uuid.UUID(self.sid), str(len(self.records))))
        record: dict[str, Any] = {"type": "message", "id": ident}
        if self.records:
            record["parentId"] = self.records[-1]["id"]
        body: dict[str, Any] = {"role": role, "content": content}
        if message is not None and role == "assistant" and isinstance(message.model, str):
            body["modelId"] = message.model
        record["timestamp"] = self.stamp  # required: a message without one is refused
        record["message"] = body
        self.records.append(record)

    def answer_pending(self) -> None:
        if self.pending:
            self.add("user", self.unanswered(), None)

    def unanswered(self) -> list[dict[str, Any]]:
        for ident in sorted(self.pending):
            self.loss.add("write:missing-tool-result", f"call {ident} had no result: answered with an error")
        out = [
            {"type": "tool_result", "tool_use_id": i, "is_error": True, "content": INTERRUPTED}
            for i in sorted(self.pending)
        ]
        self.pending = set()
        return out

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.answer_pending()
            content: list[dict[str, Any]] = []
            calls = set()
            for block in message.content:
                if isinstance(block, Text):
                    if block.text:
                        content.append({"type": "text", "text": block.text})
                elif isinstance(block, Thinking):
                    self.loss.add("write:thinking", "thinking is not written for droid's custom models")
                elif isinstance(block, ToolUse):
                    args = writekit.object_input(block, self.loss)
                    content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": args})
                    calls.add(block.id)
                else:
                    content.append({"type": "text", "text": writekit.as_text(block, self.loss, "a droid message")})
            if not content:
                self.loss.add("write:empty-message", "an assistant message with nothing to write")
                return
            self.add("assistant", content, message)
            self.pending = calls
            return
        results: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.pending:
                self.pending.discard(block.tool_use_id)
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block.tool_use_id,
                        "is_error": bool(block.is_error),
                        "content": writekit.result_text(block, self.loss),
                    }
                )
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                parts.append(
                    {
                        "type": "text",
                        "text": f"[tool result {block.tool_use_id}]\n{writekit.result_text(block, self.loss)}",
                    }
                )
            elif isinstance(block, Text):
                if block.text:
                    parts.append({"type": "text", "text": block.text})
            elif isinstance(block, Image) and isinstance(block.data, str) and isinstance(block.media_type, str):
                parts.append(
                    {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}
                )
            else:
                parts.append({"type": "text", "text": writekit.as_text(block, self.loss, "a droid message")})
        if results or parts:
            results += self.unanswered()
        if results:
            self.add("user", results + parts, message)
        elif parts:
            self.add("user", parts, message)
        else:
            self.loss.add("write:empty-message", "a user message with nothing to write")
