"""Where Continue's CLI keeps sessions, a shallow listing of them, and installing one.

``cn`` 1.5.47 (``dist/index.js``): the sessions folder is ``$CONTINUE_GLOBAL_DIR/sessions``,
else ``~/.continue/sessions``; each session is ``<sessionId>.json`` beside an index
``sessions.json`` (``[{sessionId, title, dateCreated (ms since the epoch, a string),
workspaceDirectory, messageCount}]``) that resume does not need. ``cn --resume`` loads the
``*.json`` file (``sessions.json`` aside) with the newest mtime, whatever its id or
workspace; ``cn --fork <id>`` copies ``<id>.json`` into a new session and continues it.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime
from datetime import timezone
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import install_files
from ...core.atomic import write_atomic
from ...core.errors import StoreError
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import files_under
from ...kit.store import listed

INDEX = "sessions.json"
# an id that can name a file in the sessions folder as it is
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: no newline after


def global_dir() -> Path:
    value = os.environ.get("CONTINUE_GLOBAL_DIR")
    return Path(value).expanduser() if value else Path.home() / ".continue"


def default_root() -> Path:
    """The sessions folder; written paths are relative to it."""
    return global_dir() / "sessions"


def session_relpath(session_id: str) -> str:
    return f"{session_id}.json"


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    title: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    updated: str | UnsetType = UNSET  # the file's mtime (what cn --resume goes by)
    messages: int = 0


class _Peek(msgspec.Struct):
    sessionId: str
    history: list[msgspec.Raw] = []
    title: str | None = None
    workspaceDirectory: str | None = None


_peek = msgspec.json.Decoder(_Peek)


def session_files(root: Path) -> list[Path]:
    return files_under(root, "*.json", lambda p: p.name != INDEX)


def describe(path: Path) -> SessionInfo | None:
    data = read_bytes(path)  # a FIFO or a file that cannot be read raises: the listing says so
    try:
        peek = _peek.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    modified = path.stat().st_mtime
    stamp = datetime.fromtimestamp(modified, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    info = SessionInfo(id=peek.sessionId, path=str(path), updated=stamp, messages=len(peek.history))
    if peek.title:
        info.title = peek.title
    if peek.workspaceDirectory:
        info.cwd = peek.workspaceDirectory
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session file under ``root`` (the default sessions folder when ``None``)."""
    return listed(root, default_root, session_files, describe)


def install(files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Copy the session in (never overwriting), give it the newest mtime so that ``cn
    --resume`` picks it, and list it in ``sessions.json``."""
    root = Path(root) if root is not None else default_root()
    paths = install_files(root, files)
    now = time.time()
    for path in paths:
        os.utime(path, (now, now))
    _index(root, paths, now)
    return paths


def _index(root: Path, paths: list[Path], now: float) -> None:
    index = root / INDEX
    try:
        entries = json.loads(index.read_text(encoding="utf-8")) if index.exists() else []
    except (OSError, ValueError) as exc:
        raise StoreError(f"{index}: not a readable session index ({exc})") from exc
    if not isinstance(entries, list):
        raise StoreError(f"{index}: not a list of sessions")
    for path in paths:
        value = json.loads(path.read_bytes())
        entries = [e for e in entries if not (isinstance(e, dict) and e.get("sessionId") == value["sessionId"])]
        entries.append(
            {
                "sessionId": value["sessionId"],
                "title": value.get("title", "Untitled Session"),
                "dateCreated": str(int(now * 1000)),
                "workspaceDirectory": value.get("workspaceDirectory", ""),
                "messageCount": len(value.get("history", [])),
            }
        )
    write_atomic(index, json.dumps(entries, indent=2, ensure_ascii=False).encode(), overwrite=True)


STORE = Store(default_root=default_root, discover=discover, install=install)
