"""Where opencode (and Kilo) keep sessions: one SQLite database, read without writing.

opencode 1.18.33 keeps every session in ``$XDG_DATA_HOME/opencode/opencode.db`` (XDG
default ``~/.local/share``); Kilo 7.7.7 in ``$XDG_DATA_HOME/kilo/kilo.db`` (docs/opencode.md#format-facts).
Tables ``session`` (one row, columns), ``message`` and ``part`` (``data`` is the JSON the
export shows, without the ids), in WAL mode, beside an event log (``event``) and a
``migration`` table naming the schema version.

Reading opens the file with a ``mode=ro`` URI: nothing is written to it, not even a
journal, and its bytes are unchanged (tests/harnesses/opencode/test_opencode.py checks the hash).
:func:`Store.export` rebuilds a session as the document ``opencode export`` prints, so the
database and export files read the same way.

Installing never writes the database behind the client's back: :meth:`Store.install` runs
the client's own ``opencode import FILE`` (``kilo import``), from the session's project
folder. Observed with 1.18.33: import files the session under the folder it runs in (it
rewrites ``directory``; a session imported from elsewhere fails to run there with
"Unexpected server error"), creates and migrates the database itself (38 migrations), and
refuses a document without the fields it needs; rows inserted by anyone else would have to
copy all three and follow every future migration.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.errors import InputError
from ...core.errors import StoreError
from ...kit.registry import Store
from .dialect import OPENCODE
from .dialect import Dialect

if TYPE_CHECKING:
    import sqlite3

REQUIRED = {
    "session": {"id", "slug", "directory", "title", "version", "time_created", "time_updated"},
    "message": {"id", "session_id", "time_created", "data"},
    "part": {"id", "message_id", "session_id", "data"},
}


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    title: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    created: str | UnsetType = UNSET
    updated: str | UnsetType = UNSET
    messages: int = 0


def connect(db: Path) -> sqlite3.Connection:
    """The database, read-only: a ``mode=ro`` URI, so SQLite never writes to the file."""
    if not db.is_file():
        raise StoreError(f"{db}: no such database")
    import sqlite3  # here: a home without the database (every export --all lists it) never loads SQLite

    con = None
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        tables = {row[0] for row in con.execute("select name from sqlite_master where type = 'table'")}
        # the schema is read inside the try too: a damaged table or column name is the database's fault
        for table, columns in REQUIRED.items():
            have = {row[1] for row in con.execute(f"pragma table_info({table})")} if table in tables else set()
            if not columns <= have:
                raise StoreError(f"{db}: not an opencode database (table {table} lacks {sorted(columns - have)})")
    except (sqlite3.Error, StoreError) as exc:
        if con is not None:
            con.close()
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"{db}: not a readable SQLite database ({exc})") from exc
    return con


def session_ids(db: Path) -> list[str]:
    con = connect(db)
    try:
        return [r[0] for r in con.execute("select id from session order by time_created, id")]
    finally:
        con.close()


def tables(db: Path) -> set[str]:
    con = connect(db)
    try:
        return {row[0] for row in con.execute("select name from sqlite_master where type = 'table'")}
    finally:
        con.close()


def _json(text: str | None, default: object = None) -> object:
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def export(db: Path, session_id: str) -> bytes:
    """The session as ``opencode export`` prints it (its fields, in its order), one line."""
    import sqlite3

    con = connect(db)
    con.row_factory = sqlite3.Row
    try:
        row = con.execute("select * from session where id = ?", (session_id,)).fetchone()
        if row is None:
            raise InputError(f"{db}: no session {session_id!r}")
        keys = set(row.keys())

        def column(name: str) -> object:
            """An optional column's value; None in a database whose table lacks it."""
            return row[name] if name in keys else None

        info: dict = {"id": row["id"], "slug": row["slug"]}
        if "project_id" in keys:
            info["projectID"] = row["project_id"]
        if "parent_id" in keys and row["parent_id"]:
            info["parentID"] = row["parent_id"]
        info["directory"] = row["directory"]
        if "path" in keys and row["path"] is not None:
            info["path"] = row["path"]
        info["title"] = row["title"]
        if "agent" in keys and row["agent"]:
            info["agent"] = row["agent"]
        if "model" in keys and row["model"]:
            info["model"] = _json(row["model"])
        info["version"] = row["version"]
        if "summary_additions" in keys and row["summary_additions"] is not None:
            info["summary"] = {
                "additions": row["summary_additions"],
                "deletions": column("summary_deletions"),
                "files": column("summary_files"),
            }
        if "cost" in keys:
            info["cost"] = row["cost"]
            info["tokens"] = {
                "input": column("tokens_input"),
                "output": column("tokens_output"),
                "reasoning": column("tokens_reasoning"),
                "cache": {"read": column("tokens_cache_read"), "write": column("tokens_cache_write")},
            }
        if "permission" in keys and row["permission"]:
            info["permission"] = _json(row["permission"])
        info["time"] = {"created": row["time_created"], "updated": row["time_updated"]}
        messages = []
        for message in con.execute(
            "select id, data from message where session_id = ? order by time_created, id", (session_id,)
        ):
            data = _json(message["data"], {})
            parts = []
            for part in con.execute("select id, data from part where message_id = ? order by id", (message["id"],)):
                parts.append(
                    {
                        **(_json(part["data"], {}) or {}),
                        "id": part["id"],
                        "sessionID": session_id,
                        "messageID": message["id"],
                    }
                )
            messages.append({"info": {**(data or {}), "id": message["id"], "sessionID": session_id}, "parts": parts})
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: {exc}") from exc
    finally:
        con.close()
    return msgspec.json.encode({"info": info, "messages": messages})


SQLITE_MAGIC = b"SQLite format 3\x00"


