"""cline session -> Common conversation.

One message of the messages file is one Common message, in order. A user text is stored
wrapped, ``<user_input mode="act">…</user_input>``; the client takes the wrapper off (and
trims) before it sends the text (``@cline/shared``: the ``user_input`` / ``user_command``
unwrapping), so the reader does too and keeps a mode other than ``act`` in
``extra["cline_mode"]``. ``tool_use`` -> ToolUse; ``tool_result`` -> ToolResult: a string
content as it is, any other content as the compact JSON the client sends for it (kept as
``structured`` too). An assistant's ``metrics`` are its call's usage and
``modelInfo.id`` its model. The record ``<id>.json`` beside
the file gives the project folder, title and start time.
"""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone
from typing import Any

from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.tools import tool_kind
from . import TOOL_KINDS
from .records import WRAPPED
from .store import read_record


def unwrap(text: str) -> tuple[str, str | None]:
    """A stored user text as the client sends it, and the mode it was typed in."""
    found = WRAPPED.match(text)
    if found is None:
        return text, None
    return found.group(2).strip(), found.group(1)


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    meta = Meta(source_harness="cline")
    conversation = Conversation(meta=meta)
    documents = [(n, v) for n, v in line_dicts(session) if isinstance(v, dict) and isinstance(v.get("messages"), list)]
    for n, value in line_dicts(session):
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            loss.add("record:invalid", "not a cline messages document", file=file, line=n)
    if not documents:
        return conversation
    n, value = documents[0]
    if isinstance(value.get("sessionId"), str):
        meta.id = value["sessionId"]
    if isinstance(value.get("system_prompt"), str):
        loss.add("field:system_prompt", "the client's system prompt has no place in Common", file=file, line=n)
    if session.path is not None:
        _record(meta, read_record(session.path))
    messages = conversation.messages
    for i, item in enumerate(value["messages"]):
        where = f"messages[{i}]"
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            role = item.get("role") if isinstance(item, dict) else None
            kind = f"message:{role}" if isinstance(role, str) else "read:malformed"
            loss.add(kind, f"{where}: not a user or assistant message", file=file, line=n)
            continue
        out = Message(item["role"], source_ids=[str(item["id"]) if isinstance(item.get("id"), str) else where])
        if isinstance(item.get("ts"), int) and not isinstance(item["ts"], bool) and 0 <= item["ts"] < 10**14:
            out.timestamp = (
                datetime.fromtimestamp(item["ts"] / 1000, timezone.utc)
                .isoformat(timespec="milliseconds")
                .replace("+00:00", "Z")
            )
        content = item.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            loss.add("read:malformed", f"{where}: content is not a list", file=file, line=n)
            continue
        out.content = _blocks(content, out, loss, file, n, where)
        if out.role == "assistant":
            _assistant(out, item, meta)
        messages.append(out)
    return conversation


def _record(meta: Meta, record: dict[str, Any] | None) -> None:
    if record is None:
        return
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    if isinstance(metadata.get("title"), str) and metadata["title"]:
        meta.title = metadata["title"]
    if isinstance(record.get("cwd"), str) and record["cwd"]:
        meta.cwd = record["cwd"]
    if isinstance(record.get("started_at"), str):
        meta.started_at = record["started_at"]
    if isinstance(record.get("ended_at"), str):
        meta.ended_at = record["ended_at"]
    for key in ("provider", "team_name"):
        if isinstance(record.get(key), str):
            meta.extra[f"cline_{key}"] = record[key]


def _blocks(content: list, out: Message, loss: LossReport, file: str | None, n: int, where: str) -> list[Block]:
    blocks: list[Block] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            text = part["text"]
            if out.role == "user":
                text, mode = unwrap(text)
                if mode and mode != "act":
                    out.extra["cline_mode"] = mode
            blocks.append(Text(text))
        elif kind == "tool_use" and isinstance(part.get("name"), str):
            blocks.append(
                ToolUse(str(part.get("id", "")), part["name"], part.get("input"), tool_kind(part["name"], TOOL_KINDS))
            )
        elif kind == "tool_result":
            blocks.append(_result(part))
        elif kind == "image" and isinstance(part.get("data"), str):
            image = Image(data=part["data"])
            media = part.get("mediaType", part.get("media_type"))
            if isinstance(media, str):
                image.media_type = media
            blocks.append(image)
        else:
            loss.add(
                f"block:{kind if isinstance(kind, str) else 'unknown'}",
                f"{where}: a block Common has no type for; kept raw",
                file=file,
                line=n,
            )
            blocks.append(RawBlock(str(kind), part))
    return blocks


def _result(part: dict) -> ToolResult:
    content = part.get("content")
    result = ToolResult(str(part.get("tool_use_id", "")))
    if isinstance(content, str):
        result.content = content
    else:  # what the client sends: JSON.stringify of the stored value
        result.content = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
        result.structured = content
    if isinstance(part.get("is_error"), bool):
        result.is_error = part["is_error"]
    return result


def _assistant(out: Message, item: dict, meta: Meta) -> None:
    info = item.get("modelInfo")
    if isinstance(info, dict) and isinstance(info.get("id"), str):
        out.model = info["id"]
        if info["id"] not in meta.models:
            meta.models.append(info["id"])
    metrics = item.get("metrics")
    if isinstance(metrics, dict):

        def count(key: str) -> int:
            value = metrics.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

        out.usage = Usage(
            input_tokens=count("inputTokens"),
            output_tokens=count("outputTokens"),
            cache_read_input_tokens=count("cacheReadTokens"),
            cache_creation_input_tokens=count("cacheWriteTokens"),
        )
    out.stop_reason = implied_stop(out.content)
