"""The daily run of ``txcodec export --all --to parquet``: the stores listed for their files
alone, the Parquet work in a forked writer, and what a second run changes (a session that
grew, one that is new, one that is gone) against what it leaves alone."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
from click.testing import CliRunner  # noqa: E402
from support.paths import GOLDEN  # noqa: E402

import txcodec  # noqa: E402
from txcodec import sessions  # noqa: E402
from txcodec.cli import main  # noqa: E402
from txcodec.core.errors import InputError  # noqa: E402
from txcodec.export import columnar  # noqa: E402
from txcodec.export import dataset  # noqa: E402


def _rows(out: Path) -> dict[str, list[bytes]]:
    return {
        name: sorted(map(msgspec.json.encode, table.to_pylist())) for name, table in dataset.read_tables(out).items()
    }


def _conversations(out: Path) -> list[bytes]:
    return sorted(msgspec.json.encode(c) for c in columnar.conversations(dataset.read_tables(out)))


def _expected(paths: list[str]) -> list[bytes]:
    return sorted(msgspec.json.encode(txcodec.to_common(txcodec.load(p))) for p in paths)


def _home(home: Path, monkeypatch, count: int = 12) -> None:
    """A home of Claude Code sessions and Codex rollouts (golden sessions written anew by
    txcodec's writers under new ids), every store's default folder under it."""
    import uuid

    from txcodec import api

    conversations = [txcodec.to_common(txcodec.load(p)) for p in sorted((GOLDEN / "claude_code").glob("*/*.jsonl"))]
    conversations = [c for c in conversations if c.messages][:count]
    for n, conversation in enumerate(conversations):
        to, root = (
            ("codex", home / ".codex" / "sessions") if n % 3 == 2 else ("claude_code", home / ".claude" / "projects")
        )
        written, _ = api.convert(
            conversation, to, session_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"daily#{n}")), cwd=f"/work/project{n % 2}"
        )
        for name, data in written.files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    for name, value in (("HOME", home), ("CLAUDE_CONFIG_DIR", home / ".claude"), ("CODEX_HOME", home / ".codex")):
        monkeypatch.setenv(name, str(value))


def test_the_files_listing_finds_what_discover_finds(tmp_path, monkeypatch):
    """sessions.session_files (the export's listing) gives the main file of every session
    discover lists in every store, with its harness, and the same warnings."""
    _home(tmp_path, monkeypatch)
    listed = sessions.discover(details=False, describe=False)
    files = sessions.session_files()
    expected = sorted((r.harness, r.session_id, r.path) for r in listed if r.parent is None and r.path)
    assert {harness for harness, _, _ in expected} == {"claude_code", "codex"}
    assert sorted((r.harness, r.session_id, r.path) for r in files) == expected
    assert files.errors == listed.errors


def test_the_files_listing_of_the_golden_claude_code_store():
    """The golden store: cases with subagents, workflows, pruned and metadata-only sessions."""
    root = GOLDEN / "claude_code"
    listed = sessions.discover("claude_code", root=root, details=False, describe=False)
    files = sessions.session_files("claude_code", root=root)
    expected = sorted((r.session_id, r.path) for r in listed if r.parent is None and r.path)
    assert len(expected) >= 10
    assert sorted((r.session_id, r.path) for r in files) == expected
    assert files.errors == listed.errors


def test_the_listing_without_side_folders_finds_the_same_main_files(tmp_path, monkeypatch):
    """sides=False (the export's listing: the side folders are stamped, not listed) gives
    the same sessions and main files, in the golden store and in a home of two stores."""
    root = GOLDEN / "claude_code"
    listed = sessions.session_files("claude_code", root=root)
    assert sum(1 for r in listed if (Path(r.path).parent / r.session_id).is_dir()) >= 4
    assert [
        (r.harness, r.session_id, r.path) for r in sessions.session_files("claude_code", root=root, sides=False)
    ] == [(r.harness, r.session_id, r.path) for r in listed]
    _home(tmp_path, monkeypatch)
    assert [(r.harness, r.session_id, r.path) for r in sessions.session_files(sides=False)] == [
        (r.harness, r.session_id, r.path) for r in sessions.session_files()
    ]


def test_a_subagent_that_grew_appeared_or_went_has_its_session_read_again(tmp_path):
    """A session's side folder changes without its main file changing: a subagent's file
    grows, a new one is written, one is removed. Each time the daily run reads that session
    again (and only it), and its rows are those of the session as it is now."""
    store = tmp_path / "store"
    sources = _sources(store)
    session = next(Path(p) for p in sources if "agent_launch" in p)
    subagents = session.parent / session.stem / "subagents"
    agent = sorted(subagents.glob("agent-*.jsonl"))[0]
    out = tmp_path / "ds"
    args = ["export", "--all", "--to", "parquet", "--from", "claude_code", "--root", str(store), "-o", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0

    def daily(written: int) -> None:
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, done.output
        assert f"{written} written" in done.stderr and f"{len(sources) - written} unchanged" in done.stderr, done.stderr
        assert _conversations(out) == _expected(sources)

    full = _cut_last_line(agent)
    daily(1)
    agent.write_bytes(full)  # grew by a line
    daily(1)
    daily(0)
    copy = subagents / agent.name.replace("agent-a", "agent-b")
    copy.write_bytes(full)  # a new subagent
    daily(1)
    copy.unlink()  # gone again
    daily(1)
    os.utime(session)  # only touched: its hash says so
    daily(0)
    (subagents / "agent-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")  # a link that dangles
    daily(1)
    daily(0)  # and goes on dangling: nothing changed


def test_a_side_folder_that_appeared_has_its_session_read_again(tmp_path):
    """A session exported without a side folder gets one (its first subagent): the daily
    run reads it again, then leaves it alone."""
    store = tmp_path / "store"
    sources = _sources(store)
    session = next(Path(p) for p in sources if "agent_launch" in p)
    folder = session.parent / session.stem
    folder.rename(tmp_path / "aside")
    out = tmp_path / "ds"
    args = ["export", "--all", "--to", "parquet", "--from", "claude_code", "--root", str(store), "-o", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    (tmp_path / "aside").rename(folder)
    for written in (1, 0):
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, done.output
        assert f"{written} written" in done.stderr and f"{len(sources) - written} unchanged" in done.stderr, done.stderr
    assert _conversations(out) == _expected(sources)


@pytest.mark.parametrize(
    "spelling",
    [
        "a",
        "/a/b.jsonl",
        "a//b",
        "//a",
        "///a",
        "./a",
        "a/./b",
        "a/",
        "a/.",
        ".",
        "..",
        "../a",
        "a/..",
        "/",
        "",
        "a/.b",
        "a/b.",
        ".a",
        "./",
        "a/.//b",
        "a b/c",
    ],
)
def test_a_source_is_keyed_as_pathlib_writes_it(spelling):
    assert dataset._spelled(spelling) == str(Path(spelling))


def _sources(dest: Path) -> list[str]:
    shutil.copytree(GOLDEN / "claude_code", dest)
    return [r.path for r in sessions.session_files("claude_code", root=dest)]


def test_the_forked_writer_writes_what_this_process_writes(tmp_path):
    sources = _sources(tmp_path / "store")
    here = dataset.export_parquet(sources, tmp_path / "here", jobs=1)
    forked = dataset.export_parquet(sources, tmp_path / "forked", jobs=1, writer=dataset.ForkedWriter())
    assert sorted(forked.written) == sorted(here.written) == sorted(sources) and forked.rows == here.rows
    assert _rows(tmp_path / "forked") == _rows(tmp_path / "here")
    manifest = json.loads((tmp_path / "forked" / dataset.MANIFEST).read_text())
    assert all((tmp_path / "forked" / rel).is_file() for entry in manifest.values() for rel in entry["files"])


def test_a_failure_in_the_forked_writer_is_raised_and_no_manifest_written(tmp_path):
    sources = _sources(tmp_path / "store")
    out = tmp_path / "ds"
    dataset.export_parquet(sources, out, jobs=1)
    before = (out / dataset.MANIFEST).read_bytes()
    for part in out.rglob("*.parquet"):
        part.write_bytes(b"not parquet")  # the rows to take out cannot be read
    grown = Path(sources[0])
    grown.write_bytes(grown.read_bytes().replace(b"\n", b"\n\n", 1))
    with pytest.raises(InputError) as here:  # as the export writing in its own process says it
        dataset.export_parquet(sources, out, jobs=1)
    with pytest.raises(InputError) as forked:
        dataset.export_parquet(sources, out, jobs=1, writer=dataset.ForkedWriter())
    assert str(forked.value) == str(here.value) and "Parquet" in str(here.value)
    assert (out / dataset.MANIFEST).read_bytes() == before


def test_the_command_says_what_failed_in_the_forked_writer_in_one_line(tmp_path):
    sources = _sources(tmp_path / "store")
    out = tmp_path / "ds"
    args = ["export", *sources, "--to", "parquet", "-o", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    for part in out.rglob("*.parquet"):
        part.write_bytes(b"not parquet")
    grown = Path(sources[0])
    grown.write_bytes(grown.read_bytes().replace(b"\n", b"\n\n", 1))
    failed = CliRunner().invoke(main, args)
    assert failed.exit_code == 1, failed.output
    assert failed.stderr.startswith("Error: ") and "Parquet" in failed.stderr and "internal" not in failed.stderr


def test_the_command_on_its_own_says_what_it_says_under_a_capture(tmp_path, monkeypatch):
    """A command whose stderr is its own file (not a test's capture) prints the same
    summary, failures and all, and writes the same export, as under a test's capture."""
    import subprocess
    import sys

    sources = _sources(tmp_path / "store")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    args = ["export", *sources, str(bad), "--to", "parquet", "-o", "ds", "--jobs", "1"]
    (tmp_path / "forked").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "txcodec", *args],
        cwd=tmp_path / "forked",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 1, done.stderr
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    here = CliRunner().invoke(main, args)
    assert here.exit_code == 1, here.output
    assert "failed  " in here.stderr and "converted" in here.stderr
    assert done.stderr == here.stderr
    assert _rows(tmp_path / "forked" / "ds") == _rows(tmp_path / "here" / "ds")


def test_the_daily_command_loads_neither_pyarrow_nor_sqlite(tmp_path, monkeypatch):
    """export --all --to parquet, in a process of its own: pyarrow loads in the forked
    writer, and listing stores without a database loads no SQLite."""
    import subprocess
    import sys

    _home(tmp_path / "home", monkeypatch)
    for name in ("XDG_DATA_HOME", "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "CLINE_DB_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)  # every store's default folder under the home
    code = (
        "import sys\n"
        "from txcodec.cli import main\n"
        "main(sys.argv[1:], standalone_mode=False)\n"
        "print(sorted(m for m in ('pyarrow', 'sqlite3') if m in sys.modules))\n"
    )
    args = ["export", "--all", "--to", "parquet", "-o", str(tmp_path / "ds")]
    for _ in range(2):  # the first export, then the daily one
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "[]"
        assert "converted" in done.stderr


def test_what_the_forked_writer_waits_with_runs_here_while_the_child_writes(tmp_path):
    """``waiting`` runs in this process once close has sent every ask, while the child
    still works; whatever it raises, the child is waited for and reaped."""
    sources = _sources(tmp_path / "store")
    seen = []

    def waiting():
        seen.append((os.getpid(), (tmp_path / "ds" / dataset.MANIFEST).exists()))

    dataset.export_parquet(sources, tmp_path / "ds", jobs=1, writer=dataset.ForkedWriter(waiting=waiting))
    assert seen == [(os.getpid(), False)]  # once, here, before the manifest (written once the child is done)
    assert _rows(tmp_path / "ds") == _rows(_fresh(sources, tmp_path / "here"))

    def refuse():
        raise KeyboardInterrupt

    writer = dataset.ForkedWriter(waiting=refuse)
    writer.out = tmp_path
    with pytest.raises(KeyboardInterrupt):
        writer.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(writer.pid, os.WNOHANG)
    writer.abort()  # closed: nothing left to end


def _fresh(sources: list[str], out: Path) -> Path:
    dataset.export_parquet(sources, out, jobs=1)
    return out


def test_an_aborted_forked_writer_ends_though_a_worker_holds_its_pipe(tmp_path):
    """An export that fails while a pool's workers are alive (they were forked with the
    writer's pipe open) still ends its writer."""
    import signal

    writer = dataset.ForkedWriter()
    holder = os.fork()
    if holder == 0:  # as a pool worker: holds every descriptor the parent had
        try:
            signal.pause()
        finally:
            os._exit(0)
    try:
        writer.abort()
        with pytest.raises(ChildProcessError):
            os.waitpid(writer.pid, os.WNOHANG)  # reaped: no child left behind
    finally:
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)


def _cut_last_line(path: Path) -> bytes:
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
    return data


def test_the_daily_run_reflects_what_changed_and_rewrites_nothing_else(tmp_path):
    """A session that went on by a line is read again, a new one added; the part files of
    the partitions neither touches are left as they are; a session gone from the store
    keeps its rows (as a source not named again does: docs/dataset.md)."""
    store = tmp_path / "store"
    sources = _sources(store)
    grown = next(Path(p) for p in sources if Path(p).read_bytes().count(b"\n") > 3)
    added = next(Path(p) for p in sources if Path(p) != grown)
    gone = next(Path(p) for p in sources if Path(p) not in (grown, added))
    held = tmp_path / "held"
    held.mkdir()
    shutil.move(added, held / added.name)
    full = _cut_last_line(grown)
    out = tmp_path / "ds"
    args = ["export", "--all", "--to", "parquet", "--from", "claude_code", "--root", str(store), "-o", str(out)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}

    grown.write_bytes(full)
    shutil.move(held / added.name, added)
    gone_rows = _expected([str(gone)])
    gone.unlink()
    daily = CliRunner().invoke(main, args)
    assert daily.exit_code == 0, daily.output
    assert "2 written" in daily.stderr and f"{len(sources) - 3} unchanged" in daily.stderr, daily.stderr

    assert _conversations(out) == sorted(_expected([p for p in sources if p != str(gone)]) + gone_rows)
    manifest = json.loads((out / dataset.MANIFEST).read_text())
    touched = {rel for p in (grown, added) for rel in manifest[str(p)]["files"]}
    untouched = [p for p, t in before.items() if p.exists() and p.stat().st_mtime_ns == t]
    assert untouched, "two sessions' change rewrote every part file"
    # a file of theirs is left as it was only when the grown session's rows in it came out
    # the same (the rows above say they are): one of its tables the line added no row to;
    # never the one holding its session row (its counts grew), nor one the new session's
    # rows went into
    left = {str(p.relative_to(out)) for p in untouched} & touched
    assert left <= set(manifest[str(grown)]["files"]) - set(manifest[str(added)]["files"])
    assert not any(rel.startswith("sessions/") for rel in left)
    # and a fresh export of the store as it is now has the rows of every session still there
    fresh = CliRunner().invoke(main, [*args[:-1], str(tmp_path / "fresh")])
    assert fresh.exit_code == 0, fresh.output
    assert _conversations(tmp_path / "fresh") == _expected([p for p in sources if p != str(gone)])


def _grown_export(tmp_path: Path) -> tuple[list[str], Path, dict[Path, bytes], dict[str, bytes]]:
    """An export of the golden store with two sessions a line short, then those two grown
    back: the sources, the export, its files' bytes, and the grown files as they are now."""
    sources = _sources(tmp_path / "store")
    grown = [p for p in sources if Path(p).read_bytes().count(b"\n") > 3][:2]
    full = {p: _cut_last_line(Path(p)) for p in grown}
    out = tmp_path / "ds"
    dataset.export_parquet(sources, out, jobs=1)
    for path, data in full.items():
        Path(path).write_bytes(data)
    return sources, out, {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}, full


@pytest.mark.parametrize("forked", [False, True])
@pytest.mark.parametrize("held", [dataset.HELD, 0])
def test_a_partitions_new_rows_go_into_the_file_its_take_out_rewrites(tmp_path, monkeypatch, forked, held):
    """The daily run writes the grown sessions' rows into the files their old rows were
    taken out of: no new part file (a partition's files would grow by one a day), and
    the rows of a fresh export. With held rows written out at once (past HELD), the same."""
    monkeypatch.setattr(dataset, "HELD", held)
    sources, out, before, _ = _grown_export(tmp_path)
    done = dataset.export_parquet(sources, out, jobs=1, writer=dataset.ForkedWriter() if forked else None)
    assert len(done.written) == 2
    assert sorted(p for p in out.rglob("*.parquet")) == sorted(p for p in before if p.suffix == ".parquet")
    assert sum(1 for p in before if p.suffix == ".parquet" and p.read_bytes() != before[p]) >= 2
    dataset.export_parquet(sources, tmp_path / "fresh", jobs=1)
    assert _rows(out) == _rows(tmp_path / "fresh")
    manifest = json.loads((out / dataset.MANIFEST).read_text())
    assert all((out / rel).is_file() for entry in manifest.values() for rel in entry["files"])


class _Stop(Exception):
    pass


def _stop_at_a_read_source(outcome) -> None:
    if outcome.status == "converted":
        raise _Stop


@pytest.mark.parametrize("forked", [False, True])
def test_an_export_that_stops_after_its_take_out_leaves_every_file_as_it_was(tmp_path, forked):
    """The rows taken out are held until the new rows come: an export that stops in between
    (here: after the first changed session is read) has changed no file, the manifest
    included, so the export folder is yesterday's, whole."""
    sources, out, before, _ = _grown_export(tmp_path)
    with pytest.raises(_Stop):
        dataset.export_parquet(
            sources, out, jobs=1, on_outcome=_stop_at_a_read_source, writer=dataset.ForkedWriter() if forked else None
        )
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    days=st.lists(
        st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(["cut", "grow", "touch"])), min_size=1, max_size=4),
        min_size=1,
        max_size=3,
    ),
    held=st.sampled_from([dataset.HELD, 0]),
)
def test_day_after_day_the_export_holds_every_session_as_it_is(tmp_path_factory, monkeypatch, days, held):
    """Days of sessions that lost a line, got it back or were only touched, in any mix and
    order, each followed by a daily export into the same folder: after every day the
    dataset rebuilds each session as it is then, every file the manifest names is there,
    and no partition has more files than a day that wrote it could add."""
    monkeypatch.setattr(dataset, "HELD", held)
    tmp = tmp_path_factory.mktemp("days")
    sources = _sources(tmp / "store")
    full = {p: Path(p).read_bytes() for p in sources}
    going_on = [p for p in sources if full[p].count(b"\n") > 3]  # a line short, they start where they did
    out = tmp / "ds"
    dataset.export_parquet(sources, out, jobs=1)
    first = {p.parent for p in out.rglob("*.parquet")}
    for changes in days:
        for pick, change in changes:
            path = Path(going_on[pick % len(going_on)])
            data = full[str(path)]
            if change == "cut":
                path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
            elif change == "grow":
                path.write_bytes(data)
            else:
                os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 1))
        dataset.export_parquet(sources, out, jobs=1)
        assert _conversations(out) == _expected(sources)
        manifest = json.loads((out / dataset.MANIFEST).read_text())
        assert all((out / rel).is_file() for entry in manifest.values() for rel in entry["files"])
        # a changed session's partition takes its new rows into the file it rewrote
        assert {p.parent for p in out.rglob("*.parquet")} <= first
        assert all(sum(1 for _ in folder.glob("*.parquet")) == 1 for folder in first if folder.exists())


