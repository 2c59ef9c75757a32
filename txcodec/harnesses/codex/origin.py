"""How a Codex rollout began (``txcodec.lineage``; docs/lineage.md): its
``session_meta.forked_from_id``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...kit.registry import OriginReader
from ...model.common import ForkedFrom
from ...model.native import Line
from ...model.origin import Origin
from ...model.origin import line_objects


def codex_origin(
    lines: list[Any], path: Path | None = None, source: bytes | None = None, maybe_fork: bool | None = None
) -> Origin:
    """The first ``session_meta`` is the rollout's own: its ``forked_from_id`` names the
    parent. A fork also copies the parent's ``session_meta`` ahead of the replayed
    history, which names it when the field is absent. (``source`` and ``maybe_fork`` are
    of no use here: the meta lines are few and found by their type.)"""
    own: str | None = None
    for record in line_objects(codex_meta_candidates(lines), b'"session_meta"'):
        payload = record.get("payload")
        if record.get("type") != "session_meta" or not isinstance(payload, dict):
            continue
        sid = payload.get("id") if isinstance(payload.get("id"), str) else None
        if own is None:
            own = sid or ""
            parent = payload.get("forked_from_id")
            if isinstance(parent, str) and parent:
                return Origin("codex", sid, "fork", ForkedFrom(parent), path)
        elif sid and sid != own:
            return Origin("codex", own, "fork", ForkedFrom(sid), path)
    if own is None:
        return Origin("codex", None, None, None, path)
    return Origin("codex", own or None, "new", None, path)


def codex_meta_candidates(lines: list[Any]) -> list[Any]:
    """``lines`` without the loaded lines decoded as a response item or an event, which
    name no session: msgspec takes a tagged line only when every "type" key in it agrees
    with the tag, so its last "type" (the one a plain decode keeps) is not
    "session_meta". Leaving them out spares a search of nearly every line."""
    from .records import EventMsgLine
    from .records import ResponseItemLine

    skip = (ResponseItemLine, EventMsgLine)
    return [line for line in lines if type(line) is not Line or type(line._record) not in skip]


def main_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("rollout-*.jsonl"))


def store_root(path: Path) -> Path:
    """A rollout sits under ``sessions/YYYY/MM/DD`` (or ``archived_sessions``)."""
    path = path.resolve()
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent
    return path.parent


ORIGIN = OriginReader(read=codex_origin, main_files=main_files, store_root=store_root)
