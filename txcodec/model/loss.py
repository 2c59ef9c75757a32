"""The loss report: what a conversion could not carry, counted by kind, with where.

Readers record what the Common model has no slot for (bookkeeping records, attachments,
unknown blocks, fields); writers record what the target cannot hold and what they had to
change so the real client accepts the file. Nothing is dropped without an entry here.
"""

from __future__ import annotations

from collections import Counter

import msgspec
from msgspec import UNSET
from msgspec import UnsetType


class Loss(msgspec.Struct, omit_defaults=True):
    """One thing a conversion did not carry or had to change; ``kind`` is explained in docs/loss.md."""

    kind: str  # e.g. "record:file-history-snapshot", "block:server_tool_use", "write:wrapped-input"
    detail: str = ""
    file: str | UnsetType = UNSET
    line: int | UnsetType = UNSET  # 1-based line in the source file


class LossReport(msgspec.Struct, omit_defaults=True):
    """Everything a conversion did not carry or had to change, in order."""

    entries: list[Loss] = msgspec.field(default_factory=list)

    def add(self, kind: str, detail: str = "", *, file: str | None = None, line: int | None = None) -> None:
        self.entries.append(Loss(kind, detail, UNSET if file is None else file, UNSET if line is None else line))

    def extend(self, other: LossReport) -> None:
        self.entries.extend(other.entries)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(e.kind for e in self.entries).items()))

    def lines(self, kind: str) -> list[int]:
        return [e.line for e in self.entries if e.kind == kind and e.line is not UNSET]

    def children_not_written(self, children: list, kind: str, why: str) -> None:
        """One entry per subagent conversation a writer leaves out, naming it (agent id,
        else the id of the call that spawned it), so that everything inside it is
        accounted for by name."""
        for child in children:
            link = child.link
            name = next((v for v in (link.agent_id, link.tool_use_id) if isinstance(v, str)), "(no id)")
            call = (
                f" (spawned by call {link.tool_use_id})"
                if isinstance(link.tool_use_id, str) and link.tool_use_id != name
                else ""
            )
            self.add(kind, f"subagent {name}{call}: {why}")
            self.children_not_written(child.conversation.children, kind, f"inside subagent {name}, {why}")

    def __bool__(self) -> bool:
        return bool(self.entries)

    def to_dict(self) -> dict:
        return {"counts": self.counts(), "entries": msgspec.to_builtins(self.entries)}


def summary(counts: dict[str, int], target: str | None = None) -> str:
    """The loss report in one plain line, e.g. ``48 metadata fields/records not carried,
    3 changes to fit codex (details: --loss)``; ``no loss`` when empty. The meaning of
    every kind is in docs/loss.md."""
    if not counts:
        return "no loss"
    dropped = sum(n for kind, n in counts.items() if not kind.startswith("write:"))
    changed = sum(n for kind, n in counts.items() if kind.startswith("write:"))
    parts = []
    if dropped:
        parts.append(f"{dropped} metadata fields/records not carried")
    if changed:
        parts.append(f"{changed} change{'s' if changed != 1 else ''} to fit {target or 'the target'}")
    return ", ".join(parts) + " (details: --loss)"


class UnreadLoss(LossReport):
    """A loss report nobody reads (an HTML page shows the conversation, not what it
    lost): it keeps nothing, and the checks that cost a pass over the whole file
    (:mod:`txcodec.kit.read`'s unknown keys and lone surrogates) skip it."""

    def add(self, kind: str, detail: str = "", *, file: str | None = None, line: int | None = None) -> None:
        pass

    def extend(self, other: LossReport) -> None:
        pass


class PageLoss(UnreadLoss):
    """The unread report of a read whose conversation is only drawn as an HTML page: as
    :class:`UnreadLoss`, and the Claude Code reader may keep of each ``toolUseResult``
    only the keys a page shows and the reader itself reads (its other keys, often a
    third of a long session's bytes, would be decoded only to be dropped)."""
