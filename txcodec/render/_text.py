"""Short one-line views of blocks, shared by the renderers."""

from __future__ import annotations

import msgspec
from msgspec import UNSET

from ..common import Artifact, Command, Document, Image, RawBlock, Text, Thinking, ToolResult, ToolUse


def compact_json(value) -> str:
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def result_text(block: ToolResult) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if type(b) is Text else f"[{type(b).__name__.lower()}]" for b in block.content)


def status(block: ToolResult) -> str:
    return {True: "error", False: "ok", None: "outcome unknown"}[block.is_error]


def command_line(block: Command) -> str:
    args = f" {block.args}" if isinstance(block.args, str) and block.args else ""
    return f"{block.name}{args}"


def label(block) -> str:
    """A one-line title for a non-text block."""
    t = type(block)
    if t is ToolUse:
        return f"tool call {block.name} [{block.kind}] {block.id}"
    if t is ToolResult:
        return f"tool result {block.tool_use_id} ({status(block)})"
    if t is Thinking:
        return "thinking" + ("" if block.thinking else " (signature only)")
    if t is Image:
        return f"image {block.media_type if block.media_type is not UNSET else ''}".rstrip()
    if t is Document:
        return f"document {block.title if block.title is not UNSET else ''}".rstrip()
    if t is Artifact:
        return f"artifact {block.path}"
    if t is Command:
        return f"command {command_line(block)}"
    if t is RawBlock:
        return f"raw {block.source_type} block"
    return t.__name__
