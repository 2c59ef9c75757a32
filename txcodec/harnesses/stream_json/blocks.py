"""Content blocks of a stream-json ``message`` (the Anthropic Messages shape, typed by
the Claude Code record structs) to Common blocks, and Common blocks back to API JSON."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from ...model.common import Block
from ...model.common import Command
from ...model.common import Document
from ...model.common import Image
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import ServerToolUse
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import WebFetchToolResult
from ...model.common import WebSearchToolResult
from ...model.common import server_block
from ...model.loss import LossReport
from ...model.native import builtins
from ...model.tools import tool_kind
from ..claude_code import records as cc


def _raw(value: Any) -> Any:
    if value is UNSET:
        return None
    if isinstance(value, msgspec.Raw):
        return msgspec.json.decode(value)
    return builtins(value)


def _source_fields(source: Any, title: Any = UNSET) -> dict[str, Any]:
    source = _raw(source)
    fields: dict[str, Any] = {}
    if isinstance(source, dict):
        if source.get("type") in ("base64", "text"):
            fields = {"media_type": source.get("media_type"), "data": source.get("data")}
        elif source.get("type") == "url":
            fields = {"url": source.get("url")}
        elif source.get("type") == "file":
            fields = {"file_id": source.get("file_id")}
    if isinstance(title, str):
        fields["title"] = title
    return {k: v for k, v in fields.items() if isinstance(v, str)}


def _image(b: cc.ImageBlock) -> Block:
    fields = _source_fields(b.source)
    return Image(**fields) if fields else RawBlock("image", builtins(b))


def _document(b: cc.DocumentBlock) -> Block:
    fields = _source_fields(b.source, b.title)
    if b.context is not UNSET and b.context is not None:  # Common's Document has no slot for it: carried whole
        return RawBlock("document", builtins(b))
    return Document(**fields) if fields else RawBlock("document", builtins(b))


def _tool_result(b: cc.ToolResultBlock) -> Block:
    content = b.content
    if content is UNSET:
        parts: str | list[Block] = ""
    elif isinstance(content, str):
        parts = content
    elif isinstance(content, msgspec.Raw):  # neither a string nor a list: kept as JSON text
        parts = bytes(content).decode()
    else:
        parts = [to_common(p) for p in content]
    is_error = None if b.is_error is UNSET else b.is_error
    return ToolResult(tool_use_id=b.tool_use_id, content=parts, is_error=is_error)


def _raw_block(kind: str):
    return lambda b: RawBlock(kind, builtins(b))


def _server_tool_use(b: cc.ServerToolUseBlock) -> Block:
    value = {"type": "server_tool_use", "id": b.id, "name": b.name, "input": _raw(b.input)}
    return server_block(value) or RawBlock("server_tool_use", value)


_TO_COMMON = {
    cc.TextBlock: lambda b: Text(b.text),
    cc.ThinkingBlock: lambda b: Thinking(b.thinking, signature=b.signature),
    cc.RedactedThinkingBlock: lambda b: RedactedThinking(b.data),
    cc.ToolUseBlock: lambda b: ToolUse(id=b.id, name=b.name, input=_raw(b.input), kind=tool_kind(b.name)),
    cc.ServerToolUseBlock: _server_tool_use,
    cc.ToolResultBlock: _tool_result,
    cc.ImageBlock: _image,
    cc.DocumentBlock: _document,
    cc.ToolReferenceBlock: _raw_block("tool_reference"),
}


def to_common(block: Any) -> Block:
    convert = _TO_COMMON.get(type(block))
    if convert is not None:
        return convert(block)
    value = _raw(block)
    found = server_block(value)  # web_search_tool_result, web_fetch_tool_result
    if found is not None:
        return found
    kind = value.get("type") if isinstance(value, dict) else None
    return RawBlock(kind if isinstance(kind, str) else "json", value)


def content_to_common(content: Any) -> list[Block]:
    if content is UNSET or content is None:
        return []
    if isinstance(content, str):
        return [Text(content)]
    return [to_common(b) for b in content]


# --- Common -> API JSON ---------------------------------------------------------------


def _source(b: Image | Document) -> dict[str, Any] | None:
    if b.data is not UNSET:
        media = b.media_type if b.media_type is not UNSET else "application/octet-stream"
        kind = "text" if media == "text/plain" and isinstance(b, Document) else "base64"
        return {"type": kind, "media_type": media, "data": b.data}
    if b.url is not UNSET:
        return {"type": "url", "url": b.url}
    if isinstance(b, Image) and b.file_id is not UNSET:
        return {"type": "file", "file_id": b.file_id}
    return None


def to_api(block: Block, loss: LossReport, where: str = "") -> dict[str, Any] | None:
    """One Common block as an API content block; ``None`` (reported) when it has none."""
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        if block.signature is UNSET:
            loss.add("write:thinking-without-signature", f"{where}: thinking kept as text is not resumable; dropped")
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUse):
        value = block.input
        if not isinstance(value, dict):
            loss.add(
                "write:wrapped-input", f"{where}: {block.name} input is not an object; wrapped as {{'input': ...}}"
            )
            value = {"input": value}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": value}
    if isinstance(block, ToolResult):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        if isinstance(block.content, str):
            out["content"] = block.content
        else:
            parts = [p for p in (to_api(x, loss, where) for x in block.content) if p is not None]
            out["content"] = parts
        if block.is_error is not None:
            out["is_error"] = block.is_error
        return out
    if isinstance(block, (Image, Document)):
        source = _source(block)
        if source is None:
            loss.add(f"write:{_tag(block)}-without-source", f"{where}: no data, url or file id")
            return None
        out = {"type": _tag(block), "source": source}
        if isinstance(block, Document) and block.title is not UNSET:
            out["title"] = block.title
        return out
    if isinstance(block, (ServerToolUse, WebSearchToolResult, WebFetchToolResult)):  # the API's own blocks
        return block.api_block()
    if isinstance(block, RawBlock):
        if isinstance(block.value, dict) and block.value.get("type") == block.source_type:
            return block.value
        loss.add(f"write:block:{block.source_type}", f"{where}: no stream-json form; written as text")
        return {"type": "text", "text": msgspec.json.encode(block.value).decode()}
    # Artifact, Command: no API block; keep their meaning as text
    loss.add(f"write:block:{_tag(block)}", f"{where}: written as text")
    return {"type": "text", "text": _describe(block)}


def _describe(block: Block) -> str:
    value = builtins(block)
    if isinstance(block, Command):
        return block.as_text()
    if _tag(block) == "artifact":
        return f"[artifact] {value.get('path', '')} {value.get('description', '')}".rstrip()
    return msgspec.json.encode(value).decode()


def _tag(block: Block) -> str:
    return block.__struct_config__.tag
