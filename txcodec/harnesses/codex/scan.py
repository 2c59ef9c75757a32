"""What a listing shows of a Codex rollout, read shallow (docs/codex.md#format-facts): its id,
cwd, client version, model, first and last times and counts. The listing never builds
message payloads: each line is split into its envelope with the payload kept as raw bytes,
and only ``session_meta`` / ``turn_context`` payloads are decoded. A rollout whose lines are
each one object is peeked at in one decode."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.jsonl import object_lines
from ...core.jsonl import split_lines
from ...model.native import json_source

# rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl: the uuid is the last 36 characters
_NAME_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    archived: bool = False
    compressed: bool = False
    cwd: str | UnsetType = UNSET
    cli_version: str | UnsetType = UNSET
    originator: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    first_timestamp: str | UnsetType = UNSET
    last_timestamp: str | UnsetType = UNSET
    lines: int = 0
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    forked_from_id: str | UnsetType = UNSET


class _Peek(msgspec.Struct):
    type: str | None = None
    timestamp: Any = None
    payload: msgspec.Raw = msgspec.Raw(b"null")


class _PayloadPeek(msgspec.Struct):
    type: str | None = None
    role: Any = None  # any value: only "user" or "assistant" counts a message, and no role stops a peek
    id: Any = None
    cwd: Any = None
    cli_version: Any = None
    originator: Any = None
    model: Any = None
    forked_from_id: Any = None


class _LinePeek(msgspec.Struct):
    """:class:`_Peek` with its payload peeked in the same decode (None: absent or null)."""

    type: str | None = None
    timestamp: Any = None
    payload: _PayloadPeek | None = None


_peek = msgspec.json.Decoder(_Peek)
_payload_peek = msgspec.json.Decoder(_PayloadPeek)
_line_peek = msgspec.json.Decoder(_LinePeek)
_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}


def id_from_name(name: str) -> str | None:
    stem = name.split(".", 1)[0]
    m = _NAME_ID.search(stem)
    return m.group(1) if m else None


def scan(path: Path, data: bytes | None = None) -> SessionInfo:
    if data is None:
        from ...core.zst import read_bytes

        data = read_bytes(path)
    info = SessionInfo(id="", path=str(path), compressed=path.name.endswith(".zst"))
    if path.name.endswith(".json"):
        _scan_document(info, data)
    else:
        _scan_lines(info, data)
    if not info.id:
        info.id = id_from_name(path.name) or path.name
    return info


def _scan_lines(info: SessionInfo, data: bytes) -> None:
    """A JSONL rollout's lines. Where every line is one object
    (:func:`~txcodec.core.jsonl.object_lines`: none blank, none with a BOM) they are peeked at
    in one decode, else line by line: the same peeks either way."""
    lines = object_lines(data) if data else None
    if lines is not None:
        try:
            peeks = _line_peek.decode_lines(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # a line read in two steps, or too deep
            peeks = []
        if len(peeks) == len(lines):
            for raw, both in zip(lines, peeks):
                info.lines += 1
                _scan_line(info, raw, both)
            return
    for raw in split_lines(data)[0]:
        scan_line(info, raw)


def scan_line(info: SessionInfo, raw: bytes | memoryview) -> None:
    """One line of a rollout (without its LF) counted in ``info``; a blank one is not a line."""
    if not raw.strip():
        return
    info.lines += 1
    try:  # most lines: the line and its payload in one decode
        both = _line_peek.decode(json_source(raw))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        both = None  # read in two steps below, which say which part does not fit
    _scan_line(info, raw, both)


def _scan_line(info: SessionInfo, raw: bytes, both: _LinePeek | None) -> None:
    """One line counted in ``info`` (``both``: its peek in one decode, None where that failed)."""
    if both is not None and both.payload is not None:
        if isinstance(both.timestamp, str):
            if info.first_timestamp is UNSET:
                info.first_timestamp = both.timestamp
            info.last_timestamp = both.timestamp
        _count(info, both.type, both.payload)
        return
    try:
        line = _peek.decode(json_source(raw))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return
    if isinstance(line.timestamp, str):
        if info.first_timestamp is UNSET:
            info.first_timestamp = line.timestamp
        info.last_timestamp = line.timestamp
    kind = line.type
    try:
        if line.payload == _NULL:  # 2025 (0.20): a bare meta first, then bare items
            body = _payload_peek.decode(json_source(raw))
            kind = "response_item" if body.type is not None else "session_meta" if info.lines == 1 else None
        else:
            body = _payload_peek.decode(line.payload)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return
    _count(info, kind, body)


class _TsSessionPeek(_PayloadPeek):
    timestamp: Any = None


class _TsPeek(msgspec.Struct):
    session: _TsSessionPeek
    items: list[_PayloadPeek]


_ts_peek = msgspec.json.Decoder(_TsPeek)
_NULL = msgspec.Raw(b"null")


def _scan_document(info: SessionInfo, data: bytes) -> None:
    """A 0.1.x rollout (docs/codex.md#versions-read): ``{session, items}``, one document."""
    try:
        document = _ts_peek.decode(json_source(data))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return
    info.lines = 1
    _count(info, "session_meta", document.session)
    if isinstance(document.session.timestamp, str):
        info.first_timestamp = info.last_timestamp = document.session.timestamp
    for item in document.items:
        _count(info, "response_item", item)


def _count(info: SessionInfo, kind: str | None, body: _PayloadPeek) -> None:
    if kind == "session_meta" and not info.id:  # the first meta is the file's own
        info.id = body.id if isinstance(body.id, str) else ""
        for name in ("cwd", "cli_version", "originator", "forked_from_id"):
            value = getattr(body, name)
            if isinstance(value, str):
                setattr(info, name, value)
    elif kind == "turn_context" and isinstance(body.model, str):
        info.model = body.model
    elif kind == "response_item":
        if body.type == "message" and body.role == "user":
            info.user_messages += 1
        elif body.type == "message" and body.role == "assistant":
            info.assistant_messages += 1
        elif body.type in _CALLS:
            info.tool_calls += 1
