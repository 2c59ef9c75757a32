"""Small helpers shared by harness readers (``txcodec.harnesses.*.read``)."""

from __future__ import annotations

from typing import Any

import msgspec

from .native import NativeSession, Opaque, json_source, plain

_json = msgspec.json.Decoder()


def line_dicts(session: NativeSession) -> list[tuple[int, Any]]:
    """``(line number, the line as plain JSON)``; ``None`` for a line that is not JSON.
    An unchanged line is read from its own bytes, an edited record from its re-encoding."""
    out = []
    for n, line in enumerate(session.lines, 1):
        record = line.record
        if isinstance(record, Opaque):
            raw = record.raw
        elif line.raw is not None and session.codec.decode(line.raw) == record:
            raw = line.raw
        else:
            raw = msgspec.json.encode(plain(record))
        try:
            out.append((n, _json.decode(json_source(raw))))
        except msgspec.DecodeError:
            out.append((n, None))
    return out
