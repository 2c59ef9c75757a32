"""Native sessions: one typed record per line, next to the line's exact bytes.

A :class:`NativeSession` dumps an untouched line as the bytes it was read from. A record
that was changed (in place, or replaced) is re-encoded, and only that one: its new
fields are merged into the original object so keys the typed view does not know about
survive the edit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from .jsonl import BOM, join_lines, split_lines


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


@dataclass(slots=True)
class Line:
    raw: bytes | None  # None for a record added after loading
    record: Any


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

    def __getitem__(self, i: int) -> Any:
        return self.lines[i].record

    def __setitem__(self, i: int, record: Any) -> None:
        self.lines[i].record = record

    def append(self, record: Any) -> None:
        self.lines.append(Line(None, record))

    @property
    def diagnostics(self) -> list[tuple[int, Opaque]]:
        """``(line number from 1, opaque record)`` for every line kept only as bytes."""
        return [(n, line.record) for n, line in enumerate(self.lines, 1) if isinstance(line.record, Opaque)]

    # --- bytes --------------------------------------------------------------------
    def dump(self) -> bytes:
        return join_lines([self.emit(line) for line in self.lines], self.final_newline)

    def emit(self, line: Line) -> bytes:
        record = line.record
        if isinstance(record, Opaque):
            return record.raw
        if line.raw is not None and self.codec.decode(line.raw) == record:
            return line.raw
        return self.codec.encode(record, line.raw)


def decode_session(data: bytes, codec: Codec, harness: str, path: Path | None = None) -> NativeSession:
    raws, final_newline = split_lines(data)
    decode = codec.decode
    lines = [Line(raw, decode(raw)) for raw in raws]
    if lines and not final_newline:
        mark_cut_off(lines[-1])
    return NativeSession(harness, codec, lines, final_newline, path)


def decode_document(data: bytes, codec: Codec, harness: str, path: Path | None = None) -> NativeSession:
    """A ``.json`` side file holds one JSON document, often pretty-printed over many
    lines: it is kept as a single line (its LFs included) so that it decodes whole."""
    final_newline = data.endswith(b"\n")
    body = data[:-1] if final_newline else data
    return NativeSession(harness, codec, [Line(body, codec.decode(body))], final_newline, path)


def mark_cut_off(line: Line) -> None:
    """A last line without LF that fails to decode is a write in progress, not garbage."""
    record = line.record
    if isinstance(record, Opaque) and record.diagnostic.startswith("not JSON"):
        line.record = msgspec.structs.replace(
            record, partial=True, diagnostic="cut off: last line has no LF and is not complete JSON"
        )


# --- helpers shared by the JSON-object codecs ---------------------------------------

_peek_decoder = msgspec.json.Decoder()


def json_source(line: bytes) -> bytes:
    return line[3:] if line.startswith(BOM) else line


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
    kind = value.get(tag)
    if not isinstance(kind, str):
        return Opaque(line, f"no {tag!r} field")
    return Opaque(line, f"unknown or invalid {kind!r} record: {error}", type=kind)


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
    info = msgspec.structs.fields(value)
    out = dict(base)
    config = value.__struct_config__
    if config.tag_field is not None and config.tag is not None:
        out[config.tag_field] = config.tag
    for f in info:
        v = getattr(value, f.name)
        if v is msgspec.UNSET:
            out.pop(f.encode_name, None)
        elif isinstance(v, msgspec.Struct) and isinstance(out.get(f.encode_name), dict):
            out[f.encode_name] = _merge(out[f.encode_name], v)
        else:
            out[f.encode_name] = plain(v)
    return out


def plain(value: Any) -> Any:
    """Structs to dicts for encoding, keeping :class:`msgspec.Raw` values as their bytes."""
    if isinstance(value, msgspec.Struct):
        config = value.__struct_config__
        out = {}
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        for f in msgspec.structs.fields(value):
            v = getattr(value, f.name)
            if v is not msgspec.UNSET:
                out[f.encode_name] = plain(v)
        return out
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


Decoder = Callable[[bytes], Any]
