"""txcodec on Ray Data, for fleets of sessions (``pip install 'txcodec[ray]'``).

The same functions run on a laptop (``ray.init()`` starts a local runtime) and on a
cluster (``ray.init(address="ray://head:10001")``, with txcodec installed on the workers,
e.g. through ``runtime_env={"pip": ["txcodec[parquet]"]}``)::

    import ray
    from txcodec.export import ray as txray

    sources = txray.sources(paths)                       # a Dataset of {"path": ...}
    txray.write_parquet(sources, "s3://bucket/sessions")  # the six tables, as Parquet
    report = txray.convert(sources, to="codex", out="/mnt/shared/codex").take_all()

Sources are paths that every worker can read (a shared or network file system), because
a session can be more than one file: Claude Code keeps subagents and persisted outputs
beside the main transcript. Outputs go through ``pyarrow.fs``, so ``out`` may be a local
folder or any URI ``pyarrow.fs.FileSystem.from_uri`` understands (``s3://``, ``gs://``,
``hdfs://``).

Every row a step yields is what the local path (:mod:`txcodec.export.dataset`,
``txcodec convert``) makes of the same source: the tables row for row, the converted
files byte for byte. A source that cannot be read yields an error row, never a failed job.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

import msgspec

from . import columnar

_encode = msgspec.json.Encoder().encode


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # an optional extra
        from ..core.errors import TxcodecError

        raise TxcodecError("txcodec.export.ray needs Ray: pip install 'txcodec[ray]'") from exc
    return ray


def sources(paths: Iterable[str | os.PathLike[str]]) -> Any:
    """A Dataset with one ``{"path": ...}`` row per native session file."""
    return _ray().data.from_items([{"path": os.fspath(p)} for p in paths])


def _tagged_lines(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Every table's rows of one source, as ``{"table", "lines"}``: the rows of each table
    in JSON lines (the tables differ in shape, and a Dataset holds one), or one ``error``
    row whose lines are ``{"path", "error"}``."""
    from .dataset import source_lines

    try:
        rows = source_lines(item["path"])
    except (ValueError, OSError) as exc:
        return [{"table": "error", "lines": _encode({"path": item["path"], "error": str(exc)})}]
    return [{"table": name, "lines": lines} for name, lines in rows.lines.items()]


def tables(source_rows: Any) -> dict[str, Any]:
    """The six tables of every source, as Datasets (each source is read once)."""
    from ray.data.expressions import col

    tagged = source_rows.flat_map(_tagged_lines).materialize()
    return {
        name: tagged.filter(expr=col("table") == name).map_batches(_Decode(name), batch_format="pyarrow")
        for name in columnar.TABLES
    }


def errors(source_rows: Any) -> list[dict[str, str]]:
    """The sources that could not be read, with the reason."""
    from ray.data.expressions import col

    tagged = source_rows.flat_map(_tagged_lines).filter(expr=col("table") == "error")
    return [msgspec.json.decode(r["lines"]) for r in tagged.take_all()]


class _Decode:
    """A batch of sources' JSON lines of one table, as an Arrow table of that table's
    schema (built by Arrow's JSON reader, as the local export builds it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, batch: Any) -> Any:
        return columnar.table_from_json(self.name, b"".join(batch.column("lines").to_pylist()))


def write_parquet(
    source_rows: Any, out: str, *, filesystem: Any = None, sources_per_file: int = 128, **write_options: Any
) -> dict[str, Any]:
    """Write the six tables under ``out`` (a folder or URI), one sub-folder per table.

    Every source is read once: a write task reads ``sources_per_file`` sources (or what
    Ray hands it) and writes one Parquet file of each table (``write_options`` go to
    ``pyarrow.parquet.write_table``; ``filesystem`` is a ``pyarrow.fs`` file system, else
    one is found from ``out``). Returns the rows written by table, and the sources that
    could not be read with the reason (``{"rows": {...}, "errors": [{"path", "error"}]}``)."""
    sink = _sink_class()(out, filesystem, sources_per_file, write_options)
    source_rows.write_datasink(sink)
    return sink.summary


def _filesystem(out: str) -> tuple[Any, str]:
    """The ``pyarrow.fs`` file system of ``out`` (a URI or a local folder) and the path in it."""
    from pyarrow import fs

    if "://" in out:
        return fs.FileSystem.from_uri(out)
    return fs.LocalFileSystem(), os.path.abspath(out)


@functools.cache
def _sink_class() -> type:
    """The Datasink of :func:`write_parquet` (made when first asked for: Ray is optional)."""
    from ray.data import Datasink

    class TablesSink(Datasink):
        """Each write task reads its sources and writes one file of each table."""

        def __init__(self, out: str, filesystem: Any, per_file: int, options: dict[str, Any]) -> None:
            self.out, self.filesystem, self.per_file = out, filesystem, per_file
            self.options = {"compression": "zstd", **options}  # as the local export writes
            self.summary: dict[str, Any] = {"rows": {}, "errors": []}

        @property
        def min_rows_per_write(self) -> int:
            return self.per_file

        def write(self, blocks: Iterable[Any], ctx: Any) -> dict[str, Any]:
            import uuid

            import pyarrow.parquet as pq
            from ray.data.block import BlockAccessor

            from .dataset import source_lines

            lines: dict[str, list[bytes]] = {name: [] for name in columnar.TABLES}
            errors = []
            for block in blocks:
                for path in BlockAccessor.for_block(block).to_arrow().column("path").to_pylist():
                    try:
                        rows = source_lines(path)
                    except (ValueError, OSError) as exc:
                        errors.append({"path": path, "error": str(exc)})
                        continue
                    for name, part in rows.lines.items():
                        lines[name].append(part)
            filesystem, base = (self.filesystem, self.out) if self.filesystem is not None else _filesystem(self.out)
            part = f"part-{uuid.uuid4().hex}.parquet"
            counts = {}
            for name, parts in lines.items():
                if not parts:
                    continue
                table = columnar.table_from_json(name, b"".join(parts))
                folder = f"{base.rstrip('/')}/{name}"
                filesystem.create_dir(folder, recursive=True)
                pq.write_table(table, f"{folder}/{part}", filesystem=filesystem, **self.options)
                counts[name] = table.num_rows
            return {"rows": counts, "errors": errors}

        def on_write_complete(self, write_result: Any) -> None:
            for returned in write_result.write_returns:
                for name, n in returned["rows"].items():
                    self.summary["rows"][name] = self.summary["rows"].get(name, 0) + n
                self.summary["errors"].extend(returned["errors"])

    return TablesSink


class _Convert:
    def __init__(self, to: str, out: str) -> None:
        self.to, self.out = to, out

    def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        from .. import api

        path = item["path"]
        try:
            written, loss = api.convert(path, self.to)
        except (ValueError, OSError) as exc:
            return {"path": path, "files": [], "losses": 0, "error": str(exc)}
        filesystem, base = _filesystem(self.out)
        names = []
        for name, data in written.files.items():
            target = f"{base.rstrip('/')}/{name}"
            filesystem.create_dir(target.rsplit("/", 1)[0], recursive=True)
            with filesystem.open_output_stream(target) as stream:
                stream.write(data)
            names.append(name)
        return {"path": path, "files": names, "losses": len(loss.entries), "error": None}


def convert(source_rows: Any, to: str, out: str) -> Any:
    """A Dataset of one result row per source (``path``, ``files`` written under ``out``,
    ``losses``, ``error``): each source converted to harness ``to`` exactly as
    ``txcodec convert SRC --to TO -o OUT`` writes it."""
    return source_rows.map(_Convert(to, out))
