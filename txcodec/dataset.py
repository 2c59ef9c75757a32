"""Sessions as a Parquet dataset: ``txcodec export --to parquet -o DIR``.

The layout is one folder per table, partitioned Hive-style by harness and by the day the
session started::

    DIR/messages/harness=codex/date=2026-11-30/<part>.parquet

Sources are read in chunks by a pool of processes; each chunk writes one file per table
and partition it has rows for (a file per session would spend most of the time on
Parquet's per-file overhead). The export is incremental: the manifest
(``DIR/_txcodec_manifest.json``) records each source's path, size, mtime, sha256 and the
files holding its rows. A source whose size and mtime match, or whose bytes hash the same,
is skipped; a changed one has its rows taken out of the files that held them (which are
rewritten with the other sources' rows, or removed when nothing is left) and written anew.
A source gone from the selection keeps its rows: it may just not have been named this time.

DuckDB, pyarrow, pandas, Spark and Ray read the folders as they are
(``read_parquet('DIR/messages/**/*.parquet', hive_partitioning = true)``). A source that
cannot be read is reported with its reason and never stops the others.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from . import columnar
from .atomic import write_atomic
from .errors import TxcodecError

MANIFEST = "_txcodec_manifest.json"
CHUNK = 64  # sources per worker task: files stay few and large enough to be worth it


class _Entry(msgspec.Struct):
    size: int
    mtime: float
    sha256: str
    key: str  # the session_key of the source's main conversation
    files: list[str] = msgspec.field(default_factory=list)


@dataclass
class ExportResult:
    """What an export did, by source path."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)  # rows written, by table


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_source(path: str | os.PathLike[str], sha256: str | None = None) -> tuple[Any, columnar.Source]:
    """Load one native session into Common, with the :class:`columnar.Source` naming it."""
    from . import api

    path = Path(path)
    stat = path.stat()
    session = api.load(path)
    conversation = api.to_common(session)
    source = columnar.Source(session.harness, str(path), sha256 or _digest(path), stat.st_size, stat.st_mtime)
    return conversation, source


class _Done(msgspec.Struct):
    """A worker's answer for one source."""

    path: str
    key: str = ""
    files: list[str] = msgspec.field(default_factory=list)
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    error: str | None = None


def _write_parquet(table: Any, target: Path) -> None:
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, target)  # a reader never sees half a file


def _write_chunk(todo: list[tuple[str, str]], out: str) -> list[_Done]:
    """Worker: read a chunk of sources; write one file per table and partition."""
    import pyarrow as pa

    done: list[_Done] = []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}  # (table, harness, date) -> rows
    owners: dict[tuple[str, str, str], list[_Done]] = {}
    for path, digest in todo:
        try:
            conversation, source = read_source(path, digest)
        except (ValueError, OSError) as exc:  # txcodec's own errors are ValueError/OSError subclasses
            done.append(_Done(path, error=str(exc)))
            continue
        rows = columnar.rows(conversation, source)
        entry = _Done(path, key=rows["sessions"][0]["session_key"])
        date = columnar.day(conversation.meta.started_at)
        for name, part in rows.items():
            if part:
                group = (name, source.harness, date)
                groups.setdefault(group, []).extend(part)
                owners.setdefault(group, []).append(entry)
                entry.counts[name] = len(part)
        done.append(entry)
    schemas = columnar.schemas()
    part_name = f"part-{uuid.uuid4().hex}.parquet"
    for (name, harness, date), rows in groups.items():
        rel = f"{name}/harness={harness}/date={date}/{part_name}"
        _write_parquet(pa.Table.from_pylist(rows, schema=schemas[name]), Path(out) / rel)
        for entry in owners[(name, harness, date)]:
            entry.files.append(rel)
    return done


def _load_manifest(out: Path) -> dict[str, _Entry]:
    try:
        return msgspec.json.decode((out / MANIFEST).read_bytes(), type=dict[str, _Entry])
    except FileNotFoundError:
        return {}
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise TxcodecError(f"{out / MANIFEST}: not a txcodec manifest ({exc}); choose an empty folder") from exc


