"""Common conversation -> a readable terminal view; subagents indented under their call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from ..kit.read import StreamedConversation
from ..live import Notice
from ..model.common import Child
from ..model.common import Command
from ..model.common import Conversation
from ..model.common import Message
from ..model.common import Text
from ..model.common import ToolResult
from ..model.common import ToolUse
from .text import child_title
from .text import children_by_call
from .text import compact_json
from .text import label
from .text import result_text
from .text import tool_names

PREVIEW = 300
ONE_LINE = 160


def _short(text: str, width: int = PREVIEW) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _flat(text: str, width: int = ONE_LINE) -> str:
    """One line: runs of whitespace (newlines included) become one space."""
    return _short(" ".join(text.split()), width)


def lines(conv: Conversation, indent: int = 0) -> Iterator[tuple[str, str]]:
    """``(style, text)`` pairs; style is one of user, assistant, tool, dim, child, text."""
    children, rest = children_by_call(conv)
    names = tool_names(conv)
    epochs = {e.start for e in conv.epochs}
    for i, m in enumerate(conv.messages):
        yield from _message(m, i in epochs, indent, children, names)
    for child in rest:  # no recorded call in this conversation: listed after it
        yield from _child(child, None, indent + 1)


def message_lines(conv: Conversation, i: int) -> list[tuple[str, str]]:
    """The lines of message ``i`` alone (a compaction before it, and the subagents its
    calls started, included): what ``txcodec show --follow`` prints as a message arrives."""
    children, _ = children_by_call(conv)
    return list(_message(conv.messages[i], i in {e.start for e in conv.epochs}, 0, children, tool_names(conv)))


def streamed_lines(stream: StreamedConversation, with_heading: bool = False) -> Iterator[tuple[str, str]]:
    """:func:`lines` of a conversation read a message at a time (``api.to_common_streamed``),
    each message's as it comes; ``with_heading``: :func:`heading` first, as :func:`chunks`
    writes it (known once the first message is read)."""
    names: dict[str, str] = {}  # the calls not answered yet (a result names its tool)
    headed = not with_heading
    for m, compacted in stream.messages:
        if not headed:
            yield "assistant", heading(stream)
            headed = True
        yield from _message(m, compacted, 0, {}, _answering(m, names))
    tail = stream.tail()
    if not headed:
        yield "assistant", heading(tail)
    children, rest = children_by_call(tail)
    for child in rest:  # the reader streams no session with subagents; any named here had no call
        yield from _child(child, None, 1)


def _answering(m: Message, names: dict[str, str]) -> dict[str, str]:
    """The names a message read a message at a time labels its results with: those of
    the calls before it not answered yet, and its own. ``names`` is then updated: its calls
    added, the calls it answers forgotten (a streamed read keeps only the calls still
    open, not a name per call of the session)."""
    content = m.content
    answered = [b.tool_use_id for b in content if type(b) is ToolResult]
    names.update((b.id, b.name) for b in content if type(b) is ToolUse)
    if not answered:
        return names
    labels = dict(names)
    for tool_use_id in answered:
        names.pop(tool_use_id, None)
    return labels


def _message(m: Message, compacted: bool, indent: int, children: dict, names: dict) -> Iterator[tuple[str, str]]:
    pad = "    " * indent
    if compacted:
        yield "dim", f"{pad}──── context compacted ────"
    flags = [n.replace("_", " ") for n in ("synthetic", "interrupted", "api_error", "compact_summary") if getattr(m, n)]
    if m.role == "user" and m.meta and not flags:
        # context the client injected (hook output, reminders): one dim line, not a turn
        text = " ".join(b.text for b in m.content if type(b) is Text)
        yield "dim", f"{pad}· injected: {_flat(text)}"
        return
    head = "user" if m.role == "user" else f"assistant{' · ' + m.model if isinstance(m.model, str) else ''}"
    yield m.role, f"{pad}{head}{' [' + ', '.join(flags) + ']' if flags else ''}"
    for b in m.content:
        t = type(b)
        if t is Text:
            if b.text.strip():
                for part in _short(b.text).splitlines():
                    yield "text", f"{pad}  {part}"
        elif t is ToolUse:
            yield "tool", f"{pad}  ▸ {b.name} {_flat(compact_json(b.input))}"
            for child in children.pop(b.id, []):
                yield from _child(child, b, indent + 1)
        elif t is ToolResult:
            yield "dim", f"{pad}  ◂ {label(b, names)}: {_flat(result_text(b))}"
        elif t is Command:
            yield "tool", f"{pad}  $ {label(b)}"
            for out in (b.output, b.stderr):
                if isinstance(out, str) and out.strip():
                    yield "dim", f"{pad}    {_flat(out)}"
        else:
            yield "dim", f"{pad}  · {label(b)}"


def _child(child: Child, call: ToolUse | None, indent: int) -> Iterator[tuple[str, str]]:
    pad = "    " * indent
    yield "child", f"{pad}┌ {child_title(child, call)}"
    yield from lines(child.conversation, indent)


STYLES = {
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "yellow",
    "dim": "dim",
    "child": "bold magenta",
    "text": "",
}


def heading(conv: Conversation | StreamedConversation) -> str:
    m = conv.meta
    return str(m.title if m.title is not UNSET else (m.id if m.id is not UNSET else "conversation"))


def render(conv: Conversation) -> str:
    return "".join(chunks(conv))


class FollowView:
    """What ``show --follow`` prints for each event of :func:`txcodec.live.follow`: the
    conversation so far as ``show`` prints it, then the lines of each new message, and of
    a message seen before only what it gained (a reply streamed as several records);
    one that changed otherwise is printed again after a line saying so. A follow with a
    window hands on the messages that left it (``Update.passed``): their lines are kept
    until then, and forgotten after (the names of the calls not answered yet are kept,
    for the results that name them)."""

    def __init__(self) -> None:
        self.shown: list[list[tuple[str, str]]] = []  # the lines of messages base, base + 1, ...
        self.base = 0
        # tool_use id -> tool name, of the calls handed on (Update.passed) not answered yet
        self.names: dict[str, str] = {}
        self.rest: list[list[tuple[str, str]]] = []  # the lines of each subagent without a recorded call
        self.count = 0  # messages in the conversation last seen
        self.headed = False

    def lines(self, event: Any) -> list[tuple[str, str]]:
        if type(event) is Notice:
            return [("dim", f"⚠ {event.text}")]
        conv = event.conversation
        out: list[tuple[str, str]] = []
        if event.first and not self.headed:
            out.append(("assistant", heading(conv)))
        self.headed = True
        base = event.base
        n = base + len(conv.messages)
        if n < self.count:
            # a rewind, or a checkpoint rewriting the history (Gemini CLI's ``$set``): what
            # comes back as it was is not printed again
            out.append(("dim", f"⟲ the history was rewritten: {n} message{'s' if n != 1 else ''} now"))
        self.count = n
        # a result is labelled as show labels it, with the calls not answered before it
        # (streamed_lines): those of the messages handed on are kept, the window's walked
        names = self.names
        start = base - len(event.passed)
        for j, (m, compacted) in enumerate(event.passed):
            self._show(start + j, list(_message(m, compacted, 0, {}, _answering(m, names))), out)
        children, _ = children_by_call(conv)
        epochs = {e.start for e in conv.epochs}
        shown = {*event.added, *event.changed}
        if shown:
            walk = dict(names)
            last = max(shown)
            for i, m in enumerate(conv.messages[: last + 1]):
                labels = _answering(m, walk)
                if i in shown:
                    self._show(base + i, list(_message(m, base + i in epochs, 0, children, labels)), out)
        if base > self.base:  # final and printed: forgotten
            del self.shown[: base - self.base]
            self.base = base
        _, rest = children_by_call(conv)
        for i, child in enumerate(rest):  # subagents without a recorded call: after the conversation
            new = list(_child(child, None, 1))
            old = self.rest[i] if i < len(self.rest) else []
            if new[: len(old)] == old:
                out.extend(new[len(old) :])
            else:
                out.append(("dim", "↻ a subagent changed:"))
                out.extend(new)
        self.rest = [list(_child(child, None, 1)) for child in rest]
        return out

    def _show(self, at: int, new: list[tuple[str, str]], out: list[tuple[str, str]]) -> None:
        """Message ``at`` (from the start of the session) now reads as ``new``."""
        if at < self.base:  # printed and forgotten (a file read again from its start)
            return
        shown = self.shown
        i = at - self.base
        if i >= len(shown):
            shown.append(new)
            out.extend(new)
            return
        old = shown[i]
        shown[i] = new
        if new == old:
            return
        if new[: len(old)] == old:
            out.extend(new[len(old) :])
        else:
            out.append(("dim", f"↻ message {at + 1} changed:"))
            out.extend(new)


def chunks(conv: Conversation | StreamedConversation, size: int = 1 << 16) -> Iterator[str]:
    """:func:`render`'s text in pieces of about ``size`` characters, as the lines are made:
    the first is written before the last line exists, and the whole text is never held.
    A conversation read a message at a time is rendered as it is read."""
    if type(conv) is not Conversation:
        made = iter(streamed_lines(conv, with_heading=True))
        batch, held = [next(made)[1]], 0
    else:
        made = lines(conv)
        batch, held = [heading(conv)], 0
    for _, text in made:
        batch.append(text)
        held += len(text)
        if held >= size:
            yield "\n".join(batch) + "\n"
            batch, held = [], 0
    if batch:
        yield "\n".join(batch) + "\n"
