"""Native sessions: one typed record per line, next to the line's exact bytes.

A :class:`NativeSession` dumps an untouched line as the bytes it was read from. A record
that was changed (in place, or replaced) is re-encoded, and only that one: its new
fields are merged into the original object so keys the typed view does not know about
survive the edit.
"""

from __future__ import annotations

import collections
import functools
import itertools
import operator
import re
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Protocol

import msgspec

from ..core.errors import describe
from ..core.errors import strict
from ..core.gcpause import no_cycle_collection
from ..core.jsonl import BOM
from ..core.jsonl import join_lines
from ..core.jsonl import object_lines
from ..core.jsonl import split_lines


class Opaque(msgspec.Struct):
    """A line kept only as its bytes: not JSON, not UTF-8, an unknown type, or a body
    that fails its schema. ``diagnostic`` says which."""

    raw: bytes
    diagnostic: str
    type: str | None = None
    partial: bool = False  # a last line without LF that does not decode: cut off mid-write


class Codec(Protocol):
    """Per-harness bytes <-> record mapping. ``decode`` never raises."""

    name: str

    def decode(self, line: bytes) -> Any: ...

    def encode(self, record: Any, original: bytes | None) -> bytes: ...


class Line(msgspec.Struct, gc=False):
    """One line: its exact bytes and its decoded record, ``Line(raw, record)``.

    ``touched`` says whether the record was ever handed out (or replaced) since it was
    decoded: a record nobody has seen cannot have been modified, so :meth:`NativeSession.emit`
    re-emits its bytes without checking it. A line built by hand starts touched. (A
    struct rather than a class: a session makes one per line, and this is the cheap kind.)
    """

    _raw: bytes | memoryview | None  # a view into the loaded data until someone asks for bytes
    _record: Any
    touched: bool = True

    @property
    def raw(self) -> bytes | None:  # None for a record added after loading
        raw = self._raw
        if raw is not None and type(raw) is not bytes:
            raw = self._raw = bytes(raw)
        return raw

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self._raw = value
        self.touched = True

    @property
    def record(self) -> Any:
        self.touched = True
        return self._record

    @property
    def peek(self) -> Any:
        """The record for a look that changes nothing: the line is not marked as touched
        (:attr:`record` marks it, since a caller may edit the record in place)."""
        return self._record

    @record.setter
    def record(self, value: Any) -> None:
        self._record = value
        self.touched = True


@dataclass
class NativeSession:
    """A native file: its lines in order, and whether the file ended in LF."""

    harness: str
    codec: Codec
    lines: list[Line] = field(default_factory=list)
    final_newline: bool = True
    path: Path | None = None

    # --- records view -------------------------------------------------------------
    @property
    def records(self) -> list[Any]:
        return [line.record for line in self.lines]

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[Any]:
        return (line.record for line in self.lines)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [line.record for line in self.lines[i]]
        return self.lines[i].record

    def __setitem__(self, i: int, record: Any) -> None:
        self.lines[i].record = record

    def append(self, record: Any) -> None:
        self.lines.append(Line(None, record))

    @property
    def diagnostics(self) -> list[tuple[int, Opaque]]:
        """``(line number from 1, opaque record)`` for every line kept only as bytes.
        The records are handed out like any other (an edited ``raw`` is what dumps)."""
        return [(n, line.record) for n, line in enumerate(self.lines, 1) if type(line._record) is Opaque]

    # --- bytes --------------------------------------------------------------------
    # What the session was decoded from, and its lines as they were: while every line is
    # the same untouched object in the same place, dump() can hand back the input itself.
    _source: bytes | None = None
    _source_lines: tuple[Line, ...] = ()
    _source_final_newline: bool = True

    # A session that is read once, as it is decoded (``api.convert``): ``lines`` stays
    # empty and the reader decodes ``pending`` (the file mapped in memory, or its bytes)
    # a batch at a time, dropping each batch once read. ``origin`` is its lineage, which
    # the reader finds on the way (``lineage.session_origin`` needs the lines).
    pending: Any = None
    origin: Any = None
    # The indices of the lines decode_session did not decode in a whole batch (the only
    # ones that can hold a lone surrogate escape: see decode_batches), or None when it
    # does not know (readkit.report_lone_surrogates then scans the source).
    _surrogate_suspects: list[int] | None = None

    def _pristine(self) -> bool:
        lines, source_lines = self.lines, self._source_lines
        return (
            self._source is not None
            and len(lines) == len(source_lines)
            and self.final_newline == self._source_final_newline
            and all(map(operator.is_, lines, source_lines))
            and not any(line.touched for line in lines)
        )

    def dump(self) -> bytes:
        if self._pristine():
            return self._source  # type: ignore[return-value]
        emit = self.emit
        with no_cycle_collection():
            return join_lines([emit(line) for line in self.lines], self.final_newline)

    def emit(self, line: Line) -> bytes | memoryview:
        """A line's bytes: the original ones unless its record was changed."""
        record = line._record
        if type(record) is Opaque:
            return record.raw
        raw = line._raw
        if raw is not None and (not line.touched or self.codec.decode(raw) == record):
            return raw
        return _framed(self.codec.encode(record, line.raw), line.raw)


