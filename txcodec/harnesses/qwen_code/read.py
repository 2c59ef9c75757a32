"""Qwen Code session -> Common conversation.

The conversation is rebuilt as the client rebuilds it when resuming (0.24.4,
``prepareTranscriptRecords``): the leaf is the last conversation record (records of the
artifact / source-snapshot subtypes do not count), the chain is walked back through
``parentUuid`` (stopping at a missing parent or a cycle), and lines sharing a ``uuid``
are joined, their parts concatenated. A ``system`` record with subtype
``chat_compression`` replaces the history with its ``compressedHistory``: that opens a
compaction :class:`~txcodec.model.common.Epoch`.

One Common message per record: ``user`` and ``tool_result`` records are user messages,
``assistant`` records (role ``model``) assistant messages. Parts map to blocks: ``text``
-> Text (``thought: true`` -> Thinking), ``functionCall`` -> ToolUse, ``functionResponse``
-> ToolResult, ``inlineData`` -> Image/Document; anything else -> RawBlock.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Epoch
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import tag_of
from ...model.tools import tool_kind
from .records import RECORD_TYPES
from .records import SIDE_SUBTYPES


def _is_conversation(value: dict) -> bool:
    return tag_of(value) in RECORD_TYPES and tag_of(value, "subtype") not in SIDE_SUBTYPES


def active_chain(values: list[tuple[int, Any]], loss: LossReport, file: str | None) -> list[tuple[int, dict]]:
    """The records of the active branch, oldest first, fragments joined."""
    valid: list[tuple[int, dict]] = []
    for n, value in values:
        if not (
            isinstance(value, dict)
            and isinstance(value.get("uuid"), str)
            and value["uuid"]
            and (value.get("parentUuid") is None or isinstance(value.get("parentUuid"), str))
            and isinstance(value.get("sessionId"), str)
        ):
            loss.add("record:invalid", "not a Qwen Code record (the client skips it)", file=file, line=n)
            continue
        if value.get("type") not in RECORD_TYPES:
            loss.add(f"record:{value.get('type')}", "unknown record type (the client skips it)", file=file, line=n)
            continue
        valid.append((n, value))
    fragments: dict[str, list[tuple[int, dict]]] = {}
    leaf = None
    for n, value in valid:
        if _is_conversation(value):
            fragments.setdefault(value["uuid"], []).append((n, value))
            leaf = value["uuid"]
    chain: list[str] = []
    seen: set[str] = set()
    current = leaf
    while current and current in fragments:
        if current in seen:
            loss.add("chain:cycle", f"parentUuid cycle at {current}", file=file)
            break
        seen.add(current)
        chain.append(current)
        parent = fragments[current][0][1].get("parentUuid")
        if parent and parent not in fragments:
            loss.add("chain:gap", f"{current} names a missing parent {parent}", file=file)
        current = parent
    chain.reverse()
    on_chain = set(chain)
    for n, value in valid:
        if value["uuid"] not in on_chain and _is_conversation(value):
            loss.add("record:off-branch", "not on the active parentUuid chain", file=file, line=n)
    return [_join(fragments[u]) for u in chain]


def _parts(message: dict) -> list:
    """A message's parts; a value that is not a list counts as none (``_content`` names it)."""
    parts = message.get("parts")
    return list(parts) if isinstance(parts, list) else []


def _join(fragments: list[tuple[int, dict]]) -> tuple[int, dict]:
    n, first = fragments[0]
    if len(fragments) == 1:
        return n, first
    base = dict(first)
    message = dict(first["message"]) if isinstance(first.get("message"), dict) else None
    if message is not None:
        message["parts"] = _parts(message)
    for _, value in fragments[1:]:
        extra = value.get("message")
        if isinstance(extra, dict):
            if message is None:
                message = dict(extra, parts=_parts(extra))
            else:
                message["parts"] += _parts(extra)
        for key in ("usageMetadata", "toolCallResult", "model"):
            if key in value and (key == "usageMetadata" or key not in base):
                base[key] = value[key]
    base["message"] = message
    return n, base


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    values = line_dicts(session)
    chain = active_chain(values, loss, file)
    meta = Meta(source_harness="qwen_code")
    conversation = Conversation(meta=meta)
    names: dict[str, str] = {}
    for n, value in chain:
        with malformed(loss, file, n):
            _record(value, conversation, names, loss, file, n)
    for _n, value in values:  # a title set anywhere in the file counts
        if isinstance(value, dict) and value.get("subtype") == "custom_title":
            payload = value.get("systemPayload")
            title = payload.get("customTitle") if isinstance(payload, dict) else None
            if isinstance(title, str):
                meta.title = title
    return conversation


