"""The session index: what ``txcodec list`` shows of each session (title, first prompt,
message count, models, lineage), kept between runs so a session is read again only when
its file changed.

One SQLite database (the standard library's ``sqlite3``) in the platform's cache folder
(``platformdirs.user_cache_dir("txcodec")``, ``$XDG_CACHE_HOME/txcodec`` on Linux), one row
per session keyed by its file's path and the session's id, valid while the file's size,
modification time and inode are what they were. It holds session text (first prompts), so
the folder is made 0700 and the files 0600; ``txcodec index --clear`` removes it and
``--no-index`` leaves it alone. The database is a cache: written in WAL mode so commands
can run side by side, and never trusted when it cannot be read or was written by another
version of txcodec (it is then rebuilt); a write that fails (locked, read-only, full)
only costs the next run its reads."""

from __future__ import annotations

import contextlib
import operator
import os
import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from . import __version__
from .model.common import ForkedFrom
from .model.origin import Origin

# what a row holds; a change here, or in how a row is made (a new txcodec), rebuilds the index
FORMAT = 7  # 2: the stores' own listing rows (``listed``) kept too; 3: (path, key) rows read in bulk;
# 4: usage cells and call marks (``usage_*``); 5: each file's origin for ``txcodec lineage`` (``origins``);
# 6: a file's usage marks in its own row (no ``usage_marks``); 7: each store's whole listing (``listings``)
_SUFFIXES = ("", "-wal", "-shm", "-journal")
_POINT_LOOKUPS = 64  # look-ups of single rows before a table is read whole


class Entry(msgspec.Struct, kw_only=True, array_like=True):
    """A session as :func:`txcodec.sessions.describe_row` found it (``read``: False when it
    could not be read, so the row keeps what its store said)."""

    read: bool
    title: str | None = None
    first_prompt: str | None = None
    messages: int | None = None
    models: list[str] | None = None
    started_by: str | None = None
    forked_from: str | None = None


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Entry).decode
# an origin: (session id, started by, forked-from session id, forked-from message id)
_decode_origin = msgspec.json.Decoder(tuple[str | None, str | None, str | None, str | None]).decode


def default_path() -> Path:
    """``sessions.sqlite3`` in txcodec's folder of the platform's cache folder."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("txcodec", appauthor=False)) / "sessions.sqlite3"


def clear(path: Path | None = None) -> list[Path]:
    """Remove the index (and its WAL files); the files removed."""
    path = path or default_path()
    removed = []
    for suffix in _SUFFIXES:
        target = Path(f"{path}{suffix}")
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
            removed.append(target)
    return removed


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


BUSY_MS = 2000  # how long a run waits for another that writes


def open_private(path: Path) -> sqlite3.Connection:
    """A SQLite file of this user's only (0600 in a 0700 folder), in WAL mode; an OSError on
    the way is raised as ``sqlite3.OperationalError`` (no index this run)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # made 0600 before SQLite opens it (SQLite gives its WAL files the same mode)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
    except OSError as exc:
        raise sqlite3.OperationalError(str(exc)) from exc
    db = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        db.close()
        raise
    return db