def _framed(encoded: bytes, original: bytes | None) -> bytes:
    """A re-encoded line keeps its original's framing: a UTF-8 BOM in front (line 1) and a
    CR before the LF (a CRLF file stays CRLF)."""
    if not original:
        return encoded
    if original.startswith(BOM) and not encoded.startswith(BOM):
        encoded = BOM + encoded
    if original.endswith(b"\r") and not encoded.endswith(b"\r"):
        encoded += b"\r"
    return encoded


# A batch of short lines goes to the codec's decode_batch() in one call, which saves the
# per-call overhead that dominates on real sessions (most lines are a few KB); a long line
# gains nothing from batching and is decoded alone.
_BATCH = 128
_BATCH_BYTES = 256 * 1024


def decode_session(data: bytes, codec: Codec, harness: str, path: Path | None = None) -> NativeSession:
    data = bytes(data)
    with no_cycle_collection():
        suspects: list[int] | None = None
        if getattr(codec, "accepts_buffers", False):
            lines, final_newline, suspects = _decode_views(data, codec)
        else:
            raws, final_newline = split_lines(data)
            lines = list(map(Line, raws, decode_all(codec.decode, raws), itertools.repeat(False)))
    if lines and not final_newline:
        mark_cut_off(lines[-1])
    session = NativeSession(harness, codec, lines, final_newline, path)
    session._source, session._source_lines, session._source_final_newline = data, tuple(lines), final_newline
    session._surrogate_suspects = suspects
    return session


def _decode_views(data: bytes, codec: Any) -> tuple[list[Line], bool, list[int]]:
    """Decode from views into ``data`` (no copy of each line), a batch at a time; also
    the indices of the lines not decoded in a whole batch."""
    lines: list[Line] = []
    suspects: list[int] = []
    for batch, _, whole in decode_batches(data, codec):
        if not whole:
            suspects.extend(range(len(lines), len(lines) + len(batch)))
        lines.extend(batch)
    return lines, bool(data) and data[-1] == 0x0A, suspects


def line_spans(data: Any, lines: int, size: int) -> Iterator[tuple[list[int], list[int]]]:
    """The lines of ``data`` a batch at a time: each batch's start and end offsets (the end
    before the LF), ``lines`` lines at most and no more lines once ``size`` bytes are passed."""
    find, total, start = data.find, len(data), 0
    while start < total:
        starts, ends = [], []
        limit = start + size
        while len(starts) < lines:
            end = find(b"\n", start)
            if end < 0:
                end = total
            starts.append(start)
            ends.append(end)
            start = end + 1
            if start >= total or start > limit:
                break
        yield starts, ends


