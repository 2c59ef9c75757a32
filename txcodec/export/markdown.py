"""Common conversation -> Markdown (one file). A subagent is a nested section placed
right after the message whose tool call spawned it; children with no recorded call
follow their conversation."""

from __future__ import annotations

from msgspec import UNSET

from ..kit.changes import conversation_changes
from ..model.changes import by_call as changes_by_call
from ..model.changes import unified_diff
from ..model.common import Artifact
from ..model.common import Change
from ..model.common import Child
from ..model.common import Command
from ..model.common import Conversation
from ..model.common import Message
from ..model.common import RedactedThinking
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from .text import child_title
from .text import children_by_call
from .text import command_line
from .text import compact_json
from .text import key_input
from .text import label
from .text import result_text


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def change_markdown(change: Change) -> str:
    """One workspace change as Markdown: a line naming it, then its diff (or why there is
    none). Other renderers can call it for each of :func:`txcodec.model.changes.by_call`'s."""
    where = f"`{change.path}`" if isinstance(change.path, str) else "files not recorded"
    head = f"**Change** {change.operation} {where} *({change.basis})*"
    if isinstance(change.note, str):
        return f"{head}: {change.note}"
    return head + ("\n\n" + _fence(unified_diff(change), "diff") if change.hunks else "")


def _code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _call(use: ToolUse | None) -> str:
    """The call a result answers: its name and its key input (`Read` `src/app.py`)."""
    if use is None:
        return "an unknown call"
    key = key_input(use)
    return _code(use.name) + (f" {_code(key)}" if key else "")


def _result_head(block: ToolResult, calls: dict[str, ToolUse]) -> str:
    # a result comes in the order the calls finished: it names its call, so parallel
    # results read right whatever their order (issue 34, item 16)
    outcome = {True: " (error)", False: "", None: ""}[block.is_error]
    return f"**Result{outcome}** of {_call(calls.get(block.tool_use_id))}"


def _shown(change: Change) -> bool:
    """A change worth a line: not a shell call's "unknown, files not recorded", which
    every shell call would repeat (docs/changes.md says why it is unknown)."""
    return not (change.operation == "unknown" and not isinstance(change.path, str))


def _block(block, out: list[str], calls: dict[str, ToolUse], changes: dict[str, list[Change]] | None = None) -> None:
    t = type(block)
    if t is Text:
        if block.text.strip():
            out.append(block.text)
    elif t is Thinking:
        out.append(
            "> *thinking*"
            + ("\n>\n> " + block.thinking.replace("\n", "\n> ") if block.thinking else " (signature only)")
        )
    elif t is RedactedThinking:
        out.append("> *thinking* (redacted)")
    elif t is ToolUse:
        out.append(f"**Tool call** `{block.name}` ({block.kind})\n\n" + _fence(compact_json(block.input), "json"))
    elif t is ToolResult:
        out.append(_result_head(block, calls) + "\n\n" + _fence(result_text(block)))
        out.extend(change_markdown(c) for c in (changes or {}).get(block.tool_use_id, ()) if _shown(c))
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


_FLAGS = {
    "synthetic": "written by the client",
    "compact_summary": "summary of the compacted context",
    "interrupted": "interrupted",
    "api_error": "API error",
    "meta": "added by the client",
}


def _flags(m: Message) -> str:
    names = [words for flag, words in _FLAGS.items() if getattr(m, flag)]
    # a person typing is the usual case and says nothing; another origin is told in words
    if isinstance(m.origin, str) and m.origin != "human":
        names.append(f"from {m.origin.replace('-', ' ').replace('_', ' ')}")
    return f" *({', '.join(names)})*" if names else ""


def _child(child: Child, call: ToolUse | None, out: list[str], level: int) -> None:
    out.append(f"{'#' * (level + 1)} {child_title(child, call)[:1].upper()}{child_title(child, call)[1:]}")
    _conversation(child.conversation, out, level + 1)


def _conversation(conv: Conversation, out: list[str], level: int) -> None:
    epochs = {e.start for e in conv.epochs}
    by_call, rest = children_by_call(conv)
    calls = {b.id: b for m in conv.messages for b in m.content if type(b) is ToolUse}
    changes = changes_by_call(conversation_changes(conv, subagents=False))
    for i, m in enumerate(conv.messages):
        if i in epochs:
            out.append("---\n\n*context compacted*")
        who = "User" if m.role == "user" else "Assistant"
        model = f" · {m.model}" if m.role == "assistant" and m.model is not UNSET else ""
        out.append(f"{'#' * (level + 1)} {who}{model}{_flags(m)}")
        for b in m.content:
            _block(b, out, calls, changes)
        for b in m.content:
            if type(b) is ToolUse:
                for child in by_call.get(b.id, ()):
                    _child(child, b, out, level + 1)
    for child in rest:
        _child(child, None, out, level + 1)


def render(conv: Conversation) -> str:
    meta = conv.meta
    title = meta.title if meta.title is not UNSET else (meta.id if meta.id is not UNSET else "Conversation")
    out = [f"# {title}"]
    facts = [
        (k, v)
        for k, v in (
            ("session", meta.id),
            ("harness", meta.source_harness),
            ("cwd", meta.cwd),
            ("branch", meta.git_branch),
            ("client", meta.client_version),
            ("started", meta.started_at),
            ("ended", meta.ended_at),
        )
        if v is not UNSET
    ]
    if meta.models:
        facts.append(("models", ", ".join(meta.models)))
    if facts:
        out.append("\n".join(f"- **{k}**: {v}" for k, v in facts))
    _conversation(conv, out, 1)
    return "\n\n".join(out) + "\n"
