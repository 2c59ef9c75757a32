"""Sessions as a Parquet dataset: ``txcodec export --to parquet -o DIR``.

The layout is one folder per table, partitioned Hive-style by harness and by the day the
session started::

    DIR/messages/harness=codex/date=2026-11-30/<part>.parquet

Sources are read by a pool of processes (:func:`txcodec.batch.run`, as batch conversion
is), each handing back its rows as JSON lines; this process gathers them by partition and
writes one file per table and partition (a file per session, or per worker task, would
spend most of the time on Parquet's per-file overhead). The export is incremental: the manifest
(``DIR/_txcodec_manifest.json``) records each source's path, size, mtime, sha256, the
files holding its rows and a digest of its rows in each table. A source whose size and
mtime match, or whose bytes hash the same, is skipped; a changed one is read again, and
its rows in each table where they changed are taken out of the file that held them (which
is rewritten with the other sources' rows, or removed when nothing is left) and written
anew; a table where they came out the same keeps its file untouched.
A source gone from the selection keeps its rows: it may just not have been named this time.
The Parquet files are written by a :class:`Writer`: in this process, or (the command's)
a :class:`ForkedWriter`, a child that imports pyarrow and writes while this process lists
and reads.

DuckDB, pyarrow, pandas, Spark and Ray read the folders as they are
(``read_parquet('DIR/messages/**/*.parquet', hive_partitioning = true)``). A source that
cannot be read is reported with its reason and never stops the others.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from itertools import groupby
from pathlib import Path
from stat import S_ISDIR
from stat import S_ISREG
from typing import Any

import msgspec

from ..batch import Outcome
from ..core.atomic import write_atomic
from ..core.errors import TxcodecError
from . import columnar

MANIFEST = "_txcodec_manifest.json"
CHUNK = None  # sources per worker task (None: batch.run's default)
# Bytes of changed sources read in this process rather than by a pool (the daily run's few
# grown sessions): forking the workers and feeding them costs more than reading this much.
IN_PROCESS = 1 << 20
BUFFER = 256 << 20  # bytes of rows gathered before they are written out (memory stays bounded)
SEND = 32 << 20  # bytes of rows in one ask to the forked writer
HELD = 256 << 20  # bytes of Arrow rows a take-out holds for their files' next write (_PartFiles)


class _Entry(msgspec.Struct):
    size: int
    mtime: float
    sha256: str
    key: str  # the session_key of the source's main conversation
    files: list[str] = msgspec.field(default_factory=list)
    # the source's side folder as it was read (see _side_stamp); None: it had none
    side: dict[str, tuple[int, float]] | None = None
    # by table, the digest of the rows the source has there (_rows_digest): a changed source
    # whose rows in a table come out the same again is left in that table's file untouched
    # (None: an export that kept none, whose every file is rewritten when the source changes)
    digests: dict[str, str] | None = None


@dataclass
class ExportResult:
    """What an export did, by source path."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)  # rows written, by table