def decode_batches(data: Any, codec: Any, runs: bool = False) -> Iterator[tuple[list[Line], int, bool]]:
    """The lines of ``data`` (bytes, or a file mapped in memory) decoded from views into
    it, each batch with the offset where it ends and whether ``decode_batch`` took it
    whole (then no line of it holds a lone surrogate escape: msgspec refuses one
    anywhere in a line, skipped values included). Lines are found and decoded a batch at
    a time, so each batch is still in cache when it is decoded: up to ``_BATCH`` lines
    and ``_BATCH_BYTES`` go to ``codec.decode_batch`` in one call when the codec has one;
    a long line, or a batch the codec refuses, is decoded line by line. With ``runs``, the
    lines of a refused batch that ``decode_batch`` takes alone come as whole batches still
    (:func:`_runs`): for a reader that looks again at each line not decoded whole (a
    listing), worth the cost of a call per line, which a plain load does not repay."""
    view = memoryview(data)
    decode = codec.decode
    batch = getattr(codec, "decode_batch", None)
    for starts, ends in line_spans(data, _BATCH, _BATCH_BYTES):
        records = None
        if batch is not None and len(starts) > 1:
            if _one_object_per_line(data, starts, ends):
                records = _taken(batch, view[starts[0] : ends[-1]], len(starts))  # else decoded line by line below
            if records is None and runs:
                yield from _runs(data, view, starts, ends, decode, batch)
                continue
        raws = list(map(view.__getitem__, map(slice, starts, ends)))
        whole = records is not None
        if records is None:
            records = decode_all(decode, raws)
        yield list(map(Line, raws, records, itertools.repeat(False))), ends[-1], whole  # no bytecode per line


def _runs(
    data: Any, view: memoryview, starts: list[int], ends: list[int], decode: Any, batch: Any
) -> Iterator[tuple[list[Line], int, bool]]:
    """The lines of a batch ``batch`` refused, each given to it alone: a run of lines it takes
    comes as a whole batch, a run of the others is decoded by ``decode``. A record type the
    codec does not know yet, on one line, thus leaves the lines around it whole (a listing
    takes a whole line as decoded, and looks at any other again)."""
    records = [_alone(data, view, start, end, batch) for start, end in zip(starts, ends)]
    first = 0
    for taken, run in itertools.groupby(records, key=lambda record: record is not None):
        found = list(run)
        stop = first + len(found)
        raws = list(map(view.__getitem__, map(slice, starts[first:stop], ends[first:stop])))
        if not taken:
            found = decode_all(decode, raws)
        yield list(map(Line, raws, found, itertools.repeat(False))), ends[stop - 1], taken
        first = stop


def _alone(data: Any, view: memoryview, start: int, end: int, batch: Any) -> Any:
    """The line's record as a batch decodes it, when it is one plain object
    (:func:`_braced`) that ``batch`` takes; else None."""
    found = _taken(batch, view[start:end], 1) if _braced(data, start, end) else None
    return found[0] if found is not None else None


def _taken(batch: Any, lines: memoryview, count: int) -> list[Any] | None:
    """The records ``batch`` decodes the ``count`` lines into, or None where it refuses them."""
    try:
        records = batch(lines)
    except Exception:  # RecursionError when too deep
        return None
    return records if records is not None and len(records) == count else None


_WHOLE_BYTES = 8 << 20  # a bigger file is decoded a batch at a time (its records are not all held)


def decode_whole(data: bytes, codec: Any) -> tuple[list[bytes], list[Any]] | None:
    """Every line of ``data`` (without its LF) and its record from one ``codec.decode_batch``
    call, in line order, or None where that cannot be sure of giving what
    :func:`decode_batches` gives (the caller then uses it): a codec without a batch decoder,
    a file over ``_WHOLE_BYTES``, lines not one object each (:func:`~txcodec.core.jsonl.object_lines`),
    or one the batch refuses. For a reader of records alone: each line is bytes of its own."""
    batch = getattr(codec, "decode_batch", None)
    if batch is None or not data or len(data) > _WHOLE_BYTES:
        return None
    lines = object_lines(data)
    if lines is None:
        return None
    try:
        records = batch(data)
    except Exception:  # RecursionError when too deep: decoded a batch at a time by the caller
        return None
    return (lines, records) if records is not None and len(records) == len(lines) else None


class RawLines:
    """The lines of ``data`` (without their LF) as views into it, found as they are
    asked for: forwards, or backwards by ``reversed()``. (What a reader of a few lines at
    either end needs, without a view per line of the whole file.)"""

    def __init__(self, data: Any) -> None:
        self.data, self.view = data, memoryview(data)

    def __iter__(self) -> Iterator[memoryview]:
        data, view, size, start = self.data, self.view, len(self.data), 0
        while start < size:
            end = data.find(b"\n", start)
            end = size if end < 0 else end
            yield view[start:end]
            start = end + 1

    def __reversed__(self) -> Iterator[memoryview]:
        data, view, size = self.data, self.view, len(self.data)
        if not size:
            return
        stop = size - 1 if data[-1] == 0x0A else size
        while stop >= 0:
            start = data.rfind(b"\n", 0, stop) + 1
            yield view[start:stop]
            stop = start - 1


