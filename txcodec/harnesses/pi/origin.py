"""How a pi session began (``txcodec.lineage``; docs/lineage.md): its header's
``parentSession``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ...kit.registry import OriginReader
from ...model.common import ForkedFrom
from ...model.origin import UUID
from ...model.origin import Origin
from ...model.origin import line_objects

_decode = msgspec.json.Decoder()


def pi_origin(
    lines: list[Any], path: Path | None = None, source: bytes | None = None, maybe_fork: bool | None = None
) -> Origin:
    """Only the header is read (``source`` and ``maybe_fork`` are of no use here)."""
    for record in line_objects(lines[:1]):
        if record.get("type") != "session":
            break
        sid = record.get("id") if isinstance(record.get("id"), str) else None
        parent = record.get("parentSession")
        if isinstance(parent, str) and parent:
            return Origin("pi", sid, "fork", ForkedFrom(_pi_session_id(parent, path)), path)
        return Origin("pi", sid, "new", None, path)
    return Origin("pi", None, None, None, path)


def _pi_session_id(parent: str, path: Path | None) -> str:
    """pi names the parent by its file (``<time>_<id>.jsonl``): the id in its header when
    the file is there, else the one in its name, else the path as written."""
    where = Path(parent)
    if not where.is_absolute() and path is not None:
        where = path.parent / where
    try:
        with open(where, "rb") as f:
            first = f.readline()
        header = _decode.decode(first)
        if isinstance(header, dict) and isinstance(header.get("id"), str):
            return header["id"]
    except (OSError, msgspec.DecodeError):
        pass
    m = UUID.search(where.name)
    return m.group(0) if m else parent


def main_files(root: Path) -> list[Path]:
    return sorted(root.glob("*/*.jsonl"))


ORIGIN = OriginReader(read=pi_origin, main_files=main_files)