def _digest(path: Path) -> str:
    """The file's sha256; a folder session's over its files' names and contents, in order."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if file is not path:
            digest.update(str(file.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
        with file.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _side_folder(source: str) -> str:
    """The folder of side files that rides with a session file: the one named as the file
    without its extension, beside it (Claude Code's ``<sid>/`` of subagents and tool
    results beside ``<sid>.jsonl``). Most sources have none."""
    return os.path.splitext(source)[0]


def _side_stamp(source: str) -> dict[str, tuple[int, float]] | None:
    """Every entry of the source's side folder, by its path in the folder: a file's size
    and mtime, a folder's mtime (size -1). None when there is no such folder."""
    top = _side_folder(source)
    try:
        if not S_ISDIR(os.lstat(top).st_mode):
            return None
    except OSError:
        return None
    stamp: dict[str, tuple[int, float]] = {"": (-1, os.stat(top).st_mtime)}
    folders = [""]
    while folders:
        rel = folders.pop()
        with os.scandir(os.path.join(top, rel)) as entries:
            for entry in entries:
                name = os.path.join(rel, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    stamp[name] = (-1, entry.stat(follow_symlinks=False).st_mtime)
                    folders.append(name)
                else:
                    found = _file_stat(os.path.join(top, name))
                    stamp[name] = (found.st_size, found.st_mtime)
    return stamp


def _file_stat(path: str) -> os.stat_result:
    """A side file's stat: a symlinked one is read through, so its target's; a dangling
    link's own (which stays the same while it dangles)."""
    try:
        return os.stat(path)
    except OSError:
        return os.lstat(path)


def _side_unchanged(source: str, stamp: dict[str, tuple[int, float]] | None) -> bool:
    """Whether the side folder is as its stamp says, without listing it: a file added to
    or removed from a folder changes the folder's mtime, and a file that changed its own
    size or mtime; so only the stamped entries are looked at (and, with no stamp, whether
    a folder has appeared)."""
    top = _side_folder(source)
    if stamp is None:
        # most sources have none: access(2) says that nothing is there without the
        # exception a failed stat raises, which costs as much as the call (2,000 a day)
        return not (os.access(top, os.F_OK) and os.path.isdir(top))
    try:
        for rel, (size, mtime) in stamp.items():
            found = (
                _file_stat(os.path.join(top, rel)) if size >= 0 else os.lstat(os.path.join(top, rel) if rel else top)
            )
            if found.st_mtime != mtime or (size >= 0 and found.st_size != size):
                return False
    except OSError:  # an entry gone
        return False
    return True


def read_source(
    path: str | os.PathLike[str], sha256: str | None = None, harness: str | None = None
) -> tuple[Any, columnar.Source]:
    """Load one native session into Common, with the :class:`columnar.Source` naming it
    (``harness`` when known, as a store's listing knows it, saves detecting it)."""
    session, source = _load(os.fspath(path), sha256, harness)
    return _common(session), source


def _common(session: Any) -> Any:
    from .. import api
    from ..model.loss import UnreadLoss

    # the tables hold no loss report, so none is gathered
    return api.to_common(session, UnreadLoss())


# Whether a session file whose harness reads it as it is decoded (Claude Code, Codex) is
# opened once (_load_mapped); False: the plain path (_load_plain), which a test compares it with
ONE_READ = True
# A session file this size or less is read into memory rather than mapped (_load_mapped):
# one read(2) costs less than setting up and taking down a map and its page faults, and a
# conversation holds more than its file's bytes anyway
READ_WHOLE = 1 << 20


def _load(source: str, sha256: str | None, harness: str | None) -> tuple[Any, columnar.Source]:
    """The source's native session, not yet read, and its :class:`columnar.Source`."""
    loaded = _load_mapped(source, sha256, harness) if ONE_READ else None
    return loaded if loaded is not None else _load_plain(source, sha256, harness)


def _load_plain(source: str, sha256: str | None, harness: str | None) -> tuple[Any, columnar.Source]:
    """Any source: stat, loaded (read once, as it is decoded, when its harness can, as
    convert and a page read it) and hashed, each on its own."""
    from .. import api

    path = Path(source)
    stat = path.stat()
    session = api.load_once(path, harness)
    return session, columnar.Source(session.harness, str(path), sha256 or _digest(path), stat.st_size, stat.st_mtime)


def _load_mapped(source: str, sha256: str | None, harness: str | None) -> tuple[Any, columnar.Source] | None:
    """A JSON Lines session file whose harness reads it as it is decoded, opened once:
    its size and mtime from that open file, its bytes read (a large file: mapped) once,
    hashed and then decoded (the plain path stats, opens, hashes and maps it, each on its
    own). What is read is the size stat'ed, so all three describe the same bytes even
    when the file grows while read. A ``sha256`` given is the parent's, which hashed the
    file to tell it changed (the daily run), as on the plain path. ``None`` for anything
    else (and for a file that cannot be opened or read: the plain path says why)."""
    import mmap

    from ..kit.load import named_by_store
    from ..kit.load import streamed_data

    path = Path(source)
    if path.suffix != ".jsonl" or (harness is not None and not _streams(harness)):
        return None
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode) or not stat.st_size:  # an empty file cannot be mapped
            return None
        if stat.st_size <= READ_WHOLE:
            data: Any = os.read(fd, stat.st_size)
            if len(data) != stat.st_size:  # cut shorter since the stat
                return None
        else:
            data = mmap.mmap(fd, stat.st_size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: cut shorter since the stat
        return None
    finally:
        os.close(fd)  # a map holds its own
    # a SQLite database (opencode, Kilo) is read by its store: kit.load.split_database tells
    session = None if data[:6] == b"SQLite" else streamed_data(data, path, harness or named_by_store(path, data))
    if session is None:
        if isinstance(data, mmap.mmap):
            data.close()
        return None
    return session, columnar.Source(session.harness, str(path), sha256 or _sha256(data), stat.st_size, stat.st_mtime)


def _streams(harness: str) -> bool:
    from ..kit import registry

    return registry.get(harness).read_streams


def _sha256(data: Any) -> str:
    """The sha256 of a file's bytes (read, or mapped), as :func:`_digest` takes it, 1 MiB
    at a time: a mapped file's pages already hashed are given back (as the reader gives
    back those it has read), so a large file is never all held."""
    import mmap

    digest = hashlib.sha256()
    release = getattr(data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
    view, step = memoryview(data), 1 << 20  # a multiple of the page size
    for start in range(0, len(data), step):
        digest.update(view[start : start + step])
        if release is not None and start + step < len(data):
            release(mmap.MADV_DONTNEED, start, step)
    view.release()
    return digest.hexdigest()


class ExportJob(msgspec.Struct, frozen=True):
    """One source for a worker: its path, the hash the parent took (a new source is
    hashed by the worker, in parallel), its harness if known."""

    source: str
    sha256: str | None = None
    harness: str | None = None


class _Rows(msgspec.Struct):
    """A worker's rows of one source, for the parent to write: JSON lines by table."""

    key: str
    harness: str
    date: str
    size: int  # the source as it was read
    mtime: float
    sha256: str
    lines: dict[str, bytes]
    counts: dict[str, int]
    digests: dict[str, str]  # by table, _rows_digest of lines
    side: dict[str, tuple[int, float]] | None = None  # the side folder as it was read (_side_stamp)


def source_lines(path: str | os.PathLike[str], sha256: str | None = None, harness: str | None = None) -> _Rows:
    """One source read into every table's rows, as JSON lines (see :func:`read_source`)."""
    path = os.fspath(path)
    loaded = _load_mapped(path, sha256, harness) if ONE_READ else None
    if loaded is None:
        # stamped before it is read, as its size and time are: a change while it is read shows next time
        side = None if os.path.isdir(path) else _side_stamp(path)
        loaded = _load_plain(path, sha256, harness)
    else:  # a file, read or mapped: stamped before the reader reads the side files
        side = _side_stamp(path)
    session, source = loaded
    conversation = _common(session)
    rows = columnar.rows(conversation, source)
    lines = {name: columnar.encode_rows(part) for name, part in rows.items() if part}
    return _Rows(
        key=rows["sessions"][0]["session_key"],
        harness=source.harness,
        date=columnar.day(conversation.meta.started_at),
        size=source.size,
        mtime=source.mtime,
        sha256=source.sha256,
        lines=lines,
        counts={name: len(part) for name, part in rows.items() if part},
        digests={name: _rows_digest(part) for name, part in lines.items()},
        side=side,
    )


def _rows_digest(lines: bytes) -> str:
    """What tells a source's rows in a table from the rows it had there: their JSON lines'
    BLAKE2b (128 bits; the rows are the source's own, so no one gains by a collision but
    its author, who would hide their own change)."""
    return hashlib.blake2b(lines, digest_size=16).hexdigest()


def export_one(job: ExportJob) -> Outcome:
    """Worker: one source read into the tables' rows (written by the parent, grouped by
    partition, so that files stay few and large whatever the chunking)."""
    data = source_lines(job.source, job.sha256, job.harness)
    return Outcome(source=job.source, status="converted", session_id=data.key, data=data)


def _write_parquet(table: Any, target: Path) -> None:
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    # no dictionary pages: on part files this size they cost a quarter of the write and a
    # third of the next read (a daily run reads and writes each file it touches), and
    # zstd finds the repeats they would (the same size; a 13,000-row file a quarter more)
    pq.write_table(table, tmp, compression="zstd", use_dictionary=False)
    os.replace(tmp, target)  # a reader never sees half a file


class _Parts:
    """Rows gathered by partition (table, harness, date) and written a file per partition
    when enough are buffered and at the end, by the writer; a changed source's rows taken
    out of the files that held them, table by table, where they changed."""

    def __init__(self, manifest: dict[str, _Entry], writer: Writer):
        self.manifest, self.writer = manifest, writer
        self.lines: dict[tuple[str, str, str], list[bytes]] = {}
        self.owners: dict[tuple[str, str, str], list[str]] = {}
        self.buffered = 0
        # a partition's new rows go into a file of it that is rewritten anyway (one that
        # held a changed session): one write, not two, and no new file a day
        self.into: dict[tuple[str, str, str], str] = {}

    def take_out(self, key: str, rels: list[str]) -> None:
        """Have the writer take the rows of session ``key`` out of the files ``rels``."""
        if not rels:
            return
        self.writer.take_out(rels, {key})
        for rel in rels:
            parts = rel.split("/")
            if len(parts) == 4 and parts[1].startswith("harness=") and parts[2].startswith("date="):
                self.into.setdefault((parts[0], parts[1][len("harness=") :], parts[2][len("date=") :]), rel)

    def add(self, source: str, rows: _Rows, old: _Entry | None = None) -> None:
        """The rows of ``source`` (its manifest entry already made anew), in place of those
        its entry ``old`` says it had: a table where they are the same rows in the same
        partition keeps its file as it is (a session that went on by a turn has the same
        rows in most tables), the others' are taken out and written anew. The daily run
        then reads and writes only the files whose rows changed."""
        lines = rows.lines
        if old is not None:
            same, gone, kept = old.digests or {}, [], self.manifest[source].files
            for rel in old.files:
                name = rel.split("/", 1)[0]
                if (
                    name in same
                    and same[name] == rows.digests.get(name)
                    and rel.startswith(f"{name}/harness={rows.harness}/date={rows.date}/")
                ):
                    kept.append(rel)
                else:
                    gone.append(rel)
            self.take_out(old.key, gone)
            if kept:
                held = {rel.split("/", 1)[0] for rel in kept}
                lines = {name: part for name, part in lines.items() if name not in held}
        for name, part in lines.items():
            group = (name, rows.harness, rows.date)
            self.lines.setdefault(group, []).append(part)
            self.owners.setdefault(group, []).append(source)
            self.buffered += len(part)
        if self.buffered > BUFFER:
            self.flush()

    def flush(self) -> None:
        groups, self.lines, self.buffered = self.lines, {}, 0
        if not groups:
            return
        part = f"part-{uuid.uuid4().hex}.parquet"
        rels = {
            group: self.into.pop(group, None) or f"{group[0]}/harness={group[1]}/date={group[2]}/{part}"
            for group in groups
        }
        files = {}
        for group in list(groups):  # each partition's lines let go as soon as they are joined
            files[rels[group]] = (group[0], b"".join(groups.pop(group)))
        self.writer.write(files)
        del files
        for group, rel in rels.items():
            for source in dict.fromkeys(self.owners.pop(group)):
                self.manifest[source].files.append(rel)


class Writer:
    """Where the Parquet work of an export runs: here, in this process. Files are written
    in the order asked; :meth:`close` returns once all are, raising what went wrong."""

    def __init__(self) -> None:
        self.out, self.jobs = Path(), 1  # the export's folder and --jobs, set when it starts
        self._files: _PartFiles | None = None

    def _parts(self) -> _PartFiles:
        if self._files is None:
            self._files = _PartFiles(self.out, self.jobs)
        return self._files

    def take_out(self, rels: list[str], keys: set[str]) -> None:
        _as_ours(self._parts().take_out, rels, keys)

    def write(self, files: dict[str, tuple[str, bytes]]) -> None:
        _as_ours(self._parts().write, files)

    def close(self) -> None:
        _as_ours(self._parts().close)

    def abort(self) -> None:
        pass


class ForkedWriter(Writer):
    """The Parquet work in a forked child, which imports pyarrow (about a tenth of a daily
    run) and rewrites and writes the part files while this process lists the stores and
    reads the changed sessions: the command's two halves overlap on a second core. Asks
    go down a pipe, in order; :meth:`close` waits for the child to finish them and raises
    the first thing that went wrong there, as txcodec's own error of its kind. Made before the
    export starts (the command makes it before it lists the stores), then handed to
    :func:`export_parquet`."""

    def __init__(self, waiting: Callable[[], None] | None = None) -> None:
        """``waiting`` runs here once every ask is sent, while the child finishes them
        (the command imports what its summary needs)."""
        super().__init__()
        self.waiting = waiting
        down_read, self._down = os.pipe()
        self._up, up_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into the caller's code
            os.close(self._down)
            os.close(self._up)
            status = 1
            try:
                _serve(down_read, up_write)
                status = 0
            finally:
                os._exit(status)
        os.close(down_read)
        os.close(up_write)
        self._open = True

    def _send(self, *message: Any) -> None:
        data = msgspec.msgpack.encode(message)
        try:
            _write_all(self._down, len(data).to_bytes(8, "little"))
            _write_all(self._down, data)  # not joined to its length: that would copy the rows once more
        except OSError:  # the child is gone: close() says why
            pass

    def take_out(self, rels: list[str], keys: set[str]) -> None:
        self._send("take_out", str(self.out), rels, sorted(keys), self.jobs)

    def write(self, files: dict[str, tuple[str, bytes]]) -> None:
        # in asks of about SEND bytes: each is encoded, sent and decoded on its own, so
        # neither process holds a second copy of the whole flush
        batch: dict[str, tuple[str, bytes]] = {}
        size = 0
        for rel in list(files):
            batch[rel] = files.pop(rel)
            size += len(batch[rel][1])
            if size >= SEND:
                self._send("write", str(self.out), batch, self.jobs)
                batch, size = {}, 0
        if batch:
            self._send("write", str(self.out), batch, self.jobs)

    def close(self) -> None:
        """Wait for the child's work (running ``waiting`` meanwhile); raise what failed there."""
        if not self._open:
            return
        self._send("close")
        try:
            if self.waiting is not None:
                self.waiting()
        finally:
            reply = _read_reply(self._up)
            self._end()
        if reply != b"ok":
            _raise_told(reply)

    def _end(self) -> None:
        """The child has no more to do: it ends at the end of its asks."""
        self._open = False
        os.close(self._down)
        os.close(self._up)
        os.waitpid(self.pid, 0)

    def abort(self) -> None:
        """End the child without waiting for its work (the export did not finish). It is
        stopped by a signal, not by the end of its asks: worker processes forked since
        hold the pipe's other end too. A file it was writing is left as its temporary
        file, which no reader of the dataset takes for a part. A closed writer is left as it is."""
        import signal

        if self._open:
            self._open = False
            os.close(self._down)
            os.close(self._up)
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:  # already gone
                pass
            os.waitpid(self.pid, 0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left and (chunk := os.read(fd, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reply(fd: int, reply: bytes) -> None:
    _write_all(fd, len(reply).to_bytes(8, "little") + reply)


def _read_reply(fd: int) -> bytes:
    """The child's answer, or b"" when it ended without one."""
    head = _read_exactly(fd, 8)
    return _read_exactly(fd, int.from_bytes(head, "little")) if len(head) == 8 else b""


def _serve(asks: int, replies: int) -> None:
    """The forked writer's loop: pyarrow first (while the parent lists), then each ask in
    order. After a failure the asks left are skipped; ``close`` is answered with ``ok``
    or the failure."""
    failure = None
    parts: _PartFiles | None = None
    try:
        columnar.schemas()  # imports pyarrow and builds the tables' schemas
        import pyarrow.json  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any failure is told to the parent
        failure = exc
    stream = os.fdopen(asks, "rb")
    while True:
        head = stream.read(8)
        if len(head) < 8:  # the parent gave up (abort) or ended
            return
        message = msgspec.msgpack.decode(stream.read(int.from_bytes(head, "little")))
        if message[0] == "close":
            break
        if failure is not None:
            continue
        try:
            if parts is None:  # every ask names the export's folder
                parts = _PartFiles(Path(message[1]), message[-1])
            if message[0] == "take_out":
                parts.take_out(message[2], set(message[3]))
            else:
                parts.write({rel: (name, data) for rel, (name, data) in message[2].items()})
        except Exception as exc:  # noqa: BLE001 - any failure is told to the parent
            failure = exc
    if failure is None and parts is not None:
        try:
            parts.close()
        except Exception as exc:  # noqa: BLE001 - any failure is told to the parent
            failure = exc
    _reply(replies, b"ok" if failure is None else _told(failure))


# What the forked writer's failure was, as the parent raises it: a bad part file (Arrow's
# errors are ValueErrors) or the file system's refusal are the user's to fix, as they are
# when this process writes; anything else is a bug
_FAILURES = {b"value": "InputError", b"os": "StoreError", b"bug": "InternalError"}


def _told(failure: BaseException) -> bytes:
    from ..core.errors import describe

    if isinstance(failure, (ValueError, OSError)):
        kind, text = (b"value" if isinstance(failure, ValueError) else b"os"), str(failure)
    else:
        kind, text = b"bug", describe(failure)
    return kind + b":" + text.encode("utf-8", "replace")


def _raise_told(reply: bytes) -> None:
    kind, _, text = reply.partition(b":")
    raise _ours(kind, text.decode("utf-8", "replace"))


def _ours(kind: bytes, text: str) -> TxcodecError:
    from ..core import errors

    if kind not in _FAILURES or not text:
        return errors.InternalError("the Parquet writer process ended unexpectedly")
    return getattr(errors, _FAILURES[kind])(text)


def _as_ours(work: Callable[..., None], *args: Any) -> None:
    """``work(*args)``, what pyarrow or the file system raise turned into txcodec's error
    of the same kind (as the forked writer's parent raises it)."""
    try:
        work(*args)
    except TxcodecError:
        raise
    except Exception as exc:  # noqa: BLE001 - the library raises only its own errors
        kind, _, text = _told(exc).partition(b":")
        raise _ours(kind, text.decode("utf-8", "replace")) from exc


def _load_manifest(out: Path) -> dict[str, _Entry]:
    try:
        return msgspec.json.decode((out / MANIFEST).read_bytes(), type=dict[str, _Entry])
    except FileNotFoundError:
        return {}
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise TxcodecError(f"{out / MANIFEST}: not a txcodec manifest ({exc}); choose an empty folder") from exc


class _PartFiles:
    """The part files of one export as they are written, here or in the forked writer.

    A take-out reads each file once and holds the rows of the sessions that stay; the
    file is written again when the rows that join it come (:meth:`write`: a partition's
    new rows go into its rewritten file, see ``_Parts``), else at :meth:`close`, with the
    rows that stay or removed when none do. So a rewritten file is written once, and an
    export that stops before :meth:`close` has changed no file it took rows out of (held
    rows past ``HELD`` bytes are written out at once: then the held file is read again
    when its rows come). A take-out from a file held already (another session's rows
    were taken out of it first) takes from the rows held."""

    def __init__(self, out: Path, jobs: int) -> None:
        self.out, self.jobs = out, jobs
        self.held: dict[str, Any] = {}
        self.held_bytes = 0

    def take_out(self, rels: list[str], keys: set[str]) -> None:
        """The rows of the sessions ``keys`` taken out of the files ``rels`` (one session's
        few files at a time, as the daily run asks: one after the other, on one thread)."""
        for rel in rels:
            if rel in self.held:
                table = self.held[rel]
                self.held_bytes -= table.nbytes
            else:
                table = self._read(rel)
            kept = _slices(table, _runs(table.column("session_key"), keys))
            self.held[rel] = kept
            self.held_bytes += kept.nbytes
        if self.held_bytes > HELD:
            self.close()

    def write(self, files: dict[str, tuple[str, bytes]]) -> None:
        """Each file of rows (JSON lines of one table) written as Parquet, after the rows
        held for it."""
        import pyarrow as pa

        def write(rel: str) -> None:
            name, lines = files[rel]
            table = columnar.table_from_json(name, lines)
            kept = self.held.pop(rel, None)
            if kept is None and (self.out / rel).exists():  # held, then written out (HELD)
                kept = self._read(rel)
            if kept is not None and kept.num_rows:
                table = pa.concat_tables([kept, table])
            _write_parquet(table, self.out / rel)

        # --jobs threads (Arrow encodes and compresses without the GIL) for much to write;
        # small files one after the other: their cost is mostly Python's, under the GIL,
        # and two threads took longer than one for a daily run's 16 (and the pool's import
        # with the logging it brings costs more than a few small files)
        if sum(len(lines) for _, lines in files.values()) < IN_PROCESS or self.jobs <= 1:
            for rel in files:
                write(rel)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            list(pool.map(write, files))

    def close(self) -> None:
        """Write the held files no rows joined."""
        held, self.held, self.held_bytes = self.held, {}, 0
        for rel, kept in held.items():
            if kept.num_rows:
                _write_parquet(kept, self.out / rel)
            else:
                (self.out / rel).unlink(missing_ok=True)

    def _read(self, rel: str) -> Any:
        """Part file ``rel``'s rows, in its table's schema (a file in an older one is cast)."""
        import pyarrow.parquet as pq

        # ParquetFile, not read_table, and slices, not a mask: both of those import pandas,
        # which costs more than the work (a cast imports pyarrow.compute: only when needed);
        # one thread: these files are small, and Arrow's pool costs more to start than it
        # saves; no pre-buffering: it coalesces reads for remote storage, and on a small
        # local file its extra copy is a fifth of the read
        table = pq.ParquetFile(self.out / rel, pre_buffer=False).read(use_threads=False)
        schema = columnar.schemas()[rel.split("/", 1)[0]]
        return table if table.schema == schema else table.cast(schema)


def _slices(table: Any, runs: list[tuple[int, int]]) -> Any:
    """The rows of ``table`` in the [start, end) ``runs``, in order."""
    import pyarrow as pa

    pieces = [table.slice(start, end - start) for start, end in runs]
    return pa.concat_tables(pieces) if pieces else table.slice(0, 0)


def _runs(column: Any, keys: set[str]) -> list[tuple[int, int]]:
    """The [start, end) ranges of the rows whose session key (``column``) is not one of
    ``keys`` (a source's rows sit together, so the ranges are few), walked once in plain
    Python: NumPy would cost more to import than these few thousand rows to walk."""
    kept: list[tuple[int, int]] = []
    row = 0
    for chunk in column.chunks:
        # a child's key is its main conversation's key + "/...": compare the part before
        for drop, run in groupby(key.split("/", 1)[0] in keys for key in chunk.to_pylist()):
            length = sum(1 for _ in run)
            if not drop:
                if kept and kept[-1][1] == row:  # a run that goes on from the chunk before
                    kept[-1] = (kept[-1][0], row + length)
                else:
                    kept.append((row, row + length))
            row += length
    return kept


def export_parquet(
    sources: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    harnesses: dict[str, str] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    writer: Writer | None = None,
) -> ExportResult:
    """Export every source session (native files of any harness) under ``out``.

    ``jobs`` processes read in parallel (default: the CPU count; 1 runs in this process)
    through :func:`txcodec.batch.run`, the machinery of batch conversion. Only sources that
    changed since the last export into ``out`` are read again. ``harnesses`` maps a path to
    its harness when it is known; ``on_outcome`` is told about every source as it is done
    (``converted``, ``skipped`` as unchanged, or ``failed`` with the reason). ``writer``
    is where the Parquet files are written (a :class:`ForkedWriter`; by default this
    process); the export closes it.
    """
    from .. import batch

    writer = writer or Writer()
    try:
        # fails early when pyarrow is missing; it is imported where the files are written
        columnar.require_pyarrow()
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        writer.out, writer.jobs = out, jobs or batch.default_jobs()
        result, manifest = _export(sources, out, jobs, harnesses, on_outcome, writer)
        encoded = msgspec.json.encode(manifest)  # final already: encoded while a forked writer still writes
        writer.close()  # every file written, or what failed raised: only then the manifest
    except BaseException:
        writer.abort()
        raise
    write_atomic(out / MANIFEST, encoded, overwrite=True)
    return result


# A POSIX path pathlib would write back as it is: not empty, no empty or "." component
# (as in "a//b", "./a", "a/./b", "a/"), at most one leading slash
_AS_PATHLIB = re.compile(r"(?!\./)(?!.*//)(?!.*/\./)(?!.*/\.?\Z)[^\0]+", re.DOTALL)


def _spelled(source: str | os.PathLike[str]) -> str:
    """The source as pathlib writes it, the manifest's key (a listing's 2,000 paths are
    already written so: only the others are made into a Path, which costs more than
    the stat that follows)."""
    if os.name == "posix" and isinstance(source, str) and _AS_PATHLIB.match(source):
        return source
    return str(Path(source))


def _export(
    sources: Iterable[str | os.PathLike[str]],
    out: Path,
    jobs: int | None,
    harnesses: dict[str, str] | None,
    on_outcome: Callable[[Outcome], None] | None,
    writer: Writer,
) -> tuple[ExportResult, dict[str, _Entry]]:
    from .. import batch

    manifest = _load_manifest(out)
    result = ExportResult()
    tell = on_outcome or (lambda outcome: None)
    todo: list[ExportJob] = []
    todo_bytes = 0  # a folder's own size says nothing: one counts as too much to read here
    for source in dict.fromkeys(map(_spelled, sources)):
        known = manifest.get(source)
        try:
            stat = os.stat(source)
            folder = S_ISDIR(stat.st_mode)
            # a session file's side folder (its subagents) can change without the file changing
            sides_same = known is not None and (folder or _side_unchanged(source, known.side))
            # a folder session (OpenHands) can change without its own size or time changing
            if sides_same and not folder and known.size == stat.st_size and known.mtime == stat.st_mtime:
                result.unchanged.append(source)
                tell(Outcome(source=source, status="skipped", reason="unchanged"))
                continue
            # a known source may only have been touched: its hash says; a new one is hashed by its worker
            digest = _digest(Path(source)) if known is not None else None
        except OSError as exc:
            result.failed[source] = exc.strerror or str(exc)
            tell(Outcome(source=source, status="failed", reason=result.failed[source]))
            continue
        if sides_same and known.sha256 == digest:
            known.mtime = stat.st_mtime  # touched, not changed
            result.unchanged.append(source)
            tell(Outcome(source=source, status="skipped", reason="unchanged"))
            continue
        todo.append(ExportJob(source, digest, (harnesses or {}).get(source)))
        todo_bytes += IN_PROCESS if folder else stat.st_size
    jobs = jobs or batch.default_jobs()
    names = {job.harness for job in todo}
    parts = _Parts(manifest, writer)
    for outcome in batch.run(
        todo,
        export_one,
        jobs,
        chunk=CHUNK,
        in_process=todo_bytes < IN_PROCESS,
        prepare=lambda: _prepare(None if None in names else names),
    ):
        rows: _Rows = outcome.data
        outcome.data = None  # the rows go to the writer, not to whoever keeps the outcomes
        tell(outcome)
        old = manifest.get(outcome.source)
        if outcome.status == "failed":  # a known source's rows go with its entry
            result.failed[outcome.source] = outcome.reason or "failed"
            if old is not None:
                parts.take_out(old.key, old.files)
                del manifest[outcome.source]
            continue
        manifest[outcome.source] = _Entry(rows.size, rows.mtime, rows.sha256, rows.key, [], rows.side, rows.digests)
        parts.add(outcome.source, rows, old)
        result.written.append(outcome.source)
        for name, n in rows.counts.items():
            result.rows[name] = result.rows.get(name, 0) + n
    parts.flush()
    return result, manifest


def _prepare(harnesses: set[str] | None) -> None:
    """Import what every worker needs, once, here: forked workers inherit it."""
    from .. import api  # noqa: F401
    from ..batch import import_readers

    import_readers(harnesses)


def read_tables(out: str | os.PathLike[str]) -> dict[str, Any]:
    """Every table of an exported dataset, as Arrow tables (``harness`` and ``date``
    come back from the partition folders; rows of one source stay together)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    schemas = columnar.schemas()
    found = {}
    for name, schema in schemas.items():
        files = sorted((out / name).glob("harness=*/date=*/*.parquet"))
        parts = [pq.read_table(f, schema=schema) for f in files]
        found[name] = pa.concat_tables(parts) if parts else schema.empty_table()
    return found


def query(out: str | os.PathLike[str], sql: str) -> Any:
    """Run ``sql`` with DuckDB over the dataset in ``out``: each table is a view of the
    same name. Returns a DuckDB relation (``.fetchall()``, ``.df()``, ``.arrow()``)."""
    try:
        import duckdb
    except ImportError as exc:
        raise TxcodecError("txcodec sql needs DuckDB: pip install 'txcodec[sql]'") from exc
    out = Path(out)
    connection = duckdb.connect()
    for name in columnar.TABLES:
        if any((out / name).glob("harness=*/date=*/*.parquet")):
            pattern = str(out / name / "**" / "*.parquet").replace("'", "''")
            connection.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{pattern}', "
                "hive_partitioning = true, union_by_name = true)"
            )
    try:
        return connection.sql(sql)
    except duckdb.Error as exc:
        raise TxcodecError(str(exc).splitlines()[0]) from exc
