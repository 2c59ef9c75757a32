"""Common conversation -> Markdown (one file; subagents as nested sections)."""

from __future__ import annotations

from msgspec import UNSET

from ..common import Artifact, Command, Conversation, Message, Text, Thinking, ToolResult, ToolUse
from ._text import command_line, compact_json, label, result_text, status


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _block(block, out: list[str]) -> None:
    t = type(block)
    if t is Text:
        out.append(block.text)
    elif t is Thinking:
        out.append("> *thinking*" + (f"\n>\n> " + block.thinking.replace("\n", "\n> ") if block.thinking else " (signature only)"))
    elif t is ToolUse:
        out.append(f"**Tool call** `{block.name}` ({block.kind})\n\n" + _fence(compact_json(block.input), "json"))
    elif t is ToolResult:
        out.append(f"**Tool result** ({status(block)})\n\n" + _fence(result_text(block)))
    elif t is Command:
        body = f"**Command** `{command_line(block)}`"
        if isinstance(block.output, str) and block.output:
            body += "\n\n" + _fence(block.output)
        if isinstance(block.stderr, str) and block.stderr:
            body += "\n\nstderr:\n\n" + _fence(block.stderr)
        out.append(body)
    elif t is Artifact:
        desc = f": {block.description}" if block.description is not UNSET else ""
        out.append(f"**Artifact** `{block.path}`{desc}")
    else:
        out.append(f"*[{label(block)}]*")


def _flags(m: Message) -> str:
    names = [n for n in ("synthetic", "compact_summary", "interrupted", "api_error", "meta") if getattr(m, n)]
    if m.origin is not UNSET:
        names.append(f"origin {m.origin}")
    return f" *({', '.join(names)})*" if names else ""


def _conversation(conv: Conversation, out: list[str], level: int) -> None:
    epochs = {e.start for e in conv.epochs}
    for i, m in enumerate(conv.messages):
        if i in epochs:
            out.append("---\n\n*context compacted*")
        who = "User" if m.role == "user" else "Assistant"
        model = f" · {m.model}" if m.role == "assistant" and m.model is not UNSET else ""
        out.append(f"{'#' * (level + 1)} {who}{model}{_flags(m)}")
        for b in m.content:
            _block(b, out)
    for child in conv.children:
        kind = child.agent_type if child.agent_type is not UNSET else "subagent"
        call = f" for tool call `{child.link.tool_use_id}`" if child.link.tool_use_id is not UNSET else ""
        out.append(f"{'#' * (level + 1)} Subagent {child.link.agent_id if child.link.agent_id is not UNSET else ''} ({kind}){call}")
        _conversation(child.conversation, out, level + 1)


def render(conv: Conversation) -> str:
    meta = conv.meta
    title = meta.title if meta.title is not UNSET else (meta.id if meta.id is not UNSET else "Conversation")
    out = [f"# {title}"]
    facts = [
        (k, v)
        for k, v in (("session", meta.id), ("harness", meta.source_harness), ("cwd", meta.cwd), ("branch", meta.git_branch),
                     ("client", meta.client_version), ("started", meta.started_at), ("ended", meta.ended_at))
        if v is not UNSET
    ]
    if meta.models:
        facts.append(("models", ", ".join(meta.models)))
    if facts:
        out.append("\n".join(f"- **{k}**: {v}" for k, v in facts))
    _conversation(conv, out, 1)
    return "\n\n".join(out) + "\n"
