"""Common conversation -> a readable terminal view; subagents indented under their call."""

from __future__ import annotations

from collections.abc import Iterator

from msgspec import UNSET

from ..common import Conversation, Text, ToolResult, ToolUse
from ._text import compact_json, label, result_text

PREVIEW = 300


def _short(text: str, width: int = PREVIEW) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def lines(conv: Conversation, indent: int = 0) -> Iterator[tuple[str, str]]:
    """``(style, text)`` pairs; style is one of user, assistant, tool, dim, child."""
    pad = "    " * indent
    children = {}
    for child in conv.children:
        children.setdefault(child.link.tool_use_id, []).append(child)
    epochs = {e.start for e in conv.epochs}
    for i, m in enumerate(conv.messages):
        if i in epochs:
            yield "dim", f"{pad}──── context compacted ────"
        head = "user" if m.role == "user" else f"assistant{' · ' + m.model if m.model is not UNSET else ''}"
        flags = [n for n in ("synthetic", "interrupted", "api_error", "compact_summary", "meta") if getattr(m, n)]
        yield m.role, f"{pad}{head}{' [' + ', '.join(flags) + ']' if flags else ''}"
        for b in m.content:
            t = type(b)
            if t is Text:
                for part in _short(b.text).splitlines() or [""]:
                    yield "text", f"{pad}  {part}"
            elif t is ToolUse:
                yield "tool", f"{pad}  ▸ {b.name} {_short(compact_json(b.input), 160)}"
                for child in children.pop(b.id, []):
                    yield from _child(child, indent + 1)
            elif t is ToolResult:
                yield "dim", f"{pad}  ◂ {label(b)}: {_short(result_text(b), 160)}".replace("\n", " ")
            else:
                yield "dim", f"{pad}  · {label(b)}"
    for rest in children.values():  # children whose call is not in this conversation
        for child in rest:
            yield from _child(child, indent + 1)


def _child(child, indent: int) -> Iterator[tuple[str, str]]:
    pad = "    " * indent
    kind = child.agent_type if child.agent_type is not UNSET else "subagent"
    agent = child.link.agent_id if child.link.agent_id is not UNSET else "?"
    yield "child", f"{pad}┌ subagent {agent} ({kind}) via {child.link.via}"
    yield from lines(child.conversation, indent)


STYLES = {"user": "bold green", "assistant": "bold cyan", "tool": "yellow", "dim": "dim", "child": "bold magenta", "text": ""}


def render(conv: Conversation) -> str:
    m = conv.meta
    head = m.title if m.title is not UNSET else (m.id if m.id is not UNSET else "conversation")
    return "\n".join([str(head)] + [text for _, text in lines(conv)]) + "\n"
