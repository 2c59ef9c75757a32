"""Issue 33, items 8, 9 and 16: what a store may hold besides sessions. A FIFO named like a
session, a link to ``/dev/zero``, a file that cannot be read and a zstd bomb are each
passed over with one warning naming the file; the listing goes on and shows the rest
(docs/guarantees.md#limits).

Each store gets one real session (a golden one, written by its own writer and installed)
and beside it a copy whose main file is replaced by the special file. ``list`` runs in a
child process with a timeout: on the old code a FIFO hung it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner
from support.paths import GOLDEN
from support.paths import ROOT

from txcodec import api
from txcodec.cli import main
from txcodec.core import zst
from txcodec.core.errors import InputError
from txcodec.core.errors import StoreError

SOURCE = GOLDEN / "claude_code" / "assistant_errors" / "cafa048c-cc92-56b3-a6cc-eb909dc5bc0a.jsonl"
# the stores kept as files (opencode and Kilo keep a database; aider one history a project: below)
STORES = (
    "claude_code",
    "cline",
    "codex",
    "continue_cli",
    "copilot_cli",
    "droid",
    "gemini_cli",
    "kimi_cli",
    "mistral_vibe",
    "openhands",
    "pi",
    "qwen_code",
)


def _other(sid: str) -> str:
    """Another id of the same shape (digits stay digits, hex stays hex)."""
    return "".join(("9" if c.isdigit() else "f" if c in "abcdef" else c) for c in sid)


def _store(tmp_path: Path, harness: str) -> tuple[Path, str, Path]:
    """``(root, session id, the twin's main file)``: a store holding one session and a twin
    of it, under another id, whose main file the test replaces."""
    root = tmp_path / harness
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    written, _ = api.convert(api.to_common(api.load(SOURCE)), harness, cwd=str(project))
    sid = written.session_id
    installed = api.install(written, harness, root)
    twin = None
    for path in installed:
        rel = path.relative_to(root).as_posix()
        for form in (sid, sid.replace("-", ""), sid[:8]):  # gemini_cli and Vibe name files by its start
            rel = rel.replace(form, _other(form))
        copy = root / rel
        if copy != path:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            twin = twin or copy
    assert twin is not None, installed
    return root, sid, twin


def _list(harness: str, root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(root.parent)}
    return subprocess.run(
        [sys.executable, "-m", "txcodec", "list", "--harness", harness, "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=120,  # the old code waited for a writer to open the FIFO, for ever
        env=env,
    )


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("harness", STORES)
def test_a_special_file_named_like_a_session_is_passed_over_with_a_warning(tmp_path, harness, kind):
    root, sid, twin = _store(tmp_path, harness)
    twin.unlink()
    if kind == "fifo":
        os.mkfifo(twin)
    else:
        twin.symlink_to("/dev/zero")
    result = _list(harness, root)
    assert result.returncode == 0, result.stderr
    assert sid in result.stdout or sid.replace("-", "") in result.stdout
    assert _other(sid) not in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(twin) in warnings[0], result.stderr
    assert "not a regular file" in warnings[0]


@pytest.mark.parametrize("harness", STORES)
def test_a_file_that_cannot_be_read_is_one_warning(tmp_path, harness, monkeypatch):
    """Every store, not only claude_code's, says which file it passed over. The test runs
    as root here, where no mode makes a file unreadable: the open is refused instead."""
    root, sid, twin = _store(tmp_path, harness)
    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if os.fspath(path) == str(twin):
            raise PermissionError(13, "Permission denied", str(twin))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    result = CliRunner().invoke(main, ["list", "--harness", harness, "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(twin) in warnings[0] and "Permission denied" in warnings[0], result.output
    rows = json.loads(result.output[result.output.index("[") :])
    if harness != "claude_code":  # whose listing keeps the row, found by its name, beside the warning
        assert [row["path"] for row in rows if str(twin) in row["path"]] == []


def test_an_aider_history_that_is_a_fifo_is_a_warning(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / ".aider.chat.history.md")
    result = _list("aider", project)
    assert result.returncode == 0 and "FIFO" in result.stderr, result.stderr


# --- deep nesting in a store's own JSON files ----------------------------------------------

DEEP = b"[" * 200_000 + b"]" * 200_000


@pytest.mark.parametrize(
    "harness,name",
    [("kimi_cli", "kimi.json"), ("mistral_vibe", "meta.json"), ("cline", "record")],
)
def test_a_store_file_nested_too_deeply_does_not_end_the_listing(tmp_path, harness, name):
    root, sid, twin = _store(tmp_path, harness)
    if name == "kimi.json":
        (root / "kimi.json").write_bytes(b'{"work_dirs":' + DEEP + b"}")
    elif name == "meta.json":
        (twin.parent / "meta.json").write_bytes(b'{"session_id":' + DEEP + b"}")
    else:
        (twin.parent / f"{twin.parent.name}.json").write_bytes(b'{"a":' + DEEP + b"}")
    result = CliRunner().invoke(main, ["list", "--harness", harness, "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    assert sid in result.output


# --- Mistral Vibe's unified chunks ------------------------------------------------------------


def _unified(tmp_path: Path) -> Path:
    folder = tmp_path / "vibe" / "logs" / "session" / "unified"
    shutil.copytree(GOLDEN / "mistral_vibe" / "unified_resumed", folder, symlinks=True)
    current = next(folder.rglob("CURRENT"))
    return current


def test_a_vibe_chunk_linked_outside_its_session_is_not_read(tmp_path):
    current = _unified(tmp_path)
    chunk = next((current.parent / "chunks").glob("*.json"))
    secret = tmp_path / "secret.json"
    secret.write_bytes(b'[{"message":{"role":"user","content":"the secret text"}}]')
    chunk.unlink()
    chunk.symlink_to(secret)
    result = CliRunner().invoke(main, ["show", "--no-color", "--from", "mistral_vibe", str(current)])
    assert "the secret text" not in result.output
    assert result.exit_code == 1 and "outside its session" in result.output, result.output


def test_a_vibe_chunk_that_is_a_fifo_does_not_hang_show(tmp_path):
    current = _unified(tmp_path)
    chunk = next((current.parent / "chunks").glob("*.json"))
    chunk.unlink()
    os.mkfifo(chunk)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "txcodec", "show", "--no-color", "--from", "mistral_vibe", str(current)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 1 and "FIFO" in result.stderr, result.stderr


# --- item 8: a zstd bomb ----------------------------------------------------------------------


def _bomb(size: int) -> bytes:
    """Frames of zeros that expand to ``size`` bytes from a few KB."""
    frame = zstandard.ZstdCompressor(level=3).compress(b"\0" * (64 << 20))
    return frame * (size // (64 << 20))


def test_a_zstd_bomb_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "rollout.jsonl.zst"
    path.write_bytes(_bomb(8 << 30))  # 8 GiB from a few KB: the old code held it all
    with pytest.raises(InputError, match="decompression bomb") as caught:
        zst.read_bytes(path)
    assert str(path) in str(caught.value)
    with pytest.raises(InputError, match="decompression bomb"), zst.open_stream(path) as stream:
        while stream.read(1 << 20):
            pass


def test_decompression_keeps_real_files_and_a_caller_limit(tmp_path):
    data = b'{"type":"user","message":{"content":"a line of a session"}}\n' * 100_000
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(data))
    assert zst.read_bytes(path) == data
    with pytest.raises(InputError, match="expands past 1,000 bytes"):
        zst.read_bytes(path, limit=1000)
    plain = tmp_path / "s.json"
    plain.write_bytes(b"x" * 2000)
    with pytest.raises(InputError, match="larger than the 1,000 bytes"):
        zst.read_bytes(plain, limit=1000)


def test_a_zstd_bomb_in_the_codex_store_is_one_warning(tmp_path):
    root, sid, twin = _store(tmp_path, "codex")
    bomb = twin.with_name(twin.name + ".zst")
    twin.unlink()
    bomb.write_bytes(_bomb(8 << 30))
    result = _list("codex", root)
    assert result.returncode == 0, result.stderr
    assert sid in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(bomb) in warnings[0] and "bomb" in warnings[0], result.stderr
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    export = subprocess.run(
        [sys.executable, "-m", "txcodec", "export", "--all", "--to", "html", "--harness", "codex"]
        + ["--root", str(root), "-o", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert export.returncode == 0 and (site / "index.html").is_file(), export.stderr


def test_open_regular_refuses_without_blocking(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="FIFO"):
        zst.open_regular(fifo)
    with pytest.raises(StoreError, match="character device"):
        zst.read_bytes("/dev/zero")


# --- item 13: a folder whose name is not UTF-8 ------------------------------------------------


def test_a_name_that_is_not_utf8_is_listed_and_exported_with_a_warning(tmp_path):
    root = tmp_path / "projects"
    project = os.path.join(bytes(root), b"-tmp-caf\xe9")
    os.makedirs(project)
    shutil.copyfile(SOURCE, os.path.join(project, SOURCE.name.encode()))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "PYTHONIOENCODING": "utf-8"}
    base = [sys.executable, "-m", "txcodec"]
    listed = subprocess.run(
        [*base, "list", "--harness", "claude_code", "--root", str(root), "--json"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert os.fsencode(row["path"]) == os.path.join(project, SOURCE.name.encode())  # as os.fsdecode reads it
    warning = listed.stderr.decode()
    assert "-tmp-caf\\xe9" in warning and "not UTF-8" in warning
    site = tmp_path / "site"
    export = subprocess.run(
        [*base, "export", "--all", "--to", "html", "--harness", "claude_code", "--root", str(root), "-o", str(site)],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert export.returncode == 0, export.stderr
    assert b"1 pages written" in export.stderr and (site / "index.html").is_file()


# --- item 10: an opencode database with an odd schema -------------------------------------------


def _opencode_db(path: Path, session_columns: str) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    con.executescript(
        f"""
        create table session (id text, slug text, directory text, title text, version text,
                              time_created integer, time_updated integer{session_columns});
        create table message (id text, session_id text, time_created integer, data text);
        create table part (id text, message_id text, session_id text, data text);
        insert into session (id, slug, directory, title, version, time_created, time_updated)
            values ('ses_1', 's', '/tmp/p', 't', '1.0', 1, 2);
        insert into message values ('msg_1', 'ses_1', 1, '{{"role":"user","time":{{"created":1}}}}');
        insert into part values ('prt_1', 'msg_1', 'ses_1', '{{"type":"text","text":"hello there"}}');
        """
    )
    con.commit()
    con.close()


def test_an_opencode_table_with_cost_but_not_every_token_column_reads(tmp_path):
    db = tmp_path / "opencode.db"
    _opencode_db(db, ", cost real, tokens_input integer, tokens_output integer")
    result = CliRunner().invoke(main, ["show", "--no-color", "--from", "opencode", f"{db}#ses_1"])
    assert result.exit_code == 0, result.output
    assert "hello there" in result.output


def test_an_opencode_database_whose_schema_is_damaged_is_one_line(tmp_path):
    import sqlite3

    db = tmp_path / "opencode.db"
    _opencode_db(db, "")
    con = sqlite3.connect(db)
    con.execute("pragma writable_schema = on")
    con.execute("update sqlite_master set sql = 'create table message (id text, ((( damaged' where name = 'message'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="opencode.db"):
        api.load(f"{db}#ses_1", "opencode")
