"""Token usage of one Claude Code transcript file, from a lean typed decode.

``txcodec usage`` needs four things per assistant line (its ``uuid``, ``message.id``,
model, ``stop_reason`` and usage) and nothing else, so this decodes only those and never
builds Common. The rules are :mod:`.read`'s (seed 000 "Provider calls"): fragments are
grouped by ``message.id`` in line order, a duplicate ``uuid`` is read once, a call's
usage is its last fragment's and counts as verified only when some fragment reported a
``stop_reason``; the model is the first fragment's. ``tests/test_usage_fast.py`` checks
that every corpus file gives the numbers the Common path gives.

A file whose lines do not all fit the lean shape returns ``None``: the caller then reads
it the full way, so an odd line never changes a number.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ...jsonl import decode_chunks

SYNTHETIC_MODEL = "<synthetic>"


class _Usage(msgspec.Struct, gc=False):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct, gc=False, rename="camel"):
    type: str | None = None
    uuid: str | None = None
    session_id: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    message: _Message | None = None  # another shape fails the decode: the full reader decides


_lines = msgspec.json.Decoder(_Line)
_EMPTY = _Message()


def file_calls(data: bytes | Iterable[bytes]) -> tuple[str | None, str | None, list[list]] | None:
    """``(sessionId, cwd, calls)`` in first-fragment order; each call is
    ``[id, model, timestamp, (input, output, cache write, cache read) | None, verified,
    reasoning]``; synthetic calls are left out. ``None`` when a line needs the full reader."""
    try:
        return _calls(decode_chunks(_lines, data))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _calls(lines: Iterable[_Line]) -> tuple[str | None, str | None, list[list]] | None:
    session = cwd = None
    calls: dict[str, list] = {}
    order: list[list] = []
    seen: set[str] = set()
    for n, line in enumerate(lines):
        if session is None and line.session_id is not None:
            session = line.session_id
        if cwd is None and line.cwd is not None:
            cwd = line.cwd
        if line.type != "assistant":
            continue
        m = line.message or _EMPTY
        uuid = line.uuid
        if uuid:
            if uuid in seen:
                continue
            seen.add(uuid)
        key = m.id if m.id is not None else n
        call = calls.get(key)
        if call is None:
            call = calls[key] = [m.id, m.model, line.timestamp, None, False, None]
            order.append(call)
        if m.stop_reason is not None:
            call[4] = True
        u = m.usage
        if u is not None:
            call[3] = (u.input_tokens or 0, u.output_tokens or 0, u.cache_creation_input_tokens or 0, u.cache_read_input_tokens or 0)
    return session, cwd, [c for c in order if c[1] != SYNTHETIC_MODEL]