def _valid(value: Any) -> bool:
    """What :func:`active_chain` keeps: a record of a known type with its ids."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("uuid"), str)
        and bool(value["uuid"])
        and (value.get("parentUuid") is None or isinstance(value.get("parentUuid"), str))
        and isinstance(value.get("sessionId"), str)
        and value.get("type") in RECORD_TYPES
    )


def _title(value: Any) -> str | None:
    if isinstance(value, dict) and value.get("subtype") == "custom_title":
        payload = value.get("systemPayload")
        title = payload.get("customTitle") if isinstance(payload, dict) else None
        if isinstance(title, str):
            return title
    return None


class CarryOn:
    """A session file read as Qwen Code appends to it (Harness.carry_on). The conversation
    is the chain from the last conversation record back through ``parentUuid``, a record
    written as several fragments (one uuid) joined: a record whose parent is the last one
    extends the chain, and a fragment of the last one makes its messages again; anything
    else (a branch, a fragment of an earlier record) has the chain read again from every
    line, kept as plain JSON for that."""

    def __init__(self, path: Any = None) -> None:
        from pathlib import Path

        from ...kit.conform import Fitted
        from ...model.loss import UnreadLoss
        from .codec import CODEC

        self.codec, self.path = CODEC, (Path(path) if path is not None else None)
        self.file = str(self.path) if self.path is not None else None
        self.loss = UnreadLoss()
        self.values: list[tuple[int, Any]] = []
        self.lines = 0
        self.again = True
        self.conv = Conversation()
        self.names: dict[str, str] = {}
        self.fragments: dict[str, list[tuple[int, dict]]] = {}
        self.leaf: str | None = None
        self.last = (0, 0)  # where the last record's messages and epochs start
        self.redo = False  # the last record gained a fragment
        self.seen = 0
        self.dirty = 0  # the first message made again since the last conversation()
        self.fitted = Fitted()

    def feed(self, lines: list[Any]) -> None:
        first = self.lines
        values = [(first + n, v) for n, v in line_dicts(NativeSession("qwen_code", self.codec, lines, True, self.path))]
        self.lines += len(lines)
        self.values.extend(values)
        for n, value in values:
            title = _title(value)
            if title is not None:
                self.conv.meta.title = title
            if self.again or not _valid(value) or not _is_conversation(value):
                continue
            uuid = value["uuid"]
            if uuid == self.leaf:  # a fragment of the last record
                self.fragments[uuid].append((n, value))
                self.redo = True
            elif uuid not in self.fragments and value.get("parentUuid") == self.leaf:
                self._settle()
                self.fragments[uuid] = [(n, value)]
                self.leaf = uuid
                self.last = (len(self.conv.messages), len(self.conv.epochs))
                self._record(n, value)
            else:
                self.again = True

    def _record(self, n: int, value: dict) -> None:
        with malformed(self.loss, self.file, n):
            _record(value, self.conv, self.names, self.loss, self.file, n)

    def _settle(self) -> None:
        """The last record's messages made again from its fragments, joined."""
        if self.redo and self.leaf is not None:
            start, epochs = self.last
            self.dirty = min(self.dirty, start)
            del self.conv.messages[start:]
            del self.conv.epochs[epochs:]
            self._record(*_join(self.fragments[self.leaf]))
            self.redo = False

    def hand_on(self) -> list[tuple[Message, bool]]:
        return []  # every message is held (carry_on)

    def conversation(self) -> tuple[Conversation, list[int]]:
        if self.again:
            self._build()
        self._settle()
        messages = self.conv.messages
        touched = set(range(min(self.seen, self.dirty), len(messages)))
        self.seen = self.dirty = len(messages)
        return self.fitted.fit(self.conv, touched, self.loss)

    def _build(self) -> None:
        """The chain read again from every line, as :func:`read` reads it."""
        chain = active_chain(self.values, self.loss, self.file)
        title = self.conv.meta.title
        self.conv, self.names = Conversation(meta=Meta(source_harness="qwen_code", title=title)), {}
        self.fragments = {}
        for n, value in self.values:
            if _valid(value) and _is_conversation(value):
                self.fragments.setdefault(value["uuid"], []).append((n, value))
        for n, value in chain[:-1]:
            self._record(n, value)
        self.last = (len(self.conv.messages), len(self.conv.epochs))
        if chain:
            self._record(*chain[-1])
        self.leaf = next((v["uuid"] for _, v in reversed(self.values) if _valid(v) and _is_conversation(v)), None)
        self.again = self.redo = False
        self.seen, self.fitted = 0, type(self.fitted)()


def carry_on(path: Any = None, window: int | None = None) -> CarryOn:
    """(Harness.carry_on) ``window`` is not used: a record whose parent is not the last one makes the conversation
    another chain: any message may go, so every message is held."""
    return CarryOn(path)


def _record(
    value: dict, conversation: Conversation, names: dict[str, str], loss: LossReport, file: str | None, n: int
) -> None:
    meta = conversation.meta
    if meta.id is msgspec.UNSET and isinstance(value.get("sessionId"), str):
        meta.id = value["sessionId"]
    for key, attr in (("cwd", "cwd"), ("version", "client_version")):
        if isinstance(value.get(key), str) and getattr(meta, attr) is msgspec.UNSET:
            setattr(meta, attr, value[key])
    if isinstance(value.get("timestamp"), str):
        if meta.started_at is msgspec.UNSET:
            meta.started_at = value["timestamp"]
        meta.ended_at = value["timestamp"]
    if value["type"] == "system":
        _system(value, conversation, loss, file, n)
        return
    message = _message(value, names, loss, file, n)
    if message is not None:
        conversation.messages.append(message)
        if message.model is not msgspec.UNSET and message.model not in meta.models:
            meta.models.append(message.model)


