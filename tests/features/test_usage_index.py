"""Issue 37: ``txcodec usage`` from the session index says what ``usage --no-index`` says,
however the files change between runs: a file changed, added, truncated or deleted, a
converted copy in another file (counted once), a subagent file changed alone."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import CORPUS

from txcodec import api
from txcodec import session_index
from txcodec.cli import main

SPOTTER = CORPUS / "claude_code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # with subagents
MODERN = CORPUS / "claude_code" / "generated" / "claude_write_edit_2turns.jsonl"  # 2.1.332: verified usage
BYS = ("session,model", "day", "day,model,harness", "month,project")


@pytest.fixture
def home(tmp_path, monkeypatch):
    claude = tmp_path / "claude" / "projects" / "-home-u-proj"
    claude.mkdir(parents=True)
    for p in (SPOTTER, MODERN):
        (claude / p.name).write_bytes(p.read_bytes())
        os.utime(claude / p.name, (time.time() - 86400,) * 2)  # written before any copy of them
    side = SPOTTER.parent / SPOTTER.stem
    shutil.copytree(side, claude / SPOTTER.stem)
    codex = next((CORPUS / "codex").rglob("rollout-*.jsonl"))
    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    (day / codex.name).write_bytes(codex.read_bytes())
    for name in ("GEMINI_CLI_HOME", "QWEN_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.setenv(name, str(tmp_path / "none"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return {"claude": claude, "codex": day / codex.name, "spotter": claude / SPOTTER.name}


def _usage(*args: str) -> dict:
    out = CliRunner().invoke(main, ["usage", "--json", "--timezone", "UTC", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _same(*extra: str) -> dict:
    """Each grouping with the index (twice: made, then used) equals the run without it."""
    first = None
    for by in BYS:
        without = _usage("--by", by, "--no-index", *extra)
        assert _usage("--by", by, *extra) == without
        assert _usage("--by", by, *extra) == without
        first = first or without
    return first


def _touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_usage_with_the_index_follows_every_change_to_the_files(home):
    start = _same()
    assert start["totals"]["calls"] > 0
    assert session_index.default_path().is_file()

    # changed: the last assistant line of the 2.1.332 session dropped (truncated)
    modern = home["claude"] / MODERN.name
    lines = modern.read_bytes().splitlines(keepends=True)
    cut = max(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    modern.write_bytes(b"".join(lines[:cut]))
    truncated = _same()
    assert truncated["totals"]["calls"] < start["totals"]["calls"]

    # added: a second copy of the rollout under another id and day
    text = home["codex"].read_bytes()
    other = home["codex"].parent.parent / "24" / home["codex"].name.replace("rollout-", "rollout-x")
    other.parent.mkdir()
    other.write_bytes(text)
    _same()

    # deleted
    other.unlink()
    assert _same() == truncated
    assert _same("--since", "2026-01-01", "--until", "2026-03-01")["totals"] is not None


def test_a_subagent_file_changing_alone_recounts_its_session(home):
    before = _same()
    agent = next((home["claude"] / SPOTTER.stem).rglob("agent-*.jsonl"))
    lines = agent.read_bytes().splitlines(keepends=True)
    cut = max(i for i, line in enumerate(lines) if b'"usage"' in line)
    agent.write_bytes(b"".join(lines[:cut]))  # the session's main file is not touched
    after = _same()
    assert after["totals"]["calls"] < before["totals"]["calls"]
    agent.unlink()  # a subagent file gone: still the same as without the index
    _same()


def test_a_converted_copy_in_another_file_counts_once(home):
    before = _same()
    written, _ = api.convert(home["claude"] / MODERN.name, "codex")
    copy = home["codex"].parent / "rollout-2026-02-23T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
    copy.write_bytes(written.files[written.main])
    after = _same()
    keep = ("calls", "input_tokens", "output_tokens", "cache_read_input_tokens", "total_tokens")
    assert {k: after["totals"][k] for k in keep} == {k: before["totals"][k] for k in keep}
    assert after["copies"] and after["copies"][0].startswith(str(copy))
    # the original changes (newer than the copy now): the copy's calls count, the original's drop
    later = copy.stat().st_mtime_ns + 10_000_000_000
    os.utime(home["claude"] / MODERN.name, ns=(later, later))
    swapped = _same()
    assert swapped["copies"] and swapped["copies"][0].startswith(str(home["claude"] / MODERN.name))
    copy.unlink()
    assert _same()["copies"] == []


def test_a_kept_row_is_used_while_its_file_is_unchanged(home):
    """The index is what answers: a forged kept cell shows, until the file changes."""
    import msgspec

    _usage("--by", "day")
    db = session_index.UsageIndex()
    assert db._db is not None
    modern = str(home["claude"] / MODERN.name)
    fid, cells = db._db.execute("SELECT fid, cells FROM usage_files WHERE path = ?", (modern,)).fetchone()
    forged = [[m, d, [c[0] + 1000, *c[1:]]] for m, d, c in msgspec.msgpack.decode(cells)]
    db._db.execute("UPDATE usage_files SET cells = ? WHERE fid = ?", (msgspec.msgpack.encode(forged), fid))
    db._db.execute("DELETE FROM usage_last")
    db.close()
    honest = _usage("--by", "day", "--no-index")["totals"]["calls"]
    assert _usage("--by", "day")["totals"]["calls"] == honest + 1000 * len(forged)
    _touch_later(Path(modern))
    assert _usage("--by", "day")["totals"]["calls"] == honest


def test_a_damaged_index_is_rebuilt(home):
    first = _usage("--by", "day")
    path = session_index.default_path()
    session_index.clear(path)
    path.write_bytes(b"not a database" * 100)
    assert _usage("--by", "day") == first
    assert _usage("--by", "day") == first


@pytest.mark.parametrize("seed", [1, 2])
def test_random_changes_keep_the_index_equal_to_no_index(home, seed):
    """A random walk of changes (copies converted or not, truncations, deletions, touches,
    subagent edits), each step compared with --no-index for two groupings."""
    import random

    rng = random.Random(seed)
    claude, codex = home["claude"], home["codex"].parent
    for step in range(8):
        files = sorted([*claude.glob("*.jsonl"), *codex.glob("*.jsonl"), *claude.rglob("agent-*.jsonl")])
        action = rng.choice(["copy", "convert", "truncate", "delete", "touch"])
        target = rng.choice(files)
        if action == "copy" and target.parent == claude:
            (claude / f"{step:08d}-0000-4000-8000-000000000000.jsonl").write_bytes(target.read_bytes())
        elif action == "convert" and target.parent == claude:
            written, _ = api.convert(target, "codex")
            name = f"rollout-2026-02-23T00-00-0{step}-0199aaaa-0000-7000-8000-00000000000{step}.jsonl"
            (codex / name).write_bytes(written.files[written.main])
        elif action == "truncate":
            data = target.read_bytes()
            target.write_bytes(data[: data.rfind(b"\n", 0, max(1, len(data) * 2 // 3)) + 1])
        elif action == "delete" and len(files) > 2:
            target.unlink()
        else:
            _touch_later(target)
        for by in ("session,model", "day,model"):
            assert _usage("--by", by) == _usage("--by", by, "--no-index"), (step, action, target)


def test_two_calls_in_one_millisecond_and_their_copies_are_kept_as_without_the_index(home):
    """Two calls of one model at the same instant mark nothing (no mark tells them apart);
    kept in the index with the file's other marks, read back, and counted across a copy
    and a truncated copy as without the index."""
    modern = home["claude"] / MODERN.name
    lines = modern.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    twin = lines[at].replace(b'"id":"msg_', b'"id":"msg_twin').replace(b'"uuid":"', b'"uuid":"twin-', 1)
    assert twin != lines[at]
    modern.write_bytes(b"".join([*lines[: at + 1], twin, *lines[at + 1 :]]))
    os.utime(modern, (time.time() - 86400,) * 2)
    one = _same()
    copy = home["claude"] / "00000000-0000-4000-8000-00000000c0de.jsonl"
    copy.write_bytes(modern.read_bytes())
    both = _same()
    assert both["totals"]["calls"] == one["totals"]["calls"] + 2  # the twins count in each file
    assert both["copies"] and both["copies"][0].startswith(str(copy))
    data = copy.read_bytes()
    copy.write_bytes(data[: data.rfind(b"\n", 0, len(data) // 2) + 1])
    _same("--since", "2020-01-01")


def test_a_kept_row_whose_marks_do_not_fit_is_read_again(home):
    """A row whose marks blob is damaged (cut, or arrays that do not match) is not used:
    the file is read again, and the report is the one without the index."""
    import msgspec

    copy = home["claude"] / "00000000-0000-4000-8000-0000000c0de2.jsonl"
    copy.write_bytes(MODERN.read_bytes())  # newer: its calls are copies, taken off with its marks
    honest = _usage("--by", "day", "--no-index")
    assert honest["copies"]
    _usage("--by", "day")
    db = session_index.UsageIndex()
    assert db._db is not None
    (marks,) = db._db.execute("SELECT marks FROM usage_files WHERE path = ?", (str(copy),)).fetchone()
    days, models, instants, rest, ambiguous = msgspec.msgpack.decode(marks)
    short = msgspec.msgpack.encode([days, models, [i[:-8] for i in instants], rest, ambiguous])  # a mark lost
    db._db.execute("UPDATE usage_files SET marks = ? WHERE path = ?", (short, str(copy)))
    db._db.execute("UPDATE usage_files SET marks = ? WHERE path = ?", (marks[:-3], str(home["codex"])))
    db._db.execute("DELETE FROM usage_last")
    db.close()
    assert _usage("--by", "day") == honest
