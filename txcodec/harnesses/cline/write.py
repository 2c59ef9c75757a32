"""Common conversation -> a cline session folder that ``cline --id <id>`` resumes.

What 3.0.65 needs (docs/cline.md#format-facts; the hand-written file it resumed): ``{version: 1,
sessionId, messages}``, each message ``{role, content: [blocks]}``; a ``tool_result`` must
name its tool (without ``name`` the TUI prints a zod error and sends nothing), and the
folder must be registered in ``sessions.db`` (:func:`~.store.install` does it from the
session record ``<id>.json`` the writer puts beside the messages file).

User texts are wrapped ``<user_input mode="act">…</user_input>`` as the client stores them
(it unwraps and trims them before sending). A call left without a result is answered with
an error text (``write:missing-tool-result``: Chat Completions refuses a call without its
answer, and the client would send it so); an error flag has no slot (``write:is_error``),
nor has thinking (``write:thinking``); blocks other than text, images and tool blocks are
written as text (``write:block:*``). Ids cline did not make are replaced by ones of its
shape, ``<13 digits>_<5 letters or digits>`` (``write:session-id``).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from typing import Any

import msgspec

from ...core.errors import UnsafeId
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
from .store import NATIVE_ID
from .store import SAFE_ID
from .store import record_relpath
from .store import session_relpath

INTERRUPTED = "[Tool call interrupted: no result was recorded]"
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    if options.session_id:
        if not SAFE_ID.match(options.session_id):
            raise UnsafeId(
                f"a cline session id names its folder: letters, digits, '.', '_', '-' only; got {options.session_id!r}"
            )
        return options.session_id

    def derive(seed: str) -> str:  # cline's own shape: the start in milliseconds, then five letters or digits
        digest = hashlib.sha256(seed.encode("utf-8", "replace")).digest()
        millis = _millis(conversation.meta.started_at) or 1_700_000_000_000 + int.from_bytes(digest[:8], "big") % 10**11
        return f"{millis:013d}_" + "".join(_ALPHABET[b % 36] for b in digest[8:13])

    return writekit.kept_or_derived_id(
        conversation, loss, lambda s: s if NATIVE_ID.match(s) else None, derive, "is not of cline's shape"
    )


def _millis(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        value = int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None
    return value if 10**12 <= value < 10**13 else None


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    writer = writekit.fed(_Writer(loss), conversation, loss)
    writer.answer_pending()
    document = {"version": 1, "sessionId": sid, "agent": "lead", "messages": writer.messages}
    meta = conversation.meta
    cwd = options.cwd or (meta.cwd if isinstance(meta.cwd, str) else "")
    if not cwd:  # the record and the database row need the project folder
        cwd = os.getcwd()
        loss.add("write:cwd", f"the conversation names no project folder: {cwd} was used")
    models = [m.model for m in conversation.messages if isinstance(m.model, str)]
    provider = meta.extra.get("cline_provider")
    record: dict[str, Any] = {
        "version": 1,
        "session_id": sid,
        "source": "cli",
        "pid": 0,
        "status": "completed",
        "interactive": False,
        # the client's default provider id when the source does not name one (cline --help)
        "provider": provider if isinstance(provider, str) else "cline",
        "model": models[-1] if models else "",
        "cwd": cwd,
        "workspace_root": cwd,
        "enable_tools": True,
        "enable_spawn": True,
        "enable_teams": True,
    }
    for key, value in (("started_at", meta.started_at), ("ended_at", meta.ended_at)):
        if isinstance(value, str):
            record[key] = value
    if writer.first_prompt is not None:
        record["prompt"] = writer.first_prompt
    record["metadata"] = {"title": meta.title if isinstance(meta.title, str) else (writer.first_prompt or "")[:100]}
    return Written(
        sid,
        {
            session_relpath(sid): msgspec.json.encode(document) + b"\n",
            record_relpath(sid): msgspec.json.encode(record) + b"\n",
        },
    )


class _Writer:
    def __init__(self, loss: LossReport) -> None:
        self.loss = loss
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, str] = {}  # call id -> tool name, of the last assistant message
        self.first_prompt: str | None = None

    def _add(self, role: str, content: list[dict[str, Any]], message: Message | None) -> dict[str, Any]:
        item: dict[str, Any] = {"id": f"msg_{len(self.messages) + 1:04d}", "role": role, "content": content}
        stamp = _millis(message.timestamp) if message is not None else None
        if stamp is not None:
            item["ts"] = stamp
        self.messages.append(item)
        return item

    def answer_pending(self) -> None:
        """Answer every call of the last assistant message that has no result yet."""
        if self.pending:
            self._add("user", self._unanswered(), None)

    def _unanswered(self) -> list[dict[str, Any]]:
        for ident in self.pending:
            self.loss.add("write:missing-tool-result", f"call {ident} had no result: answered with an error text")
        results = [self._result(i, n, INTERRUPTED) for i, n in self.pending.items()]
        self.pending = {}
        return results

    @staticmethod
    def _result(ident: str, name: str, content: Any) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": ident, "name": name, "content": content}

    def _content(self, block: ToolResult) -> Any:
        """A result as text, or as the structured value cline stored when the text is
        that value's JSON (what the client sends for it: the reader made it so)."""
        text = writekit.result_text(block, self.loss)
        if isinstance(block.structured, (list, dict)):
            if json.dumps(block.structured, ensure_ascii=False, separators=(",", ":")) == text:
                return block.structured
        return text

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(message)
        else:
            self.user(message)

    def user(self, message: Message) -> None:
        results: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        mode = message.extra.get("cline_mode") if isinstance(message.extra.get("cline_mode"), str) else "act"
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.pending:
                if block.is_error:
                    self.loss.add("write:is_error", f"result of call {block.tool_use_id}: cline records no error flag")
                name = self.pending.pop(block.tool_use_id)
                results.append(self._result(block.tool_use_id, name, self._content(block)))
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                parts.append(
                    {
                        "type": "text",
                        "text": f"[tool result {block.tool_use_id}]\n{writekit.result_text(block, self.loss)}",
                    }
                )
            elif isinstance(block, Text):
                if block.text.strip():
                    if self.first_prompt is None:
                        self.first_prompt = block.text
                    parts.append({"type": "text", "text": f'<user_input mode="{mode}">{block.text}</user_input>'})
                else:
                    self.loss.add("write:empty-text", "an empty user text left out (the client trims it away)")
            elif isinstance(block, Image) and isinstance(block.data, str) and isinstance(block.media_type, str):
                parts.append({"type": "image", "data": block.data, "mediaType": block.media_type})
            else:
                parts.append({"type": "text", "text": writekit.as_text(block, self.loss, "a cline user message")})
        if results or parts:  # the calls still unanswered are answered with the others
            results += self._unanswered()
        if results:
            self._add("user", results, message)
        if parts:
            self._add("user", parts, message)
        elif not results:
            self.loss.add("write:empty-message", "a user message with nothing to write")

    def assistant(self, message: Message) -> None:
        self.answer_pending()
        content: list[dict[str, Any]] = []
        calls: dict[str, str] = {}
        for block in message.content:
            if isinstance(block, Text):
                if block.text:
                    content.append({"type": "text", "text": block.text})
            elif isinstance(block, Thinking):
                self.loss.add("write:thinking", "a cline message has no place for thinking: dropped")
            elif isinstance(block, ToolUse):
                args = writekit.object_input(block, self.loss)
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": args})
                calls[block.id] = block.name
            else:
                content.append(
                    {"type": "text", "text": writekit.as_text(block, self.loss, "a cline assistant message")}
                )
        if not content:
            self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        item = self._add("assistant", content, message)
        if isinstance(message.model, str):
            item["modelInfo"] = {"id": message.model}
        if message.usage is not msgspec.UNSET:
            u = message.usage
            item["metrics"] = {
                "inputTokens": u.input_tokens,
                "outputTokens": u.output_tokens,
                "cacheReadTokens": u.cache_read_input_tokens,
                "cacheWriteTokens": u.cache_creation_input_tokens,
            }
        self.pending = calls
