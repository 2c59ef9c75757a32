"""Common conversation -> a legacy Mistral Vibe session that ``vibe --resume <id>`` imports.

Why legacy (docs/mistral_vibe.md#format-facts, 3.0.2): a unified session (``unified/<id>/``) is a digest
chain; a copy with a new id or an edited text is refused ("manifest digest mismatch"),
and even a verbatim copy needs the plugin environment it pinned. A legacy folder
``logs/session/session_<time>_<id[:8]>/`` with ``meta.json`` and ``messages.jsonl`` is
found by ``--resume <id>`` (by the id's first 8 characters), validated (both files, at
least one message, every line an object) and imported into a new unified session, its
whole history sent (``vibe/core/session/session_interop.py``,
``export_legacy_committed_history``).

Lines are ``LLMMessage`` objects: ``user`` / ``assistant`` (``content`` a string,
``reasoning_content``, ``tool_calls`` with ``arguments`` as a JSON string) / ``tool``
(``content``, ``tool_call_id``, ``name``). A ``message_id`` is written on user and
assistant lines as the client does (it makes one when missing). The session id is a UUID.
No time, model or usage per message (``write:timestamps-usage``); images and blocks with
no place become text.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from datetime import timezone
from typing import Any

import msgspec

from ...core.errors import UnsafeId
from ...core.ids import is_uuid
from ...core.ids import shown
from ...core.ids import source_cwd
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
from ...model.native import builtins
from .store import LEGACY_MESSAGES
from .store import META
from .store import legacy_relpath

DEFAULT_CWD = "/"
_NAMESPACE = uuid.UUID("8f2d4c61-7b3e-4a95-b0c2-1d6e9a4f3c70")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    if options.session_id:
        if not is_uuid(options.session_id):
            raise UnsafeId(
                f"Mistral Vibe session ids are UUIDs (--resume finds one by its first 8 characters); "
                f"got {shown(options.session_id)}"
            )
        return options.session_id.lower()
    return writekit.kept_or_derived_id(
        conversation, loss, lambda s: s.lower() if is_uuid(s) else None, _NAMESPACE, "is not a UUID"
    )


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    cwd = writekit.cwd_or_default(
        options.cwd or source_cwd(conversation.meta.cwd, loss),
        loss,
        DEFAULT_CWD,
        "vibe --resume <id> works from any folder",
    )
    writer = writekit.fed(_Writer(sid, loss), conversation, loss)
    writekit.report_unstamped(conversation, loss, "a Vibe message line")
    started = _stamp(conversation.meta.started_at)
    meta: dict[str, Any] = {
        "session_id": sid,
        "start_time": started or "1970-01-01T00:00:00+00:00",
        "end_time": _stamp(conversation.meta.ended_at) or started or "1970-01-01T00:00:00+00:00",
        "environment": {"working_directory": cwd},
    }
    if isinstance(conversation.meta.title, str):
        meta["title"] = conversation.meta.title
    folder = f"session_{_folder_time(started)}_{sid[:8]}"
    data = b"".join(msgspec.json.encode(line) + b"\n" for line in writer.lines)
    meta_bytes = json.dumps(meta, ensure_ascii=False, indent=2).encode() + b"\n"
    return Written(sid, {legacy_relpath(folder, LEGACY_MESSAGES): data, legacy_relpath(folder, META): meta_bytes})


def _stamp(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


def _folder_time(started: str | None) -> str:
    moment = datetime.fromisoformat(started) if started else datetime(1970, 1, 1, tzinfo=timezone.utc)
    return re.sub(r"[^0-9_]", "", moment.strftime("%Y%m%d_%H%M%S"))


class _Writer:
    def __init__(self, sid: str, loss: LossReport) -> None:
        self.sid, self.loss = sid, loss
        self.lines: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}  # pending call id -> tool name (a tool line names its tool)

    def message_id(self) -> str:
        return str(uuid.uuid5(uuid.UUID(self.sid), str(len(self.lines))))

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(message)
            return
        texts: list[str] = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.names:
                name = self.names.pop(block.tool_use_id)
                self.lines.append(
                    {
                        "role": "tool",
                        "content": writekit.result_text(block, self.loss),
                        "tool_call_id": block.tool_use_id,
                        "name": name,
                    }
                )
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                texts.append(f"[tool result {block.tool_use_id}]\n{writekit.result_text(block, self.loss)}")
            elif isinstance(block, Text):
                if block.text:
                    texts.append(block.text)
            else:
                texts.append(writekit.as_text(block, self.loss, "a Vibe message line"))
        if texts:
            line: dict[str, Any] = {"role": "user", "content": "\n\n".join(texts), "message_id": self.message_id()}
            if message.meta:
                line["injected"] = True
            self.lines.append(line)

    def assistant(self, message: Message) -> None:
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, Text):
                if block.text:
                    texts.append(block.text)
            elif isinstance(block, Thinking):
                if (thought := writekit.thinking_text(block, self.loss)) is not None:
                    reasoning.append(thought)
            elif isinstance(block, ToolUse):
                arguments = (
                    block.input
                    if isinstance(block.input, str)
                    else json.dumps(builtins(block.input), ensure_ascii=False)
                )
                calls.append(
                    {
                        "id": block.id,
                        "index": len(calls),
                        "type": "function",
                        "function": {"name": block.name, "arguments": arguments},
                    }
                )
                self.names[block.id] = block.name
            else:
                texts.append(writekit.as_text(block, self.loss, "a Vibe message line"))
        if not (texts or reasoning or calls):
            self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        line: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts), "message_id": self.message_id()}
        if reasoning:
            line["reasoning_content"] = "\n\n".join(reasoning)
        if calls:
            line["tool_calls"] = calls
        self.lines.append(line)
