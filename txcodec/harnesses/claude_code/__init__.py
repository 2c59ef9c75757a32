"""Claude Code: ``~/.claude/projects/<munged cwd>/<session id>.jsonl`` and side files."""

from __future__ import annotations

from typing import Any

from ...registry import Harness
from .codec import CODEC
from .records import RECORD_TYPES

_ID_KEYS = ("sessionId", "uuid", "leafUuid", "parentUuid")


def detect(sample: list[Any]) -> int:
    score = 0
    for value in sample:
        if isinstance(value, dict) and value.get("type") in RECORD_TYPES and "payload" not in value:
            if any(k in value for k in _ID_KEYS):
                score += 2
            elif "session_id" not in value:
                score += 1
    return score


def check_resume(path: Any, **options: Any) -> Any:
    """What the real ``claude --resume`` sends for this file (see :mod:`txcodec.clients.claude`)."""
    from ...clients.claude import check_resume as run

    return run(path, **options)


HARNESS = Harness(name="claude_code", title="Claude Code", codec=CODEC, detect=detect, check_resume=check_resume)
