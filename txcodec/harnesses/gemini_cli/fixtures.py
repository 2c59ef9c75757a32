"""Gemini CLI's shapes comparable to the fixture checklist's (the seed's section 12 is Claude
Code's), for ``txcodec fixtures`` (docs/redact.md#fixtures): a cut keeps the session's metadata
line and the record (a JSONL session's records stand alone; ``$set`` and ``$rewindTo`` lines
change the whole history)."""

from __future__ import annotations

from typing import Any

from ...kit.registry import Fixtures
from ...kit.registry import FixtureShape


def _header(r: Any) -> bool:
    return isinstance(r, dict) and "sessionId" in r and "projectHash" in r


def _gemini(r: dict) -> bool:
    return r.get("type") == "gemini"


SHAPES = (
    FixtureShape("user-message", '.type=="user"', lambda r: r.get("type") == "user"),
    FixtureShape(
        "tool-call", '.type=="gemini" and (.toolCalls|length)>0',
        lambda r: _gemini(r) and isinstance(r.get("toolCalls"), list) and bool(r["toolCalls"]),
    ),
    FixtureShape(
        "thoughts", '.type=="gemini" and (.thoughts|length)>0',
        lambda r: _gemini(r) and isinstance(r.get("thoughts"), list) and bool(r["thoughts"]),
    ),
    FixtureShape(
        "set-messages", '."$set".messages != null',
        lambda r: isinstance(r.get("$set"), dict) and "messages" in r["$set"],
    ),
    FixtureShape("rewind", '."$rewindTo" != null', lambda r: r.get("$rewindTo") is not None),
    FixtureShape(
        "info-or-error", '.type | IN("info","error","warning")', lambda r: r.get("type") in ("info", "error", "warning")
    ),
)  # fmt: skip


def cut(records: list[Any], index: int) -> list[int]:
    """The metadata line and the record."""
    header = next((i for i, r in enumerate(records) if _header(r)), None)
    return sorted({index} | ({header} if header is not None else set()))


FIXTURES = Fixtures(shapes=SHAPES, cut=cut)
