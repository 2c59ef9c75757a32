"""The fuzz layer in the suite: a structured mutator (hypothesis) over real lines from
golden/ and the corpus, and the regression corpus of every input that once broke an
invariant (tests/fuzz_regressions/<codec>/).

Every run spends a small fixed budget (derandomized, so a run is repeatable); a long run
is ``pytest -m fuzz --fuzz-seconds N`` (N seconds per codec, random seeds), which also
saves each failing input into the regression corpus. The invariants are in
tests/support/fuzzing.py; the coverage-guided harnesses in fuzz/ check the same ones.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st
from support import fuzzing
from support.paths import GOLDEN
from support.paths import ROOT

import txcodec

FUZZ = ROOT / "fuzz"

# a small budget per codec: the whole module stays well under a minute
QUICK_EXAMPLES = 100
_SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
}


def _run(codec: str, data: st.DataObject) -> bytes:
    rng = fuzzing.Rng(lambda n: data.draw(st.integers(0, max(n - 1, 0))))
    mutant = fuzzing.mutant(codec, rng)
    note(f"mutant: {mutant[:2000]!r}")
    return mutant


@pytest.mark.parametrize("codec", fuzzing.CODECS)
def test_mutants_keep_every_invariant(codec: str) -> None:
    @settings(max_examples=QUICK_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        fuzzing.check(_run(codec, data), fuzzing.harness_for(codec))

    one()


@pytest.mark.fuzz
@pytest.mark.parametrize("codec", fuzzing.CODECS)
def test_fuzz_long(codec: str, request: pytest.FixtureRequest) -> None:
    seconds = request.config.getoption("--fuzz-seconds")
    if not seconds:
        pytest.skip("a long fuzzing run: pytest -m fuzz --fuzz-seconds N")
    deadline = time.monotonic() + seconds
    ran = 0

    @settings(max_examples=50, **_SETTINGS)  # small batches: the budget is kept to within one batch
    @given(st.data())
    def batch(data: st.DataObject) -> None:
        nonlocal ran
        mutant = _run(codec, data)
        ran += 1
        try:
            fuzzing.check(mutant, fuzzing.harness_for(codec))
        except Exception:
            fuzzing.save_regression(codec, mutant)
            raise

    while time.monotonic() < deadline:
        batch()
    print(f"{codec}: {ran} inputs")


@pytest.mark.parametrize("codec,path", fuzzing.regression_files(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_regression_corpus(codec: str, path) -> None:
    fuzzing.check(path.read_bytes(), fuzzing.harness_for(codec))


# --- the views behind each codec, and Common JSON with every writer behind it ---------

VIEW_EXAMPLES = 40  # a view renders HTML and builds Arrow tables: fewer examples per codec


@pytest.mark.parametrize("codec", fuzzing.CODECS)
def test_views_of_mutants(codec: str) -> None:
    """changes, Markdown, HTML, terminal and the columnar rows of whatever a codec reads."""

    @settings(max_examples=VIEW_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        fuzzing.check_views(_run(codec, data), fuzzing.harness_for(codec))

    one()


def _common(data: st.DataObject) -> bytes:
    mutant = fuzzing.common_mutant(fuzzing.Rng(lambda n: data.draw(st.integers(0, max(n - 1, 0)))))
    note(f"mutant: {mutant[:2000]!r}")
    return mutant


def test_common_json_mutants() -> None:
    """Common JSON: decoded strictly or refused in one line, then every view and writer."""

    @settings(max_examples=QUICK_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        fuzzing.check_common(_common(data))

    one()


@pytest.mark.fuzz
@pytest.mark.parametrize(
    "target",
    [
        fuzzing.COMMON,
        *(f"{fuzzing.VIEWS}/{c}" for c in fuzzing.CODECS),
        *(f"{fuzzing.LISTING}/{c}" for c in sorted(fuzzing.LISTED)),
        *(f"{fuzzing.USAGE}/{c}" for c in fuzzing.COUNTED),
    ],
)
def test_fuzz_long_beyond_the_codecs(target: str, request: pytest.FixtureRequest) -> None:
    seconds = request.config.getoption("--fuzz-seconds")
    if not seconds:
        pytest.skip("a long fuzzing run: pytest -m fuzz --fuzz-seconds N")
    deadline = time.monotonic() + seconds
    ran = 0
    codec = target.partition("/")[2]

    @settings(max_examples=20, **_SETTINGS)
    @given(st.data())
    def batch(data: st.DataObject) -> None:
        nonlocal ran
        mutant = _common(data) if target == fuzzing.COMMON else _run(codec, data)
        ran += 1
        try:
            if target == fuzzing.COMMON:
                fuzzing.check_common(mutant)
            elif target.startswith(fuzzing.LISTING):
                fuzzing.check_listing(mutant, codec)
            elif target.startswith(fuzzing.USAGE):
                fuzzing.check_usage(mutant, codec)
            else:
                fuzzing.check_views(mutant, fuzzing.harness_for(codec))
        except Exception:
            fuzzing.save_regression(target, mutant)
            raise

    while time.monotonic() < deadline:
        batch()
    print(f"{target}: {ran} inputs")


@pytest.mark.parametrize("codec,path", fuzzing.view_regressions(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_view_regressions(codec: str, path) -> None:
    fuzzing.check_views(path.read_bytes(), fuzzing.harness_for(codec))


@pytest.mark.parametrize("codec", sorted(fuzzing.LISTED))
def test_listing_of_mutants(codec: str) -> None:
    """A store's file listed lean, as ``list`` lists it: the full read's details, the row its
    store gives it alone."""

    @settings(max_examples=QUICK_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        fuzzing.check_listing(_run(codec, data), codec)

    one()


@pytest.mark.parametrize("codec,path", fuzzing.listing_regressions(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_listing_regressions(codec: str, path) -> None:
    fuzzing.check_listing(path.read_bytes(), codec)


@pytest.mark.parametrize("codec", fuzzing.COUNTED)
def test_usage_of_mutants(codec: str) -> None:
    """A store's file counted by ``usage``'s lean pass: the numbers of the full read, and a
    file it cannot count said in one line, never an exception."""

    @settings(max_examples=QUICK_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        fuzzing.check_usage(_run(codec, data), codec)

    one()


@pytest.mark.parametrize("codec,path", fuzzing.usage_regressions(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_usage_regressions(codec: str, path) -> None:
    fuzzing.check_usage(path.read_bytes(), codec)


@pytest.mark.parametrize("path", fuzzing.common_regressions(), ids=lambda p: p.name)
def test_common_json_regressions(path) -> None:
    fuzzing.check_common(path.read_bytes())


def test_mutator_makes_each_kind_of_mutant() -> None:
    """The mutator is not a no-op: over a fixed set of seeds it produces inputs that
    differ from every seed line, with byte damage, swapped types and deep nesting."""
    seen = {"changed": 0, "not-json": 0, "deep": 0, "huge": 0}
    for seed in range(300):
        data = fuzzing.run_random("claude_code", seed)
        originals = {line for lines in fuzzing.seed_files("claude_code") for line in lines}
        new = [line for line in data.rstrip(b"\r\n").split(b"\n") if line not in originals]
        seen["changed"] += bool(new)
        seen["deep"] += any(b"[[[[[[[[" in line or b'{"a":{"a":{"a":' in line for line in new)
        seen["huge"] += any(len(line) > 60_000 for line in new)
        seen["not-json"] += any(not _is_json(line) for line in new)
    assert seen["changed"] >= 280 and all(seen.values()), seen


def _is_json(line: bytes) -> bool:
    import json

    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


@pytest.mark.parametrize("harness", [None, *fuzzing.CODECS])
def test_load_never_raises_on_any_bytes(harness) -> None:
    """Bytes with no structure at all (the mutants above start from real lines)."""

    @settings(max_examples=QUICK_EXAMPLES, derandomize=True, **_SETTINGS)
    @given(
        st.lists(
            st.one_of(st.binary(max_size=200), st.sampled_from([b"{", b"}", b'"type":', b"[", b"\\ud800", b"\n"])),
            max_size=30,
        )
    )
    def one(pieces: list[bytes]) -> None:
        data = b"".join(pieces)
        assert txcodec.load(data, harness).dump() == data

    one()


# --- the coverage-guided harnesses in fuzz/ (atheris) ------------------------------------

_ATHERIS_PLATFORM = sys.platform == "linux" and platform.machine() == "x86_64"  # the test extra's marker
_ATHERIS_RUNS = 30


@pytest.mark.skipif(not _ATHERIS_PLATFORM, reason="atheris has wheels for Linux x86_64 only (the test extra)")
@pytest.mark.parametrize(
    "script,args,seed",
    [
        ("codex.py", [], GOLDEN / "codex" / "hand_built" / "written.jsonl"),
        ("views.py", ["claude_code"], next((GOLDEN / "claude_code").glob("*/*.jsonl"))),
        ("common_json.py", [], None),
    ],
    ids=["codec", "views", "common_json"],
)
def test_atheris_harness_runs(script: str, args: list[str], seed, tmp_path: Path) -> None:
    """Each kind of coverage-guided harness starts, instruments txcodec and runs a few
    inputs (a short run: the long ones are by hand, docs/guarantees.md)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    if seed is None:
        (corpus / "seed.json").write_bytes(fuzzing.common_seeds()[0])
    else:
        (corpus / "seed").write_bytes(b"\n".join(seed.read_bytes().splitlines()[:5]) + b"\n")
    done = subprocess.run(
        [sys.executable, str(FUZZ / script), *args, f"-runs={_ATHERIS_RUNS}", "-seed=1", str(corpus)],
        capture_output=True,
        text=True,
        env={**os.environ, "TXCODEC_FUZZ_DIR": str(tmp_path / "work")},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Done {_ATHERIS_RUNS} runs" in done.stderr, done.stderr[-3000:]
    assert "Instrumenting txcodec" in done.stderr
