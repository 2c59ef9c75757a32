"""Streaming round-trip check: does every line of a file come back byte for byte?

Made for CI: a file is read line by line (:func:`txcodec.core.jsonl.iter_lines`), each line
is decoded with its harness's codec and re-emitted through :meth:`NativeSession.emit`
(the same logic as ``dump`` on a loaded session), and compared with the line it came
from. Nothing but the current line and its record is held, and a line is never copied
(a view when the codec takes buffers), so peak memory is about the interpreter plus the
largest line and its record, however big the file. The harness is detected from the
first lines.

A ``.json`` side file is one document (often pretty-printed), so it is checked whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from . import api
from .core.errors import TxcodecError
from .core.jsonl import iter_lines
from .kit import registry
from .kit.load import load_document
from .model.native import Line
from .model.native import NativeSession
from .model.native import Opaque
from .model.native import decode_line

SUFFIXES = (".jsonl", ".json", ".jsonl.zst", ".json.zst")
_SNIFF_LINES = 40
_SNIFF_BYTES = 1 << 20


@dataclass
class Verified:
    """The result of checking one file: identical, differing (where first), or unreadable."""

    path: Path
    ok: bool
    harness: str | None = None
    lines: int = 0
    bytes: int = 0
    first_difference: int | None = None  # byte offset of the first byte that came back different
    difference_line: int | None = None  # its line number, from 1
    error: str | None = None  # the file could not be read
    opaque: int = 0  # lines that round-trip only as bytes (no typed record): see ``inspect``

    def to_dict(self) -> dict:
        return {
            "path": str(self.path),
            "ok": self.ok,
            "harness": self.harness,
            "lines": self.lines,
            "bytes": self.bytes,
            "first_difference": self.first_difference,
            "difference_line": self.difference_line,
            "error": self.error,
            "opaque": self.opaque,
        }


def collect(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The files to check: each path named (a missing one is reported by
    :func:`verify_file`), and under each directory every regular file ending in one of
    :data:`SUFFIXES` (symlinked directories are not followed; a FIFO or device would
    block or never end, so only regular files are picked up). A folder that is one
    session (Kimi CLI, Mistral Vibe) gives its session file alone."""
    from .kit.registry import session_in_folder

    for given in paths:
        path = Path(given)
        if _kind(path) != "dir":  # a folder that cannot be searched is yielded, to be reported
            yield path
            continue
        unlisted: list[OSError] = []  # a folder that cannot be listed is yielded, to be reported
        for folder, dirs, files in os.walk(path, onerror=unlisted.append):
            yield from (Path(e.filename) for e in unlisted)
            unlisted.clear()
            dirs.sort()
            main = session_in_folder(Path(folder))
            if main is not None and main != Path(
                folder
            ):  # a folder that is one session: its session file, not the side files
                # (a session kept as a folder of files, OpenHands', is checked file by file below)
                dirs.clear()
                yield main
                continue
            for name in sorted(files):
                found = Path(folder) / name
                if name.endswith(SUFFIXES) and _kind(found) in ("file", "missing", "unknown"):
                    yield found  # a dangling symlink or an entry we may not look at: reported
        yield from (Path(e.filename) for e in unlisted)


def _kind(path: Path) -> str:
    """``dir``, ``file``, ``other`` (a FIFO, a device), ``missing``, or ``unknown`` when
    the path may not be looked at (a folder above it is not searchable): never raises."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError):
        return "unknown"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _open(path: Path) -> BinaryIO:
    if path.suffix == ".zst":
        from .core.zst import open_stream

        return open_stream(path)  # a cut-off frame is an error, not a shorter file
    return open(path, "rb")


def verify_file(path: str | os.PathLike[str], harness: str | None = None) -> Verified:
    path = Path(path)
    try:
        if path.is_dir():  # named by collect() when it could not be listed
            os.listdir(path)
            return Verified(path, False, error="a folder, not a file")
        with _open(path) as stream:
            if api.is_document(path):
                return _verify_document(path, stream.read(), harness)
            return _verify_lines(path, stream, harness)
    except OSError as exc:
        return Verified(path, False, error=exc.strerror or str(exc))
    except TxcodecError as exc:  # its message names the file; the report line does already
        return Verified(path, False, error=exc.args[0] if exc.args else str(exc))
    except Exception as exc:  # a corrupt .zst and the like: report, never a traceback
        return Verified(path, False, error=f"{type(exc).__name__}: {exc}")


def _verify_document(path: Path, data: bytes, harness: str | None) -> Verified:
    session = load_document(data, harness, path) or api.load(data, harness)
    out = _compare_whole(session, data)
    out.path = path
    return out


def _compare_whole(session: NativeSession, data: bytes) -> Verified:
    for line in session.lines:
        line.touched = True  # make dump() check every record, not hand back the input
    dumped = session.dump()
    out = Verified(
        Path(), dumped == data, session.harness, len(session.lines), len(data), opaque=len(session.diagnostics)
    )
    if not out.ok:
        out.first_difference = _first_difference(dumped, data)
        out.difference_line = data.count(b"\n", 0, out.first_difference) + 1
    return out


def _verify_lines(path: Path, stream: BinaryIO, harness: str | None) -> Verified:
    lines = iter_lines(stream)
    head: list[tuple[memoryview, bool]] = []
    size = 0
    for item in lines:
        head.append(item)
        size += len(item[0])
        if len(head) >= _SNIFF_LINES or size >= _SNIFF_BYTES:
            break
    name = harness or api.detect_lines(line for line, _ in head)
    session = NativeSession(name, registry.get(name).codec)
    decode, emit = session.codec.decode, session.emit
    views = getattr(session.codec, "accepts_buffers", False)
    out = Verified(path, True, name)
    offset = 0
    for n, (raw, had_lf) in enumerate(_chain(head, lines), 1):
        if not views:
            raw = bytes(raw)
        record = decode_line(decode, raw)
        out.opaque += type(record) is Opaque
        back = emit(Line(raw, record, False))  # as loaded: untouched
        del record
        if back != raw and out.ok:
            out.ok = False
            out.first_difference = offset + _first_difference(bytes(back), bytes(raw))
            out.difference_line = n
        offset += len(raw) + had_lf
        out.lines = n
    out.bytes = offset
    return out


def _chain(head: list, rest: Iterator) -> Iterator:
    yield from head
    yield from rest


def _first_difference(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on prefix equality: slices compare at C speed
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
