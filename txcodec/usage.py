"""Token usage per session and model, from Common conversations.

A call's usage is the one the reader kept: its last fragment's in line order, and only
when the call reported a ``stop_reason`` (seed 000 "Provider calls"). Calls are summed
(one Common assistant message is one call); fragments never are. Calls without usable
usage are counted apart so that a total never hides them.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec import UNSET

from .common import Conversation


class ModelUsage(msgspec.Struct):
    session: str
    model: str
    calls: int = 0
    calls_without_usage: int = 0  # no stop_reason: usage is a streaming stub, not counted
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


def _conversations(conv: Conversation) -> Iterable[Conversation]:
    yield conv
    for child in conv.children:
        yield from _conversations(child.conversation)


def session_usage(conv: Conversation, *, subagents: bool = True) -> list[ModelUsage]:
    """One row per model, the subagents' calls included unless ``subagents=False``."""
    session = conv.meta.id if conv.meta.id is not UNSET else "?"
    rows: dict[str, ModelUsage] = {}
    convs = _conversations(conv) if subagents else (conv,)
    seen: set[str] = set()
    for c in convs:
        for m in c.messages:
            if m.role != "assistant" or m.synthetic:
                continue
            if isinstance(m.id, str):  # a call is counted once, whatever files it reaches
                if m.id in seen:
                    continue
                seen.add(m.id)
            model = m.model if isinstance(m.model, str) else "?"
            row = rows.get(model)
            if row is None:
                row = rows[model] = ModelUsage(session, model)
            row.calls += 1
            u = m.usage
            if u is UNSET:
                row.calls_without_usage += 1
                continue
            row.input_tokens += u.input_tokens
            row.output_tokens += u.output_tokens
            row.cache_creation_input_tokens += u.cache_creation_input_tokens
            row.cache_read_input_tokens += u.cache_read_input_tokens
    return sorted(rows.values(), key=lambda r: r.model)