def _system(value: dict, conversation: Conversation, loss: LossReport, file: str | None, n: int) -> None:
    subtype = value.get("subtype")
    payload = value.get("systemPayload")
    if (
        subtype == "chat_compression"
        and isinstance(payload, dict)
        and isinstance(payload.get("compressedHistory"), list)
    ):
        start = len(conversation.messages)
        names: dict[str, str] = {}
        for content in payload["compressedHistory"]:
            message = _content(content, names, loss, file, n)
            if message is not None:
                message.synthetic = True
                conversation.messages.append(message)
        if len(conversation.messages) > start:
            conversation.messages[start].compact_summary = True
            info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
            epoch = Epoch(start=start, boundary_id=value["uuid"], trigger="auto")
            if isinstance(info.get("originalTokenCount"), int):
                epoch.pre_tokens = info["originalTokenCount"]
            conversation.epochs.append(epoch)
        return
    if subtype == "custom_title":
        return
    loss.add(f"record:system:{subtype}", "client bookkeeping, not part of the model's history", file=file, line=n)


def _message(value: dict, names: dict[str, str], loss: LossReport, file: str | None, n: int) -> Message | None:
    content = value.get("message")
    if not isinstance(content, dict):
        loss.add(f"record:{value['type']}", "a record without a message", file=file, line=n)
        return None
    message = _content(content, names, loss, file, n)
    if message is None:
        return None
    message.source_ids = [value["uuid"]]
    if isinstance(value.get("timestamp"), str):
        message.timestamp = value["timestamp"]
    if message.role == "assistant":
        if isinstance(value.get("model"), str):
            message.model = value["model"]
        usage = _usage(value.get("usageMetadata"))
        if usage is not None:
            message.usage = usage
        message.stop_reason = implied_stop(message.content)
    if value["type"] == "tool_result" and isinstance(value.get("toolCallResult"), dict):
        message.extra["toolCallResult"] = value["toolCallResult"]
    if value["type"] == "user" and isinstance(value.get("provenance"), str) and value["provenance"] != "real_user":
        message.origin = value["provenance"]
    if value.get("subtype"):
        message.extra["subtype"] = value["subtype"]
    return message


def _content(content: Any, names: dict[str, str], loss: LossReport, file: str | None, n: int) -> Message | None:
    if not isinstance(content, dict):
        return None
    role = "assistant" if content.get("role") == "model" else "user"
    blocks: list[Block] = []
    if content.get("parts") is not None and not isinstance(content.get("parts"), list):
        loss.add("read:malformed", "message parts that are not a list: read as none", file=file, line=n)
    for part in _parts(content):
        block = _part(part, names)
        if isinstance(block, RawBlock):
            loss.add(f"part:{block.source_type}", "a part Common has no type for (kept as raw)", file=file, line=n)
        blocks.append(block)
    return Message(role, blocks)


def _part(part: Any, names: dict[str, str]) -> Block:
    if not isinstance(part, dict):
        return RawBlock("part", part)
    if isinstance(part.get("text"), str):
        if part.get("thought") is True:
            thinking = Thinking(part["text"])
            if isinstance(part.get("thoughtSignature"), str):
                thinking.signature = part["thoughtSignature"]
            return thinking
        return Text(part["text"])
    call = part.get("functionCall")
    if isinstance(call, dict):
        name = call.get("name") or ""
        ident = call.get("id") or ""
        names[ident] = name
        return ToolUse(ident, name, call.get("args", {}), tool_kind(name))
    response = part.get("functionResponse")
    if isinstance(response, dict):
        return _result(response)
    data = part.get("inlineData")
    if isinstance(data, dict):
        mime = data.get("mimeType") or ""
        if mime.startswith("image/"):
            return Image(media_type=mime, data=data.get("data", ""))
        return Document(media_type=mime, data=data.get("data", ""))
    return RawBlock(next(iter(part), "part"), part)


def _result(response: dict) -> ToolResult:
    """Qwen Code answers ``{output: text}`` on success and ``{error: text}`` on failure."""
    body = response.get("response")
    ident = response.get("id") or ""
    if isinstance(body, dict) and set(body) <= {"output", "error"} and len(body) == 1:
        key, value = next(iter(body.items()))
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return ToolResult(ident, text, is_error=key == "error")
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return ToolResult(ident, text)


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None

    def count(key: str) -> int:
        v = value.get(key)
        return v if isinstance(v, int) else 0

    cached = count("cachedContentTokenCount")
    usage = Usage(
        input_tokens=max(count("promptTokenCount") - cached, 0),
        output_tokens=count("candidatesTokenCount"),
        cache_read_input_tokens=cached,
    )
    if "thoughtsTokenCount" in value:
        usage.reasoning_output_tokens = count("thoughtsTokenCount")
    return usage
