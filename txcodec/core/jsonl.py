"""The line layer: split JSONL bytes on LF only, keeping every byte.

Records are one per LF-terminated line (docs/claude_code.md#lines): U+2028,
U+2029 and a bare CR inside a string are not boundaries, so nothing here uses
``splitlines()``. A CR before the LF stays part of the line's bytes; JSON treats it as
trailing whitespace, so the line still decodes.
"""

from __future__ import annotations

import operator
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


def object_lines(data: bytes) -> list[bytes] | None:
    """The lines of ``data`` (without their LF) when each starts with ``{`` and ends with ``}``,
    else None (an empty line, a CR, a BOM, a line cut off, anything else). A raw LF cannot be
    inside a JSON value, so then every line holds at least one value, and a ``decode_lines``
    of ``data`` that yields as many values as there are lines yielded one per line, in order:
    a whole file decoded in one call, no line looked for one by one."""
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    try:
        firsts, lasts = bytes(map(_FIRST, lines)), bytes(map(_LAST, lines))
    except IndexError:  # an empty line
        return None
    if firsts.count(0x7B) != len(lines) or lasts.count(0x7D) != len(lines):
        return None
    return lines


_FIRST, _LAST = operator.itemgetter(0), operator.itemgetter(-1)


def join_lines(lines: list[bytes], final_newline: bool) -> bytes:
    body = b"\n".join(lines)
    return body + b"\n" if final_newline else body


def iter_lines(stream: BinaryIO, block_size: int = 1 << 20) -> Iterator[tuple[memoryview, bool]]:
    """Stream ``(line, had_lf)`` pairs, split on LF bytes only; each line is a view,
    without its LF. The file is read a block at a time: a line inside a block is a view
    into it, and a line that spans blocks is gathered in a buffer of its own, which grows
    in place. (``readline()`` holds a long line twice while it joins its pieces, and a
    line can be hundreds of MB.)"""
    pending: bytearray | None = None
    while block := stream.read(block_size):
        view, start = memoryview(block), 0
        while (end := block.find(b"\n", start)) >= 0:
            if pending is None:
                yield view[start:end], True
            else:
                pending += view[start:end]
                yield memoryview(pending), True
                pending = None  # never resized again: the view handed out stays valid
            start = end + 1
        if start < len(block):
            if pending is None:
                pending = bytearray()
            pending += view[start:]
    if pending is not None:
        yield memoryview(pending), False


def read_chunks(stream: BinaryIO, size: int = 8 << 20) -> Iterator[bytes]:
    """The stream's bytes in pieces of about ``size`` that end on an LF (the last piece
    may not), so each piece is whole lines: memory stays one piece however large the
    file. A line longer than ``size`` is one piece of its own."""
    pending = bytearray()  # a line still open; grows in place (a line can be hundreds of MB)
    while block := stream.read(size):
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            pending += block
            continue
        if pending:
            pending += block[:cut]
            yield bytes(pending)
        else:
            yield block[:cut] if cut < len(block) else block
        pending = bytearray(block[cut:])
    if pending:
        yield bytes(pending)
