"""The session index (txcodec.session_index): ``list`` with it says what ``list --no-index``
says, however the files change between runs; it is private, clearable, and rebuilt when
damaged or written by another version."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest
from click.testing import CliRunner
from support import homes

from txcodec import api
from txcodec import session_index
from txcodec.cli import main
from txcodec.cli.store import sample_path


@pytest.fixture
def home(tmp_path, monkeypatch):
    homes.isolate(tmp_path, monkeypatch)
    return homes.install_sample_copies()


def _list(*extra):
    result = CliRunner().invoke(main, ["list", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_as_without_index():
    with_index = _list()
    assert with_index == _list("--no-index")
    return with_index


@pytest.fixture(params=["rows one by one", "tables read whole"])
def lookups(request, monkeypatch):
    """The index's two ways to look rows up: one query a row (the first look-ups of a run),
    and each table read whole once (past ``_POINT_LOOKUPS``, a long listing)."""
    if request.param == "tables read whole":
        monkeypatch.setattr(session_index, "_POINT_LOOKUPS", 0)
    return request.param


def test_list_with_the_index_follows_every_change_to_the_files(home, tmp_path, lookups):
    first = _same_as_without_index()
    path = session_index.default_path()
    assert path.is_file() and session_index.SessionIndex(path).count() == 4
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the users' prompts
    assert first == _same_as_without_index()  # the second run from the index

    # changed: a new first prompt written in place, same size and time would not be seen,
    # so the file is rewritten with another length
    claude = home["claude_code"]
    claude.write_text(claude.read_text().replace("Checkout returns 500", "Checkout now returns 503"))
    rows = {r["harness"]: r for r in _same_as_without_index()}
    assert rows["claude_code"]["first_prompt"].startswith("Checkout now returns 503")

    # added: a second codex session
    written, _ = api.convert(sample_path("claude_code"), "codex", session_id="0199aaaa-0000-7000-8000-0000000000ff")
    api.install(written, "codex")
    assert len(_same_as_without_index()) == 5

    # truncated: the pi session cut after its header and first prompt
    pi = home["pi"]
    pi.write_text("\n".join(pi.read_text().splitlines()[:3]) + "\n")
    rows = {r["harness"]: r for r in _same_as_without_index() if r["harness"] == "pi"}
    assert rows["pi"]["messages"] < first[[r["harness"] for r in first].index("pi")]["messages"]

    # deleted: the qwen session, and its row is forgotten
    home["qwen_code"].unlink()
    assert "qwen_code" not in {r["harness"] for r in _same_as_without_index()}
    assert session_index.SessionIndex(path).count() == 4


def test_a_damaged_or_foreign_index_is_rebuilt_and_clear_removes_it(home):
    expected = _list("--no-index")
    path = session_index.default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database at all" * 100)
    assert _list() == expected
    assert session_index.SessionIndex(path).count() == 4  # rebuilt
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '0.0.0-other' WHERE key = 'txcodec'")
    db.execute("UPDATE sessions SET entry = ?", (b'[true, "forged", null, 99, null, null, null]',))
    db.commit()
    db.close()
    assert _list() == expected  # another version's rows are never trusted
    result = CliRunner().invoke(main, ["index"])
    assert result.exit_code == 0 and "4 sessions" in result.output
    result = CliRunner().invoke(main, ["index", "--clear"])
    assert result.exit_code == 0 and f"removed {path}" in result.output
    assert not any(p.exists() for p in (path, path.with_name(path.name + "-wal")))


def test_no_index_writes_nothing(home):
    _list("--no-index")
    assert not session_index.default_path().exists()


def test_rows_a_current_index_holds_are_used(home):
    """The index is read, not only written: a row whose file is unchanged comes from it."""
    _list()
    path = session_index.default_path()
    db = sqlite3.connect(path)
    (entry,) = db.execute("SELECT entry FROM sessions WHERE path = ?", (str(home["codex"]),)).fetchone()
    forged = json.loads(entry)
    forged[2] = "from the index"
    db.execute("UPDATE sessions SET entry = ? WHERE path = ?", (json.dumps(forged).encode(), str(home["codex"])))
    db.commit()
    db.close()
    assert {r["harness"]: r for r in _list()}["codex"]["first_prompt"] == "from the index"
    assert {r["harness"]: r for r in _list("--no-index")}["codex"]["first_prompt"] != "from the index"
    os.utime(home["codex"], ns=(1, 1))  # touched: read again
    assert {r["harness"]: r for r in _list()}["codex"]["first_prompt"] != "from the index"


def test_sessions_read_in_forked_workers_give_the_same_rows(home, monkeypatch):
    """A cold listing of many sessions reads them in forked processes: the rows are the
    ones a single process reads."""
    from txcodec import sessions

    alone = _list("--no-index")
    monkeypatch.setattr(sessions, "_PARALLEL_ROWS", 1)
    monkeypatch.setattr(sessions, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    calls = []
    real = sessions._read_entries
    monkeypatch.setattr(
        sessions, "_read_entries", lambda rows, sizes, *pools: calls.append(len(rows)) or real(rows, sizes, *pools)
    )
    assert _list() == alone
    assert calls == [2]  # the other two (Claude Code, Codex) had theirs read as their stores described them
    assert _list() == alone and calls == [2, 0]  # the second run from the index


def test_an_index_that_cannot_be_written_is_left_alone(home):
    """A cache folder the user cannot write: list reads every session, and says the same."""
    expected = _list("--no-index")
    folder = session_index.default_path().parent
    folder.mkdir(parents=True)
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root writes anyway: then the index is simply made
            assert _list() == expected
            return
        assert _list() == expected
        assert not session_index.default_path().exists()
    finally:
        folder.chmod(0o700)


def test_a_locked_index_is_not_thrown_away(home):
    """Another command holding the index (a write lock) costs this run its reads, never the
    index: a lock is no damage."""
    expected = _list()
    path = session_index.default_path()
    inode = path.stat().st_ino
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    try:
        assert _list() == expected
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert path.stat().st_ino == inode  # the same file, not one made again
    assert session_index.SessionIndex(path).count() == 4


def test_the_stores_listing_rows_are_kept_and_used_while_the_file_is_unchanged(home):
    """A warm listing reads no Claude Code or Codex file: the stores' own rows (cwd, times)
    come from the index while the file's size, time and inode are as they were."""
    expected = _list("--no-index")
    assert _list() == expected
    path = session_index.default_path()
    db = sqlite3.connect(path)
    kept = dict(db.execute("SELECT harness, path FROM listed"))
    assert kept == {"claude_code": str(home["claude_code"]), "codex": str(home["codex"])}
    (item,) = db.execute("SELECT item FROM listed WHERE harness = 'claude_code'").fetchone()
    forged = json.loads(item)
    forged["cwd"] = "/from/the/index"
    db.execute("UPDATE listed SET item = ? WHERE harness = 'claude_code'", (json.dumps(forged).encode(),))
    db.commit()
    db.close()
    assert {r["harness"]: r for r in _list()}["claude_code"]["cwd"] == "/from/the/index"
    assert {r["harness"]: r for r in _list("--no-index")}["claude_code"]["cwd"] != "/from/the/index"
    os.utime(home["claude_code"], ns=(1, 1))  # touched: described again
    assert {r["harness"]: r for r in _list()}["claude_code"]["cwd"] != "/from/the/index"
    home["codex"].unlink()  # deleted: its listing row is forgotten
    _list()
    db = sqlite3.connect(path)
    assert [h for (h,) in db.execute("SELECT harness FROM listed")] == ["claude_code"]
    db.close()


