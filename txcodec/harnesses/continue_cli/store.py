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

from ...core.atomic import TargetExists
from ...core.atomic import stage
from ...core.atomic import update_locked
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
    --resume`` picks it, and list it in ``sessions.json``.

    Kill-safe (docs/guarantees.md, "Atomic installs"): the session file goes to a
    temporary (its mtime set there), the index entry is added under the registry lock (so
    parallel installs keep every entry), and the file is linked in last. When a step
    fails (a damaged ``sessions.json``, a full disk) nothing of this install is left; a
    retry that finds the very same file in place but not in the index finishes it."""
    root = Path(root) if root is not None else default_root()
    staged = stage(root, files.items(), complete_ok=True)
    try:
        try:
            values = [json.loads(data) for data in files.values()]
        except ValueError as exc:
            raise StoreError(f"not a Continue session file ({exc}); nothing was installed") from exc
        ids = [v.get("sessionId") if isinstance(v, dict) else None for v in values]
        if not all(isinstance(sid, str) for sid in ids):
            raise StoreError("a Continue session file without a sessionId; nothing was installed")
        if staged.complete and set(ids) <= _indexed(root):
            raise TargetExists(f"{staged.main} already exists; not overwritten")
        now = time.time()
        for tmp in staged.temps.values():
            os.utime(tmp, (now, now))  # a link keeps the inode's mtime
        added = _index(root, values, now)
    except BaseException:
        staged.discard()
        raise
    try:
        paths = staged.commit()
    except BaseException:
        _unindex(root, added)
        raise
    if staged.complete:  # a killed install's file: newest again, as cn --resume wants
        for path in paths:
            os.utime(path, (now, now))
    return paths


def _indexed(root: Path) -> set[str]:
    """The session ids ``sessions.json`` lists (none when it is missing or unreadable)."""
    try:
        entries = json.loads((root / INDEX).read_bytes())
    except (OSError, ValueError):
        return set()
    listed = entries if isinstance(entries, list) else []
    return {e["sessionId"] for e in listed if isinstance(e, dict) and isinstance(e.get("sessionId"), str)}


def _index(root: Path, values: list[dict], now: float) -> list[str]:
    """Add (or replace) the entries of ``values`` in ``sessions.json`` under the registry
    lock; returns the ids added, for :func:`_unindex`."""
    index = root / INDEX
    added: list[str] = []

    def change(old: bytes | None) -> bytes:
        try:
            entries = json.loads(old) if old is not None else []
        except ValueError as exc:
            raise StoreError(f"{index}: not a readable session index ({exc}); nothing was installed") from exc
        if not isinstance(entries, list):
            raise StoreError(f"{index}: not a list of sessions; nothing was installed")
        for value in values:
            sid = value["sessionId"]
            entries = [e for e in entries if not (isinstance(e, dict) and e.get("sessionId") == sid)]
            entries.append(
                {
                    "sessionId": sid,
                    "title": value.get("title", "Untitled Session"),
                    "dateCreated": str(int(now * 1000)),
                    "workspaceDirectory": value.get("workspaceDirectory", ""),
                    "messageCount": len(value.get("history", [])) if isinstance(value.get("history"), list) else 0,
                }
            )
            added.append(sid)
        return json.dumps(entries, indent=2, ensure_ascii=False).encode()

    update_locked(index, change)
    return added


def _unindex(root: Path, ids: list[str]) -> None:
    """Take the entries a failed install added out of ``sessions.json`` again."""

    def change(old: bytes | None) -> bytes | None:
        try:
            entries = json.loads(old) if old is not None else None
        except ValueError:
            return None
        if not isinstance(entries, list):
            return None
        kept = [e for e in entries if not (isinstance(e, dict) and e.get("sessionId") in ids)]
        return json.dumps(kept, indent=2, ensure_ascii=False).encode()

    try:
        update_locked(root / INDEX, change)
    except OSError:
        pass  # the install's own error is the one to report


STORE = Store(default_root=default_root, discover=discover, install=install)
