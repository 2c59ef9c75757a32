"""A store's whole listing kept in the session index (``listings``, txcodec.sessions._Listings):
a warm ``list`` takes the rows of Claude Code's and Codex's stores from it while every folder
under the store's root and every file is as it was, asks nothing of the store then, and says
what ``--no-index`` says after any change to the files and folders."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time

import pytest
from click.testing import CliRunner
from support import homes

from txcodec import api
from txcodec import session_index
from txcodec import sessions
from txcodec.cli import main
from txcodec.cli.store import sample_path
from txcodec.harnesses.claude_code import store as claude_store
from txcodec.harnesses.codex import store as codex_store


@pytest.fixture
def home(tmp_path, monkeypatch):
    homes.isolate(tmp_path, monkeypatch)
    files = homes.install_sample_copies()
    subagents = files["claude_code"].with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    shutil.copy(files["claude_code"], subagents / "agent-a1.jsonl")
    _settle(tmp_path)
    return files


def _settle(tmp_path) -> None:
    """Every folder of the home dated a while ago: a listing is kept only when no folder
    changed so recently that a change in the same clock tick would not show."""
    settled = time.time() - 3600 - time.monotonic() % 1000  # another time at each call
    for folder, dirs, _ in os.walk(tmp_path):
        for name in dirs:
            os.utime(os.path.join(folder, name), (settled, settled))
    os.utime(tmp_path, (settled, settled))


def _list(*extra):
    result = CliRunner().invoke(main, ["list", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_as_without_index(*extra):
    with_index = _list(*extra)
    assert with_index == _list("--no-index", *extra)
    return with_index


def _kept() -> dict[str, list[sessions.SessionRow]]:
    db = sqlite3.connect(session_index.default_path())
    try:
        return {
            h: [k.row for k in sessions._decode_listing(b).rows]
            for h, b in db.execute("SELECT harness, listing FROM listings")
        }
    finally:
        db.close()


@pytest.fixture
def asked(monkeypatch):
    """The stores' listings asked for in a run (Claude Code's project folders, Codex's rollouts)."""
    calls = []
    projects = claude_store._list_projects
    rollouts = codex_store._rollout_paths
    monkeypatch.setattr(claude_store, "_list_projects", lambda *a: calls.append("claude_code") or projects(*a))
    monkeypatch.setattr(codex_store, "_rollout_paths", lambda *a: calls.append("codex") or rollouts(*a))
    return calls


def test_a_kept_listing_is_used_while_every_folder_and_file_holds(home, asked):
    first = _same_as_without_index()
    kept = _kept()
    assert {h: [r.session_id for r in rows] for h, rows in kept.items()} == {
        h: [r["session_id"] for r in first if r["harness"] == h] for h in ("claude_code", "codex")
    }
    assert [r.subagents for r in kept["claude_code"]] == [1]
    asked.clear()
    assert _list() == first
    assert asked == []  # neither store was asked: both listings came from the index
    assert _list("--no-index") == first and sorted(asked) == ["claude_code", "codex"]

    # the rows are the kept ones: a forged title shows while nothing changed
    db = sqlite3.connect(session_index.default_path())
    (blob,) = db.execute("SELECT listing FROM listings WHERE harness = 'codex'").fetchone()
    listing = sessions._decode_listing(blob)
    listing.rows[0].row.title = "from the kept listing"
    db.execute("UPDATE listings SET listing = ? WHERE harness = 'codex'", (sessions._encode_listing(listing),))
    db.commit()
    db.close()
    assert {r["harness"]: r for r in _list()}["codex"]["title"] == "from the kept listing"
    os.utime(home["codex"], ns=(1, 1))  # touched: listed and read again
    assert {r["harness"]: r for r in _list()}["codex"]["title"] != "from the kept listing"