def decode_all(decode: Callable[[Any], Any], raws: list) -> list[Any]:
    """``decode`` of each line. msgspec raises ``RecursionError`` (not a ``DecodeError``)
    on JSON nested deeper than the interpreter's recursion limit (``[[[[...``, a few
    thousand deep): such a line is kept as bytes, so decoding still never raises. (The
    whole batch is tried first: a ``try`` per line costs time on every line.)"""
    try:
        return list(map(decode, raws))
    except Exception:
        return [decode_line(decode, raw) for raw in raws]


def decode_line(decode: Callable[[Any], Any], raw: Any) -> Any:
    """``decode(raw)``, or an :class:`Opaque` line when the codec raises: loading never
    raises, whatever the bytes. A codec that raises has a bug (its contract is to
    return ``Opaque``): the diagnostic says so, and strict mode re-raises."""
    try:
        return decode(raw)
    except RecursionError:
        return Opaque(bytes(raw), "not decoded: JSON nested too deeply")
    except Exception as exc:
        if strict():
            raise
        return Opaque(bytes(raw), f"not decoded: internal error, please report: {describe(exc)}")


def _one_object_per_line(data: bytes, starts: list[int], ends: list[int]) -> bool:
    """True when each line ``data[starts[i]:ends[i]]`` starts with ``{`` and ends with
    ``}`` (a CR before the LF allowed). JSON strings cannot hold a raw LF, so then no value
    can span two lines or leave one empty, and a ``decode_lines`` over them that yields
    one value per line yielded them in line order."""
    if len(starts) < 2 or min(map(operator.sub, ends, starts)) <= 0:  # an empty line
        return False
    firsts = operator.itemgetter(*starts)(data)
    lasts = operator.itemgetter(*[b - 1 for b in ends])(data)
    if firsts.count(0x7B) != len(firsts):
        return False
    if lasts.count(0x7D) == len(lasts):
        return True
    return all(map(_braced, itertools.repeat(data), starts, ends))


def _braced(data: Any, start: int, end: int) -> bool:
    """Whether the line ``data[start:end]`` starts with ``{`` and ends with ``}`` (a CR before
    the LF allowed)."""
    if end - start < 2 or data[start] != 0x7B:
        return False
    return data[end - 1] == 0x7D or (data[end - 1] == 0x0D and data[end - 2] == 0x7D)


def decode_document(data: bytes, codec: Codec, harness: str, path: Path | None = None) -> NativeSession:
    """A ``.json`` side file holds one JSON document, often pretty-printed over many
    lines: it is kept as a single line (its LFs included) so that it decodes whole."""
    final_newline = data.endswith(b"\n")
    body = data[:-1] if final_newline else data
    return NativeSession(harness, codec, [Line(body, decode_line(codec.decode, body), False)], final_newline, path)


def mark_cut_off(line: Line) -> None:
    """A last line without LF that is not JSON is a write in progress, not garbage
    (whichever codec, the generic one included, kept it as bytes)."""
    record = line._record
    if isinstance(record, Opaque) and not _is_json(record.raw):
        line._record = msgspec.structs.replace(
            record, partial=True, diagnostic="cut off: last line has no LF and is not complete JSON"
        )


# --- helpers shared by the JSON-object codecs ---------------------------------------

_peek_decoder = msgspec.json.Decoder()


def _is_json(raw: bytes) -> bool:
    try:
        _peek_decoder.decode(json_source(raw))
    except msgspec.DecodeError:
        return False
    except RecursionError:
        pass  # too deep to tell: it keeps the diagnostic it has
    return True


def json_source(line: bytes | memoryview) -> bytes | memoryview:
    return line[3:] if line[:3] == BOM else line


