"""Reading a store's files: regular files only, within limits, and ``.zst`` files
decompressed frame by frame, every frame to its end, within a size and a ratio limit.

zstandard's ``stream_reader`` ends quietly when the input stops in the middle of a frame,
so a truncated file would read as shorter (or empty) and still "round-trip". Here each
frame must reach its end, and garbage is an :class:`~txcodec.core.errors.InputError`.

A store is a folder anyone may have put anything in (docs/guarantees.md#limits):

* only a regular file is read. It is opened with ``O_NONBLOCK`` and checked with ``fstat``
  before a byte is read, so a FIFO named like a session never hangs a listing, and a link
  to ``/dev/zero`` is refused rather than read until memory runs out;
* a ``.zst`` file expands to at most :data:`MAX_OUTPUT` bytes, and past
  :data:`RATIO_FLOOR` bytes to at most :data:`MAX_RATIO` times its compressed size: a
  decompression bomb is an error naming the file, never a MemoryError. Input is fed to
  the decompressor in small steps, so no single step can expand far past the limits;
* a caller that knows what its format allows passes ``limit`` (a store's small JSON
  files: :data:`SMALL_FILE`).
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

from .errors import InputError
from .errors import StoreError

_CHUNK = 1 << 17
# input bytes given to the decompressor at a time: a zstd block of 128 KiB can be written
# in a few bytes, so a step of 2 KiB expands to at most ~64 MiB before the limits are seen
_STEP = 1 << 11
MAX_OUTPUT = 8 << 30  # no session file is near this; a bomb is refused at it
MAX_RATIO = 1000  # JSONL compresses 5-20 times: more than 1000 is a bomb
RATIO_FLOOR = 64 << 20  # a small file of repeated lines may compress better: judged past this
SMALL_FILE = 64 << 20  # a store's index or metadata JSON (kimi.json, meta.json, sessions.json)


class NotRegular(StoreError):
    """A path names something other than a regular file (a FIFO, a device, a socket)."""


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def open_regular(path: str | os.PathLike[str], buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading, when it is a regular file (after symlinks); a FIFO, a
    device or a socket is :class:`NotRegular`, and opening one never blocks."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise NotRegular(f"{what}, not a regular file: not read", path=path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_plain(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """A regular file's bytes, as they are; :class:`InputError` past ``limit`` bytes."""
    with open_regular(path) as f:
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise InputError(f"larger than the {limit:,} bytes its format allows: not read", path=path)
    return data


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """A file's bytes; ``.zst`` files are decompressed. Only a regular file is read
    (:func:`open_regular`), and ``limit`` caps its (decompressed) size."""
    path = Path(path)
    if path.suffix != ".zst":
        return read_plain(path, limit)
    data = read_plain(path, limit)
    return decompress(data, path, limit)  # a cut-off or corrupt frame is an InputError naming the file


def _error(path: object, why: str) -> InputError:
    return InputError(f"not a readable zstd file ({why})", path=path)


class _Budget:
    """What a file may expand to: :data:`MAX_OUTPUT` (or the caller's ``limit``) in all,
    and :data:`MAX_RATIO` times the input once past :data:`RATIO_FLOOR`."""

    def __init__(self, path: object, limit: int | None) -> None:
        self.path, self.read, self.made = path, 0, 0
        self.limit = MAX_OUTPUT if limit is None else min(limit, MAX_OUTPUT)

    def spend(self, consumed: int, made: int) -> None:
        self.read += consumed
        self.made += made
        if self.made > self.limit:
            raise _error(self.path, f"it expands past {self.limit:,} bytes, more than a session may hold")
        if self.made > RATIO_FLOOR and self.made > MAX_RATIO * self.read:
            raise _error(
                self.path,
                f"it expands more than {MAX_RATIO} times its size (a decompression bomb?): "
                f"{self.read:,} bytes made {self.made:,} so far",
            )


def _feed(frame, data: bytes | memoryview, budget: _Budget, out: list[bytes], error: type[Exception]) -> int:
    """``data`` given to ``frame`` a step at a time, its output appended to ``out``, until
    the frame ends; returns how many input bytes the frame took."""
    view = memoryview(data)
    taken = 0
    while taken < len(view) and not frame.eof:
        step = view[taken : taken + _STEP]
        try:
            made = frame.decompress(step)
        except error as exc:
            raise _error(budget.path, str(exc)) from None
        used = len(step) - len(frame.unused_data) if frame.eof else len(step)
        taken += used
        budget.spend(used, len(made))
        if made:
            out.append(made)
    return taken


def decompress(data: bytes, path: object = None, limit: int | None = None) -> bytes:
    """All frames of ``data``; :class:`InputError` when one is cut off or corrupt, or when
    they expand past the limits (:class:`_Budget`)."""
    import zstandard

    if not data:
        raise _error(path, "empty: no zstd frame")
    out: list[bytes] = []
    dctx = zstandard.ZstdDecompressor()
    budget = _Budget(path, limit)
    view = memoryview(data)
    while view:
        frame = dctx.decompressobj()
        taken = _feed(frame, view, budget, out, zstandard.ZstdError)
        if not frame.eof:
            raise _error(path, "truncated: the last frame does not end")
        view = view[taken:]
    return b"".join(out)


class _Frames(io.RawIOBase):
    """The decompressed bytes of a ``.zst`` stream, frame after frame, read in chunks."""

    def __init__(self, raw: BinaryIO, path: object) -> None:
        import zstandard

        self._raw, self._path = raw, path
        self._budget = _Budget(path, None)
        self._dctx = zstandard.ZstdDecompressor()
        self._error = zstandard.ZstdError
        self._frame = None  # the frame being decompressed, None between frames
        self._pending = b""  # input past the end of the last frame
        self._out = memoryview(b"")
        self._frames = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while not self._out:
            # a step at a time (the buffered file reads ahead): see _STEP
            data, self._pending = self._pending or self._raw.read(_STEP), b""
            if not data:
                if self._frame is not None:
                    raise _error(self._path, "truncated: the last frame does not end")
                if not self._frames:
                    raise _error(self._path, "empty: no zstd frame")
                return 0
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            try:
                self._out = memoryview(self._frame.decompress(data))
            except self._error as exc:
                raise _error(self._path, str(exc)) from None
            left = self._frame.unused_data if self._frame.eof else b""
            self._budget.spend(len(data) - len(left), len(self._out))
            if self._frame.eof:
                self._pending, self._frame = left, None
                self._frames += 1
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_stream(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` decompressed, as a buffered binary stream."""
    return io.BufferedReader(_Frames(open_regular(path), path), buffer_size=_CHUNK)  # type: ignore[return-value]
