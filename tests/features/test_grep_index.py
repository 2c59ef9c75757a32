"""The text index ``list --grep`` answers from once ``txcodec index --fts`` made it
(txcodec.grep_index): the same files as reading each one (``--no-index``), for any text
(escapes, non-ASCII, quotes, one or two characters trigrams cannot narrow), however the
files change between runs; a warm search reads no file; private and cleared."""

from __future__ import annotations

import json
import random
import stat

import pytest
from click.testing import CliRunner
from support import homes

from txcodec import api
from txcodec import grep_index
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


def test_the_text_index_answers_as_reading_every_file_however_they_change(home):
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


def test_a_current_text_index_is_answered_without_reading_a_file(home, monkeypatch):
    CliRunner().invoke(main, ["index", "--fts"])
    expected = _paths("brûlée", index=False)
    assert expected

    def no_reading(*args):
        raise AssertionError("a session file was read")

    monkeypatch.setattr(sessions, "_contains", no_reading)
    monkeypatch.setattr(sessions, "read_text", no_reading)
    assert _paths("brûlée") == expected
    assert _paths("Return") == _paths("return")  # ASCII letters in any case
    with pytest.raises(AssertionError):  # two characters: trigrams cannot narrow, every file is read
        _paths("br")


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
