"""The columnar form of Common (Parquet), the dataset export, DuckDB over it, and the
training shapes (openai-chat, hf)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import msgspec
import pytest

pa = pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
import pyarrow.parquet as pq  # noqa: E402
from support.paths import GOLDEN  # noqa: E402
from support.paths import ROOT  # noqa: E402
from support.paths import corpus_files  # noqa: E402

import txcodec  # noqa: E402
from txcodec.export import columnar  # noqa: E402
from txcodec.export import dataset  # noqa: E402
from txcodec.export import training  # noqa: E402
from txcodec.model.loss import LossReport  # noqa: E402


def _sessions() -> list[Path]:
    """Every golden native session that reads into Common (main files only: subagent
    files ride along with their parent)."""
    found = []
    for path in sorted(GOLDEN.rglob("*")):
        if not path.is_file() or path.suffix not in (".jsonl", ".json") or "subagents" in path.parts:
            continue
        if path.name.startswith(("expected", "common", "loss", "written")) or path.name.endswith(".common.json"):
            continue
        try:
            txcodec.to_common(txcodec.load(path))
        except ValueError:
            continue  # not a session (a case's side file)
        found.append(path)
    return found


SESSIONS = _sessions()


def test_there_are_sessions_of_every_harness():
    harnesses = {txcodec.load(p).harness for p in SESSIONS}
    assert {"claude_code", "codex", "gemini_cli", "qwen_code", "pi", "stream_json"} <= harnesses


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_parquet_rebuilds_the_same_conversation(path, tmp_path):
    conv = txcodec.to_common(txcodec.load(path))
    tables = columnar.tables([(conv, columnar.Source("x", str(path)))])
    back = {}
    for name, table in tables.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
        back[name] = pq.read_table(tmp_path / f"{name}.parquet")
    (rebuilt,) = columnar.conversations(back)
    assert msgspec.json.encode(rebuilt) == msgspec.json.encode(conv)
    assert rebuilt == conv


CLAUDE_SESSIONS = [p for p in SESSIONS if p.suffix == ".jsonl" and txcodec.load(p).harness == "claude_code"]


@pytest.mark.parametrize("path", CLAUDE_SESSIONS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_a_claude_code_source_is_read_as_it_is_decoded(path, monkeypatch):
    """The export reads a Claude Code session as convert does (never loaded whole), and its
    rows are those of the session loaded whole and read with a full report."""
    from txcodec import api

    conv = api.to_common(api.load(path), LossReport())
    stat = path.stat()
    source = columnar.Source("claude_code", str(path), "x", stat.st_size, stat.st_mtime)
    expected = {name: columnar.encode_rows(part) for name, part in columnar.rows(conv, source).items() if part}

    load = api.load

    def whole(source, *args, **kwargs):  # a subagent's file is still loaded, by its parent's reader
        assert Path(source) != path, "the session was loaded whole"
        return load(source, *args, **kwargs)

    monkeypatch.setattr(api, "load", whole)
    assert dataset.source_lines(path, "x", "claude_code").lines == expected


def _rows_or_error(path: Path, harness: str | None) -> bytes | str:
    try:
        return msgspec.json.encode(dataset.source_lines(path, None, harness))
    except Exception as exc:  # noqa: BLE001 - the two paths must fail alike too
        return f"{type(exc).__name__}: {exc}"


# the golden sessions and the corpus's session files (read where they are): Claude Code
# with subagents and tool results beside it, Codex rollouts, and every other harness
ONE_READ_CASES = SESSIONS + [p for p in corpus_files() if p.suffix == ".jsonl"]


@pytest.mark.parametrize("path", ONE_READ_CASES, ids=lambda p: "/".join(p.parts[-3:]))
@pytest.mark.parametrize("harness", [False, True], ids=["detected", "named"])
@pytest.mark.parametrize("read_whole", [dataset.READ_WHOLE, 0], ids=["read", "mapped"])
def test_a_session_opened_once_gives_the_plain_paths_rows(path, harness, read_whole, monkeypatch):
    """The export's one open of a streamed session file (dataset._load_mapped: stat, hash
    and decode of the bytes read, or of a large file mapped) gives the rows, the size,
    mtime and sha256, and the side folder's stamp of the plain path (stat, load and hash
    each on its own)."""
    monkeypatch.setattr(dataset, "READ_WHOLE", read_whole)
    name = txcodec.load(path).harness if harness else None
    plain = dataset._load_plain
    taken = []
    monkeypatch.setattr(dataset, "_load_plain", lambda *args: taken.append(args) or plain(*args))
    once = _rows_or_error(path, name)
    streams = path.suffix == ".jsonl" and txcodec.kit.registry.get(txcodec.load(path).harness).read_streams
    assert bool(taken) != streams, "a streamed session file took the plain path, or another the mapped one"
    monkeypatch.setattr(dataset, "ONE_READ", False)
    assert once == _rows_or_error(path, name)


@pytest.mark.parametrize(
    "content",
    [b"", b"not json at all\n", b"SQLite format 3\0", None],
    ids=["empty", "not-json", "sqlite-head", "missing"],
)
def test_a_file_not_read_once_fails_as_the_plain_path_does(content, tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    if content is not None:
        path.write_bytes(content)
    once = _rows_or_error(path, None)
    monkeypatch.setattr(dataset, "ONE_READ", False)
    assert once == _rows_or_error(path, None)
    assert isinstance(once, str)


@pytest.mark.parametrize("read_whole", [dataset.READ_WHOLE, 0], ids=["read", "mapped"])
def test_a_session_grown_while_read_is_recorded_as_it_was_read(read_whole, tmp_path, monkeypatch):
    """A file appended to after it is opened: the rows, size and sha256 are those of the
    bytes read or mapped, never of a mix (the next export sees the new size and reads it
    again)."""
    monkeypatch.setattr(dataset, "READ_WHOLE", read_whole)
    (original,) = [p for p in CLAUDE_SESSIONS if not p.with_suffix("").exists()][:1]
    path = tmp_path / original.name
    shutil.copyfile(original, path)
    before = dataset.source_lines(path)
    session, source = dataset._load_mapped(str(path), None, None)
    with path.open("ab") as file:
        file.write(path.read_bytes())  # every line again: more messages, were they read
    rows = columnar.rows(dataset._common(session), source)
    assert (
        (source.size, source.sha256)
        == (before.size, before.sha256)
        == (len(original.read_bytes()), hashlib.sha256(original.read_bytes()).hexdigest())
    )
    assert {name: columnar.encode_rows(part) for name, part in rows.items() if part} == before.lines


def test_a_mapped_file_is_hashed_as_its_bytes(tmp_path):
    """_sha256 hashes a large mapped file a MiB at a time, giving each back once hashed."""
    import mmap

    data = os.urandom(1 << 16) * 40 + b"end"  # 2.5 MiB and a bit: three steps, the last short
    path = tmp_path / "big"
    path.write_bytes(data)
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert dataset._sha256(mapped) == hashlib.sha256(data).hexdigest()
        assert mapped[:] == data  # pages given back are read again from the file
    assert dataset._sha256(data) == hashlib.sha256(data).hexdigest()


def test_subagents_flatten_with_a_parent_key():
    parents = [p for p in SESSIONS if txcodec.to_common(txcodec.load(p)).children]
    assert parents, "no golden session has subagents"
    conv = txcodec.to_common(txcodec.load(parents[0]))
    rows = columnar.rows(conv, columnar.Source("claude_code", str(parents[0])))
    main, *kids = rows["sessions"]
    assert main["parent_key"] is None and len(kids) >= len(conv.children)
    assert all(k["parent_key"] and k["session_key"].startswith(k["parent_key"] + "/") for k in kids)
    keys = {r["session_key"] for r in rows["sessions"]}
    assert {r["session_key"] for r in rows["messages"]} <= keys


def test_tool_calls_join_calls_to_results():
    for path in SESSIONS:
        conv = txcodec.to_common(txcodec.load(path))
        rows = columnar.rows(conv, columnar.Source("x", str(path)))
        calls = {c["tool_use_id"]: c for c in rows["tool_calls"]}
        results = {b["tool_use_id"] for b in rows["blocks"] if b["type"] == "tool_result"}
        for tool_use_id, call in calls.items():
            answered = call["result_message_index"] is not None
            if tool_use_id in results and call["session_key"] == rows["sessions"][0]["session_key"]:
                assert answered
            if answered:
                assert call["result_message_index"] > call["call_message_index"]
                if call["duration_ms"] is not None:
                    assert call["duration_ms"] >= 0


def _copy_sessions(dest: Path) -> list[str]:
    """Copies of the golden sessions (with their side folders) as sources to export."""
    out = []
    for i, path in enumerate(SESSIONS):
        folder = dest / f"s{i}"
        shutil.copytree(path.parent, folder)
        out.append(str(folder / path.name))
    return out


def _rebuilt(out: Path) -> list[bytes]:
    return sorted(msgspec.json.encode(c) for c in columnar.conversations(dataset.read_tables(out)))


def _expected(sources: list[str]) -> list[bytes]:
    return sorted(msgspec.json.encode(txcodec.to_common(txcodec.load(p))) for p in sources)


def test_export_is_incremental(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset, "CHUNK", 8)  # several parts, so some are left alone
    sources = _copy_sessions(tmp_path / "src")
    out = tmp_path / "ds"
    first = dataset.export_parquet(sources, out, jobs=2)
    assert not first.failed and sorted(first.written) == sorted(sources)
    files = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    assert all(re.search(r"/\w+/harness=\w+/date=(\d{4}-\d\d-\d\d|unknown)/part-\w+\.parquet$", str(p)) for p in files)
    hashed = json.loads((out / dataset.MANIFEST).read_text())  # a new source is hashed by its worker
    assert {s: hashed[s]["sha256"] for s in sources} == {
        s: hashlib.sha256(Path(s).read_bytes()).hexdigest() for s in sources
    }

    again = dataset.export_parquet(sources, out, jobs=2)
    assert again.written == [] and sorted(again.unchanged) == sorted(sources)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")} == files

    touched, changed = Path(sources[0]), Path(sources[1])
    os.utime(touched, ns=(1, 1))  # a new mtime, the same bytes: checked by hash, not rewritten
    changed.write_bytes(changed.read_bytes().replace(b"\n", b"\n\n", 1))  # same conversation, new bytes
    third = dataset.export_parquet(sources, out, jobs=1)
    assert third.written == [str(changed)] and str(touched) in third.unchanged
    manifest = json.loads((out / dataset.MANIFEST).read_text())
    untouched = [p for p, t in files.items() if p.exists() and p.stat().st_mtime_ns == t]
    assert untouched, "a change to one source rewrote every file"
    assert _rebuilt(out) == _expected(sources)
    assert manifest[str(changed)]["sha256"] == hashlib.sha256(changed.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("keys", "gone", "runs"),
    [
        (["a", "a/0:x", "b", "c", "c/1:y", "a"], {"a", "c"}, [(2, 3)]),  # a child goes with its session
        (["a", "b", "b/0:x", "c"], {"a", "c"}, [(1, 3)]),
        (["a", "b"], set(), [(0, 2)]),
        (["a", "a/0:x"], {"a"}, []),  # nothing left: the file is removed
        (["ab", "a"], {"a"}, [(0, 1)]),  # a key that only starts like another stays
    ],
)
def test_taking_a_source_out_keeps_the_other_rows(tmp_path, keys, gone, runs):
    """The rewrite reads a part file once, and finds the rows to keep in that table's own
    key column."""
    path = tmp_path / "part.parquet"
    pq.write_table(
        pa.table({"session_key": pa.array(keys, pa.string()), "n": pa.array(range(len(keys)))}), path, row_group_size=2
    )  # several row groups: several chunks of the key column
    kept = dataset._runs(pq.ParquetFile(path).read()["session_key"], gone)
    assert kept == runs
    # the rows outside the runs are exactly those of the sessions taken out, children included
    outside = [row for row in range(len(keys)) if not any(start <= row < end for start, end in kept)]
    assert outside == [row for row, key in enumerate(keys) if key.split("/", 1)[0] in gone]


def test_a_few_changed_sources_are_read_without_a_pool(tmp_path, monkeypatch):
    """The daily run: a few sources grew since the last export. Reading them costs less
    than starting workers, so they are read here, to the same rows."""
    import concurrent.futures

    sources = _copy_sessions(tmp_path / "src")
    out = tmp_path / "ds"
    dataset.export_parquet(sources, out, jobs=2)
    changed = sources[1:4]
    for path in map(Path, changed):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\n\n", 1))

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool of workers was started for a few small sources")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    again = dataset.export_parquet(sources, out, jobs=2)
    assert sorted(again.written) == sorted(changed) and not again.failed
    assert _rebuilt(out) == _expected(sources)


def test_the_listing_of_files_finds_what_the_described_listing_finds():
    """``export --all --to parquet`` lists the stores without reading each file (it needs
    only the files): on the golden Claude Code store, a folder of cases with subagents,
    workflows and metadata-only sessions, it finds the same files to export."""
    from txcodec import sessions

    root = GOLDEN / "claude_code"

    def files(describe: bool) -> list[tuple[str, str]]:
        found = sessions.discover("claude_code", root=root, details=False, describe=describe)
        return sorted((row.session_id, row.path) for row in found if row.parent is None and row.path)

    described = files(True)
    assert len(described) >= 10
    assert files(False) == described


def test_the_export_command_loads_no_numpy(tmp_path):
    """pyarrow loads NumPy only when it can, NumPy costs more to import than pyarrow, and
    the export hands Arrow no arrays: the command, in a process of its own, goes without
    it, and NumPy can be imported again once the export is done."""
    import subprocess
    import sys

    sources = _copy_sessions(tmp_path / "src")[:6]
    code = (
        "import sys\n"
        "from txcodec.cli import main\n"
        "main(['export', *sys.argv[1:]], standalone_mode=False)\n"
        "print(sorted(m for m, v in sys.modules.items() if m.split('.')[0] == 'numpy' and v is not None))\n"
        "import numpy\n"
    )
    args = [*sources, "--to", "parquet", "-o", str(tmp_path / "ds"), "--jobs", "2"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert _rebuilt(tmp_path / "ds") == _expected(sources)


def test_export_reads_back_every_session(tmp_path):
    sources = _copy_sessions(tmp_path / "src")
    dataset.export_parquet(sources, tmp_path / "ds", jobs=2)
    rebuilt = columnar.conversations(dataset.read_tables(tmp_path / "ds"))
    expected = [txcodec.to_common(txcodec.load(p)) for p in sources]
    key = lambda c: msgspec.json.encode(c)  # noqa: E731
    assert sorted(map(key, rebuilt)) == sorted(map(key, expected))


def test_a_bad_source_is_reported_and_the_rest_exported(tmp_path):
    good = _copy_sessions(tmp_path / "src")[:3]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    missing = str(tmp_path / "gone.jsonl")
    result = dataset.export_parquet([*good, str(bad), missing], tmp_path / "ds", jobs=2)
    assert sorted(result.written) == sorted(good)
    assert set(result.failed) == {str(bad), missing}
    assert "not a session" in result.failed[str(bad)]


def test_export_and_convert_share_the_batch_machinery(tmp_path, monkeypatch):
    """The CLI's export runs on batch.run, as a batch conversion does: in processes, every
    source's outcome told as it finishes (the progress bar advances on them), the same
    summary table at the end, and a bad session reported without stopping the others."""
    from click.testing import CliRunner

    from txcodec import batch
    from txcodec.cli import main

    good = _copy_sessions(tmp_path / "src")[:4]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    calls = []
    real_run = batch.run

    def run(items, work, jobs=None, **options):
        calls.append((work.__name__, len(list(items)), jobs))
        return real_run(items, work, jobs, **options)

    monkeypatch.setattr(batch, "run", run)
    out = tmp_path / "ds"
    result = CliRunner().invoke(main, ["export", *good, str(bad), "--to", "parquet", "-o", str(out), "--jobs", "2"])
    assert result.exit_code == 1, result.output
    assert calls == [("export_one", 5, 2)]
    lines = result.stderr.splitlines()
    assert any(line.split() == ["converted", "4"] for line in lines), result.stderr
    assert any(line.split() == ["failed", "1"] for line in lines), result.stderr
    (failure,) = [line for line in lines if line.startswith("failed  ")]
    assert str(bad) in failure and "not a session" in failure
    assert sorted(json.loads((out / dataset.MANIFEST).read_text())) == sorted(good)
    again = CliRunner().invoke(main, ["export", *good, "--to", "parquet", "-o", str(out)])
    assert again.exit_code == 0 and any(
        line.split() == ["skipped", "(unchanged)", "4"] for line in again.stderr.splitlines()
    ), again.stderr
    assert calls[-1][:2] == ("export_one", 0)  # nothing left to read


def _doc_queries() -> list[str]:
    text = (ROOT / "docs" / "dataset.md").read_text(encoding="utf-8")
    return re.findall(r"```sql\n(.*?)```", text, flags=re.S)


def test_the_documented_queries_run(tmp_path):
    pytest.importorskip("duckdb", reason="the sql extra is not installed")
    sources = _copy_sessions(tmp_path / "src")
    dataset.export_parquet(sources, tmp_path / "ds", jobs=2)
    queries = _doc_queries()
    assert len(queries) >= 3
    for sql in queries:
        rows = dataset.query(tmp_path / "ds", sql).fetchall()
        assert rows, sql
    total = dataset.query(tmp_path / "ds", "select count(*) from messages").fetchall()[0][0]
    assert total == sum(len(txcodec.to_common(txcodec.load(p)).messages) + _child_messages(p) for p in sources)


def _child_messages(path: str) -> int:
    def count(conv) -> int:
        return sum(len(c.conversation.messages) + count(c.conversation) for c in conv.children)

    return count(txcodec.to_common(txcodec.load(path)))


def test_sql_command(tmp_path):
    pytest.importorskip("duckdb", reason="the sql extra is not installed")
    from click.testing import CliRunner

    from txcodec.cli import main

    sources = _copy_sessions(tmp_path / "src")[:5]
    runner = CliRunner()
    result = runner.invoke(main, ["export", *sources, "--to", "parquet", "-o", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        main,
        ["sql", "-d", str(tmp_path / "ds"), "--json", "select count(*) as n from sessions where parent_key is null"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"n": 5}]
    result = runner.invoke(main, ["sql", "-d", str(tmp_path / "ds"), "select nonsense from nowhere"])
    assert result.exit_code == 1 and "Traceback" not in result.output


# --- training shapes ----------------------------------------------------------------


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_openai_chat_carries_texts_and_calls_or_reports_them(path):
    conv = txcodec.to_common(txcodec.load(path))
    loss = LossReport()
    lines = training.openai_chat_lines(conv, loss).splitlines()
    examples = [json.loads(line) for line in lines]
    sent = json.dumps(examples)
    counts = loss.counts()

    def walk(c):
        yield c
        for child in c.children:
            yield from walk(child.conversation)

    for c in walk(conv):
        for message in c.messages:
            for block in message.content:
                if isinstance(block, txcodec.model.common.Text):
                    assert json.dumps(block.text)[1:-1] in sent
                elif isinstance(block, txcodec.model.common.ToolUse):
                    assert json.dumps(block.id) in sent
                elif isinstance(block, txcodec.model.common.Thinking):
                    assert counts.get("openai-chat:thinking")
    for example in examples:
        roles = [m["role"] for m in example["messages"]]
        assert set(roles) <= {"user", "assistant", "tool"}
        for m in example["messages"]:
            for call in m.get("tool_calls", []):
                json.loads(call["function"]["arguments"])  # arguments are JSON text


def test_hf_dataset_opens_with_datasets(tmp_path):
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    from click.testing import CliRunner

    from txcodec.cli import main

    out = tmp_path / "train.parquet"
    result = CliRunner().invoke(main, ["export", *map(str, SESSIONS), "--to", "hf", "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = datasets.load_dataset("parquet", data_files=str(out), split="train")
    loss = LossReport()
    expected = [e for p in SESSIONS for e in training.examples(txcodec.to_common(txcodec.load(p)), loss)]
    assert loaded.num_rows == len(expected)
    first = loaded[0]["messages"]
    assert [m["role"] for m in first] == [m["role"] for m in expected[0]["messages"]]
    assert [m["content"] for m in first] == [m.get("content") for m in expected[0]["messages"]]


def test_schemas_page_matches_the_code():
    text = (ROOT / "schemas" / "columnar.md").read_text(encoding="utf-8")
    documented: dict[str, list[tuple[str, str]]] = {}
    table = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## `(\w+)`", line)
        if heading:
            table = documented.setdefault(heading.group(1), [])
        cell = re.match(r"\| `(\w+)` \| `([^`]+)` \| (.+) \|$", line)
        if cell and table is not None:
            assert cell.group(3).strip(), f"{cell.group(1)} has no meaning"
            table.append((cell.group(1), cell.group(2)))
    expected = {name: [(f.name, str(f.type)) for f in schema] for name, schema in columnar.schemas().items()}
    assert documented == expected


def test_the_forked_writer_is_sent_a_flush_in_asks_of_bounded_size(monkeypatch):
    """issue 37: a flush went down the pipe as one ask (the rows encoded and joined to their
    length: two more copies of them); it goes in asks of about ``SEND`` bytes."""
    monkeypatch.setattr(dataset, "SEND", 100)
    sent = []
    writer = dataset.ForkedWriter.__new__(dataset.ForkedWriter)
    writer.out, writer.jobs = Path("/nowhere"), 1
    monkeypatch.setattr(writer, "_send", lambda *message: sent.append(message), raising=False)
    files = {f"messages/harness=codex/date=2026-11-{d:02d}/p.parquet": ("messages", b"x" * 60) for d in range(1, 8)}
    writer.write(dict(files))
    assert [len(m[2]) for m in sent] == [2, 2, 2, 1]
    assert {rel: part for m in sent for rel, part in m[2].items()} == files


def test_the_outcomes_told_do_not_carry_the_rows(tmp_path):
    """issue 37: ``txcodec export`` keeps every outcome for its summary; each carried the
    session's rows, so a fresh export's memory grew with the number of sessions."""
    told = []
    sources = [str(p) for p in _sessions()[:6]]
    result = dataset.export_parquet(sources, tmp_path / "out", jobs=1, on_outcome=told.append)
    assert len(result.written) == len(told) == len(sources)
    assert all(o.status == "converted" and o.data is None for o in told)
    assert sum(result.rows.values()) > 0


@pytest.mark.parametrize(
    ("called", "answered", "millis"),
    [
        ("2030-01-01T00:00:01.000Z", "2030-01-01T00:00:02.500Z", 1500),
        ("2030-01-01T00:00:01", "2030-01-01T00:00:03", 2000),
        ("2030-01-01T01:00:01+01:00", "2030-01-01T00:00:02Z", 1000),
        ("2030-01-01T00:00:01", "2030-01-01T00:00:02Z", None),  # one with an offset, one without: no clock in common
        ("yesterday", "2030-01-01T00:00:02Z", None),
    ],
)
def test_a_tool_call_s_duration_needs_both_times_on_one_clock(tmp_path, called, answered, millis):
    """It used to stop the rows (and a Parquet export) with a TypeError when one time had an
    offset and the other none (found by the views fuzz target)."""

    def line(kind: str, n: int, stamp: str, content: list) -> dict:
        return {
            "type": kind,
            "uuid": f"u{n}",
            "sessionId": "s",
            "timestamp": stamp,
            "message": {"role": kind, "content": content},
        }

    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    lines = [
        line("user", 1, called, [{"type": "text", "text": "list"}]),
        line("assistant", 2, called, [call]) | {"message": {"role": "assistant", "id": "m2", "content": [call]}},
        line("user", 3, answered, [result]),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(msgspec.json.encode(v) for v in lines) + b"\n")
    rows = columnar.rows(txcodec.to_common(txcodec.load(path)), columnar.Source("claude_code", str(path)))
    (row,) = rows["tool_calls"]
    assert row["result_message_index"] is not None and row["duration_ms"] == millis
