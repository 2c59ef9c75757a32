"""Token usage per session and model, from Common conversations.

A call's usage is the one the reader kept: its last fragment's in line order, and only
when the call reported a ``stop_reason`` (seed 000 "Provider calls"). Calls are summed
(one Common assistant message is one call); fragments never are.

A call that never reported a ``stop_reason`` is not silently zero: its last fragment's
usage (``Message.usage_unverified``) is summed in separate ``unverified_*`` counters.
Claude Code before 2.1.220 wrote ``stop_reason: null`` on nearly every fragment, so on
such files every call lands there; docs/usage.md says what those numbers are worth.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec import UNSET

from .common import Conversation, Usage

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class ModelUsage(msgspec.Struct):
    session: str
    model: str
    calls: int = 0  # every call of this model, whatever its usage
    calls_unverified: int = 0  # no stop_reason: counted in unverified_* below
    calls_without_usage: int = 0  # no usage block at all
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    unverified_input_tokens: int = 0
    unverified_output_tokens: int = 0
    unverified_cache_creation_input_tokens: int = 0
    unverified_cache_read_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def unverified_total_tokens(self) -> int:
        return sum(getattr(self, "unverified_" + f) for f in TOKEN_FIELDS)

    def to_dict(self) -> dict:
        return {**msgspec.to_builtins(self), "total_tokens": self.total_tokens, "unverified_total_tokens": self.unverified_total_tokens}


def _conversations(conv: Conversation) -> Iterable[Conversation]:
    yield conv
    for child in conv.children:
        yield from _conversations(child.conversation)


def _add(row: ModelUsage, u: Usage, prefix: str) -> None:
    for f in TOKEN_FIELDS:
        name = prefix + f
        setattr(row, name, getattr(row, name) + getattr(u, f))


def session_usage(conv: Conversation, *, subagents: bool = True) -> list[ModelUsage]:
    """One row per model, the subagents' calls included unless ``subagents=False``."""
    session = conv.meta.id if conv.meta.id is not UNSET else "?"
    rows: dict[str, ModelUsage] = {}
    convs = _conversations(conv) if subagents else (conv,)
    seen: set[str] = set()
    for c in convs:
        for m in c.messages:
            # a compaction's own model call is the summary's usage (Codex)
            call = (m.role == "assistant" and not m.synthetic) or (m.compact_summary and m.usage is not UNSET)
            if not call:
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
            if m.usage is not UNSET:
                _add(row, m.usage, "")
            elif m.usage_unverified is not UNSET:
                row.calls_unverified += 1
                _add(row, m.usage_unverified, "unverified_")
            else:
                row.calls_without_usage += 1
    return sorted(rows.values(), key=lambda r: r.model)