class SessionIndex:
    """The open index. :meth:`get` a row still valid for its file, :meth:`put` a new one;
    :meth:`close` writes what was put (in one transaction) and forgets the rows of files
    not seen when ``seen`` is given (a whole listing)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._pending: list[tuple[Any, ...]] = []
        self._pending_listed: list[tuple[Any, ...]] = []
        self._pending_origins: list[tuple[Any, ...]] = []
        # each table read whole at its first look-up ((path, key) -> stamp and value), and each
        # file's stamp taken once a run: a warm listing is one query and one stat per file
        self._loaded: dict[str, dict[tuple[str, str], tuple[Any, ...]]] = {}
        self._stamps: dict[str, tuple[int, int, int] | None] = {}
        self._lookups: dict[str, int] = {}
        # (table, path, key) -> the stamp of the file a row of this run was valid for, or read at
        # (a store's whole listing is kept only when each row's parts agree: sessions._listing_stamp)
        self.used: dict[tuple[str, str, str], tuple[int, int, int]] = {}
        self._db = self._open()

    def _open(self) -> sqlite3.Connection | None:
        try:
            return self._connect()
        except sqlite3.OperationalError:
            return None  # locked, read-only, no room: no index this run (every session is read)
        except (sqlite3.DatabaseError, _Foreign):
            pass  # damaged, or another txcodec's: rebuilt, never trusted
        try:
            clear(self.path)
            return self._connect()
        except (sqlite3.Error, _Foreign, OSError):
            return None

    def _connect(self) -> sqlite3.Connection:
        db = open_private(self.path)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:  # new: made here
                db.executescript(
                    "BEGIN;"
                    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
                    "CREATE TABLE IF NOT EXISTS sessions (path TEXT, session_id TEXT, size INTEGER,"
                    " mtime_ns INTEGER, inode INTEGER, entry BLOB, PRIMARY KEY (path, session_id)) WITHOUT ROWID;"
                    "CREATE TABLE IF NOT EXISTS listed (path TEXT, harness TEXT, size INTEGER,"
                    " mtime_ns INTEGER, inode INTEGER, item BLOB, PRIMARY KEY (path, harness)) WITHOUT ROWID;"
                    "CREATE TABLE IF NOT EXISTS origins (path TEXT, harness TEXT, size INTEGER,"
                    " mtime_ns INTEGER, inode INTEGER, origin BLOB, PRIMARY KEY (path, harness)) WITHOUT ROWID;"
                    f"{_USAGE_TABLES}"
                    f"{_LISTING_TABLES}"
                    f"PRAGMA user_version={FORMAT};"
                    "COMMIT;"
                )
                db.execute("INSERT OR REPLACE INTO meta VALUES ('txcodec', ?)", (__version__,))
            elif version != FORMAT:
                raise _Foreign
            found = db.execute("SELECT value FROM meta WHERE key = 'txcodec'").fetchone()
            if found is None or found[0] != __version__:
                raise _Foreign
        except BaseException:
            db.close()
            raise
        return db

    def get(self, path: str, session_id: str) -> Entry | None:
        """The row of ``session_id`` in ``path``, when the file is as it was then."""
        found = self._unchanged("sessions", "session_id", "entry", path, session_id)
        if found is None:
            return None
        try:
            return _decode(found)
        except msgspec.MsgspecError:
            return None

    def put(self, path: str, session_id: str, entry: Entry, stamp: tuple[int, int, int] | None) -> None:
        """Keep ``entry`` for the file as it was when it was read (``stamp``, taken before)."""
        if stamp is not None:
            self.used[("sessions", path, session_id)] = stamp
        if self._db is not None and stamp is not None and _storable(path, session_id):
            self._pending.append((path, session_id, *stamp, _encode(entry)))

    def get_listed(self, harness: str, path: str, stamp: tuple[int, int, int] | None = None) -> bytes | None:
        """What ``harness``'s store said of the file at ``path`` (its own listing row, encoded
        by the caller), when the file is as it was then (``stamp``: the caller's own, just taken)."""
        if stamp is not None:
            self._stamps.setdefault(path, stamp)
        return self._unchanged("listed", "harness", "item", path, harness)

    def _unchanged(self, table: str, key_column: str, value_column: str, path: str, key: str) -> Any:
        """The ``value_column`` of ``table``'s row for (``path``, ``key``), when the file's stamp
        (size, mtime, inode) is still the one stored. The first look-ups of a run ask for
        their row alone (``list --limit 10``); past :data:`_POINT_LOOKUPS` the table is read whole, once."""
        if self._db is None or not _storable(path, key):
            return None
        rows = self._loaded.get(table)
        query = f"SELECT path, {key_column}, size, mtime_ns, inode, {value_column} FROM {table}"  # noqa: S608 - fixed names
        try:
            if rows is not None:
                found = rows.get((path, key))
            elif self._lookups.get(table, 0) < _POINT_LOOKUPS:
                self._lookups[table] = self._lookups.get(table, 0) + 1
                row = self._db.execute(f"{query} WHERE path = ? AND {key_column} = ?", (path, key)).fetchone()
                found = tuple(row[2:]) if row is not None else None
            else:
                rows = self._loaded[table] = {(r[0], r[1]): tuple(r[2:]) for r in self._db.execute(query)}
                found = rows.get((path, key))
        except sqlite3.Error:
            return None
        if found is None:
            return None
        if path in self._stamps:
            stamp = self._stamps[path]
        else:
            stamp = self._stamps[path] = _stamp(path)
        if stamp is None or found[:3] != stamp:
            return None
        self.used[(table, path, key)] = stamp
        return found[3]

    def put_listed(self, harness: str, path: str, item: bytes, stamp: tuple[int, int, int] | None) -> None:
        """Keep the store's listing row ``item`` for the file as it was when read (``stamp``, taken before)."""
        if stamp is not None:
            self.used[("listed", path, harness)] = stamp
        if self._db is not None and stamp is not None and _storable(path, harness):
            self._pending_listed.append((path, harness, *stamp, item))

    def get_origin(self, harness: str, path: str) -> Origin | None:
        """How the session in ``path`` began (:func:`txcodec.lineage.file_origin`), when the
        file is as it was then."""
        found = self._unchanged("origins", "harness", "origin", path, harness)
        if found is None:
            return None
        try:
            session_id, started_by, parent, message = _decode_origin(found)
        except (msgspec.MsgspecError, ValueError):
            return None
        forked = ForkedFrom(parent, msgspec.UNSET if message is None else message) if parent is not None else None
        return Origin(harness, session_id, started_by, forked, Path(path))

    def put_origin(self, origin: Origin, path: str, stamp: tuple[int, int, int] | None) -> None:
        """Keep ``origin`` for the file as it was when it was read (``stamp``, taken before)."""
        if self._db is None or stamp is None or not _storable(path, origin.harness):
            return
        link = origin.forked_from
        parent, message = (link.session_id, link.message_id or None) if link is not None else (None, None)
        if not _storable(origin.session_id, parent, message):
            return
        blob = _encode([origin.session_id, origin.started_by, parent, message])
        self._pending_origins.append((path, origin.harness, *stamp, blob))

    def close(self, seen: set[str] | None = None) -> None:
        if self._db is None:
            return
        try:
            pending = {"sessions": self._pending, "listed": self._pending_listed, "origins": self._pending_origins}
            if any(pending.values()) or seen is not None:
                self._db.execute("BEGIN IMMEDIATE")
                for table, rows in pending.items():
                    # a table that held no row before this run's holds none of a file gone since
                    held = seen is not None and self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()  # noqa: S608
                    # in key order each page is written once (a stable sort: of two rows for one key the last wins)
                    rows.sort(key=_KEY)
                    self._db.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?, ?, ?)", rows)  # noqa: S608
                    if held:
                        known = self._db.execute(f"SELECT DISTINCT path FROM {table}")  # noqa: S608
                        gone = [(p,) for (p,) in known if p not in seen]
                        self._db.executemany(f"DELETE FROM {table} WHERE path = ?", gone)  # noqa: S608
                self._db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
        finally:
            self._pending = []
            self._pending_listed = []
            self._pending_origins = []
            self._db.close()
            self._db = None

    def count(self) -> int:
        if self._db is None:
            return 0
        try:
            return self._db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        except sqlite3.Error:
            return 0


