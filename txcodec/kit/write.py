"""What the writers of text-only targets share: a block that has no place in the target,
written as text and reported."""

from __future__ import annotations

import json
from typing import Any

from ..model.common import Command, RawBlock, Text, ToolResult
from ..model.loss import LossReport
from ..model.native import builtins


def render(block: Any) -> str:
    """A block as text: a command as typed, a text as it is, anything else as its JSON."""
    if isinstance(block, Command):
        return block.as_text()
    if isinstance(block, Text):
        return block.text
    return json.dumps(builtins(block), ensure_ascii=False)


def result_text(block: ToolResult, loss: LossReport) -> str:
    """A tool result's content as one text; a non-text block inside it is reported."""
    if isinstance(block.content, str):
        return block.content
    pieces = []
    for inner in block.content:
        if isinstance(inner, Text):
            pieces.append(inner.text)
        else:
            loss.add("write:result-block", f"a {type(inner).__name__} inside a tool result became text")
            pieces.append(render(inner))
    return "\n".join(pieces)


def as_text(block: Any, loss: LossReport, holder: str) -> str:
    """A block the target has no place for, as text, reported as ``write:block:<type>``;
    ``holder`` names what has no place for it (``a Continue history item``)."""
    kind = block.source_type if isinstance(block, RawBlock) else block.__struct_config__.tag
    loss.add(f"write:block:{kind}", f"{holder} has no place for this block; written as text")
    return render(block)
