"""Where Factory droid keeps sessions, and a shallow listing of them.

droid 0.225.2 (docs/droid.md#format-facts, observed): ``~/.factory/sessions/<cwd with every character
that is not a letter or digit replaced by '-'>/<uuid>.jsonl``, beside ``<uuid>.settings.json``
(model, autonomy, token usage), which ``exec --fork`` does not need.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from msgspec import UNSET, UnsetType

from ...core.jsonl import split_lines
from ...model.native import json_source

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.IGNORECASE)  # \Z: no newline after


def default_root() -> Path:
    return Path.home() / ".factory"


def project_folder(cwd: str) -> str:
    """The sessions sub-folder of a project: its path, non-alphanumerics as ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def session_relpath(session_id: str, cwd: str) -> str:
    return f"sessions/{project_folder(cwd)}/{session_id}.jsonl"


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    title: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    first_timestamp: str | UnsetType = UNSET
    last_timestamp: str | UnsetType = UNSET
    messages: int = 0


class _Peek(msgspec.Struct):
    type: str | None = None
    id: str | None = None
    title: str | None = None
    cwd: str | None = None
    timestamp: str | None = None


_peek = msgspec.json.Decoder(_Peek)


def session_files(root: Path) -> list[Path]:
    folder = root / "sessions"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*/*.jsonl") if UUID.match(p.stem))


def describe(path: Path) -> SessionInfo | None:
    try:
        lines = split_lines(path.read_bytes())[0]
    except OSError:
        return None
    info = SessionInfo(id=path.stem, path=str(path))
    for line in lines:
        try:
            peek = _peek.decode(json_source(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if peek.type == "session_start":
            if peek.title:
                info.title = peek.title
            if peek.cwd:
                info.cwd = peek.cwd
        elif peek.type == "message":
            info.messages += 1
            if peek.timestamp:
                if info.first_timestamp is UNSET:
                    info.first_timestamp = peek.timestamp
                info.last_timestamp = peek.timestamp
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (the default store when ``None``)."""
    root = Path(root) if root is not None else default_root()
    found = (describe(p) for p in session_files(root))
    return [info for info in found if info is not None]
