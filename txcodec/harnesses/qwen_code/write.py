"""Common conversation -> a Qwen Code session file that ``qwen --resume <id>`` loads.

What 0.24.4 needs (found by removing fields one by one, and in its source): records
``{uuid, parentUuid, sessionId, timestamp, type, cwd, version, message}``, each record's
parent written before it (the client walks ``parentUuid`` back from the last record), a
``cwd`` equal to the project the client runs in (a record without one crashes it), roles
``user`` / ``model`` (``assistant`` crashes it) and the content in ``parts`` (``content``
resumes an empty history, silently). The file is ``projects/<munged cwd>/chats/<uuid>.jsonl``
under the store root.

Mapping: an assistant message is one ``assistant`` record; a user message's tool results
are one ``tool_result`` record (``functionResponse{id, name, response: {output|error}}``,
the shape the client writes) and its other blocks a ``user`` record after it. Blocks a
Gemini part cannot hold become text, and the loss report says so. A Qwen Code source's
compressions are written back as ``chat_compression`` records; another harness's
compaction epochs are flattened: the summary message stays in the history as ordinary text.
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
from ...core.ids import checked_cwd
from ...core.ids import derive_uuid
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
from .store import session_relpath

CLIENT_VERSION = "0.24.4"
DEFAULT_CWD = "/"
INTERRUPTED = "[Tool call interrupted: no result was recorded]"
_NAMESPACE = uuid.UUID("6f2d8a52-3c1b-4c55-9a59-0e7f4c4d2a10")


# what ``qwen --resume`` takes for an id (``isValidSessionId``): a UUID of versions 1-5
# only, so a pi or Codex id (UUIDv7) is not one
RESUMABLE_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.IGNORECASE
)  # fullmatch


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    if options.session_id:
        if not RESUMABLE_ID.fullmatch(options.session_id):
            raise UnsafeId(
                f"Qwen Code resumes only sessions whose id is a UUID of versions 1-5; got {shown(options.session_id)}"
            )
        return options.session_id
    return writekit.kept_or_derived_id(
        conversation,
        loss,
        lambda s: s if RESUMABLE_ID.fullmatch(s) else None,
        lambda seed: derive_uuid(_NAMESPACE, seed),
        "cannot name a file",
        plain_is_usual=True,
    )  # a plain non-UUID (pi, Codex: v7) is usual


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    cwd = checked_cwd(options.cwd) or source_cwd(conversation.meta.cwd, loss)
    if not cwd:
        # the client resumes a session only from its own project folder: say so, don't fail
        cwd = DEFAULT_CWD
        loss.add("write:cwd", f"the conversation has no cwd; wrote it for {cwd} (pass --cwd)")
    # a Qwen Code source's compressions go back as chat_compression records (the
    # compressed history is the run of synthetic messages the reader put at the epoch's
    # start), so the client resumes after the last one as it does for its own file
    native = conversation.meta.source_harness == "qwen_code"
    compressed = (
        {e.start: _compressed_run(conversation.messages, e.start) for e in conversation.epochs} if native else {}
    )
    flattened = [e for e in conversation.epochs if not compressed.get(e.start)]
    if flattened:
        loss.add("write:compaction", f"{len(flattened)} compaction epoch(s) flattened: summaries kept as text")
    if conversation.children:
        loss.children_not_written(conversation.children, "write:subagents", "not written")
    writer = _Writer(sid, cwd, loss, conversation)
    skip_until = 0
    for i, message in enumerate(conversation.messages):
        if i in compressed and compressed[i]:
            writer.compression(compressed[i], next(e for e in conversation.epochs if e.start == i))
            skip_until = i + len(compressed[i])
        if i < skip_until:
            continue
        writer.message(message)
    writer.answer_pending(None)
    data = b"".join(msgspec.json.encode(r) + b"\n" for r in writer.records)
    return Written(sid, {safe_relpath(session_relpath(cwd, sid)): data})


def _compressed_run(messages: list[Message], start: int) -> list[Message]:
    run = []
    for message in messages[start:]:
        if not message.synthetic:
            break
        run.append(message)
    return run


class _Writer:
    def __init__(self, sid: str, cwd: str, loss: LossReport, conversation: Conversation) -> None:
        self.sid, self.cwd, self.loss = sid, cwd, loss
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.names: dict[str, str] = {}
        self.pending: dict[str, str] = {}  # calls of the last assistant turn without a result yet
        started = conversation.meta.started_at
        self.clock = started if isinstance(started, str) else _now()

    def record(self, kind: str, role: str, parts: list[dict], message: Message, **extra: Any) -> None:
        ident = str(uuid.uuid5(uuid.UUID(self.sid), str(len(self.records))))
        if isinstance(message.timestamp, str):
            self.clock = message.timestamp
        record = {
            "uuid": ident,
            "parentUuid": self.parent,
            "sessionId": self.sid,
            "timestamp": self.clock,
            "type": kind,
            "cwd": self.cwd,
            "version": CLIENT_VERSION,
            **extra,
            "message": {"role": role, "parts": parts},
        }
        self.records.append(record)
        self.parent = ident

    def compression(self, messages: list[Message], epoch: Any) -> None:
        """A ``system``/``chat_compression`` record: the client replaces the history
        with its ``compressedHistory`` (0.24.4, ``isApiHistoryCompressionCandidate``)."""
        self.answer_pending(None)
        history = []
        for message in messages:
            if message.role == "assistant":
                parts = [p for block in message.content for p in self.assistant_part(block)]
                history.append({"role": "model", "parts": parts})
            else:
                results = [
                    self.result_part(b)
                    for b in message.content
                    if isinstance(b, ToolResult) and b.tool_use_id in self.pending
                ]
                parts = results + [
                    p
                    for b in message.content
                    if not (isinstance(b, ToolResult) and b.tool_use_id in self.pending)
                    for p in self.user_part(b)
                ]
                history.append({"role": "user", "parts": parts})
        self.pending = {}  # calls inside the compressed history are answered there or not at all
        ident = str(uuid.uuid5(uuid.UUID(self.sid), str(len(self.records))))
        info: dict[str, Any] = {"compressionStatus": 1}
        if isinstance(epoch.pre_tokens, int):
            info["originalTokenCount"] = epoch.pre_tokens
        self.records.append(
            {
                "uuid": ident,
                "parentUuid": self.parent,
                "sessionId": self.sid,
                "timestamp": self.clock,
                "type": "system",
                "cwd": self.cwd,
                "version": CLIENT_VERSION,
                "subtype": "chat_compression",
                "systemPayload": {"info": info, "compressedHistory": history, "completedToolCallIds": []},
            }
        )
        self.parent = ident

    def answer_pending(self, message: Message | None, parts: list[dict] | None = None) -> None:
        """The client drops a call without a result from the request (and a result
        without its call: ``cleanOrphanedToolCalls``), so each unanswered call gets an
        error result here, in the turn that should have answered it."""
        if not self.pending:
            return
        synthetic = []
        for ident, name in self.pending.items():
            self.loss.add("write:synthetic-result", f"call {ident} ({name}) had no result: answered with an error")
            synthetic.append({"functionResponse": {"id": ident, "name": name, "response": {"error": INTERRUPTED}}})
        self.pending = {}
        if parts is not None:
            parts.extend(synthetic)
        else:
            self.record("tool_result", "user", synthetic, message or Message("user", []))

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.answer_pending(message)
            parts = [p for block in message.content for p in self.assistant_part(block)]
            extra: dict[str, Any] = {}
            if isinstance(message.model, str):
                extra["model"] = message.model
            if parts:
                self.record("assistant", "model", parts, message, **extra)
                if message.usage is not msgspec.UNSET:
                    u = message.usage
                    self.records[-1]["usageMetadata"] = {
                        "promptTokenCount": u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
                        "candidatesTokenCount": u.output_tokens,
                        "thoughtsTokenCount": u.reasoning_output_tokens
                        if isinstance(u.reasoning_output_tokens, int)
                        else 0,
                        "totalTokenCount": u.input_tokens
                        + u.cache_read_input_tokens
                        + u.cache_creation_input_tokens
                        + u.output_tokens,
                        "cachedContentTokenCount": u.cache_read_input_tokens,
                    }
            else:
                self.loss.add("write:empty-message", "an assistant message with nothing to write")
            return
        results = [b for b in message.content if isinstance(b, ToolResult) and b.tool_use_id in self.pending]
        others = [b for b in message.content if not any(b is r for r in results)]
        parts = [self.result_part(b) for b in results]
        for b in results:
            self.pending.pop(b.tool_use_id, None)
        if others or not results:
            # a results-only message may be one of several: Qwen Code writes each result
            # of parallel calls as a record of its own, in completion order, so the calls
            # still open wait for the next message (or the next assistant turn)
            self.answer_pending(message, parts)
        if parts:
            self.record("tool_result", "user", parts, message)
        parts = [p for block in others for p in self.user_part(block)]
        if parts:
            self.record("user", "user", parts, message)

    def assistant_part(self, block: Any) -> list[dict]:
        if isinstance(block, Text):
            return [{"text": block.text}] if block.text else []
        if isinstance(block, RedactedThinking):
            self.loss.add(
                "write:redacted-thinking", "redacted (encrypted) thinking has no place in a Qwen part; dropped"
            )
            return []
        if isinstance(block, Thinking):
            thought = writekit.thinking_text(
                block, self.loss, "a thinking block's signature has no place in a Qwen part"
            )
            if thought is None:
                return []
            return [{"text": thought, "thought": True}]
        if isinstance(block, ToolUse):
            self.names[block.id] = block.name
            self.pending[block.id] = block.name
            args = writekit.object_input(block, self.loss)
            return [{"functionCall": {"id": block.id, "name": block.name, "args": args}}]
        return self.as_text(block)

    def user_part(self, block: Any) -> list[dict]:
        if isinstance(block, ToolResult):
            self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
            return [{"text": f"[tool result {block.tool_use_id}]\n{self.result_text(block)}"}]
        if isinstance(block, Text):
            return [{"text": block.text}] if block.text else []
        if isinstance(block, (Image, Document)) and isinstance(block.data, str) and isinstance(block.media_type, str):
            if isinstance(block, Document) and isinstance(block.title, str):
                self.loss.add("write:document-title", f"document title {block.title!r}: Qwen Code parts have no title")
            if isinstance(block, Document) and block.media_type == "text/plain":
                return [{"text": block.data}]
            return [{"inlineData": {"mimeType": block.media_type, "data": block.data}}]
        return self.as_text(block)

    def result_text(self, block: ToolResult) -> str:
        return writekit.result_text(block, self.loss, _render)

    def result_part(self, block: ToolResult) -> dict:
        key = "error" if block.is_error else "output"
        name = self.names.get(block.tool_use_id, "")
        return {"functionResponse": {"id": block.tool_use_id, "name": name, "response": {key: self.result_text(block)}}}

    def as_text(self, block: Any) -> list[dict]:
        kind = writekit.block_kind(block)
        self.loss.add(f"write:block:{kind}", "Qwen Code has no part for this block; written as text")
        return [{"text": _render(block)}]


def _render(block: Any) -> str:
    if isinstance(block, Command):
        return " ".join(x for x in (block.name, block.args if isinstance(block.args, str) else "") if x)
    if isinstance(block, Text):
        return block.text
    return json.dumps(builtins(block), ensure_ascii=False)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
