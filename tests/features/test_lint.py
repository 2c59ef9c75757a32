"""The tree passes ruff with the rules pyproject.toml selects (pyflakes, syntax errors, import
order, bugbear, line length 120) and is laid out as ``ruff format`` lays it: checked here, so CI
fails on either as on any other test."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT

PATHS = ["txcodec", "tests", "fuzz", "benchmarks", "docs"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", *PATHS], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_finds_nothing():
    run = _ruff("check", "--output-format", "concise")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_tree_is_formatted():
    run = _ruff("format", "--check")
    assert run.returncode == 0, run.stdout + run.stderr