def test_a_store_listed_again_reuses_the_kept_rows_of_its_unchanged_files(home, tmp_path, asked):
    """A file changed in place (its folder's time unmoved): the store is listed again, the
    changed file described again, the others' rows taken from the kept listing."""
    written, _ = api.convert(sample_path("claude_code"), "codex", session_id="0199aaaa-0000-7000-8000-0000000000ff")
    second = api.install(written, "codex")[0]
    _settle(tmp_path)
    _same_as_without_index()
    db = sqlite3.connect(session_index.default_path())
    (blob,) = db.execute("SELECT listing FROM listings WHERE harness = 'codex'").fetchone()
    listing = sessions._decode_listing(blob)
    (forged,) = [k for k in listing.rows if k.row.path == str(home["codex"])]
    forged.row.title = "from the kept listing"
    db.execute("UPDATE listings SET listing = ? WHERE harness = 'codex'", (sessions._encode_listing(listing),))
    db.commit()
    db.close()
    second.write_text(second.read_text().replace("Checkout returns 500", "Checkout now returns 503"))
    asked.clear()
    rows = {r["path"]: r for r in _list()}
    assert asked == ["codex"]  # listed again; Claude Code's listing held
    assert rows[str(home["codex"])]["title"] == "from the kept listing"  # reused
    assert rows[str(second)]["first_prompt"].startswith("Checkout now returns 503")  # read again
    assert {r["path"]: r for r in _list()}[str(home["codex"])]["title"] == "from the kept listing"  # kept anew
    os.utime(home["codex"], ns=(1, 1))
    _same_as_without_index()


def test_a_warm_listing_follows_every_change_to_files_and_folders(home, tmp_path, asked):
    first = _same_as_without_index()
    claude = home["claude_code"]
    _same_as_without_index()

    # changed in place (an append: Claude Code's way); the folder's time does not move
    claude.write_text(claude.read_text().replace("Checkout returns 500", "Checkout now returns 503"))
    rows = {r["harness"]: r for r in _same_as_without_index()}
    assert rows["claude_code"]["first_prompt"].startswith("Checkout now returns 503")
    _same_as_without_index()

    # a subagent added to the session's folder: counted
    _settle(tmp_path)
    _list()
    shutil.copy(claude, claude.with_suffix("") / "subagents" / "agent-a2.jsonl")
    assert {r["harness"]: r for r in _same_as_without_index()}["claude_code"]["subagents"] == 2

    # added: a second Codex session (its day folder exists), and one in a new project folder
    _settle(tmp_path)
    _list()
    written, _ = api.convert(sample_path("claude_code"), "codex", session_id="0199aaaa-0000-7000-8000-0000000000ff")
    api.install(written, "codex")
    assert len(_same_as_without_index()) == len(first) + 1
    _settle(tmp_path)
    _list()
    other = claude.parent.parent / "-home-dev-other"
    other.mkdir()
    shutil.copy(claude, other / "4f6c1d2e-0000-4000-8000-0000000000ee.jsonl")
    assert len(_same_as_without_index()) == len(first) + 2

    # truncated, then deleted
    _settle(tmp_path)
    _list()
    claude.write_text("\n".join(claude.read_text().splitlines()[:2]) + "\n")
    rows = {r["session_id"]: r for r in _same_as_without_index()}
    assert rows[claude.stem]["messages"] < {r["session_id"]: r for r in first}[claude.stem]["messages"]
    _settle(tmp_path)
    _list()
    claude.unlink()  # its subagents stay: listed as pruned
    assert {r["session_id"]: r for r in _same_as_without_index()}[claude.stem]["status"] == "pruned"
    _settle(tmp_path)
    _list()
    home["codex"].unlink()
    assert str(home["codex"]) not in {r["path"] for r in _same_as_without_index()}

    # the filters and a limit over kept listings
    _settle(tmp_path)
    whole = _list()
    asked.clear()
    assert _same_as_without_index("--limit", "2") == whole[:2]
    assert _same_as_without_index("--project", "other") == [r for r in whole if r["project"] == "other"]
    shop = [r for r in whole if r["project"] == "shop" or "shop" in (r["cwd"] or "")]  # a part of the cwd too
    assert len(_same_as_without_index("--project", "shop")) == len(shop) > 3
    assert _same_as_without_index("--grep", "returns 500")
    assert _same_as_without_index("--harness", "codex") == [r for r in whole if r["harness"] == "codex"]


def test_no_listing_is_kept_of_folders_changed_just_now(home, tmp_path):
    """A folder changed within the last moments may change again within the same clock tick
    without its time moving: its store is listed again next run."""
    os.utime(home["codex"].parent)  # the rollout's day folder, now
    _same_as_without_index()
    assert set(_kept()) == {"claude_code"}


def test_a_filtered_or_limited_run_keeps_no_listing(home):
    _list("--limit", "1")
    _list("--project", "shop")
    _list("--grep", "checkout")
    assert _kept() == {}
    _list()
    assert set(_kept()) == {"claude_code", "codex"}
