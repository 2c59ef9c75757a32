"""How a session began (:class:`Origin`), as a harness's own origin reader finds it in the
lines of its file; ``txcodec.lineage`` links origins into a graph (docs/lineage.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from .common import ForkedFrom
from .native import Line

_decode = msgspec.json.Decoder()
UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


@dataclass
class Origin:
    """How one session began. ``started_by`` is ``None`` when its harness records no
    lineage at all (it declares no ``Harness.origin``)."""

    harness: str
    session_id: str | None
    started_by: str | None
    forked_from: ForkedFrom | None = None
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "session_id": self.session_id,
            "started_by": self.started_by,
            "forked_from": msgspec.to_builtins(self.forked_from) if self.forked_from else None,
            "path": str(self.path) if self.path else None,
        }


def line_objects(lines: Iterable[Any], needle: bytes | None = None) -> Iterable[dict]:
    """The lines (loaded lines, bytes) that decode to a JSON object, as dicts; with
    ``needle``, only those whose bytes hold it."""
    # a loaded line is read where it lies (``Line.raw`` would copy each view into the
    # data to bytes of its own and keep them: a second copy of the file)
    search = re.compile(re.escape(needle)).search if needle is not None else None
    for line in lines:
        raw = line._raw if type(line) is Line else getattr(line, "raw", line)
        if not raw or (search is not None and search(raw) is None):
            continue
        try:
            value = _decode.decode(raw)
        except (msgspec.DecodeError, RecursionError):  # not JSON, or nested too deeply: no record to read
            continue
        if isinstance(value, dict):
            yield value
