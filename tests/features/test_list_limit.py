"""``list --limit N`` reads only the files that can be among the N newest
(``Store.describe_item``), and lists exactly the first N rows of the whole listing."""

from __future__ import annotations

import json
import os
from datetime import UTC
from datetime import datetime

import pytest
from click.testing import CliRunner
from support import homes

from txcodec import api
from txcodec.cli import main
from txcodec.cli.store import sample_path
from txcodec.harnesses.claude_code import store as claude_store
from txcodec.harnesses.codex import store as codex_store

SESSIONS = 40


def _claude(project, n: int, minute: int) -> None:
    sid = f"4f6c1d2e-0000-4000-8000-{n:012d}"
    stamp = f"2026-10-01T08:{minute:02d}:00.000Z"
    lines = [
        {
            "type": "user",
            "uuid": f"00000000-0000-4000-8000-{n:08d}0001",
            "parentUuid": None,
            "sessionId": sid,
            "cwd": "/home/dev/shop",
            "timestamp": stamp,
            "message": {"role": "user", "content": f"prompt {n}"},
        }
    ]
    path = project / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    written = datetime(2026, 10, 1, 8, minute, 30, tzinfo=UTC).timestamp()  # written after its last record
    os.utime(path, (written, written))


@pytest.fixture
def home(tmp_path, monkeypatch):
    homes.isolate(tmp_path, monkeypatch)
    project = tmp_path / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    for n in range(SESSIONS):
        _claude(project, n, minute=(n * 7) % 25)  # out of order, some minutes shared (equal times)
    for n in range(2):  # another store, listed whole: its rows are merged in by time
        sid = f"0199aaaa-0000-7000-8000-00000000000{n}"
        written, _ = api.convert(sample_path("claude_code"), "codex", cwd="/home/dev/shop", session_id=sid)
        (rollout,) = api.install(written, "codex")[:1]
        when = datetime(2026, 9, 18, 12, tzinfo=UTC).timestamp()  # after its records (10:00 that day)
        os.utime(rollout, (when, when))
    return project


def _rows(*extra):
    result = CliRunner().invoke(main, ["list", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("index", [[], ["--no-index"]])
@pytest.mark.parametrize("limit", [1, 3, 7, 20, SESSIONS + 5])
def test_a_limited_listing_is_the_head_of_the_whole_one(home, limit, index):
    whole = _rows(*index)
    assert len(whole) == SESSIONS + 2
    assert _rows("--limit", str(limit), *index) == whole[:limit]
    assert (
        _rows("--limit", str(limit), "--since", "2026-10-01T08:20:00Z", *index)
        == [r for r in whole if r["updated"] >= "2026-10-01T08:20"][:limit]
    )
    assert _rows("--limit", str(limit), "--grep", "prompt 1", *index) == _rows("--grep", "prompt 1", *index)[:limit]


def test_a_limited_listing_reads_only_the_newest_files(home, monkeypatch):
    read = []
    describe = claude_store.described  # every Claude Code session described, with its details or not

    def counted(info, found):
        read.append(info.session_id)
        describe(info, found)

    monkeypatch.setattr(claude_store, "described", counted)
    rollouts = set()  # each rollout read: scanned alone (a whole listing), or described with its details
    scan, rollout = codex_store.scan, codex_store.described
    monkeypatch.setattr(codex_store, "scan", lambda path, data=None: rollouts.add(str(path)) or scan(path, data))
    monkeypatch.setattr(codex_store, "described", lambda found, item: rollouts.add(found.path) or rollout(found, item))
    rows = _rows("--limit", "3")
    assert len(rows) == 3
    assert len(read) <= 5  # the three newest and those written in the same minute, not all 40
    assert not rollouts  # written before the newest three
    first = set(read)
    read.clear()
    whole = _rows()
    # the stores' listing rows described by the limited run come from the session index
    assert sorted(read) == sorted({r["session_id"] for r in whole if r["harness"] == "claude_code"} - first)
    assert len(rollouts) == 2
    read.clear()
    rollouts.clear()
    assert _rows() == whole  # warm: no file read for the listing
    assert read == [] and not rollouts
    assert _rows("--no-index") == whole
    assert len(read) == SESSIONS and len(rollouts) == 2


def test_a_long_listing_is_printed_as_its_rows_are_read(home, monkeypatch):
    from txcodec import sessions
    from txcodec.cli import store as cli_store

    whole = CliRunner().invoke(main, ["list"]).output.splitlines()
    events = []
    read = sessions._read_entry
    monkeypatch.setattr(sessions, "_read_entry", lambda row: events.append("read") or read(row))
    echo = cli_store.click.echo
    monkeypatch.setattr(cli_store.click, "echo", lambda text="", **kw: events.append("echo") or echo(text, **kw))
    monkeypatch.setattr(cli_store, "STREAM_ROWS", 10)
    monkeypatch.setattr(cli_store, "_FLUSH", 5)
    monkeypatch.setattr(sessions, "_BLOCK_ROWS", 4)
    result = CliRunner().invoke(main, ["list", "--no-index"])
    assert result.exit_code == 0, result.output
    assert events.index("echo") < len(events) - 1 - events[::-1].index("read")  # printed before the last read
    streamed = result.output.splitlines()
    assert [line.split() for line in streamed] == [line.split() for line in whole]  # the same cells
