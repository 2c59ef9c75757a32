"""The line layer: split JSONL bytes on LF only, keeping every byte.

Records are one per LF-terminated line (seed 004, "Withdrawn worker claim"): U+2028,
U+2029 and a bare CR inside a string are not boundaries, so nothing here uses
``splitlines()``. A CR before the LF stays part of the line's bytes; JSON treats it as
trailing whitespace, so the line still decodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

BOM = b"\xef\xbb\xbf"


def split_lines(data: bytes) -> tuple[list[bytes], bool]:
    """Return the lines of ``data`` without their LF, and whether the data ended in LF.

    ``join_lines(*split_lines(b)) == b`` for every ``b``.
    """
    parts = data.split(b"\n")
    final_newline = data.endswith(b"\n")
    if final_newline or not data:
        parts.pop()
    return parts, final_newline


def join_lines(lines: list[bytes], final_newline: bool) -> bytes:
    body = b"\n".join(lines)
    return body + b"\n" if final_newline else body


def iter_lines(stream: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Stream ``(line, had_lf)`` pairs; a binary file iterates on LF bytes only."""
    for chunk in stream:
        if chunk.endswith(b"\n"):
            yield chunk[:-1], True
        else:
            yield chunk, False


def json_body(line: bytes, first: bool) -> bytes:
    """The bytes to hand to a JSON decoder: a leading UTF-8 BOM on line 1 is skipped."""
    if first and line.startswith(BOM):
        return line[3:]
    return line
