from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
GOLDEN = ROOT / "golden"

# Reaching txcodec's last-resort guards (an unexpected exception turned into "internal
# error, please report", exit 70) is a bug: in the tests they re-raise instead.
os.environ["TXCODEC_STRICT"] = "1"


def corpus_files(harness: str | None = None, suffixes: tuple[str, ...] = (".jsonl", ".json")) -> list[Path]:
    """Every corpus data file (optionally of one harness), checked against MANIFEST.tsv."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        pytest.fail(f"the public corpus is missing: {CORPUS} (CI keeps shared/ beside the checkout)")
    rows = list(csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t"))
    files = []
    for row in rows:
        if harness is not None and row["harness"] != harness:
            continue
        path = CORPUS / row["path"]
        if path.suffix not in suffixes:
            continue
        files.append(path)
    return sorted(files)


def manifest_sha256() -> dict[str, str]:
    rows = csv.DictReader((CORPUS / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t")
    return {row["path"]: row["sha256"] for row in rows}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False, help="(re)write golden expected files")
    parser.addoption("--fuzz-seconds", type=float, default=0.0, help="run the fuzz tests (-m fuzz) for this long per codec")


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: long fuzzing runs, budget from --fuzz-seconds (skipped without it)")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))
