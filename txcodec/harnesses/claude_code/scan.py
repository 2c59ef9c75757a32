"""The few fields of a Claude Code session file a listing shows (docs/claude_code.md#discovery):
its ids, folder, branch, client version, first and last times, titles and line counts.
:func:`scan` reads each line into a small struct naming just those fields; msgspec skips
the rest of the line without building it. A file that fits in memory is decoded in one call
when every line is one object."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ...core.jsonl import BOM
from ...core.jsonl import object_lines
from ...core.zst import open_regular

# user / assistant lines are the conversation; every other type is metadata (docs/claude_code.md#discovery).
CONVERSATION_TYPES = frozenset({"user", "assistant"})


class _Peek(msgspec.Struct):
    """The handful of fields a listing reads. ``Any`` so that an odd value in one field
    never hides the others; everything else in the line is skipped unbuilt."""

    type: Any = None
    sessionId: Any = None
    cwd: Any = None
    gitBranch: Any = None
    version: Any = None
    timestamp: Any = None
    customTitle: Any = None
    agentName: Any = None
    summary: Any = None


_peek = msgspec.json.Decoder(_Peek)


@dataclass
class Scan:
    """What one pass over a transcript found, without decoding its records."""

    session_id: str | None = None  # the sessionId field of the first record carrying one
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    custom_title: str | None = None  # the last one wins: a rename replaces the title
    agent_name: str | None = None
    summary: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    lines: int = 0
    messages: int = 0  # user + assistant lines
    metadata: int = 0  # every other parsed line
    unparsed: int = 0  # lines that are not a JSON object (blank, cut off, garbage)
    bytes: int = 0

    def stamped(self, stamp: str) -> None:
        """A record's time, the first and last kept: ISO 8601 UTC strings order lexicographically,
        and line order is not time order."""
        if self.first_timestamp is None or stamp < self.first_timestamp:
            self.first_timestamp = stamp
        if self.last_timestamp is None or stamp > self.last_timestamp:
            self.last_timestamp = stamp

    @property
    def title(self) -> tuple[str | None, str | None]:
        """``(title, source)``: custom-title > agent-name > summary (docs/claude_code_reader.md#titles)."""
        for source in ("custom_title", "agent_name", "summary"):
            value = getattr(self, source)
            if value:
                return value, source.replace("_", "-")
        return None, None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_WHOLE_BYTES = 8 << 20  # a smaller file is read whole, and decoded in one call where it can be


def scan(path: Path) -> Scan:
    """One streaming pass over ``path``; raises :class:`OSError` when it cannot be read."""
    with open_regular(path) as stream:  # a FIFO or a device raises (docs/guarantees.md#limits)
        if os.fstat(stream.fileno()).st_size <= _WHOLE_BYTES:
            return scan_data(stream.read())
        return _scan_stream(stream)


def scan_data(data: bytes) -> Scan:
    """:func:`scan` of a file's bytes."""
    out = Scan()
    return out if _scan_whole(out, data) else _scan_stream(io.BytesIO(data))


def _scan_stream(stream: Any) -> Scan:
    out = Scan()
    for line in stream:
        out.bytes += len(line)
        scan_line(out, line)
    return out


def scan_line(out: Scan, line: bytes | memoryview) -> None:
    """One line (its LF or not) added to ``out``: the first line may start with a BOM."""
    body = line[3:] if out.lines == 0 and line[:3] == BOM else line
    out.lines += 1
    try:
        peek = _peek.decode(body)
    except (msgspec.MsgspecError, RecursionError):  # RecursionError: nested too deeply
        out.unparsed += 1
        return
    _take(out, peek)


def _scan_whole(out: Scan, data: bytes) -> bool:
    """``out`` filled from ``data`` decoded in one call when every line is one JSON object
    (:func:`~txcodec.core.jsonl.object_lines`): the same as line by line, in C."""
    lines = object_lines(data) if data else None
    if lines is None:
        return False
    try:
        peeks = _peek.decode_lines(data)
    except (msgspec.MsgspecError, RecursionError):
        return False
    if len(peeks) != len(lines):
        return False
    out.lines, out.bytes = len(lines), len(data)
    for peek in peeks:
        _take(out, peek)
    return True


def _take(out: Scan, peek: _Peek) -> None:
    kind = _text(peek.type)  # a type that is not a string names no record
    if kind in CONVERSATION_TYPES:
        out.messages += 1
    else:
        out.metadata += 1
    if out.session_id is None:
        out.session_id = _text(peek.sessionId)
    if out.cwd is None:
        out.cwd = _text(peek.cwd)
    if out.git_branch is None:
        out.git_branch = _text(peek.gitBranch)
    if out.version is None:
        out.version = _text(peek.version)
    stamp = _text(peek.timestamp)
    if stamp:
        out.stamped(stamp)
    if kind == "custom-title" and _text(peek.customTitle):
        out.custom_title = peek.customTitle
    elif kind == "agent-name" and _text(peek.agentName):
        out.agent_name = peek.agentName
    elif kind == "summary" and _text(peek.summary) and out.summary is None:
        out.summary = peek.summary  # the first summary (docs/claude_code_reader.md#titles)
