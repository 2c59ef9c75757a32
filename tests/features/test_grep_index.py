"""The text index ``list --grep`` narrows its search with once ``txcodec index --fts`` made
it (txcodec.grep_index): the same files as reading each one (``--no-index``), for any text
(escapes, non-ASCII, quotes, one or two characters trigrams cannot narrow, texts across a
block's end, longer than a block's overlap), however the files change between runs; a warm
search reads only the blocks the index names; private, cleared, made again when stale."""

from __future__ import annotations

import json
import os
import random
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support import homes

from txcodec import api
from txcodec import grep_index
from txcodec import session_index
from txcodec import sessions
from txcodec.cli import main
from txcodec.cli.store import sample_path

_PROMPT = "Checkout returns 500"
_WORDS = ["Crème brûlée", 'say "hi"', "tab\there", "line\nbreak", "back\\slash", "日本語", "ÉCOLE", "straße", "x"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    homes.isolate(tmp_path, monkeypatch)
    files = homes.install_sample_copies()
    for n, path in enumerate(files.values()):
        # a prompt of its own in each: raw UTF-8 in some files, JSON \\u escapes in the others
        prompt = " ".join(random.Random(n).sample(_WORDS, 4))
        escaped = json.dumps(prompt, ensure_ascii=n % 2 == 1)[1:-1]
        path.write_text(path.read_text(encoding="utf-8").replace(_PROMPT, escaped), encoding="utf-8")
    return files


@pytest.fixture(params=["16k", "64"])
def blocks(request, monkeypatch):
    """The index's blocks as made (16 KB, larger than these files) or of 64 bytes and 15 more
    (so that texts cross a block's end and are longer than the overlap), committed after each file."""
    if request.param == "64":
        monkeypatch.setattr(grep_index, "BLOCK", 64)
        monkeypatch.setattr(grep_index, "OVERLAP", 15)
        monkeypatch.setattr(grep_index, "COMMIT_BYTES", 0)
    return request.param


def _paths(text, index=True):
    return sorted(r.path for r in sessions.discover(grep=text, details=False, index=index))


def _needles(files, seed):
    """Texts to look for: pieces of the files (raw bytes decoded, in another case), the
    words above, one and two characters, and texts no file holds."""
    rng = random.Random(seed)
    found = [*_WORDS, "a", "é", "É", '"', "\n", "ß", "日", "5", "zz", "\\u00e9", "no such text anywhere", "Ω≈"]
    for _ in range(40):
        data = rng.choice(list(files.values())).read_bytes().decode("utf-8", "replace")
        start = rng.randrange(len(data))
        piece = data[start : start + rng.randint(1, 12)]
        found.append(piece.upper() if rng.random() < 0.3 else piece)
    return [n for n in found if n.strip("\ufffd")]


def _same_as_reading(files, seed):
    for text in _needles(files, seed):
        assert _paths(text) == _paths(text, index=False), repr(text)


def test_the_text_index_answers_as_reading_every_file_however_they_change(home, blocks):
    result = CliRunner().invoke(main, ["index", "--fts"])
    assert result.exit_code == 0, result.output
    assert "the text of 4 session files (4 read now)" in result.output
    path = grep_index.default_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds every text
    _same_as_reading(home, 1)

    claude = home["claude_code"]  # changed: another length
    claude.write_text(
        claude.read_text(encoding="utf-8").replace("empty cart", "empty «changed» cart"), encoding="utf-8"
    )
    assert _paths("«changed»") == [str(claude)]
    written, _ = api.convert(sample_path("claude_code"), "codex", session_id="0199aaaa-0000-7000-8000-0000000000ff")
    api.install(written, "codex")  # added
    pi = home["pi"]  # truncated
    pi.write_text("\n".join(pi.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8")
    home["qwen_code"].unlink()  # deleted
    _same_as_reading({k: v for k, v in home.items() if k != "qwen_code"}, 2)
    assert grep_index.GrepIndex(path).count() == 4  # the new file added, the deleted one forgotten


def test_a_current_text_index_reads_only_the_blocks_it_names(home, blocks, monkeypatch):
    CliRunner().invoke(main, ["index", "--fts"])
    expected = _paths("brûlée", index=False)
    assert expected and len(expected) < len(home)
    cart, art = _paths("cart", index=False), _paths("art", index=False)

    def no_reading(*args):
        raise AssertionError("a session file was read whole")

    monkeypatch.setattr(sessions, "_contains", no_reading)
    monkeypatch.setattr(sessions, "read_text", no_reading)
    read = []
    in_blocks = grep_index._in_blocks
    monkeypatch.setattr(
        grep_index,
        "_in_blocks",
        lambda path, found, *rest: read.append((path, found)) or in_blocks(path, found, *rest),
    )
    assert _paths("brûlée") == expected
    assert sorted({path for path, _ in read}) == expected  # the files without it are not opened
    if blocks == "64":  # a few blocks of each, not the whole file
        assert all(len(found) < path.stat().st_size // 64 // 2 for path, found in ((Path(p), f) for p, f in read))
    read.clear()
    assert _paths("zqxjkvw") == []
    assert read == []  # no block may hold it: nothing read
    assert _paths("Return") == _paths("return")  # ASCII letters in any case
    assert _paths("cart") == cart
    read.clear()
    assert _paths("art") == art
    assert read == []  # a needle of one trigram: the index's blocks are the answer
    with pytest.raises(AssertionError):  # two characters: trigrams cannot narrow, every file is read
        _paths("br")


@pytest.fixture
def indexed_home(home, blocks):
    CliRunner().invoke(main, ["index", "--fts"])
    return {path: path.read_bytes() for path in home.values()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_piece_of_a_file_is_found_as_reading_finds_it(indexed_home, data):
    """Random needles: pieces of the files (across blocks' ends, longer than the overlap),
    in any case, one byte changed (most then in no file)."""
    content = data.draw(st.sampled_from(sorted(indexed_home.items())))[1]
    start = data.draw(st.integers(0, len(content) - 1))
    piece = content[start : start + data.draw(st.integers(1, 300))]
    if data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(piece) - 1))
        piece = piece[:at] + bytes([data.draw(st.integers(0x20, 0x7E))]) + piece[at + 1 :]
    text = piece.decode("utf-8", "replace").strip("\ufffd")
    if data.draw(st.booleans()):
        text = text.swapcase()
    if text:
        assert _paths(text) == _paths(text, index=False), repr(text)


def test_the_rows_of_changed_files_are_dropped_when_they_outnumber_the_others(home, monkeypatch):
    CliRunner().invoke(main, ["index", "--fts"])
    monkeypatch.setattr(grep_index, "COMPACT_MIN", 0)
    for _ in range(5):  # changed five times, each read again by a search: five files' rows unreachable
        home["pi"].write_text(home["pi"].read_text(encoding="utf-8") + "\n", encoding="utf-8")
        assert _paths("brûlée") == _paths("brûlée", index=False)
    home["codex"].unlink()
    assert _paths("brûlée") == _paths("brûlée", index=False)
    texts = grep_index.GrepIndex()
    try:
        assert (texts.count(), texts.stale()) == (3, 6)
    finally:
        texts.close()
    result = CliRunner().invoke(main, ["index", "--fts"])
    assert "the text of 3 session files (3 read now)" in result.output  # made again
    texts = grep_index.GrepIndex()
    try:
        assert (texts.count(), texts.stale()) == (3, 0)
    finally:
        texts.close()
    result = CliRunner().invoke(main, ["index", "--fts"])
    assert "the text of 3 session files (0 read now)" in result.output
    _same_as_reading({k: v for k, v in home.items() if k != "codex"}, 3)


def test_without_fts_no_text_is_kept_and_clear_removes_it(home):
    assert _paths("brûlée") == _paths("brûlée", index=False)
    assert not grep_index.default_path().exists()  # opt-in only
    CliRunner().invoke(main, ["index", "--fts"])
    assert grep_index.default_path().exists()
    result = CliRunner().invoke(main, ["index", "--clear"])
    assert result.exit_code == 0
    assert not grep_index.default_path().exists()


def test_a_damaged_text_index_is_made_again(home):
    path = grep_index.default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database" * 300)
    assert _paths("brûlée") == _paths("brûlée", index=False)
    assert grep_index.GrepIndex(path).count() == 4  # made again, filled by the search


def _stale():
    texts = grep_index.GrepIndex()
    try:
        return texts.stale()
    finally:
        texts.close()


def test_a_file_that_only_grew_keeps_the_rows_of_its_blocks_held_whole(home, monkeypatch):
    monkeypatch.setattr(grep_index, "BLOCK", 64)
    monkeypatch.setattr(grep_index, "OVERLAP", 15)
    claude = home["claude_code"]
    tail = claude.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]  # the last line again, another text in it
    assert b"empty cart" in tail
    line = b'{"type":"summary","summary":"padding","leafUuid":"p"}\n'
    pad = (5 - len(claude.read_bytes()) - len(line)) % 64  # held ending 5 bytes into a block
    claude.write_bytes(claude.read_bytes() + line.replace(b"padding", b"padding" + b"d" * pad))
    CliRunner().invoke(main, ["index", "--fts"])
    before = claude.read_bytes()
    assert len(before) % 64 == 5
    claude.write_bytes(before + tail.replace(b"empty cart", b"grown \xc2\xabtail\xc2\xbb text") + b"\n")
    assert _paths("«tail»") == [str(claude)]
    assert _stale() <= 2  # the rows that reached the old end, not the file's len(before) // 64
    after = claude.read_bytes()
    for start in range(len(before) - 40, len(before)):  # across the old end, from the last row held whole on
        piece = after[start : start + 30].decode("utf-8", "replace").strip("\ufffd")
        assert str(claude) in _paths(piece), (start, piece)
    _same_as_reading(home, 4)

    os.utime(claude)  # touched: the same text, nothing read into the index again
    stale = _stale()
    assert _paths("«tail»") == [str(claude)]
    assert _stale() == stale

    grown = claude.read_bytes()  # changed inside and grown: read again whole
    claude.write_bytes(grown.replace(b"\xc2\xabtail\xc2\xbb", b"\xc2\xabtoil\xc2\xbb") + b"\n")
    assert _paths("«toil»") == [str(claude)]
    assert _paths("«tail»") == []
    assert _stale() >= stale + len(grown) // 64
    _same_as_reading(home, 5)


def test_a_compressed_rollout_is_narrowed_by_the_index_and_read_whole(home, monkeypatch):
    import zstandard

    codex = home["codex"]
    packed = codex.with_name(codex.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(codex.read_bytes()))
    codex.unlink()
    result = CliRunner().invoke(main, ["index", "--fts"])
    assert "the text of 4 session files (4 read now)" in result.output  # its text, not its bytes
    expected = {text: _paths(text, index=False) for text in ("empty cart", "brûlée", "zqxjkvw", "Return")}
    assert str(packed) in expected["empty cart"]
    read = []
    in_blocks = grep_index._in_blocks
    monkeypatch.setattr(grep_index, "_in_blocks", lambda path, *rest: read.append(path) or in_blocks(path, *rest))
    assert {text: _paths(text) for text in expected} == expected
    assert read and str(packed) not in read  # its blocks are of the decompressed text: read whole


def test_the_files_a_kept_listing_statted_are_not_statted_again_for_the_text_index(home, monkeypatch):
    """Issue 37: a warm ``list --grep`` stats each file once. The stores' kept listings stat
    every file to see it is as it was; the text index asks with those stamps instead of its own.
    A file changed since is still read, not answered from blocks made before."""
    old = time.time() - 3600  # a folder changed within a clock tick of its listing is listed again
    for folder, _, names in os.walk(os.environ["HOME"]):
        for path in [folder, *(os.path.join(folder, name) for name in names)]:
            os.utime(path, (old, old))
    CliRunner().invoke(main, ["index", "--fts"])
    list(sessions.discover())  # keeps the stores' listings
    expected = _paths("brûlée", index=False)
    statted = []
    stamp = session_index.stamp
    monkeypatch.setattr(session_index, "stamp", lambda path: statted.append(path) or stamp(path))
    assert _paths("brûlée") == expected
    kept = {str(home[name]) for name in ("claude_code", "codex")}
    assert statted and not kept & set(statted)  # the other stores' files statted here
    claude = home["claude_code"]  # the same size, another text: the kept listing sees it changed
    text = claude.read_text(encoding="utf-8")
    claude.write_text(text.replace("empty cart", "empty cbrt"), encoding="utf-8")
    assert _paths("cbrt") == [str(claude)] == _paths("cbrt", index=False)


def test_a_search_while_another_run_writes_the_index_reads_it_as_it_was(home, monkeypatch):
    """Two commands at once (``index --fts`` running, or a second terminal): a search does not
    wait for the run holding the index's write lock, nor read every file whole because it could
    not get it. It answers from the index as that run found it and adds nothing to it."""
    CliRunner().invoke(main, ["index", "--fts"])
    expected = _paths("brûlée", index=False)
    claude = home["claude_code"]  # changed since it was held: read whole, not added this run
    claude.write_text(claude.read_text(encoding="utf-8").replace("empty cart", "empty «late» cart"), encoding="utf-8")
    writer = session_index.open_private(grep_index.default_path())
    writer.execute("BEGIN IMMEDIATE")
    try:
        read_whole = []
        for name in ("_contains", "read_text"):
            reader = getattr(sessions, name)
            monkeypatch.setattr(sessions, name, lambda path, *rest, r=reader: read_whole.append(path) or r(path, *rest))
        started = time.monotonic()
        assert _paths("brûlée") == expected
        assert _paths("«late»") == [str(claude)]
        assert time.monotonic() - started < session_index.BUSY_MS / 1000  # it did not wait for the lock
        assert set(read_whole) == {str(claude)}  # the others answered from their blocks
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    texts = grep_index.GrepIndex()
    try:
        assert str(claude) not in texts.held([str(claude)])  # not added by the run that could not write
    finally:
        texts.close()
    assert _paths("«late»") == [str(claude)]
    texts = grep_index.GrepIndex()
    try:
        assert str(claude) in texts.held([str(claude)])  # the next run that can write adds it
    finally:
        texts.close()


def test_index_fts_while_another_run_writes_says_so_and_reads_nothing(home, monkeypatch):
    """``index --fts`` must write: while another run holds the text index it says so in one
    line and fails, instead of reading every file for nothing and reporting an index of 0."""
    CliRunner().invoke(main, ["index", "--fts"])
    read = []
    reader = sessions.read_text
    monkeypatch.setattr(sessions, "read_text", lambda path, *rest: read.append(path) or reader(path, *rest))
    home["pi"].write_text(home["pi"].read_text(encoding="utf-8") + "\n", encoding="utf-8")  # to be read again
    writer = session_index.open_private(grep_index.default_path())
    writer.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["index", "--fts"])
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(grep_index.default_path()) in lines[0] and "another txcodec run" in lines[0]
    assert "Traceback" not in result.output and read == []
    result = CliRunner().invoke(main, ["index", "--fts"])
    assert result.exit_code == 0 and "(1 read now)" in result.output and read == [str(home["pi"])]