def test_a_warm_listing_reads_each_table_of_the_index_once(home, monkeypatch):
    """Past the first look-ups, the rows are read in one query a table, not one a session."""
    monkeypatch.setattr(session_index, "_POINT_LOOKUPS", 0)
    expected = _list()
    queries = []
    real = sqlite3.connect

    def traced(*args, **kwargs):
        db = real(*args, **kwargs)
        db.set_trace_callback(queries.append)
        return db

    monkeypatch.setattr(session_index.sqlite3, "connect", traced)
    assert _list() == expected
    selects = [q for q in queries if q.startswith("SELECT path")]
    assert sorted(selects) == [
        "SELECT path, harness, size, mtime_ns, inode, item FROM listed",
        "SELECT path, session_id, size, mtime_ns, inode, entry FROM sessions",
    ]


def test_the_stores_describe_the_files_in_forked_workers_when_cold(home, monkeypatch):
    """A cold listing has the Claude Code and Codex files described by their stores in forked
    processes, each file's details read in the same worker right after (no second pass of
    workers for them): the same rows as one process; a warm one none."""
    from txcodec import sessions

    alone = _list("--no-index")
    monkeypatch.setattr(sessions, "_PARALLEL_ROWS", 1)
    monkeypatch.setattr(sessions, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    calls = []
    real = sessions._forked

    def forked(work, jobs, *rest):
        calls.append((work.__name__, len(jobs)))
        return real(work, jobs, *rest)

    monkeypatch.setattr(sessions, "_forked", forked)
    assert _list() == alone
    assert calls == [("_describe_item", 2), ("_read_entry", 2)]
    calls.clear()
    assert _list() == alone and calls == [("_describe_item", 0), ("_read_entry", 0)]  # from the index
