"""Where the checkout, its goldens, the public corpus and the seeds are, and the corpus helpers.

Imported by the tests (``from support.paths import GOLDEN``) and by ``tests/conftest.py``,
whose collection hook skips the tests that read a missing corpus or seeds.
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The public corpus and the seeds live outside the repository (CI keeps shared/ beside the
# checkout). A fresh clone has neither: the tests that read them are skipped with one reason,
# unless TXCODEC_REQUIRE_CORPUS=1 (CI sets it) turns their absence into a failure.
CORPUS = Path(os.environ.get("TXCODEC_CORPUS") or ROOT.parent / "shared" / "corpus")
SEEDS = Path(os.environ.get("TXCODEC_SEEDS") or CORPUS.parent / "seeds")
GOLDEN = ROOT / "golden"
REQUIRE_CORPUS = os.environ.get("TXCODEC_REQUIRE_CORPUS", "") not in ("", "0")
MISSING = {
    name: path
    for name, path in (("corpus", CORPUS), ("seeds", SEEDS))
    if not (path / "MANIFEST.tsv" if name == "corpus" else path).exists()
}


def corpus_files(harness: str | None = None, suffixes: tuple[str, ...] = (".jsonl", ".json")) -> list[Path]:
    """Every corpus data file (optionally of one harness), checked against MANIFEST.tsv."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        # One placeholder inside the corpus, so a test parametrized over it is skipped (or failed)
        # by pytest_collection_modifyitems with the same clear reason as the others.
        return [manifest]
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
