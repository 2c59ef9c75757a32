"""Where Factory droid keeps sessions, and a shallow listing of them.

droid 0.225.2 (docs/droid.md#format-facts, observed): ``~/.factory/sessions/<cwd with every character
that is not a letter or digit replaced by '-'>/<uuid>.jsonl``, beside ``<uuid>.settings.json``
(model, autonomy, token usage), which ``exec --fork`` does not need.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...kit.registry import Store
from ...kit.store import file_lines
from ...kit.store import files_under
from ...kit.store import listed
from ...kit.store import peeks
from ...kit.store import stamp

UUID = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.IGNORECASE
)  # \Z: no newline after


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
    return files_under(root / "sessions", "*/*.jsonl", lambda p: UUID.match(p.stem))


def describe(path: Path) -> SessionInfo | None:
    lines = file_lines(path)
    if lines is None:
        return None
    info = SessionInfo(id=path.stem, path=str(path))
    for peek in peeks(lines, _peek):
        if peek.type == "session_start":
            if peek.title:
                info.title = peek.title
            if peek.cwd:
                info.cwd = peek.cwd
        elif peek.type == "message":
            info.messages += 1
            stamp(info, peek.timestamp)
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (the default store when ``None``)."""
    return listed(root, default_root, session_files, describe)


STORE = Store(default_root=default_root, discover=discover)