_HIGH = rb"[dD][89abAB][0-9a-fA-F]{2}"
_LOW = rb"[dD][c-fC-F][0-9a-fA-F]{2}"
# (?<!\\) starts a match only at the first backslash of a run: a long run of backslashes
# is then scanned once, not once per backslash
_LONE_SURROGATE = re.compile(
    rb"(?<!\\)(\\+)u" + _HIGH + rb"(?!\\u" + _LOW + rb")"  # a high half with no low half after it
    rb"|(?<!\\u" + _HIGH + rb")(?<!\\)(\\+)u" + _LOW  # a low half with no high half before it
)


def without_lone_surrogates(line: bytes) -> bytes | None:
    """JavaScript writes a lone UTF-16 surrogate as a ``\\udXXX`` escape, which msgspec
    refuses. Returns a copy with U+FFFD in its place for decoding (the line's own bytes
    are still what is kept), or ``None`` when the line has no such escape."""

    def fix(m: re.Match[bytes]) -> bytes:
        slashes = m.group(1) or m.group(2)
        if len(slashes) % 2 == 0:  # an escaped backslash followed by text "udXXX"
            return m.group(0)
        return slashes[:-1] + b"\\ufffd"

    if b"\\u" not in line:
        return None
    fixed = _LONE_SURROGATE.sub(fix, line)
    return None if fixed == line else fixed


def decode_lines_repairing(decoder: Any, data: bytes | memoryview) -> list[Any]:
    """``decoder.decode_lines(data)``, where a line refused only for a lone surrogate
    escape is decoded from a repaired copy (:func:`without_lone_surrogates`) on its own,
    so one such line does not send a whole file to a slower path. Any other refusal
    raises msgspec's error, as ``decode_lines`` does."""
    try:
        return decoder.decode_lines(data)
    except msgspec.DecodeError:
        raw = bytes(data)
        if b"\\u" not in raw:
            raise
    out = []
    decode = decoder.decode
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(decode(line))
        except msgspec.DecodeError:
            fixed = without_lone_surrogates(line)
            if fixed is None:
                raise
            out.append(decode(fixed))
    return out


def has_lone_surrogates(data: bytes | memoryview) -> bool:
    """Whether :func:`without_lone_surrogates` would change ``data``, without building the
    changed copy (a whole file is scanned this way)."""
    return any(len(m.group(1) or m.group(2)) % 2 for m in _LONE_SURROGATE.finditer(data))


def batch_decoder(decoder: Any) -> Callable[[Any, bytes | memoryview], list[Any] | None]:
    """A codec's ``decode_batch`` over ``decoder``: several LF-separated lines in one
    call, or ``None`` when any of them needs the codec's lenient path (the caller then
    decodes them one by one)."""

    def decode_batch(self: Any, lines: bytes | memoryview) -> list[Any] | None:
        try:
            return decoder.decode_lines(lines)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None

    return decode_batch


