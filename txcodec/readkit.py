"""Small helpers shared by harness readers (``txcodec.harnesses.*.read``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import msgspec

from .errors import MALFORMED, describe
from .loss import LossReport
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


@contextlib.contextmanager
def malformed(loss: LossReport, file: str | None, line: int | None, what: str = "record") -> Iterator[None]:
    """Read one record (or one part of it) with this around it: a value whose shape the
    reader does not expect (a number where it reads a list, a key missing, an object
    where it wants a string) is data, not a crash. The record is reported as
    ``read:malformed`` with the reason and the reading goes on with the next one.

    Well-formed sessions never reach this: the tests read every golden and corpus file
    and assert no such entry."""
    try:
        yield
    except MALFORMED as exc:
        loss.add("read:malformed", f"{what} not read, a value has an unexpected shape ({describe(exc)})", file=file, line=line)
