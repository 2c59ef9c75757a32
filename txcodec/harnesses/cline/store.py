"""Where cline keeps sessions, a shallow listing of them, and installing one.

cline 3.0.65 (``@cline/shared`` ``dist/db/index.js``): the data folder is
``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data``; sessions are folders
``$CLINE_SESSION_DATA_DIR`` (else ``<data>/sessions``) ``/<id>/`` holding
``<id>.messages.json`` (the conversation) and ``<id>.json`` (the session record); every
session also has a row in ``sessions`` of ``$CLINE_DB_DATA_DIR`` (else ``<data>/db``)
``/sessions.db``. ``cline --id <id>`` looks the session up by that row: without it a copied
folder opens as an empty session (docs/cline.md#format-facts), so :func:`install` writes the row.

One session is the folder, its two files and its row. What "identical" means for the row:
:func:`row_for` makes it from the session record the way the client's own ``create``
(``INSERT OR REPLACE INTO sessions``, ``@cline/core``) makes it from the same values, so
for a session the client wrote, the row made from its record equals the client's row column
for column, but for ``messages_path`` (pointed at the installed file), ``updated_at`` and
``status_lock`` (a counter the client bumps at each status change; ``create`` writes 0).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import TargetExists
from ...core.atomic import stage
from ...core.errors import StoreError
from ...core.zst import SMALL_FILE
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import described
from ...kit.store import files_under

if TYPE_CHECKING:
    import sqlite3

MESSAGES = ".messages.json"
# what cline's own ids look like: milliseconds since the epoch, "_", five letters or digits
NATIVE_ID = re.compile(r"^[0-9]{13}_[a-z0-9]{5}\Z")
# an id that can name the session's folder and files as it is
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: no newline after

# The ``sessions`` table as cline 3.0.65 creates it (column, type, NOT NULL, default);
# used only when there is no database yet. An existing one is checked, never altered.
COLUMNS: tuple[tuple[str, str, bool, str | None], ...] = (
    ("session_id", "TEXT PRIMARY KEY", False, None),
    ("source", "TEXT", True, None),
    ("pid", "INTEGER", True, None),
    ("started_at", "TEXT", True, None),
    ("ended_at", "TEXT", False, None),
    ("exit_code", "INTEGER", False, None),
    ("status", "TEXT", True, None),
    ("status_lock", "INTEGER", True, "0"),
    ("interactive", "INTEGER", True, None),
    ("provider", "TEXT", True, None),
    ("model", "TEXT", True, None),
    ("cwd", "TEXT", True, None),
    ("workspace_root", "TEXT", True, None),
    ("team_name", "TEXT", False, None),
    ("enable_tools", "INTEGER", True, None),
    ("enable_spawn", "INTEGER", True, None),
    ("enable_teams", "INTEGER", True, None),
    ("parent_session_id", "TEXT", False, None),
    ("parent_agent_id", "TEXT", False, None),
    ("agent_id", "TEXT", False, None),
    ("conversation_id", "TEXT", False, None),
    ("is_subagent", "INTEGER", True, "0"),
    ("prompt", "TEXT", False, None),
    ("metadata_json", "TEXT", False, None),
    ("transcript_path", "TEXT", True, "''"),
    ("hook_path", "TEXT", True, None),
    ("messages_path", "TEXT", False, None),
    ("updated_at", "TEXT", True, None),
)


def cline_dir() -> Path:
    value = os.environ.get("CLINE_DIR", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".cline"


def default_root() -> Path:
    """The data folder; written paths are relative to it."""
    value = os.environ.get("CLINE_DATA_DIR", "").strip()
    return Path(value).expanduser() if value else cline_dir() / "data"


def sessions_dir(root: Path | None = None) -> Path:
    value = os.environ.get("CLINE_SESSION_DATA_DIR", "").strip()
    if root is None and value:
        return Path(value).expanduser()
    return (root if root is not None else default_root()) / "sessions"


def database(root: Path | None = None) -> Path:
    value = os.environ.get("CLINE_DB_DATA_DIR", "").strip()
    if root is None and value:
        return Path(value).expanduser() / "sessions.db"
    return (root if root is not None else default_root()) / "db" / "sessions.db"


def session_relpath(session_id: str) -> str:
    return f"sessions/{session_id}/{session_id}{MESSAGES}"


def record_relpath(session_id: str) -> str:
    return f"sessions/{session_id}/{session_id}.json"


def record_of(messages_file: Path) -> Path:
    """The session record beside a messages file (``<id>.messages.json`` -> ``<id>.json``)."""
    name = messages_file.name
    stem = name[: -len(MESSAGES)] if name.endswith(MESSAGES) else messages_file.stem
    return messages_file.with_name(f"{stem}.json")


def session_file(folder: Path) -> Path | None:
    """A session folder ``<id>/`` names its messages file ``<id>/<id>.messages.json`` (a
    session folder is one session)."""
    path = Path(folder) / f"{Path(folder).name}{MESSAGES}"
    try:
        return path if path.is_file() else None
    except OSError:  # a folder we may not search is not a session folder (verify reports it)
        return None


def read_record(messages_file: Path) -> dict[str, Any] | None:
    """The session record beside ``messages_file``, or ``None`` when there is none or it is
    not a JSON object."""
    path = record_of(messages_file)
    if path == messages_file or not path.is_file():
        return None
    try:
        value = json.loads(read_bytes(path, SMALL_FILE))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply (docs/guarantees.md#limits)
        return None
    return value if isinstance(value, dict) else None


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    title: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    started: str | UnsetType = UNSET
    updated: str | UnsetType = UNSET
    messages: int = 0
    first_prompt: str | UnsetType = UNSET


class _Peek(msgspec.Struct):
    sessionId: str
    messages: list[msgspec.Raw] = []
    updated_at: str | None = None


_peek = msgspec.json.Decoder(_Peek)


def session_files(root: Path) -> list[Path]:
    """``<id>/<id>.messages.json`` under the sessions folder ``root``."""
    return files_under(root, f"*/*{MESSAGES}", lambda p: p.name == f"{p.parent.name}{MESSAGES}")


def describe(path: Path) -> SessionInfo | None:
    data = read_bytes(path)  # a FIFO or a file that cannot be read raises: the listing says so
    try:
        peek = _peek.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    info = SessionInfo(id=peek.sessionId, path=str(path), messages=len(peek.messages))
    prompt = _first_prompt(peek.messages)
    if prompt:
        info.first_prompt = prompt
    if peek.updated_at:
        info.updated = peek.updated_at
    record = read_record(path) or {}
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    for key, value in (
        ("title", metadata.get("title")),
        ("cwd", record.get("cwd")),
        ("model", record.get("model")),
        ("started", record.get("started_at")),
    ):
        if isinstance(value, str) and value:
            setattr(info, key, value)
    return info


def _first_prompt(messages: list[msgspec.Raw]) -> str | None:
    """The first user text, out of its ``<user_input>`` wrapper (the list's line scan skips
    a text starting ``<``, taking it for context the client injected)."""
    from .records import WRAPPED

    for raw in messages:
        try:
            message = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        parts = (
            [{"type": "text", "text": content}]
            if isinstance(content, str)
            else content
            if isinstance(content, list)
            else []
        )
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                wrapped = WRAPPED.match(part["text"])
                text = (wrapped.group(2) if wrapped else part["text"]).strip()
                if text:
                    return text[:300]
    return None


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under the data folder ``root`` (the default one when ``None``)."""
    folder = sessions_dir(Path(root) if root is not None else None)
    return described(session_files(folder), describe)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def row_for(record: dict[str, Any], session_id: str, messages_path: str) -> dict[str, Any]:
    """The ``sessions`` row for a session record, made the way the client's ``create``
    makes it: booleans as 0/1, ``metadata`` as JSON, ``status_lock`` 0, ``transcript_path``
    empty."""

    def text(key: str, default: str = "") -> str:
        value = record.get(key)
        return value if isinstance(value, str) else default

    def optional(key: str) -> Any:
        value = record.get(key)
        return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None

    def flag(key: str, default: bool) -> int:
        value = record.get(key)
        return 1 if (value if isinstance(value, bool) else default) else 0

    cwd = text("cwd")
    metadata = record.get("metadata")
    return {
        "session_id": session_id,
        "source": text("source", "cli"),
        "pid": record["pid"] if isinstance(record.get("pid"), int) and not isinstance(record.get("pid"), bool) else 0,
        "started_at": text("started_at") or _now(),
        "ended_at": optional("ended_at"),
        "exit_code": optional("exit_code"),
        "status": text("status", "completed"),
        "status_lock": 0,
        "interactive": flag("interactive", False),
        "provider": text("provider", "cline"),
        "model": text("model"),
        "cwd": cwd,
        "workspace_root": text("workspace_root", cwd),
        "team_name": optional("team_name"),
        "enable_tools": flag("enable_tools", True),
        "enable_spawn": flag("enable_spawn", True),
        "enable_teams": flag("enable_teams", True),
        "parent_session_id": optional("parent_session_id"),
        "parent_agent_id": optional("parent_agent_id"),
        "agent_id": optional("agent_id"),
        "conversation_id": optional("conversation_id"),
        "is_subagent": flag("is_subagent", False),
        "prompt": optional("prompt"),
        "metadata_json": json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
        if isinstance(metadata, dict)
        else None,
        "transcript_path": "",
        "hook_path": text("hook_path"),
        "messages_path": messages_path,
        "updated_at": text("ended_at") or text("started_at") or _now(),
    }


