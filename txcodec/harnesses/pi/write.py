"""Common conversation -> a pi session file that ``pi --session <id|path>`` resumes.

What pi 0.73.1 needs: a first line ``{type: "session", version: 3, id, timestamp, cwd}``
(without it pi treats the file as empty and silently starts over in it), an ``id`` and
``parentId`` on every entry with parents written first (the last line is the leaf), and
``usage`` on every assistant message (pi crashes reading ``usage.input`` without it).
The header's ``cwd`` must exist, or ``pi -p`` exits 1. Assistant messages whose
``stopReason`` is ``error`` or ``aborted`` are left out of the next request by pi, so
only Common messages flagged ``api_error`` / ``interrupted`` get those.

Mapping: a user message's tool results become one ``toolResult`` message each (with the
``toolName`` of their call), its other blocks a ``user`` message; assistant text /
thinking / tool_use become ``text`` / ``thinking`` / ``toolCall``. A compaction epoch
becomes a ``compaction`` entry whose ``firstKeptEntryId`` is the first preserved message
found. Model and thinking-level changes read from pi come back as entries.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from datetime import timezone
from typing import Any

import msgspec

from ...core.ids import check_id
from ...core.ids import checked_cwd
from ...core.ids import is_safe_id
from ...core.ids import is_uuid
from ...core.ids import safe_relpath
from ...core.ids import shown
from ...core.ids import source_cwd
from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Command
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import RedactedThinking
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import builtins
from .read import COMPACTION_PREFIX
from .read import COMPACTION_SUFFIX
from .store import session_relpath

VERSION = 3
DEFAULT_CWD = "/"
_STOP = {"tool_use": "toolUse", "max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop"}


def uuid7(ms: int, seed: str) -> str:
    """A version-7 UUID (pi's session ids) with its timestamp; the random bits come
    from ``seed`` so the same conversation writes the same file."""
    rand = int.from_bytes(hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest()[:10], "big")
    value = (
        (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))


def _parse(ts: Any) -> datetime | None:
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return None


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    meta = conversation.meta
    cwd = checked_cwd(options.cwd) or source_cwd(meta.cwd, loss)
    if not cwd:
        # pi needs an existing folder; "/" always is one
        cwd = DEFAULT_CWD
        loss.add("write:cwd", f"the conversation has no cwd; wrote it for {cwd} (pass --cwd)")
    started = (
        _parse(meta.started_at)
        or next((d for d in (_parse(m.timestamp) for m in conversation.messages) if d), None)
        or datetime.now(timezone.utc)
    )
    seed = meta.id if isinstance(meta.id, str) else json.dumps(builtins(conversation.messages[:3]))
    if options.session_id:
        sid = check_id(options.session_id, "session id")
    elif is_uuid(meta.id):
        sid = meta.id
    else:
        sid = uuid7(int(started.timestamp() * 1000), seed)
        if isinstance(meta.id, str) and not is_safe_id(meta.id):
            loss.add("write:session-id", f"source id {shown(meta.id)} cannot name a file; written as {sid}")
    if conversation.children:
        loss.children_not_written(conversation.children, "write:subagents", "not written")
    writer = _Writer(sid, started, loss)
    header = {"type": "session", "version": VERSION, "id": sid, "timestamp": _iso(started), "cwd": cwd}
    parent = meta.extra.get("parent_session") if meta.source_harness == "pi" else None
    if isinstance(parent, str):
        header["parentSession"] = parent  # pi names its parent by file: kept from a pi source
    elif meta.forked_from is not msgspec.UNSET:
        loss.add(
            "lineage:forked-from",
            f"forked from {meta.forked_from.session_id}: pi's parentSession names a "
            "session file of its own store, which a session of another harness is not",
        )
    writer.run(conversation)
    lines = [header, *writer.entries]
    data = b"".join(msgspec.json.encode(e) + b"\n" for e in lines)
    return Written(sid, {safe_relpath(session_relpath(cwd, header["timestamp"], sid)): data})


class _Writer:
    def __init__(self, sid: str, started: datetime, loss: LossReport) -> None:
        self.sid, self.loss = sid, loss
        self.entries: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.parent: str | None = None
        self.clock = started
        self.names: dict[str, str] = {}
        self.entry_of: dict[str, str] = {}  # Common source id -> written entry id

    def new_id(self) -> str:
        n = len(self.entries)
        while True:
            ident = hashlib.sha256(f"{self.sid}/{n}".encode()).hexdigest()[:8]
            if ident not in self.ids:
                self.ids.add(ident)
                return ident
            n += 1 << 20

    def entry(self, kind: str, **body: Any) -> str:
        ident = self.new_id()
        self.entries.append({"type": kind, "id": ident, "parentId": self.parent, "timestamp": _iso(self.clock), **body})
        self.parent = ident
        return ident

    def ms(self) -> int:
        return int(self.clock.timestamp() * 1000)

    def run(self, conversation: Conversation) -> None:
        extra = conversation.meta.extra
        changes: dict[int, list[tuple[str, dict]]] = {}
        for change in _listed(extra.get("model_changes")):
            if isinstance(change, dict) and isinstance(change.get("model"), str):
                body = {"provider": change.get("provider") or "unknown", "modelId": change["model"]}
                changes.setdefault(_at(change), []).append(("model_change", body))
        for change in _listed(extra.get("thinking_levels")):
            if isinstance(change, dict) and isinstance(change.get("level"), str):
                changes.setdefault(_at(change), []).append(
                    ("thinking_level_change", {"thinkingLevel": change["level"]})
                )
        epochs = {e.start: e for e in conversation.epochs}
        for index, message in enumerate(conversation.messages):
            when = _parse(message.timestamp)
            if when is not None:
                self.clock = when
            for kind, body in changes.get(index, []):
                self.entry(kind, **body)
            if index in epochs and message.role == "user":
                self.compaction(message, epochs[index])
            elif message.role == "assistant":
                self.assistant(message)
            else:
                self.user(message)
        if isinstance(conversation.meta.title, str) and conversation.meta.title:
            self.entry("session_info", name=conversation.meta.title)

    def remember(self, message: Message, ident: str) -> None:
        for source in message.source_ids:
            self.entry_of.setdefault(source, ident)

    def compaction(self, message: Message, epoch: Any) -> None:
        text = "\n".join(b.text for b in message.content if isinstance(b, Text))
        if text.startswith(COMPACTION_PREFIX) and text.endswith(COMPACTION_SUFFIX):
            text = text[len(COMPACTION_PREFIX) : -len(COMPACTION_SUFFIX)]
        kept = next((self.entry_of[i] for i in epoch.preserved_ids if i in self.entry_of), None)
        if epoch.preserved_ids and kept is None:
            self.loss.add("write:compaction", "preserved messages of a compaction not found; pi keeps none")
        body: dict[str, Any] = {
            "summary": text,
            "firstKeptEntryId": kept or "",
            "tokensBefore": epoch.pre_tokens if isinstance(epoch.pre_tokens, int) else 0,
        }
        self.remember(message, self.entry("compaction", **body))

    def assistant(self, message: Message) -> None:
        content: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, RedactedThinking):  # pi's form of Anthropic's redacted_thinking
                content.append({"type": "thinking", "thinking": "", "thinkingSignature": block.data, "redacted": True})
            elif isinstance(block, Thinking):
                if isinstance(block.encrypted, str):
                    content.append(
                        {
                            "type": "thinking",
                            "thinking": block.thinking,
                            "thinkingSignature": block.encrypted,
                            "redacted": True,
                        }
                    )
                elif block.thinking or isinstance(block.signature, str):
                    part = {"type": "thinking", "thinking": block.thinking}
                    if isinstance(block.signature, str):
                        part["thinkingSignature"] = block.signature
                    content.append(part)
            elif isinstance(block, ToolUse):
                self.names[block.id] = block.name
                args = writekit.object_input(block, self.loss)
                content.append({"type": "toolCall", "id": block.id, "name": block.name, "arguments": args})
            else:
                content.append(self.as_text(block))
        usage = message.usage if message.usage is not msgspec.UNSET else None
        tokens = {
            "input": usage.input_tokens if usage else 0,
            "output": usage.output_tokens if usage else 0,
            "cacheRead": usage.cache_read_input_tokens if usage else 0,
            "cacheWrite": usage.cache_creation_input_tokens if usage else 0,
        }
        tokens["totalTokens"] = sum(tokens.values())
        cost = message.extra.get("cost")
        tokens["cost"] = (
            cost if isinstance(cost, dict) else {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        )
        if message.api_error:
            stop = "error"
        elif message.interrupted:
            stop = "aborted"
        elif any(isinstance(b, ToolUse) for b in message.content):
            stop = "toolUse"
        else:
            stop = _STOP.get(message.stop_reason, "stop") if isinstance(message.stop_reason, str) else "stop"
        body: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": message.extra.get("api", "txcodec"),
            "provider": message.extra.get("provider", "txcodec"),
            "model": message.model if isinstance(message.model, str) else "unknown",
            "usage": tokens,
            "stopReason": stop,
            "timestamp": self.ms(),
        }
        if isinstance(message.extra.get("error_message"), str):
            body["errorMessage"] = message.extra["error_message"]
        if isinstance(message.id, str):
            body["responseId"] = message.id
        self.remember(message, self.entry("message", message=body))

    def user(self, message: Message) -> None:
        details = message.extra.get("details") if isinstance(message.extra.get("details"), dict) else {}
        first = None
        orphans = [b for b in message.content if isinstance(b, ToolResult) and b.tool_use_id not in self.names]
        for block in message.content:
            if not isinstance(block, ToolResult) or block in orphans:
                continue
            body: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": block.tool_use_id,
                "toolName": self.names.get(block.tool_use_id, ""),
                "content": self.parts(block.content if isinstance(block.content, list) else [Text(block.content)]),
                "isError": bool(block.is_error),
                "timestamp": self.ms(),
            }
            if block.tool_use_id in details:
                body["details"] = details[block.tool_use_id]
            ident = self.entry("message", message=body)
            first = first or ident
        others = [b for b in message.content if not isinstance(b, ToolResult) or b in orphans]
        if others:
            content = self.parts(others)
            custom = (
                message.origin[len("custom:") :]
                if isinstance(message.origin, str) and message.origin.startswith("custom:")
                else None
            )
            if custom is not None:
                ident = self.entry("custom_message", customType=custom, content=content, display=True)
            else:
                ident = self.entry("message", message={"role": "user", "content": content, "timestamp": self.ms()})
            first = first or ident
        if first is not None:
            self.remember(message, first)

    def parts(self, blocks: list[Any]) -> list[dict[str, Any]]:
        out = []
        for block in blocks:
            if isinstance(block, Text):
                out.append({"type": "text", "text": block.text})
            elif isinstance(block, ToolResult):
                # a result without its call: an API rejects it as a tool message
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                inner = block.content if isinstance(block.content, list) else [Text(block.content)]
                texts = [b.text if isinstance(b, Text) else json.dumps(builtins(b), ensure_ascii=False) for b in inner]
                out.append({"type": "text", "text": f"[tool result {block.tool_use_id}]\n" + "\n".join(texts)})
            elif isinstance(block, Image) and isinstance(block.data, str):
                out.append(
                    {
                        "type": "image",
                        "data": block.data,
                        "mimeType": block.media_type if isinstance(block.media_type, str) else "image/png",
                    }
                )
            elif isinstance(block, Document) and block.media_type == "text/plain" and isinstance(block.data, str):
                out.append({"type": "text", "text": block.data})
            else:
                out.append(self.as_text(block))
        return out

    def as_text(self, block: Any) -> dict[str, Any]:
        self.loss.add(f"write:block:{writekit.block_kind(block)}", "pi has no content block for this; written as text")
        if isinstance(block, Command):
            text = " ".join(x for x in (block.name, block.args if isinstance(block.args, str) else "") if x)
        else:
            text = json.dumps(builtins(block), ensure_ascii=False)
        return {"type": "text", "text": text}


def _listed(value: Any) -> list[Any]:
    """A list kept in ``extra``, or none: Common JSON may hold anything there."""
    return value if isinstance(value, list) else []


def _at(change: dict) -> int:
    """The message index a recorded change comes before (0 when it names none)."""
    at = change.get("at")
    return at if isinstance(at, int) and not isinstance(at, bool) else 0
