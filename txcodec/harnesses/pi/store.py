"""Where pi keeps sessions, and a shallow listing of them.

pi 0.73.1 (``dist/config.js``, ``core/session-manager.js``): the agent folder is
``$PI_CODING_AGENT_DIR`` (``~`` expanded), else ``~/.pi/agent``; sessions live in its
``sessions/`` folder, one folder per project named ``--<cwd without its leading slash,
with / \\ : replaced by ->--``, each file ``<ISO timestamp with : and . as ->_<session
id>.jsonl``. ``$PI_CODING_AGENT_SESSION_DIR`` (or ``--session-dir``) makes pi keep every
project's sessions flat in that one folder instead; :func:`discover` lists those too.
A file counts only when its first line is a ``session`` header with a string ``id``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...kit.registry import Store
from ...kit.store import Listing
from ...kit.store import described
from ...kit.store import file_lines
from ...kit.store import peeks
from ...model.native import json_source


def _expand(value: str) -> Path:
    return Path(os.path.expanduser(value))


def agent_dir() -> Path:
    value = os.environ.get("PI_CODING_AGENT_DIR")
    return _expand(value) if value else Path.home() / ".pi" / "agent"


def default_root() -> Path:
    """The sessions folder; written paths are relative to it."""
    return agent_dir() / "sessions"


def project_folder(cwd: str) -> str:
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def file_name(timestamp: str, session_id: str) -> str:
    return f"{re.sub(r'[:.]', '-', timestamp)}_{session_id}.jsonl"


def session_relpath(cwd: str, timestamp: str, session_id: str) -> str:
    return f"{project_folder(cwd)}/{file_name(timestamp, session_id)}"


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    version: int = 1
    cwd: str | UnsetType = UNSET
    started: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    parent_session: str | UnsetType = UNSET
    lines: int = 0
    messages: int = 0


class _Peek(msgspec.Struct):
    type: str | None = None
    id: object = None
    version: object = None
    cwd: object = None
    timestamp: object = None
    name: object = None
    parentSession: object = None


_peek = msgspec.json.Decoder(_Peek)


def describe(path: Path) -> SessionInfo | None:
    lines = file_lines(path)
    if lines is None:
        return None
    try:
        header = _peek.decode(json_source(lines[0])) if lines else None
    except (msgspec.DecodeError, msgspec.ValidationError):
        header = None
    if header is None or header.type != "session" or not isinstance(header.id, str):
        return None
    info = SessionInfo(id=header.id, path=str(path), lines=len(lines))
    if isinstance(header.version, int):
        info.version = header.version
    if isinstance(header.cwd, str):
        info.cwd = header.cwd
    if isinstance(header.timestamp, str):
        info.started = header.timestamp
    if isinstance(header.parentSession, str):
        info.parent_session = header.parentSession
    for peek in peeks(lines[1:], _peek):
        if peek.type == "message":
            info.messages += 1
        elif peek.type == "session_info":
            info.name = peek.name.strip() if isinstance(peek.name, str) and peek.name.strip() else UNSET
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (default: the sessions folder, plus
    ``$PI_CODING_AGENT_SESSION_DIR`` when set)."""
    roots = [Path(root)] if root is not None else [default_root()]
    if root is None and os.environ.get("PI_CODING_AGENT_SESSION_DIR"):
        roots.append(_expand(os.environ["PI_CODING_AGENT_SESSION_DIR"]))
    found = Listing()
    for folder in roots:
        if not folder.is_dir():
            continue
        found.extend_listing(described(sorted({*folder.glob("*.jsonl"), *folder.glob("*/*.jsonl")}), describe))
    return found


STORE = Store(default_root=default_root, discover=discover)