_KEY = operator.itemgetter(0, 1)  # a row's primary key: (path, session id or harness)


def _storable(*texts: str) -> bool:
    """SQLite keeps UTF-8: a name that is not (a folder named in another encoding, as
    ``os.fsdecode`` reads it) is read afresh each time rather than kept."""
    try:
        for text in texts:
            if text is not None:
                text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Foreign(Exception):
    """The index was written by another format or txcodec version."""


def stamp(path: str) -> tuple[int, int, int] | None:
    """The file's size, modification time (ns) and inode: what keeps a row valid."""
    return _stamp(path)


# --- the stores' whole listings (``txcodec list``) ---------------------------------------------
#
# ``listings``: one row per (store, root): the store's whole listing as ``list`` showed it (every
# row with its details), with the folders under the root and their modification times as they
# were before the store was listed, and each file's size, mtime, inode and mode. A folder's
# mtime changes when an entry is added, removed or renamed in it, so while every folder's time
# and every file's stamp hold, the store would list the same rows: a warm ``list`` stats them
# and decodes the rows, asking nothing of the store (``txcodec.sessions._Listings``).

_LISTING_TABLES = (
    "CREATE TABLE IF NOT EXISTS listings (harness TEXT, root TEXT, listing BLOB, PRIMARY KEY (harness, root));"
)


