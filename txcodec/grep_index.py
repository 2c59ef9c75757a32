"""The text index ``list --grep`` narrows its search with, once ``txcodec index --fts`` made
it: for each session file, which trigrams (three bytes) each of its 16 KB blocks holds, in a
contentless SQLite FTS5 table (trigram tokenizer, ``detail=none``), kept while the file's
size, modification time and inode are what they were.

``--grep TEXT`` means the file holds TEXT (:func:`txcodec.sessions._needles`: raw, or as
JSON escapes it; ASCII letters in any case). The index holds no text and no positions, so it
answers which blocks *may* hold a needle (every trigram of it is in the block), and those
blocks are read to say which do: the answer is exactly reading every file's, for the cost of
reading a few blocks. A file's text is its bytes ASCII lower-cased, one character a byte
(Latin-1); a block is :data:`BLOCK` bytes and the :data:`OVERLAP` bytes after it, so a needle
of up to ``OVERLAP + 1`` bytes lies whole in some block, and a longer one starts with such a
piece. What the index cannot narrow is read as without it: a needle shorter than three bytes
(trigrams cannot narrow it), and files not held as they are now (changed or new since, a NUL
byte, larger than :data:`MAX_BYTES`); ``list --grep`` adds the changed and new ones as it
reads them. A ``.zst`` file the index names is read whole (its blocks are of the
decompressed text).

A contentless table (SQLite before 3.43) cannot drop a row without its text: the rows of a
changed or deleted file stay behind, stale (no part of a held file names them, so they never
match). A file that only grew (the text held, whose SHA-256 is kept, is the start of its text
now: a session being written) keeps the rows whose block and overlap it held whole, and only
the blocks from there on are added. ``txcodec index --fts`` makes the index again when the
stale rows outnumber the live ones (and :data:`COMPACT_MIN`).

One database next to the session index (``grep.sqlite3``), mode 0600 (it tells which texts a
session holds); ``txcodec index --clear`` removes it, ``--no-index`` passes it by. Damaged or
written by another format, it is made again empty (never trusted)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from collections.abc import Iterable
from pathlib import Path

from . import session_index
from .kit.store import utf8_name

FORMAT = 4
MAX_BYTES = 64 << 20  # larger files are searched by reading them each time (memory stays flat)
BLOCK = 16 << 10  # bytes of a file a row of the index stands for
OVERLAP = 255  # bytes of the next block a row holds too: needles up to OVERLAP + 1 lie whole in a row
_SHIFT = 20  # a row's number: its part's number << _SHIFT | the block's (MAX_BYTES / BLOCK < 2**_SHIFT)
_TRIGRAM = 3
_QUERY_TRIGRAMS = 64  # at most this many of a needle's trigrams are asked for (fewer only widen)
COMMIT_BYTES = 256 << 20  # a run adding more text commits each time it has added this much
COMPACT_MIN = 10000  # ``index --fts`` makes the index again past this many stale rows


def default_path() -> Path:
    """``grep.sqlite3`` in the session index's folder."""
    return session_index.default_path().with_name("grep.sqlite3")


def clear(path: Path | None = None) -> list[Path]:
    """Remove the text index (and its WAL files); the files removed."""
    return session_index.clear(path or default_path())


def exists(path: Path | None = None) -> bool:
    """Whether ``txcodec index --fts`` made the text index (``list --grep`` then uses it)."""
    return (path or default_path()).is_file()


def _trigrams(needle: bytes) -> list[str]:
    """The distinct trigrams of the needle's first ``OVERLAP + 1`` bytes (the part that lies
    whole in one row), as the Latin-1 characters the index holds; at most _QUERY_TRIGRAMS."""
    head = needle[: OVERLAP + 1].decode("latin-1")
    found = dict.fromkeys(head[k : k + _TRIGRAM] for k in range(len(head) - _TRIGRAM + 1))
    return list(found)[:_QUERY_TRIGRAMS]


def _query(needles: tuple[bytes, ...]) -> str:
    """The FTS5 query for the rows holding every trigram of one of ``needles``."""
    return " OR ".join(
        "(" + " AND ".join('"' + t.replace('"', '""') + '"' for t in _trigrams(n)) + ")" for n in needles
    )


class Found:
    """The files the index says may hold a needle, and which of their blocks."""

    def __init__(self, blocks: dict[str, list[int]], needles: tuple[bytes, ...]) -> None:
        self.blocks = blocks
        self.needles = needles
        # one trigram each: a row holding it holds the needle (blocks are exact)
        self.exact = all(len(n) == _TRIGRAM for n in needles)
        self.after = max(OVERLAP, max(len(n) for n in needles) - 1)  # read past a block's end

    def holds(self, path: str) -> bool | None:
        """Whether the file (held by the index as it is now) holds a needle, reading only its
        candidate blocks; None for a ``.zst`` file the index names (read it whole)."""
        blocks = self.blocks.get(path)
        if not blocks:
            return False
        if self.exact:
            return True
        if path.endswith(".zst"):
            return None
        return _in_blocks(path, blocks, self.needles, self.after)


