"""Factory droid session -> Common conversation.

Records in file order (``exec --fork`` sends them so): ``session_start`` gives the id,
title and project folder; each ``message`` is one Common message whose blocks are already
Anthropic-shaped (``text``, ``tool_use``, ``tool_result`` with ``is_error``, ``image``;
others kept raw). The ``context-<id>`` user message (the client's ``<system-reminder>``
tool list) is read as injected context (``meta``). ``modelId`` is the message's model;
``agent_turn_outcome`` and other records are bookkeeping (``record:<type>``).
"""

from __future__ import annotations

from typing import Any

from ...kit.read import LastMessageCarryOn
from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.loss import UnreadLoss
from ...model.native import NativeSession
from ...model.tools import tool_kind
from . import TOOL_KINDS


def read(session: NativeSession, loss: LossReport) -> Conversation:
    reader = _Reader(str(session.path) if session.path else None, loss)
    for n, value in line_dicts(session):
        reader.step(n, value)
    return reader.conversation


def carry_on(path: Any = None, window: int | None = None) -> Any:
    """A followed session's reader (Harness.carry_on): a line adds a message, or none."""
    from .codec import CODEC

    return LastMessageCarryOn(_Reader(str(path) if path else None, UnreadLoss()), "droid", CODEC, path, window=window)


class _Reader:
    """A line at a time (``step``): each adds a message to ``conversation``, or none."""

    def __init__(self, file: str | None, loss: LossReport) -> None:
        self.file, self.loss = file, loss
        self.meta = Meta(source_harness="droid")
        self.conversation = Conversation(meta=self.meta)
        self.handed = 0  # messages handed on before conversation.messages[0] (LastMessageCarryOn)

    def step(self, n: int, value: Any) -> None:
        file, loss, meta = self.file, self.loss, self.meta
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "session_start":
            for key in ("id", "title", "cwd"):
                if isinstance(value.get(key), str) and value[key]:
                    setattr(meta, key, value[key])
            if isinstance(value.get("owner"), str):
                meta.extra["droid_owner"] = value["owner"]
            return
        if kind != "message":
            loss.add(
                f"record:{kind}" if isinstance(kind, str) else "record:invalid",
                "not part of the conversation",
                file=file,
                line=n,
            )
            return
        body = value.get("message")
        role = body.get("role") if isinstance(body, dict) else None
        if role not in ("user", "assistant"):
            loss.add(
                f"message:{role}" if isinstance(role, str) else "read:malformed",
                "not a user or assistant message",
                file=file,
                line=n,
            )
            return
        content = body.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            loss.add("read:malformed", "content is not a list", file=file, line=n)
            return
        ident = value.get("id") if isinstance(value.get("id"), str) else f"line {n}"
        out = Message(role, _blocks(content, loss, file, n), source_ids=[ident])
        if isinstance(value.get("timestamp"), str):
            out.timestamp = value["timestamp"]
        if ident.startswith("context-"):
            out.meta = True
        if role == "assistant":
            if isinstance(body.get("modelId"), str):
                out.model = body["modelId"]
                if body["modelId"] not in meta.models:
                    meta.models.append(body["modelId"])
            out.stop_reason = implied_stop(out.content)
        self.conversation.messages.append(out)


def _blocks(content: list, loss: LossReport, file: str | None, n: int) -> list[Block]:
    blocks: list[Block] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append(Text(part["text"]))
        elif kind == "tool_use" and isinstance(part.get("name"), str):
            blocks.append(
                ToolUse(str(part.get("id", "")), part["name"], part.get("input"), tool_kind(part["name"], TOOL_KINDS))
            )
        elif kind == "tool_result":
            blocks.append(_result(part))
        elif kind == "thinking" and isinstance(part.get("thinking"), str):
            thinking = Thinking(part["thinking"])
            if isinstance(part.get("signature"), str):
                thinking.signature = part["signature"]
            blocks.append(thinking)
        elif kind == "image" and isinstance(part.get("source"), dict) and isinstance(part["source"].get("data"), str):
            source = part["source"]
            image = Image(data=source["data"])
            if isinstance(source.get("media_type"), str):
                image.media_type = source["media_type"]
            blocks.append(image)
        else:
            loss.add(
                f"block:{kind if isinstance(kind, str) else 'unknown'}",
                "a block Common has no type for; kept raw",
                file=file,
                line=n,
            )
            blocks.append(RawBlock(str(kind), part))
    return blocks


def _result(part: dict[str, Any]) -> ToolResult:
    content = part.get("content")
    result = ToolResult(str(part.get("tool_use_id", "")))
    if isinstance(content, str):
        result.content = content
    elif isinstance(content, list):
        result.content = [
            Text(c["text"])
            if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
            else RawBlock(str(c.get("type") if isinstance(c, dict) else None), c)
            for c in content
        ]
    if isinstance(part.get("is_error"), bool):
        result.is_error = part["is_error"]
    return result