def get_listing(index: SessionIndex, harness: str, root: str) -> bytes | None:
    """The kept listing of ``harness``'s store under ``root`` (encoded by the caller), or None."""
    if index._db is None or not _storable(harness, root):
        return None
    try:
        found = index._db.execute(
            "SELECT listing FROM listings WHERE harness = ? AND root = ?", (harness, root)
        ).fetchone()
    except sqlite3.Error:
        return None
    return None if found is None else found[0]


def put_listing(index: SessionIndex, harness: str, root: str, listing: bytes | None) -> None:
    """Keep ``listing`` for ``harness``'s store under ``root`` (None: forget the kept one), in a
    transaction of its own (a failed write costs the next run its listing)."""
    if index._db is None or not _storable(harness, root):
        return
    try:
        if listing is None:
            index._db.execute("DELETE FROM listings WHERE harness = ? AND root = ?", (harness, root))
        else:
            index._db.execute("INSERT OR REPLACE INTO listings VALUES (?, ?, ?)", (harness, root, listing))
    except sqlite3.Error:
        pass


# --- usage (``txcodec usage``): per-file cells and each call's mark -------------------------
#
# ``usage_files``: one row per session file read by a lean usage pass, valid while its stamp
# (the file's and its subagent files' size, mtime and inode) and the report's time zone are
# what they were: the file's identity, its counters per (model, day), the part of them no
# mark covers, and its marks (each marked call's instant and model, day and counters, as
# integer arrays: ``usage.Marks``), one blob per file. ``usage_last``: the last report's files
# after the cross-file dedupe, used as it is while no file of the run changed.

_USAGE_TABLES = (
    "CREATE TABLE IF NOT EXISTS usage_files (fid INTEGER PRIMARY KEY, path TEXT UNIQUE, stamp TEXT, zone TEXT,"
    " harness TEXT, session TEXT, cwd TEXT, cells BLOB, unmarked BLOB, marks BLOB);"
    "CREATE TABLE IF NOT EXISTS usage_last (key TEXT PRIMARY KEY, result BLOB);"
)


class UsageIndex(SessionIndex):
    """The session index as ``usage`` uses it. Every method answers None (or nothing) when
    the index cannot be used: the report then reads the files."""

    def usage_last(self, key: str) -> bytes | None:
        """The last report's result when it was made for ``key`` (its files and their stamps)."""
        if self._db is None:
            return None
        try:
            found = self._db.execute("SELECT result FROM usage_last WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return None if found is None else found[0]

    def usable(self) -> bool:
        """False when there is no index this run (locked, read-only, no room)."""
        return self._db is not None

    def usage_empty(self) -> bool:
        """True when no file's usage is kept (a first run, or no index this run)."""
        if self._db is None:
            return True
        try:
            return self._db.execute("SELECT 1 FROM usage_files LIMIT 1").fetchone() is None
        except sqlite3.Error:
            return True

    def usage_rows(self) -> dict[str, tuple[Any, ...]]:
        """Every kept file: path -> (stamp, zone, harness, session, cwd, cells, unmarked, marks)."""
        if self._db is None:
            return {}
        try:
            query = "SELECT path, stamp, zone, harness, session, cwd, cells, unmarked, marks FROM usage_files"
            return {row[0]: row[1:] for row in self._db.execute(query)}
        except sqlite3.Error:
            return {}

    def usage_put(self, rows: list[tuple[Any, ...]], last: tuple[str, bytes] | None = None) -> bool:
        """Keep ``rows`` (path, stamp, zone, harness, session, cwd, cells, unmarked, marks),
        each replacing its path's row, in one transaction, and forget ``usage_last`` (then
        keep ``last``); False when nothing could be written."""
        if self._db is None:
            return False
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR REPLACE INTO usage_files (path, stamp, zone, harness, session, cwd, cells, unmarked, marks)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row for row in rows if _storable(*[v for v in row[:6] if isinstance(v, str)])],
            )
            db.execute("DELETE FROM usage_last")
            if last is not None:
                db.execute("INSERT INTO usage_last VALUES (?, ?)", last)
            db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            return False
        return True

    def usage_forget(self, paths: list[str]) -> None:
        """Drop the rows of files gone from a whole-store run."""
        if self._db is None or not paths:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("DELETE FROM usage_files WHERE path = ?", [(p,) for p in paths])
            self._db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
