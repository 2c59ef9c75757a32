"""Reading ``.zst`` files: every frame to its end, or an error naming the file.

zstandard's ``stream_reader`` ends quietly when the input stops in the middle of a frame,
so a truncated file would read as shorter (or empty) and still "round-trip". Here each
frame must reach its end, and garbage is an :class:`~txcodec.core.errors.InputError`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

_CHUNK = 1 << 17


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes; ``.zst`` files are decompressed."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".zst":
        data = decompress(data, path)  # a cut-off or corrupt frame is an InputError naming the file
    return data


def _error(path: object, why: str) -> InputError:
    return InputError(f"not a readable zstd file ({why})", path=path)


def decompress(data: bytes, path: object = None) -> bytes:
    """All frames of ``data``; :class:`InputError` when one is cut off or corrupt."""
    import zstandard

    if not data:
        raise _error(path, "empty: no zstd frame")
    out = []
    dctx = zstandard.ZstdDecompressor()
    while data:
        frame = dctx.decompressobj()
        try:
            out.append(frame.decompress(data))
        except zstandard.ZstdError as exc:
            raise _error(path, str(exc)) from None
        if not frame.eof:
            raise _error(path, "truncated: the last frame does not end")
        data = frame.unused_data
    return b"".join(out)


class _Frames(io.RawIOBase):
    """The decompressed bytes of a ``.zst`` stream, frame after frame, read in chunks."""

    def __init__(self, raw: BinaryIO, path: object) -> None:
        import zstandard

        self._raw, self._path = raw, path
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
            data, self._pending = self._pending or self._raw.read(_CHUNK), b""
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
            if self._frame.eof:
                self._pending, self._frame = self._frame.unused_data, None
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
    return io.BufferedReader(_Frames(open(path, "rb"), path), buffer_size=_CHUNK)  # type: ignore[return-value]