def repairs_surrogates(decode: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Wrap a codec's ``decode``: a line that came out opaque only because of a lone
    surrogate escape is decoded from a repaired copy. A line that is still refused keeps
    its first :class:`Opaque`, whose ``raw`` is the line's own bytes."""

    @functools.wraps(decode)
    def wrapper(self: Any, line: Any) -> Any:
        record = decode(self, line)
        if type(record) is Opaque:
            fixed = without_lone_surrogates(bytes(line))
            if fixed is not None:
                repaired = decode(self, fixed)
                if type(repaired) is not Opaque:
                    return repaired
        return record

    return wrapper


def tag_of(value: Any, key: str = "type") -> str | None:
    """A JSON object's tag (``type``) when it is a string, else ``None``. A tag of any
    other kind (an object, a list, a number) is looked up nowhere: an object or a list
    cannot even be a dict key."""
    if isinstance(value, dict):
        tag = value.get(key)
        if isinstance(tag, str):
            return tag
    return None


def bad_tag(line: bytes, value: Any, key: str = "type") -> Opaque | None:
    """The :class:`Opaque` record for an object whose tag is there but not a string
    (``{"type": {}}``); ``None`` when the tag is a string or absent."""
    if isinstance(value, dict) and key in value and not isinstance(value[key], str):
        return Opaque(line, f"{key!r} is not a string but {_json_kind(value[key])}")
    return None


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def opaque_for(line: bytes, error: Exception, tag: str = "type") -> Opaque:
    """Classify a line that the typed decoder refused."""
    try:
        value = _peek_decoder.decode(json_source(line))
    except msgspec.DecodeError as exc:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return Opaque(line, "not JSON: invalid UTF-8")
        if not line.strip():
            return Opaque(line, "not JSON: blank line")
        return Opaque(line, f"not JSON: {exc}")
    if not isinstance(value, dict):
        return Opaque(line, f"not a JSON object: {type(value).__name__}")
    if tag != "type" and (wrong := bad_tag(line, value)) is not None:
        return wrong  # a document keyed by another field: a 'type' that is not a string is still named as such
    kind = value.get(tag)
    if not isinstance(kind, str):
        return bad_tag(line, value, tag) or Opaque(line, f"no {tag!r} field")
    return Opaque(line, f"unknown or invalid {kind!r} record: {error}", type=kind)


# msgspec.structs.fields() re-reads the class annotations on every call
_fields = functools.cache(msgspec.structs.fields)


def merge_record(record: msgspec.Struct, original: bytes | None) -> bytes:
    """Encode ``record``; fields the typed view does not know keep their original bytes."""
    try:
        base = _peek_decoder.decode(json_source(original)) if original is not None else None
    except msgspec.DecodeError:
        base = None
    new = plain(record)
    if not isinstance(base, dict) or not isinstance(new, dict) or base.get("type", new.get("type")) != new.get("type"):
        return msgspec.json.encode(new)
    return msgspec.json.encode(_merge(base, record))


def _merge(base: dict, value: msgspec.Struct) -> dict:
    info = _fields(type(value))
    out = dict(base)
    config = value.__struct_config__
    if config.tag_field is not None and config.tag is not None:
        out[config.tag_field] = config.tag
    for f in info:
        v = getattr(value, f.name)
        if v is msgspec.UNSET:
            out.pop(f.encode_name, None)
        elif f.encode_name not in base and _is_default(f, v):
            continue  # absent before and still the default: stays absent
        elif isinstance(v, msgspec.Struct) and isinstance(out.get(f.encode_name), dict):
            out[f.encode_name] = _merge(out[f.encode_name], v)
        elif isinstance(v, list) and isinstance(out.get(f.encode_name), list):
            out[f.encode_name] = _merge_list(out[f.encode_name], v)
        else:
            out[f.encode_name] = plain(v)
    return out


def _merge_list(base: list, new: list) -> list:
    """A list of structs (message content blocks, ...) merged element by element, so an
    edit to one block keeps the unknown keys of every block. An element pairs with the
    next original element that reads back equal to it (unchanged); between two such
    anchors, gaps of equal length pair by position when their tags agree (edited in
    place). Inserted elements are encoded from the typed view alone."""
    classes = {_tag_of(type(v)): type(v) for v in new if isinstance(v, msgspec.Struct)}
    if not classes:
        return plain(new)
    originals: dict[bytes, collections.deque[int]] = {}
    for k, value in enumerate(base):
        key = _typed_key(value, classes)
        if key is not None:
            originals.setdefault(key, collections.deque()).append(k)
    pairs: dict[int, int] = {}
    start = 0
    for i, v in enumerate(new):
        found = originals.get(msgspec.json.encode(v)) if isinstance(v, msgspec.Struct) else None
        while found and found[0] < start:
            found.popleft()
        if found:
            pairs[i] = start = found.popleft()
            start += 1
    prev_i = prev_k = -1
    for i, k in [*sorted(pairs.items()), (len(new), len(base))]:
        if i - prev_i == k - prev_k:
            for gi, gk in zip(range(prev_i + 1, i), range(prev_k + 1, k)):
                if isinstance(base[gk], dict) and _tag_of(type(new[gi])) == _tag_in(base[gk], type(new[gi])):
                    pairs[gi] = gk
        prev_i, prev_k = i, k
    return [
        _merge(base[pairs[i]], v)
        if i in pairs and isinstance(v, msgspec.Struct) and isinstance(base[pairs[i]], dict)
        else plain(v)
        for i, v in enumerate(new)
    ]


def _tag_of(cls: type) -> tuple[str | None, Any]:
    config = getattr(cls, "__struct_config__", None)
    if config is None or config.tag_field is None:
        return None, None
    return config.tag_field, config.tag


def _tag_in(original: dict, cls: type) -> tuple[str | None, Any]:
    field_name = _tag_of(cls)[0]
    return (field_name, original.get(field_name)) if field_name is not None else (None, None)


def _typed_key(original: Any, classes: dict[tuple[str | None, Any], type]) -> bytes | None:
    """The original element as the typed view encodes it, to find it among the new."""
    if not isinstance(original, dict):
        return None
    for (field_name, tag), cls in classes.items():
        if field_name is None or original.get(field_name) == tag:
            try:
                return msgspec.json.encode(msgspec.json.decode(msgspec.json.encode(original), type=cls))
            except msgspec.MsgspecError:
                return None
    return None


def _is_default(f: msgspec.structs.FieldInfo, value: Any) -> bool:
    if f.default is not msgspec.NODEFAULT:
        return value == f.default
    if f.default_factory is not msgspec.NODEFAULT:
        return value == f.default_factory()
    return False


# values ``plain`` hands back as they are (Raw included: it encodes as its own bytes)
_AS_IS = frozenset((str, int, float, bool, type(None), msgspec.Raw, bytes))


@functools.cache
def _layout(cls: type) -> tuple[str | None, Any, tuple[tuple[str, str], ...]]:
    """A struct class's tag field, tag and ``(attribute, encoded name)`` pairs."""
    config = cls.__struct_config__
    return config.tag_field, config.tag, tuple((f.name, f.encode_name) for f in _fields(cls))


def _raw_value(value: Any) -> Any:
    if isinstance(value, msgspec.Raw):
        return _peek_decoder.decode(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def builtins(value: Any) -> Any:
    """``msgspec.to_builtins`` that also takes the :class:`msgspec.Raw` values a lenient
    decode leaves in a record (an unknown block kept as its bytes): they become the
    plain JSON values they hold."""
    return msgspec.to_builtins(value, enc_hook=_raw_value)


def plain(value: Any) -> Any:
    """Structs to dicts for encoding, keeping :class:`msgspec.Raw` values as their bytes.
    (Hot in every writer: scalars are returned without a call, the layout of each
    struct class is computed once.)

    A value nested deeper than the interpreter's stack allows (a tool input a few hundred
    levels deep: msgspec decodes it, so any reader may meet it and any writer write it)
    is converted again without recursion, at no cost to the values that are not."""
    try:
        return _plain(value)
    except RecursionError:
        return _plain_deep(value)


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if isinstance(value, msgspec.Struct):
        tag_field, tag, names = _layout(kind)
        out = {tag_field: tag} if tag_field is not None else {}
        unset, as_is = msgspec.UNSET, _AS_IS
        for name, encoded in names:
            v = getattr(value, name)
            if v is not unset:
                out[encoded] = v if type(v) in as_is else _plain(v)
        return out
    if isinstance(value, list):
        return [v if type(v) in _AS_IS else _plain(v) for v in value]
    if isinstance(value, dict):
        return {k: v if type(v) in _AS_IS else _plain(v) for k, v in value.items()}
    return value


def _plain_deep(value: Any) -> Any:
    """:func:`plain` with a stack of its own: each container is built with its slots (and
    so a dict's key order) first, and each slot filled when its value is converted."""
    top: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(top, 0, value)]  # (container, slot, value to put there)
    while todo:
        into, slot, item = todo.pop()
        if type(item) in _AS_IS:
            into[slot] = item
            continue
        if isinstance(item, msgspec.Struct):
            tag_field, tag, names = _layout(type(item))
            out: Any = {tag_field: tag} if tag_field is not None else {}
            for name, encoded in names:
                v = getattr(item, name)
                if v is not msgspec.UNSET:
                    out[encoded] = None
                    todo.append((out, encoded, v))
        elif isinstance(item, list):
            out = [None] * len(item)
            todo.extend((out, i, v) for i, v in enumerate(item))
        elif isinstance(item, dict):
            out = dict.fromkeys(item)
            todo.extend((out, k, v) for k, v in item.items())
        else:
            out = item
        into[slot] = out
    return top[0]


Decoder = Callable[[bytes], Any]
