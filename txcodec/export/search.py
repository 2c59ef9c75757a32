"""The words of a conversation, for a full-text search made offline (docs/html.md#the-index).

A static index cannot ask a server, and its CSP lets it fetch nothing: each session's row
carries the distinct words of everything the session says (message texts, thinking, tool
inputs and results, command output, its subagents'), lower-cased, once each, in order of
first use. The page's script looks each typed word up among them. ``txcodec serve`` uses
the same words for its own search.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..model.common import Command
from ..model.common import Conversation
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from .text import compact_json
from .text import result_text

WORD = re.compile(r"\w+")
LONGEST = 40  # a longer "word" is a hash or a blob: nobody types it
BUDGET = 200_000  # characters of words kept per session: the index of a huge session stays small


def texts(conv: Conversation) -> Iterator[str]:
    """Every text the conversation and its subagents hold."""
    for m in conv.messages:
        for b in m.content:
            t = type(b)
            if t is Text:
                yield b.text
            elif t is ToolResult:
                yield result_text(b)
            elif t is ToolUse:
                yield b.name
                yield b.input if isinstance(b.input, str) else compact_json(b.input)
            elif t is Thinking:
                yield b.thinking
            elif t is Command:
                for part in (b.name, b.args, b.output, b.stderr):
                    if isinstance(part, str):
                        yield part
    for child in conv.children:
        yield from texts(child.conversation)


def words(conv: Conversation, budget: int = BUDGET) -> str:
    """The distinct words of ``conv``, lower-cased, space-separated (at most ``budget``
    characters)."""
    seen: dict[str, None] = {}
    size = 0
    for text in texts(conv):
        for word in WORD.findall(text.lower()):
            if len(word) <= LONGEST and word not in seen:
                seen[word] = None
                size += len(word) + 1
                if size > budget:
                    return " ".join(seen)
    return " ".join(seen)
