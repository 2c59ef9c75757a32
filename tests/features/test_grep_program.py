"""``list --grep`` without the text index asks ``grep`` (``sessions._grep``) which files hold
the text, a block of files a process: the same files as reading each one in Python
(``sessions._contains``), for texts in any case, escapes, non-ASCII, quotes and one or two
characters; Python reads them where there is no ``grep`` or it cannot take the text."""

from __future__ import annotations

import json
import os
import random
import shutil
import time

import pytest
from support import homes

from txcodec import session_index
from txcodec import sessions

_WORDS = ["Crème brûlée", 'say "hi"', "tab\there", "back\\slash", "日本語", "ÉCOLE", "straße", "x", "MiGrAtIoN"]
_BREAK = "line\nbreak"  # a newline: two patterns to grep, so read here

pytestmark = pytest.mark.skipif(shutil.which("grep") is None, reason="no grep on this machine: Python reads")


@pytest.fixture
def home(tmp_path, monkeypatch):
    homes.isolate(tmp_path, monkeypatch)
    files = homes.install_sample_copies()
    for n, path in enumerate(files.values()):
        prompt = " ".join(random.Random(n).sample([*_WORDS, _BREAK], 4))
        escaped = json.dumps(prompt, ensure_ascii=n % 2 == 1)[1:-1]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("Checkout returns 500", escaped), encoding="utf-8")
    return files


def _texts(files, seed):
    rng = random.Random(seed)
    found = [*_WORDS, "a", "é", "É", '"', "ß", "日", "5", "zz", "\\u00e9", "no such text anywhere", "Ω≈", "\t"]
    for _ in range(60):
        data = rng.choice(list(files.values())).read_bytes().decode("utf-8", "replace")
        start = rng.randrange(len(data))
        piece = data[start : start + rng.randint(1, 12)]
        found.append(piece.upper() if rng.random() < 0.3 else piece.swapcase() if rng.random() < 0.3 else piece)
    return [t for t in found if t.strip("\ufffd")]


def test_grep_finds_the_files_reading_them_finds(home):
    paths = sorted(str(p) for p in home.values())
    asked = 0
    for text in _texts(home, 3):
        needles = sessions._needles(text)
        expected = {p for p in paths if sessions._contains(p, needles)}
        if not sessions._greppable(needles):
            assert "\n" in text or not text
            continue
        asked += 1
        assert sessions._grep(needles, paths) == expected, repr(text)
    assert asked > 60


def test_list_grep_asks_grep_and_lists_what_reading_lists(home, monkeypatch):
    expected = {text: [r.path for r in sessions.discover(grep=text, details=False)] for text in _WORDS}
    read = []
    contains = sessions._contains
    monkeypatch.setattr(sessions, "_contains", lambda path, needles: read.append(path) or contains(path, needles))
    for text, rows in expected.items():
        assert [r.path for r in sessions.discover(grep=text, details=False)] == rows
    assert read == []  # every file answered by grep
    monkeypatch.setattr(shutil, "which", lambda name: None)
    for text, rows in expected.items():
        assert [r.path for r in sessions.discover(grep=text, details=False)] == rows
    assert len(read) == len(_WORDS) * len(home)  # no grep: every file read here


def test_a_fifo_named_like_a_session_is_passed_over(home, tmp_path):
    fifo = tmp_path / "rollout-fifo.jsonl"
    os.mkfifo(fifo)
    plain = str(home["codex"])
    assert sessions._grep(sessions._needles("checkout"), [str(fifo), plain]) == {plain}


def test_a_text_grep_cannot_take_is_read_here(home, monkeypatch):
    assert not sessions._greppable(sessions._needles(_BREAK))
    assert not sessions._greppable(sessions._needles(""))
    holding = sorted(str(p) for p in home.values() if sessions._contains(str(p), sessions._needles(_BREAK)))
    assert holding  # the fixture wrote it into some files
    monkeypatch.setattr(sessions, "_grep", lambda *a: pytest.fail("grep asked"))
    assert sorted(r.path for r in sessions.discover(grep=_BREAK, details=False)) == holding


@pytest.mark.parametrize("block", [sessions._GREP_BLOCK, 1])
def test_a_cold_grep_describes_only_the_files_holding_the_text(home, monkeypatch, block):
    """Issue 37: with no session index yet, ``list --grep`` asks grep first and describes only
    the files that hold the text (before, every file was read for its row, then grepped). Its
    rows are those of the whole listing whose file holds the text. With blocks of one file,
    several grep processes run at once."""
    monkeypatch.setattr(sessions, "_GREP_BLOCK", block)
    every = list(sessions.discover(details=False, index=False))
    described = []
    describe = sessions._describe_item
    monkeypatch.setattr(sessions, "_describe_item", lambda job: described.append(str(job[1].path)) or describe(job))
    for n, text in enumerate(["MiGrAtIoN", "straße", "no such text anywhere"]):
        needles = sessions._needles(text)
        holding = [r for r in every if sessions._contains(r.path, needles)]
        session_index.clear()  # cold: no index
        described.clear()
        rows = list(sessions.discover(grep=text, details=False))
        assert [(r.harness, r.path, r.title) for r in rows] == [(r.harness, r.path, r.title) for r in holding]
        lazy = {r.path for r in holding if r.harness in ("claude_code", "codex")}
        assert set(described) == lazy, text
        assert n < 2 or not described


def test_a_cold_grep_asks_grep_of_the_stores_files_before_they_are_listed(home, monkeypatch):
    """A cold ``--grep`` starts grep over the stores' main files (``Store.main_files``) before
    listing them, in other processes, so the listing and the search share the CPUs. Its answers
    are the ones grep gives after the listing (none asked again), and a block grep could not
    answer is asked again afterwards."""
    every = list(sessions.discover(details=False, index=False))
    holding = [r.path for r in every if sessions._contains(r.path, sessions._needles("MiGrAtIoN"))]
    early = []
    start = sessions._EarlyGrep.__init__
    monkeypatch.setattr(sessions._EarlyGrep, "__init__", lambda self, *a: early.extend(a[1]) or start(self, *a))
    asked = []
    grepped = sessions._Search._grepped
    monkeypatch.setattr(sessions._Search, "_grepped", lambda self, paths: asked.extend(paths) or grepped(self, paths))
    session_index.clear()
    assert [r.path for r in sessions.discover(grep="MiGrAtIoN", details=False)] == holding
    lazy = {r.path for r in every if r.harness in ("claude_code", "codex") and not r.path.endswith(".zst")}
    assert lazy and lazy <= set(early)
    assert not lazy & set(asked)
    # an early grep that fails (no answer for its block): those files are asked again, same rows
    asked.clear()
    monkeypatch.setattr(sessions._EarlyGrep, "answers", lambda self: self.cancel() or {})
    session_index.clear()
    assert [r.path for r in sessions.discover(grep="MiGrAtIoN", details=False)] == holding
    assert lazy <= set(asked)
    # warm (a whole listing kept the stores' listings, its folders dated a while ago): no early grep
    settled = time.time() - 3600
    for folder, _, _ in os.walk(os.environ["HOME"]):
        os.utime(folder, (settled, settled))
    list(sessions.discover())
    early.clear()
    assert [r.path for r in sessions.discover(grep="MiGrAtIoN", details=False)] == holding
    assert early == []