def pick(db: Path, wanted: str | None = None) -> str:
    """The session of ``db`` a user means: ``wanted`` (an id or a unique id prefix), else
    its only session. Several, or none, is an :class:`InputError` listing the candidates
    and how to name one (``<database>#<id>``, or the id alone for a store's own database)."""
    import sqlite3

    con = connect(db)
    try:
        rows = con.execute("select id, time_updated, title from session order by time_updated desc, id").fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: {exc}") from exc
    finally:
        con.close()
    if wanted:
        exact = [r for r in rows if r[0] == wanted]
        rows = exact or [r for r in rows if r[0].startswith(wanted)]
        if len(rows) == 1:
            return rows[0][0]
        if not rows:
            raise InputError(f"{db}: no session {wanted!r} in it")
    elif len(rows) == 1:
        return rows[0][0]
    if not rows:
        raise InputError(f"{db}: the database holds no session")
    from .read import iso

    listed = "\n".join(f"  {r[0]}  {(iso(r[1]) or '')[:16]}  {str(r[2])[:60]}" for r in rows[:20])
    more = f"\n  ... and {len(rows) - 20} more" if len(rows) > 20 else ""
    raise InputError(
        f"{db}: {len(rows)} sessions in this database; name one as {db}#<id> (or a unique id prefix):\n{listed}{more}"
    )


class Database:
    """The store of one dialect: ``default_root()`` is its data folder, where the database is."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def default_root(self) -> Path:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(base).expanduser() / self.dialect.app

    def database(self, root: Path | None = None) -> Path:
        return (Path(root) if root is not None else self.default_root()) / self.dialect.database

    def discover(self, root: Path | None = None) -> list[SessionInfo]:
        db = self.database(root)
        if not db.is_file():
            return []
        con = connect(db)
        try:
            counts = dict(con.execute("select session_id, count(*) from message group by session_id").fetchall())
            rows = con.execute(
                "select id, title, directory, version, time_created, time_updated from session order by time_updated"
            ).fetchall()
        finally:
            con.close()
        from .read import iso

        return [
            SessionInfo(
                id=r[0],
                path=str(db),
                title=r[1],
                cwd=r[2],
                version=r[3],
                created=iso(r[4]) or UNSET,
                updated=iso(r[5]) or UNSET,
                messages=counts.get(r[0], 0),
            )
            for r in rows
        ]

    def load(self, session_id: str, root: Path | None = None):
        """A session of the database as a native session (an export document), read-only."""
        from ...kit.registry import get
        from ...model.native import decode_document

        db = self.database(root)
        return decode_document(export(db, session_id), get(self.dialect.harness).codec, self.dialect.harness, db)

    def open(self, db: Path, wanted: str | None = None):
        """The session ``wanted`` names in the database file ``db`` (any name, any folder),
        or its only one (:func:`pick`), as a native session, read-only."""
        from ...kit.registry import get
        from ...model.native import decode_document

        return decode_document(export(db, pick(db, wanted)), get(self.dialect.harness).codec, self.dialect.harness, db)

    def install(self, files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
        """``<binary> import FILE`` for each export, with ``XDG_DATA_HOME`` set so that the
        client writes into ``root`` (its data folder). An id already there is refused."""
        import subprocess  # here: listing the store (every export --all) never runs the client

        from ...core.atomic import TargetExists
        from ...core.programs import require_client

        root = Path(root) if root is not None else self.default_root()
        if root.name != self.dialect.app:
            raise StoreError(
                f"{root}: {self.dialect.title}'s data folder is named {self.dialect.app!r} (under $XDG_DATA_HOME)"
            )
        exe = require_client(self.dialect.binary, f": install {self.dialect.package} (clients/package.json pins it)")
        db = self.database(root)
        existing = set(session_ids(db)) if db.is_file() else set()
        env = {**os.environ, "XDG_DATA_HOME": str(root.parent), self.dialect.env("DISABLE_AUTOUPDATE"): "1"}
        for name, data in files.items():
            info = json.loads(data)["info"]
            sid = info["id"]
            if sid in existing:
                raise TargetExists(f"{db}: session {sid} already exists; not overwritten")
            # the client files an imported session under the project it is run from (a
            # session imported elsewhere fails to run there): import from the session's folder
            project = (
                info.get("directory")
                if isinstance(info.get("directory"), str) and Path(info["directory"]).is_dir()
                else os.getcwd()
            )
            with tempfile.TemporaryDirectory(prefix="txcodec-import-") as tmp:
                path = Path(tmp) / Path(name).name
                path.write_bytes(data)
                done = subprocess.run(
                    [str(exe), "import", str(path)],
                    capture_output=True,
                    text=True,
                    env={**env, "PWD": project},
                    cwd=project,
                    stdin=subprocess.DEVNULL,
                    timeout=300,
                )
            if done.returncode != 0 or sid not in session_ids(db):
                raise StoreError(f"{self.dialect.binary} import {name} failed: {(done.stderr or done.stdout)[-2000:]}")
        return [db]

    def fit(self, db: Path) -> tuple[bool, int, bool]:
        """How well the database file ``db`` fits this dialect, highest best: it has the
        dialect's own tables (Kilo adds two to opencode's), the most of them, its file name."""
        extra = self.dialect.extra_tables
        return set(extra) <= tables(db), len(extra), self.dialect.database == db.name

    def declared(self) -> Store:
        """This dialect's store as its harness registers it."""
        return Store(
            default_root=self.default_root,
            discover=self.discover,
            install=self.install,
            open=self.open,
            load=self.load,
            database_fit=self.fit,
        )


STORE = Database(OPENCODE)
default_root = STORE.default_root
discover = STORE.discover
install = STORE.install
