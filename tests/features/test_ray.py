"""txcodec on a real local Ray runtime (two workers): the tables equal the local export
row for row, and converted files equal the local conversion byte for byte."""

from __future__ import annotations

import uuid
from pathlib import Path

import msgspec
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed")
pytest.importorskip("pyarrow", reason="the parquet extra is not installed")

from support.paths import GOLDEN  # noqa: E402

import txcodec  # noqa: E402
from txcodec import api  # noqa: E402
from txcodec.export import columnar  # noqa: E402
from txcodec.export import dataset  # noqa: E402
from txcodec.export import ray as txray  # noqa: E402

COPIES = 6


def _fleet(folder: Path) -> list[str]:
    """A few hundred distinct Claude Code sessions: every golden session that reads,
    written anew under several session ids."""
    paths = []
    for source in sorted(GOLDEN.rglob("*.jsonl")):
        if "subagents" in source.parts or source.name.startswith(("written", "expected")):
            continue
        try:
            conversation = txcodec.to_common(txcodec.load(source))
        except ValueError:
            continue
        if not conversation.messages:
            continue  # nothing to resume: written as a file no reader takes for a session
        for copy in range(COPIES):
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{source}#{copy}"))
            written, _ = api.convert(conversation, "claude_code", session_id=sid, cwd="/work/project")
            for name, data in written.files.items():
                target = folder / sid / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            paths.append(str(folder / sid / written.main))
    return paths


@pytest.fixture(scope="module")
def runtime():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return _fleet(tmp_path_factory.mktemp("fleet"))


def _canonical(row: dict) -> bytes:
    return msgspec.json.encode(
        {k: (list(v) if hasattr(v, "tolist") else v) for k, v in sorted(row.items())},
        enc_hook=lambda v: v.tolist() if hasattr(v, "tolist") else str(v),
    )


def test_the_fleet_is_a_few_hundred_sessions(fleet):
    assert len(fleet) >= 200


def test_tables_equal_the_local_export(runtime, fleet, tmp_path):
    local = dataset.export_parquet(fleet, tmp_path / "local", jobs=2)
    assert not local.failed
    expected = {name: table.to_pylist() for name, table in dataset.read_tables(tmp_path / "local").items()}
    got = txray.tables(txray.sources(fleet))
    for name in columnar.TABLES:
        rows = got[name].take_all()
        assert sorted(map(_canonical, rows)) == sorted(map(_canonical, expected[name])), name
    assert txray.errors(txray.sources([*fleet[:2], str(tmp_path / "missing.jsonl")])) == [
        {
            "path": str(tmp_path / "missing.jsonl"),
            "error": msgspec.json.decode(msgspec.json.encode(_error_of(tmp_path / "missing.jsonl"))),
        }
    ]


def _error_of(path: Path) -> str:
    try:
        dataset.read_source(path)
    except OSError as exc:
        return str(exc)
    raise AssertionError("expected an error")


def test_write_parquet_reads_back_as_the_same_conversations(runtime, fleet, tmp_path):
    some = fleet[:40]
    missing = str(tmp_path / "missing.jsonl")
    summary = txray.write_parquet(txray.sources([*some, missing]), str(tmp_path / "out"), sources_per_file=16)
    import pyarrow.parquet as pq

    tables = {name: pq.read_table(tmp_path / "out" / name, schema=columnar.schemas()[name]) for name in columnar.TABLES}
    rebuilt = columnar.conversations(tables)
    expected = [txcodec.to_common(txcodec.load(p)) for p in some]
    assert sorted(map(msgspec.json.encode, rebuilt)) == sorted(map(msgspec.json.encode, expected))
    assert summary["rows"] == {name: t.num_rows for name, t in tables.items() if t.num_rows}
    assert summary["errors"] == [{"path": missing, "error": _error_of(Path(missing))}]
    assert len(list((tmp_path / "out" / "sessions").glob("*.parquet"))) > 1  # several write tasks, one pass each


def test_convert_equals_the_local_conversion_byte_for_byte(runtime, fleet, tmp_path):
    out = tmp_path / "codex"
    results = txray.convert(txray.sources(fleet), "codex", str(out)).take_all()
    assert len(results) == len(fleet) and not [r for r in results if r["error"]]
    compared = 0
    for path in fleet:
        written, _ = api.convert(path, "codex")
        for name, data in written.files.items():
            assert (out / name).read_bytes() == data, name
            compared += 1
    assert compared == len(fleet)
