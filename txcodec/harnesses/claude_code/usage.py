"""Token usage of one Claude Code transcript file, from a lean typed decode.

``txcodec usage`` needs four things per assistant line (its ``uuid``, ``message.id``,
model, ``stop_reason`` and usage) and nothing else, so this decodes only those and never
builds Common. The rules are :mod:`.read`'s (docs/claude_code_reader.md#provider-calls): fragments are
grouped by ``message.id`` in line order, a duplicate ``uuid`` is read once, a call's
usage is its last fragment's and counts as verified only when some fragment reported a
``stop_reason``; the model is the first fragment's. ``tests/features/test_usage_fast.py`` checks
that every corpus file gives the numbers the Common path gives.

A file whose lines do not all fit the lean shape returns ``None``: the caller then reads
it the full way, so an odd line never changes a number.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path

import msgspec

from ...kit.registry import UsageReader

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


def _decode_lines(data: bytes | memoryview) -> list[_Line]:
    """Every line of ``data``; one refused only for a lone surrogate escape is decoded on
    its own from a repaired copy, so it does not send the whole file to the full reader."""
    try:
        return _lines.decode_lines(data)
    except msgspec.DecodeError:
        from ...model.native import decode_lines_repairing  # not on usage's start-up path

        return decode_lines_repairing(_lines, data)


_EMPTY = _Message()


def file_calls(data: bytes | Iterable[bytes]) -> tuple[str | None, str | None, list[list]] | None:
    """``(sessionId, cwd, calls)`` in first-fragment order; each call is
    ``[id, model, timestamp, (input, output, cache write, cache read) | None, verified,
    reasoning]``; synthetic calls are left out. ``data`` is the file's bytes or its
    whole-line pieces (each may be a view that is reused once the next is asked for).
    ``None`` when a line needs the full reader."""
    try:
        return _calls(_read_lines(data))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # a line nested too deeply
        return None


def wanted_lines(pieces: Iterable[bytes]) -> list[_Line]:
    """The lines :func:`file_calls` needs from part of a file (whole lines), for a
    process reading that part: every line until both ``sessionId`` and ``cwd`` were
    seen, then assistant records only. Raises msgspec's errors, and RecursionError for a
    line nested too deeply."""
    return list(_read_lines(pieces))


def calls_of_parts(parts: Iterable[list[_Line]]) -> tuple[str | None, str | None, list[list]] | None:
    """:func:`file_calls` from the :func:`wanted_lines` of a file's consecutive parts:
    each part reads its own head in full, so the first ``sessionId`` and ``cwd`` in line
    order are among them, and the rules run over the lines in order as before."""
    try:
        return _calls(line for part in parts for line in part)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def _read_lines(data: bytes | Iterable[bytes]) -> Iterator[_Line]:
    """The lines usage reads: every line until both ``sessionId`` and ``cwd`` were seen,
    then the assistant records. Each piece is decoded whole with the lean shape, which
    skips the fields it does not name far faster than a substring search could pass
    over them. A piece with a line of another shape (a ``message`` that is not an
    object, a cut-off last line) is read the careful way, :func:`_searched`: only the
    lines usage needs must fit, as before."""
    pieces = (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data
    session = cwd = None
    for piece in pieces:
        try:
            lines = _decode_lines(piece)  # a lone surrogate escape costs its own line only
        except (msgspec.DecodeError, msgspec.ValidationError):
            lines = _searched(bytes(piece), session, cwd)
        head = 0
        while head < len(lines) and (session is None or cwd is None):  # every line until both were seen
            session = session or lines[head].session_id
            cwd = cwd or lines[head].cwd
            head += 1
        yield from lines[:head]
        yield from [line for line in lines[head:] if line.type == "assistant"]  # then the records _calls reads


_one = msgspec.json.Decoder(_Line)
_ASSISTANT = b'"assistant"'
_SPELLED = (b"\\u006", b"\\u007")  # an escaped lowercase letter: "assistant" could hide behind it


def _decode_one(line: memoryview) -> _Line:
    """One line; one refused only for a lone surrogate escape is decoded from a repaired copy."""
    try:
        return _one.decode(line)
    except msgspec.DecodeError:
        from ...model.native import without_lone_surrogates

        fixed = without_lone_surrogates(bytes(line))
        if fixed is None:
            raise
        return _one.decode(fixed)


def _searched(piece: bytes, session: str | None, cwd: str | None) -> list[_Line]:
    """The lines of ``piece`` usage needs, when not every line fits the lean shape:
    every line until both ``sessionId`` and ``cwd`` were seen, then only lines that can
    be an assistant record: those with ``"assistant"`` in their bytes. A piece with an
    escaped lowercase letter anywhere (rare: clients write letters as they are) is
    decoded whole, since its escapes could spell the word."""
    out = []
    decode = _decode_one
    view, size, start = memoryview(piece), len(piece), 0
    find, rfind = piece.find, piece.rfind
    while start < size and (session is None or cwd is None):  # the head: every line
        end = find(b"\n", start)
        end = size if end < 0 else end
        line = view[start:end]
        start = end + 1
        if bytes(line).strip():
            rec = decode(line)
            session = session or rec.session_id
            cwd = cwd or rec.cwd
            out.append(rec)
    if start >= size:
        return out
    if find(_SPELLED[0], start) >= 0 or find(_SPELLED[1], start) >= 0:
        out.extend(_decode_lines(view[start:]))
        return out
    while (hit := find(_ASSISTANT, start)) >= 0:
        first = rfind(b"\n", start, hit) + 1 or start
        end = find(b"\n", hit)
        end = size if end < 0 else end
        out.append(decode(view[first:end]))
        start = end + 1
    return out


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
            call[3] = (
                u.input_tokens or 0,
                u.output_tokens or 0,
                u.cache_creation_input_tokens or 0,
                u.cache_read_input_tokens or 0,
            )
    return session, cwd, [c for c in order if c[1] != SYNTHETIC_MODEL]


def subagent_files(path: Path) -> list[Path]:
    """The subagent transcripts whose calls count with the session at ``path``: none
    when it has no session folder (``sidefiles.session_files``' name for it), known with
    one stat, and the side files are read only for a session that has one."""
    name = os.fspath(path)
    if not os.path.isdir(name.removesuffix(".jsonl") if name.endswith(".jsonl") else name):
        return []
    from .sidefiles import session_files

    return [agent.transcript for agent in session_files(path).agents]


# a file this large is cut at line ends and its parts read by several processes
USAGE = UsageReader(
    file_calls=file_calls, wanted_lines=wanted_lines, calls_of_parts=calls_of_parts, subagent_files=subagent_files
)
