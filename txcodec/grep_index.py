"""The text index ``list --grep`` answers from, once ``txcodec index --fts`` made it: each
session file's bytes in an SQLite FTS5 table with the trigram tokenizer, kept while the
file's size, modification time and inode are what they were.

``--grep TEXT`` means the file holds TEXT (:func:`txcodec.sessions._needles`: raw, or as
JSON escapes it; ASCII letters in any case). The index answers exactly that: a file's
text is stored as its bytes, ASCII lower-cased, one character a byte (Latin-1), and a
trigram phrase query of a needle of three bytes or more matches exactly the files that
hold it as a substring (case-sensitive trigrams). What the index cannot answer is read as
without it: a needle shorter than three bytes (trigrams cannot narrow it), and files not
held as they are now (changed or new since, a NUL byte, larger than
:data:`MAX_BYTES`); ``list --grep`` adds the changed and new ones as it reads them.

One database next to the session index (``grep.sqlite3``), mode 0600 (it holds every
text of every session); ``txcodec index --clear`` removes it, ``--no-index`` passes it by.
Damaged or written by another format, it is made again empty (never trusted)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from . import session_index
from .kit.store import utf8_name

FORMAT = 1
MAX_BYTES = 64 << 20  # larger files are searched by reading them each time (memory stays flat)
_TRIGRAM = 3


def default_path() -> Path:
    """``grep.sqlite3`` in the session index's folder."""
    return session_index.default_path().with_name("grep.sqlite3")


def clear(path: Path | None = None) -> list[Path]:
    """Remove the text index (and its WAL files); the files removed."""
    return session_index.clear(path or default_path())


def exists(path: Path | None = None) -> bool:
    """Whether ``txcodec index --fts`` made the text index (``list --grep`` then uses it)."""
    return (path or default_path()).is_file()


class GrepIndex:
    """The open text index: :meth:`held` the files it holds as they are now, :meth:`matching`
    those of them holding a needle, :meth:`add` a file's text read now; :meth:`close` commits."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._db = self._open()
        self._added = 0

    def _open(self) -> sqlite3.Connection | None:
        for attempt in range(2):
            try:
                return self._connect()
            except sqlite3.OperationalError:
                return None  # locked, read-only, no room: every file is read this run
            except sqlite3.DatabaseError:
                if attempt:
                    return None
                with contextlib.suppress(OSError):
                    clear(self.path)  # damaged or another format's: made again
        return None

    def _connect(self) -> sqlite3.Connection:
        db = session_index.open_private(self.path)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                db.executescript(
                    "BEGIN;"
                    "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT UNIQUE, size INTEGER,"
                    " mtime_ns INTEGER, inode INTEGER);"
                    "CREATE VIRTUAL TABLE texts USING fts5(body, tokenize='trigram case_sensitive 1');"
                    f"PRAGMA user_version={FORMAT};"
                    "COMMIT;"
                )
            elif version != FORMAT:
                raise sqlite3.DatabaseError("another format")
        except BaseException:
            db.close()
            raise
        db.execute("BEGIN IMMEDIATE")  # one transaction for the run (closed by close)
        return db

    def held(self, paths: Iterable[str]) -> set[str]:
        """Those of ``paths`` whose text the index holds as the file is now."""
        if self._db is None:
            return set()
        try:
            stored = {p: (s, m, i) for p, s, m, i in self._db.execute("SELECT path, size, mtime_ns, inode FROM files")}
        except sqlite3.Error:
            return set()
        return {p for p in paths if p in stored and session_index.stamp(p) == stored[p]}

    def matching(self, needles: tuple[bytes, ...]) -> set[str] | None:
        """The files the index holds one of ``needles`` in (valid for those :meth:`held`
        says are current); None when a needle is too short for trigrams."""
        if self._db is None or any(len(n) < _TRIGRAM for n in needles):
            return None
        query = " OR ".join('"' + n.decode("latin-1").replace('"', '""') + '"' for n in needles)
        try:
            found = self._db.execute(
                "SELECT files.path FROM texts JOIN files ON files.id = texts.rowid WHERE texts MATCH ?", (query,)
            )
            return {p for (p,) in found}
        except sqlite3.Error:
            return None

    def add(self, path: str, text: bytes, stamp: tuple[int, int, int] | None) -> None:
        """Hold ``text`` (the file's bytes, ASCII lower-cased) for the file as it was when
        read (``stamp``, taken before); a text with a NUL byte (SQLite's end of text) is not held."""
        if self._db is None or stamp is None or b"\0" in text or not utf8_name(path):
            return
        try:
            found = self._db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
            if found is not None:
                self._db.execute("DELETE FROM texts WHERE rowid = ?", found)
                self._db.execute("DELETE FROM files WHERE id = ?", found)
            rowid = self._db.execute(
                "INSERT INTO files (path, size, mtime_ns, inode) VALUES (?, ?, ?, ?)", (path, *stamp)
            ).lastrowid
            self._db.execute("INSERT INTO texts (rowid, body) VALUES (?, ?)", (rowid, text.decode("latin-1")))
            self._added += 1
        except sqlite3.Error:
            pass

    def forget(self, keep: set[str]) -> None:
        """Drop the texts of files not in ``keep`` (gone from the stores)."""
        if self._db is None:
            return
        try:
            gone = [(i,) for i, p in self._db.execute("SELECT id, path FROM files") if p not in keep]
            self._db.executemany("DELETE FROM texts WHERE rowid = ?", gone)
            self._db.executemany("DELETE FROM files WHERE id = ?", gone)
        except sqlite3.Error:
            pass

    def count(self) -> int:
        if self._db is None:
            return 0
        try:
            return self._db.execute("SELECT count(*) FROM files").fetchone()[0]
        except sqlite3.Error:
            return 0

    def close(self) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
        finally:
            self._db.close()
            self._db = None