def _check_schema(con: sqlite3.Connection, db: Path, row: dict[str, Any]) -> None:
    """Create the table in a new database; in an existing one, refuse unless every column
    the row fills exists and every NOT NULL column without a default is one it fills."""
    info = con.execute("PRAGMA table_info(sessions)").fetchall()
    if not info:
        columns = ", ".join(
            f"{name} {kind}{' NOT NULL' if required else ''}{f' DEFAULT {default}' if default else ''}"
            for name, kind, required, default in COLUMNS
        )
        con.execute(f"CREATE TABLE sessions ({columns})")
        return
    have = {r[1] for r in info}
    missing = sorted(set(row) - have)
    unfilled = sorted(r[1] for r in info if r[3] and r[4] is None and not r[5] and r[1] not in row)
    if missing or unfilled:
        raise StoreError(
            f"{db}: a sessions table of another shape (missing {missing}, unfilled {unfilled}); "
            "this cline version is not supported, nothing was installed"
        )


def install(files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Copy the session folder in (never overwriting) and register it in ``sessions.db``,
    in one transaction: the row and the files appear together or not at all.

    The files go to temporaries, the row is inserted (SQLite's write lock keeps parallel
    installs apart), the files are linked, the messages file last, and the row commits.
    Files without their row are invisible to cline (it finds a session by its row): a
    kill between the links and the commit leaves such files, and a retry that finds the
    very same files in place but no row inserts it. A failed install leaves no files and
    no folder it made."""
    import sqlite3  # here: listing the store (every export --all does) never loads SQLite

    data_root = Path(root) if root is not None else default_root()
    main = next((name for name in files if name.endswith(MESSAGES)), None)
    if main is None:
        raise StoreError("a cline session needs its <id>.messages.json")
    session_id = Path(main).parent.name
    if not SAFE_ID.match(session_id) or main != session_relpath(session_id):
        raise StoreError(f"{main}: not where cline keeps a session (sessions/<id>/<id>{MESSAGES})")
    record_name = record_relpath(session_id)
    try:
        record = json.loads(files[record_name]) if record_name in files else {}
    except ValueError as exc:
        raise StoreError(f"{record_name}: not a JSON session record ({exc})") from exc
    messages_path = str((data_root / main).absolute())
    row = row_for(record if isinstance(record, dict) else {}, session_id, messages_path)
    db = database(Path(root) if root is not None else None)
    main_first = [(main, files[main]), *((r, d) for r, d in files.items() if r != main)]
    staged = stage(data_root, main_first, complete_ok=True)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(db, timeout=30, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        staged.discard()
        raise StoreError(f"{db}: cannot open the session database ({exc})") from exc
    committed = False
    try:
        con.execute("BEGIN IMMEDIATE")
        _check_schema(con, db, row)
        if con.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone():
            if staged.complete:
                raise TargetExists(f"{staged.main} already exists; not overwritten")
            raise StoreError(f"{db}: session {session_id} is already registered; nothing was installed")
        names = list(row)
        con.execute(
            f"INSERT INTO sessions ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", [row[n] for n in names]
        )
        paths = staged.commit()
        committed = True
        con.execute("COMMIT")
        return paths
    except BaseException as exc:
        if con.in_transaction:
            con.execute("ROLLBACK")
        if committed and not staged.complete:
            staged.undo()  # linked, but the row did not commit: take them (and their folder) out again
        else:
            staged.discard()
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"{db}: {exc}; nothing was installed") from exc
        raise
    finally:
        con.close()


STORE = Store(default_root=default_root, discover=discover, session_file=session_file, install=install)
