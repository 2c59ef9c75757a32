"""What a session is called and how long it is: its title, its first prompt and its
message count, defined once on the Common conversation.

``txcodec list`` (:mod:`txcodec.sessions`), the HTML index and the Parquet ``sessions``
table all take these three from here, so one session shows the same title and count
everywhere, whatever its harness wrote."""

from __future__ import annotations

import msgspec

from .common import Conversation
from .common import Message
from .common import Text
from .common import ToolResult

PROMPT_MAX = 500
# A user turn the user did not type, though the client stored it as one: context the client
# injected (Codex's <environment_context> and <user_instructions>, Claude Code's command
# echoes, a compaction's <state_snapshot>), an AGENTS.md prelude, Claude Code's caveat.
NOT_TYPED = ("<", "# AGENTS.md", "Caveat:")


class Summary(msgspec.Struct, kw_only=True):
    """``title``: the harness's own title, None when it keeps none; ``first_prompt``: the
    first text the user typed (at most :data:`PROMPT_MAX` characters), None when there is
    none; ``messages``: :func:`message_count`; ``models``: every model that answered."""

    title: str | None = None
    first_prompt: str | None = None
    messages: int = 0
    models: list[str] = msgspec.field(default_factory=list)


class Details(Summary, kw_only=True):
    """What ``txcodec list`` shows of a session beyond its store's listing: the
    :class:`Summary` and how the session began (``started_by``: new, clear or fork;
    ``forked_from``: the id of the session it was forked from), as a harness's lean read
    finds them without building Common (``Store.summarize``)."""

    started_by: str | None = None
    forked_from: str | None = None


def typed(message: Message) -> bool:
    """Whether ``message`` is a turn of the conversation: the model's, or the user's own
    (not a tool result carried in a user message, not injected context, not a compaction
    summary, not one the client made up)."""
    if message.role == "assistant":
        return not message.synthetic
    if message.meta or message.synthetic or message.compact_summary:
        return False
    return any(type(b) is not ToolResult for b in message.content)


def message_count(conv: Conversation) -> int:
    """The user's and the model's turns (:func:`typed`): tool results do not count."""
    return sum(1 for m in conv.messages if typed(m))


def first_prompt(conv: Conversation) -> str | None:
    """The first text the user typed, stripped, at most :data:`PROMPT_MAX` characters."""
    for m in conv.messages:
        if m.role != "user" or not typed(m):
            continue
        text = "\n".join(b.text for b in m.content if type(b) is Text).strip()
        if text and not text.startswith(NOT_TYPED):
            return text[:PROMPT_MAX]
    return None


def title(conv: Conversation) -> str | None:
    """The harness's own title or summary of the session (None when it keeps none)."""
    value = conv.meta.title
    return value.strip() if isinstance(value, str) and value.strip() else None


def models(conv: Conversation) -> list[str]:
    """Every model that answered, in order of first answer (the meta's list first)."""
    found = dict.fromkeys(conv.meta.models)
    for m in conv.messages:
        if m.role == "assistant" and isinstance(m.model, str) and m.model and not m.model.startswith("<"):
            found[m.model] = None
    return list(found)


def summarize(conv: Conversation) -> Summary:
    return Summary(
        title=title(conv), first_prompt=first_prompt(conv), messages=message_count(conv), models=models(conv)
    )