def _in_blocks(path: str, blocks: list[int], needles: tuple[bytes, ...], after: int) -> bool:
    """Whether one of ``needles`` lies in the file from one of ``blocks`` on (a needle found
    in a block starts in it: the block and ``after`` bytes past it are read), runs of
    neighbouring blocks read at once."""
    blocks = sorted(blocks)
    runs: list[tuple[int, int]] = []
    first = last = blocks[0]
    for block in blocks[1:]:
        if block != last + 1:
            runs.append((first, last + 1))
            first = block
        last = block
    runs.append((first, last + 1))
    # os.pread on a descriptor: thousands of files a run, each a read or two (a FIFO or device,
    # opened without blocking, holds nothing, as for ``_contains``)
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        for first, end in runs:
            window = os.pread(fd, (end - first) * BLOCK + after, first * BLOCK)
            # a needle with no capital letter is most often in the text as it is: looked for
            # there first, the lower-cased copy made only when it is not
            if any(n in window for n in needles if n == n.lower()):
                return True
            window = window.lower()
            if any(n in window for n in needles):
                return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class GrepIndex:
    """The open text index: :meth:`held` the files it holds as they are now, :meth:`matching`
    those of them that may hold a needle, :meth:`add` a file's text read now; :meth:`close`
    commits. ``compact``: made again empty first when the rows of files changed or gone since
    outnumber the others (``txcodec index --fts``).

    ``files``: each file held, its stamp, and the digest of its text (so that a file that only
    grew keeps the rows of its blocks the growth did not reach). ``parts``: the file's rows,
    one part a number (``id``, the high bits of a row's number) and the blocks of it that are
    still the file's (``first`` to ``end``); a row of a part or block no longer listed is
    stale, and ``stale`` counts them."""

    def __init__(self, path: Path | None = None, compact: bool = False) -> None:
        self.path = path or default_path()
        self._compact = compact
        self._reading_only = False  # another run was writing when this one began
        self._db = self._open()
        self._files: dict[str, tuple[int, int, int]] | None = None  # path: size, mtime, inode
        self._written = 0  # bytes of text added this run
        self._committed = 0  # of them, committed (a long build commits every COMMIT_BYTES)

    @property
    def writable(self) -> bool:
        """Whether this run can add to the index (open, and no other run was writing it)."""
        return self._db is not None and not self._reading_only

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
                    "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER,"
                    " length INTEGER, digest BLOB);"
                    "CREATE TABLE parts (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, first INTEGER, end INTEGER);"
                    "CREATE INDEX parts_path ON parts (path);"
                    "CREATE TABLE stale (rows INTEGER);"
                    "INSERT INTO stale VALUES (0);"
                    "CREATE VIRTUAL TABLE texts USING fts5(body, content='', detail=none, columnsize=0,"
                    " tokenize='trigram case_sensitive 1');"
                    f"PRAGMA user_version={FORMAT};"
                    "COMMIT;"
                )
            elif version != FORMAT:
                raise sqlite3.DatabaseError("another format")
            # One transaction for the run (closed by close). A search does not wait for another
            # run that writes: it reads the index as that run found it, and adds nothing.
            if self._compact:
                db.execute("BEGIN IMMEDIATE")
            else:
                db.execute("PRAGMA busy_timeout = 0")
                try:
                    db.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError:
                    db.execute("BEGIN")
                    self._reading_only = True
                db.execute(f"PRAGMA busy_timeout = {session_index.BUSY_MS}")
            if self._compact and self._stale(db) > max(self._rows(db), COMPACT_MIN):
                db.execute("DELETE FROM files")
                db.execute("DELETE FROM parts")
                db.execute("UPDATE stale SET rows = 0")
                db.execute("INSERT INTO texts (texts) VALUES ('delete-all')")
                db.execute("DELETE FROM sqlite_sequence")
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _rows(db: sqlite3.Connection) -> int:
        return db.execute("SELECT coalesce(sum(end - first), 0) FROM parts").fetchone()[0]

    @staticmethod
    def _stale(db: sqlite3.Connection) -> int:
        return db.execute("SELECT rows FROM stale").fetchone()[0]

    def _held_files(self) -> dict[str, tuple[int, int, int]]:
        if self._files is None:
            assert self._db is not None
            found = self._db.execute("SELECT path, size, mtime_ns, inode FROM files")
            self._files = {p: (s, m, n) for p, s, m, n in found}
        return self._files

    def held(self, paths: Iterable[str], known: dict[str, tuple[int, ...]] | None = None) -> set[str]:
        """Those of ``paths`` whose text the index holds as the file is now (``known``: files
        statted a moment ago by the caller, their size, mtime and inode first; the others
        statted here)."""
        if self._db is None:
            return set()
        wanted = paths if isinstance(paths, (set, frozenset, dict)) else set(paths)
        get, stamp = (known or {}).get, session_index.stamp
        try:
            # each file the index holds compared as it comes (a warm --grep asks of them all)
            if self._files is not None:
                rows: Iterable[tuple[str, int, int, int]] = ((p, *held) for p, held in self._files.items())
            else:
                rows = self._db.execute("SELECT path, size, mtime_ns, inode FROM files")
            return {p for p, s, m, n in rows if p in wanted and ((get(p) or stamp(p)) or ())[:3] == (s, m, n)}
        except sqlite3.Error:
            return set()

    def matching(self, needles: tuple[bytes, ...]) -> Found | None:
        """The files the index holds that may hold one of ``needles``, with their blocks that
        may (valid for those :meth:`held` says are current); None when a needle is too short
        for trigrams."""
        if self._db is None or any(len(n) < _TRIGRAM or b"\0" in n for n in needles):
            return None
        try:
            blocks: dict[str, list[int]] = {}
            mask = (1 << _SHIFT) - 1
            # each matching row with its part: the part's number is the row's high bits
            query = (
                "SELECT t.rowid, p.path, p.first, p.end FROM texts AS t JOIN parts AS p"
                f" ON p.id = t.rowid >> {_SHIFT} WHERE texts MATCH ?"
            )
            for row, path, first, end in self._db.execute(query, (_query(needles),)):
                if first <= row & mask < end:  # else stale
                    blocks.setdefault(path, []).append(row & mask)
        except sqlite3.Error:
            return None
        return Found(blocks, needles)

    def add(self, path: str, text: bytes, stamp: tuple[int, int, int] | None) -> None:
        """Hold ``text`` (the file's bytes, ASCII lower-cased) for the file as it was when
        read (``stamp``, taken before); a text with a NUL byte (SQLite's end of text) or
        larger than MAX_BYTES is not held. A file that only grew since it was held keeps the
        rows whose blocks (and overlap) it held whole; only the blocks after are added."""
        if not self.writable or stamp is None or len(text) > MAX_BYTES or b"\0" in text or not utf8_name(path):
            return
        db = self._db
        assert db is not None
        try:
            db.execute("SAVEPOINT one_file")  # all of the file's rows, or none
        except sqlite3.Error:
            return
        try:
            old = db.execute("SELECT length, digest FROM files WHERE path = ?", (path,)).fetchone()
            blocks = max(1, -(-len(text) // BLOCK))
            keep = 0  # the blocks kept: those whose rows the file held whole
            if old is not None and len(text) >= old[0] and hashlib.sha256(text[: old[0]]).digest() == old[1]:
                keep = blocks if len(text) == old[0] else max(0, (old[0] - OVERLAP) // BLOCK)
            self._drop(path, keep)
            db.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                (path, *stamp, len(text), hashlib.sha256(text).digest()),
            )
            if keep < blocks:
                part = db.execute("INSERT INTO parts (path, first, end) VALUES (?, ?, ?)", (path, keep, blocks))
                assert part.lastrowid is not None
                high = part.lastrowid << _SHIFT
                body = text.decode("latin-1")
                db.executemany(
                    "INSERT INTO texts (rowid, body) VALUES (?, ?)",
                    ((high | b, body[b * BLOCK : (b + 1) * BLOCK + OVERLAP]) for b in range(keep, blocks)),
                )
            db.execute("RELEASE one_file")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK TO one_file")
                db.execute("RELEASE one_file")
            return
        if self._files is not None:
            self._files[path] = stamp
        self._written += len(text)
        if self._written - self._committed > COMMIT_BYTES:  # the log bounded, the work so far kept
            try:
                db.execute("COMMIT")
                self._committed = self._written
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error:  # another run has it now: this one adds no more
                db.close()
                self._db = None

    def _drop(self, path: str, keep: int = 0) -> None:
        """The file's rows of blocks from ``keep`` on made stale."""
        assert self._db is not None
        dropped = 0
        for i, first, end in self._db.execute("SELECT id, first, end FROM parts WHERE path = ?", (path,)).fetchall():
            if end > keep:
                dropped += end - max(first, keep)
                if first >= keep:
                    self._db.execute("DELETE FROM parts WHERE id = ?", (i,))
                else:
                    self._db.execute("UPDATE parts SET end = ? WHERE id = ?", (keep, i))
        if dropped:
            self._db.execute("UPDATE stale SET rows = rows + ?", (dropped,))

    def forget(self, keep: set[str]) -> None:
        """Let go of the files not in ``keep`` (gone from the stores): their rows stay,
        stale, until ``txcodec index --fts`` makes the index again."""
        if not self.writable:
            return
        try:
            for path in [p for p in self._held_files() if p not in keep]:
                self._drop(path)
                self._db.execute("DELETE FROM files WHERE path = ?", (path,))
                del self._held_files()[path]
        except sqlite3.Error:
            pass

    def count(self) -> int:
        """How many files the index holds."""
        if self._db is None:
            return 0
        try:
            return self._db.execute("SELECT count(*) FROM files").fetchone()[0]
        except sqlite3.Error:
            return 0

    def stale(self) -> int:
        """How many rows the index keeps for no file's block (changed or gone since)."""
        if self._db is None:
            return 0
        try:
            return self._stale(self._db)
        except sqlite3.Error:
            return 0

    def close(self) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("COMMIT")
            if self._written:  # the write-ahead log given back (a first build leaves it as large as the index)
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
        finally:
            self._db.close()
            self._db = None
