"""The tree passes ruff with the rules pyproject.toml selects (pyflakes, syntax errors, import
order, bugbear, line length) and is as ``ruff format`` writes it: checked here, so CI fails
on a lint or formatting error as on any other."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT


def test_ruff_finds_nothing():
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--output-format",
            "concise",
            "txcodec",
            "tests",
            "fuzz",
            "benchmarks",
            "docs",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_ruff_format_changes_nothing():
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--no-cache",
            "txcodec",
            "tests",
            "fuzz",
            "benchmarks",
            "docs",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