def _part_files(out: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*.parquet")}


@pytest.mark.parametrize("forked", [False, True])
def test_a_table_whose_rows_came_out_the_same_keeps_its_file_unread(tmp_path, monkeypatch, forked):
    """Two sessions went on by a line: each table where a session's rows come out the same
    (its digest in the manifest) keeps its file as it was, byte for byte, and the file is
    not even read; each where they changed is taken out and written anew. The dataset is
    the fresh export's, row for row."""
    sources, out, _, full = _grown_export(tmp_path)
    before, old = _part_files(out), dataset._load_manifest(out)
    read: list[str] = []
    plain_read = dataset._PartFiles._read
    monkeypatch.setattr(dataset._PartFiles, "_read", lambda self, rel: read.append(rel) or plain_read(self, rel))
    dataset.export_parquet(sources, out, jobs=1, writer=dataset.ForkedWriter() if forked else None)
    new = dataset._load_manifest(out)
    same, changed = set(), set()
    for source in full:
        for rel in old[source].files:
            name = rel.split("/", 1)[0]
            (same if old[source].digests[name] == new[source].digests.get(name) else changed).add(rel)
    assert same and changed, "the golden sessions no longer make both kinds: pick others"
    assert same <= {rel for source in full for rel in new[source].files}
    after = _part_files(out)
    assert all(after[out / rel] == before[out / rel] for rel in same - changed)
    assert all(after[out / rel][0] != before[out / rel][0] for rel in changed)
    if not forked:  # the forked writer reads in its own process
        assert set(read) == changed
    dataset.export_parquet(sources, tmp_path / "fresh", jobs=1)
    assert _rows(out) == _rows(tmp_path / "fresh")


def test_an_export_that_kept_no_digests_is_brought_up_to_date_whole(tmp_path):
    """A manifest written before the digests were kept: a changed session has every file
    of its rows rewritten, and its entry gains the digests."""
    sources, out, _, full = _grown_export(tmp_path)
    manifest = json.loads((out / dataset.MANIFEST).read_text())
    for entry in manifest.values():
        del entry["digests"]
    (out / dataset.MANIFEST).write_text(json.dumps(manifest))
    before = _part_files(out)
    dataset.export_parquet(sources, out, jobs=1)
    new = dataset._load_manifest(out)
    after = _part_files(out)
    for source in full:
        assert set(new[source].digests) == {rel.split("/", 1)[0] for rel in new[source].files}
        assert all(after[out / rel][1] != before[out / rel][1] for rel in manifest[source]["files"])
    dataset.export_parquet(sources, tmp_path / "fresh", jobs=1)
    assert _rows(out) == _rows(tmp_path / "fresh")


def test_a_take_out_from_a_file_held_already_takes_from_the_rows_held(tmp_path):
    """Two sessions of one file taken out one after the other (the daily run asks as each
    changed session is read): the second take-out takes from what the first left, and
    the file written holds neither."""
    sources = _sources(tmp_path / "store")
    out = tmp_path / "ds"
    dataset.export_parquet(sources, out, jobs=1)
    by_file: dict[str, list[str]] = {}
    for entry in dataset._load_manifest(out).values():
        for rel in entry.files:
            by_file.setdefault(rel, []).append(entry.key)
    rel, keys = next((rel, keys) for rel, keys in by_file.items() if len(keys) > 2)
    parts = dataset._PartFiles(out, 1)
    parts.take_out([rel], {keys[0]})
    parts.take_out([rel], {keys[1]})
    parts.close()
    left = dataset._PartFiles(out, 1)._read(rel).column("session_key").to_pylist()
    assert {key.split("/", 1)[0] for key in left} == set(keys[2:])