def _take_out(out: Path, manifest: dict[str, _Entry], sources: list[str]) -> None:
    """Remove the rows of ``sources`` from the files that hold them."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    keys = pa.array(sorted({manifest[s].key for s in sources}), type=pa.string())
    files = sorted({f for s in sources for f in manifest[s].files})
    for rel in files:
        table = pq.read_table(out / rel, schema=columnar.schemas()[rel.split("/", 1)[0]])
        # a child's key is its main conversation's key + "/...": compare the part before
        main_keys = pc.list_element(pc.split_pattern(table["session_key"], "/", max_splits=1), 0)
        keep = table.filter(pc.invert(pc.is_in(main_keys, value_set=keys)))
        if keep.num_rows:
            _write_parquet(keep, out / rel)
        else:
            (out / rel).unlink(missing_ok=True)
    for source in sources:
        manifest[source].files = []


def export_parquet(sources: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                   jobs: int | None = None) -> ExportResult:
    """Export every source session (native files of any harness) under ``out``.

    ``jobs`` processes read and write in parallel (default: the CPU count; 1 runs in this
    process). Only sources that changed since the last export into ``out`` are rewritten.
    """
    columnar.schemas()  # fails early, in this process, when pyarrow is missing
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = _load_manifest(out)
    result = ExportResult()
    todo: list[tuple[str, str]] = []
    for source in dict.fromkeys(str(Path(s)) for s in sources):
        path = Path(source)
        known = manifest.get(source)
        try:
            stat = path.stat()
            if known is not None and known.size == stat.st_size and known.mtime == stat.st_mtime:
                result.unchanged.append(source)
                continue
            digest = _digest(path)
        except OSError as exc:
            result.failed[source] = exc.strerror or str(exc)
            continue
        if known is not None and known.sha256 == digest:
            known.mtime = stat.st_mtime  # touched, not changed
            result.unchanged.append(source)
            continue
        todo.append((source, digest))
    _take_out(out, manifest, [s for s, _ in todo if s in manifest])
    digests = dict(todo)
    for done in _run(todo, out, jobs):
        if done.error is not None:
            result.failed[done.path] = done.error
            manifest.pop(done.path, None)
            continue
        stat = Path(done.path).stat()
        manifest[done.path] = _Entry(stat.st_size, stat.st_mtime, digests[done.path], done.key, done.files)
        result.written.append(done.path)
        for name, n in done.counts.items():
            result.rows[name] = result.rows.get(name, 0) + n
    write_atomic(out / MANIFEST, msgspec.json.encode(manifest), overwrite=True)
    return result


def _run(todo: list[tuple[str, str]], out: Path, jobs: int | None) -> Iterator[_Done]:
    # sources modified about the same time mostly started on the same day: ordering by
    # mtime keeps a chunk's rows in few date partitions, so it writes few files
    todo = sorted(todo, key=lambda item: _mtime(item[0]))
    chunks = [todo[i:i + CHUNK] for i in range(0, len(todo), CHUNK)]
    jobs = min(jobs or os.cpu_count() or 1, len(chunks))
    _warm()
    if jobs <= 1:
        for chunk in chunks:
            yield from _write_chunk(chunk, str(out))
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for done in pool.map(_write_chunk, chunks, [str(out)] * len(chunks)):
            yield from done


def _warm() -> None:
    """Import what every worker needs, once, here: forked workers inherit it."""
    from importlib import import_module

    import pyarrow.parquet  # noqa: F401

    from . import registry

    for harness in registry.harnesses().values():
        if harness.read is not None:
            import_module(harness.read.__module__)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


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
            connection.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{pattern}', "
                               "hive_partitioning = true, union_by_name = true)")
    try:
        return connection.sql(sql)
    except duckdb.Error as exc:
        raise TxcodecError(str(exc).splitlines()[0]) from exc
