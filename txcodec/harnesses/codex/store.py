"""Where Codex keeps rollouts, and a shallow listing of them.

``$CODEX_HOME`` (default ``~/.codex``) holds ``sessions/YYYY/MM/DD/rollout-<ts>-<uuid>
.jsonl`` and ``archived_sessions/`` (docs/codex.md#format-facts). Newer builds may keep a ``.jsonl.zst``
instead: it is read through :func:`txcodec.core.zst.read_bytes` and :func:`save` writes it
back compressed. The SQLite files next to them are an index Codex rebuilds; a lone rollout
resumes by id (docs/codex.md#how-the-real-client-is-driven), so they are neither read nor written here.

The listing never builds message payloads: each line is split into its envelope with the
payload kept as raw bytes, and only ``session_meta`` / ``turn_context`` payloads are
decoded. Unreadable files are skipped, a missing root lists nothing, and a file without
a meta id falls back to the id in its name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import write_atomic
from ...core.jsonl import object_lines
from ...core.jsonl import split_lines
from ...core.zst import open_regular
from ...kit.registry import Store
from ...kit.store import UNREADABLE
from ...kit.store import Listing
from ...kit.store import skipped
from ...model.native import json_source

SUFFIXES = (".jsonl", ".jsonl.zst", ".json")  # .json: a 0.1.x rollout, one document
# rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl: the uuid is the last 36 characters
_NAME_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")


def default_root() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


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
    role: str | None = None
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


def rollout_files(root: Path) -> list[tuple[Path, bool]]:
    """``(path, archived)`` for every rollout under ``sessions/`` and ``archived_sessions/``."""
    return [(Path(path), archived) for path, archived in _rollout_paths(root)]


def _rollout_paths(root: Path) -> list[tuple[str, bool]]:
    """:func:`rollout_files` with each path as the string pathlib writes (the listing's own),
    in the same order: by their components, as paths compare, which is not the order of the
    strings ("a-b" sorts before "a/b")."""
    found = []
    for sub, archived in (("sessions", False), ("archived_sessions", True)):
        base = root / sub
        if not base.is_dir():
            continue
        paths: list[str] = []
        _rollouts_under(str(base), paths)
        found.extend((path, archived) for path in paths)
    found.sort(key=lambda item: (item[0].split(os.sep), item[1]))
    return found


def _rollouts_under(folder: str, out: list[str]) -> None:
    """What ``rglob("rollout-*")`` and ``is_file()`` find, from the entries' own types (a
    store of thousands of rollouts is listed for every ``usage``): folders are entered,
    symlinked ones are not; a symlink to a rollout counts; a folder that cannot be read
    is passed over."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    _rollouts_under(entry.path, out)
                elif (
                    entry.name.startswith("rollout-")
                    and entry.name.endswith(SUFFIXES)
                    and (entry.is_file() or os.path.exists(entry.path))
                ):
                    # a FIFO or a device so named is listed too, and passed over with a warning by
                    # the read (core.zst.open_regular); a dangling link is passed over in silence
                    out.append(entry.path)
    except OSError:
        pass


def discover(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    root = Path(root) if root is not None else default_root()
    sessions = Listing()
    for path, archived in rollout_files(root):
        try:
            info = scan(path)
        except UNREADABLE as exc:  # unreadable, a broken or bombed compressed file: one warning each
            line = skipped(path, exc)
            if line is not None:
                sessions.errors.append(line)
            continue
        info.archived = archived
        sessions.append(info)
    return sessions


def discover_files(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """The rollouts :func:`discover` lists, for a caller that wants only the files (the
    Parquet export): an uncompressed one is known by its name (its id the name's) and is
    only opened, so that one that cannot be read is left out as :func:`discover` leaves it
    out; a compressed one is still read whole, since a broken one is left out too."""
    root = Path(root) if root is not None else default_root()
    sessions = Listing()
    for path, archived in _rollout_paths(root):
        try:
            if path.endswith(".zst"):
                info = scan(Path(path))
            else:
                open_regular(path).close()  # opened only to know it can be read (a FIFO is refused, unblocked)
                info = SessionInfo(id=id_from_name(os.path.basename(path)) or os.path.basename(path), path=path)
        except UNREADABLE as exc:
            line = skipped(path, exc)
            if line is not None:
                sessions.errors.append(line)
            continue
        info.archived = archived
        sessions.append(info)
    return sessions


def describe_item(info: SessionInfo) -> SessionInfo:
    """A rollout :func:`discover_files` listed, described as :func:`discover` describes it
    (``list --limit`` reads only the rollouts that can be among the newest); raises what
    :func:`scan` raises for one that cannot be read."""
    if info.compressed or info.lines:  # discover_files read it already
        return info
    described = scan(Path(info.path))
    described.archived = info.archived
    return described


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
        except (msgspec.DecodeError, msgspec.ValidationError):  # a line to read in two steps
            peeks = []
        if len(peeks) == len(lines):
            for raw, both in zip(lines, peeks):
                info.lines += 1
                _scan_line(info, raw, both)
            return
    for raw in split_lines(data)[0]:
        if not raw.strip():
            continue
        info.lines += 1
        try:  # most lines: the line and its payload in one decode
            both = _line_peek.decode(json_source(raw))
        except (msgspec.DecodeError, msgspec.ValidationError):
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
    except (msgspec.DecodeError, msgspec.ValidationError):
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
    except (msgspec.DecodeError, msgspec.ValidationError):
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
    except (msgspec.DecodeError, msgspec.ValidationError):
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


def id_from_name(name: str) -> str | None:
    stem = name.split(".", 1)[0]
    m = _NAME_ID.search(stem)
    return m.group(1) if m else None


def session_id_of(data: bytes) -> str | None:
    """The id in the first ``session_meta`` (or 2025 bare meta) line."""
    for raw in split_lines(data[: 1 << 22])[0][:50]:
        try:
            value = msgspec.json.decode(json_source(raw))
        except msgspec.DecodeError:
            continue
        if not isinstance(value, dict):
            continue
        payload = value.get("payload")
        if value.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
            return payload["id"]
        if "type" not in value and isinstance(value.get("id"), str):
            return value["id"]
    return None


def rollout_relpath(timestamp: str, session_id: str) -> str:
    """``sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` for an RFC 3339
    timestamp. 0.171 refuses to resume a file with ``ordinal`` lines under any other
    name ("does not have a canonical rollout filename")."""
    date, _, clock = timestamp.partition("T")
    y, m, d = date.split("-")[:3]
    hms = clock[:8].replace(":", "-")
    return f"sessions/{y}/{m}/{d}/rollout-{y}-{m}-{d}T{hms}-{session_id}.jsonl"


def save(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> Path:
    """Write a rollout atomically; a ``.zst`` path is written zstandard-compressed."""
    path = Path(path)
    if path.name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    return write_atomic(path, data, overwrite=overwrite)


def main_files(root: Path) -> list[Path]:
    """Every rollout under ``root``, not reading any."""
    return [p for p, _ in rollout_files(root)]


def summarize(path: str | os.PathLike[str]) -> Any:
    """``list``'s details of the rollout at ``path`` read lean (:mod:`.details`), or None
    where only the full read can tell. The reader's modules are imported on first use."""
    from .details import summarize as lean

    return lean(path)


STORE = Store(
    default_root=default_root,
    discover=discover,
    discover_files=discover_files,
    describe_item=describe_item,
    main_files=main_files,
    summarize=summarize,
)
