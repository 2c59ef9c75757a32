"""Issue 34.6: a default install prices sessions. txcodec ships a snapshot of
genai-prices' table (``txcodec/prices.json.zst``, made by ``python -m txcodec.usage``);
it finds each model as genai-prices does, and the report names the table and its date."""

from __future__ import annotations

import os
import subprocess
import sys

import msgspec
import pytest
from support.paths import GOLDEN
from support.paths import ROOT
from support.paths import corpus_files

from txcodec import api
from txcodec.core.zst import read_bytes
from txcodec.usage import SNAPSHOT
from txcodec.usage import _Prices
from txcodec.usage import file_usage
from txcodec.usage import snapshot_rates

# names seen in sessions of every harness, and spellings with dates and prefixes
NAMES = [
    "claude-opus-4-6",
    "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5",
    "claude-3-5-sonnet-20241022",
    "gpt-5",
    "gpt-5-codex",
    "gpt-4.1-mini",
    "o3",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "qwen3-coder-plus",
    "kimi-k2",
    "devstral-medium-2507",
    "house-model-9",
]


def _table() -> dict:
    return msgspec.json.decode(read_bytes(SNAPSHOT))


def test_the_snapshot_names_its_source_and_date():
    table = _table()
    assert table["source"].startswith("genai-prices ") and len(table["date"]) == 10
    assert sum(1 for p in table["providers"] for m in p["models"] if m["rates"]) > 100


def test_the_snapshot_finds_each_model_as_genai_prices_does(tmp_path, monkeypatch):
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    models = set(NAMES)
    for path in [*corpus_files(), *sorted(GOLDEN.rglob("*.jsonl"))][:400]:
        try:
            models.update(c[1] for c in file_usage(path).calls if c[1])
        except (ValueError, OSError):
            continue
    live = _Prices()
    assert live.installed
    table = _table()
    for model in sorted(models):
        want, got = live.rate(model), snapshot_rates(model, table)
        assert (want is None) == (got is None), model
        if want is not None:
            assert got == pytest.approx(want, rel=1e-9), model


def test_a_base_install_prices_the_sample_and_names_the_snapshot(tmp_path):
    runner = (ROOT / "tests" / "features" / "test_base_install.py").read_text(encoding="utf-8")
    code = runner.split('RUNNER = """', 1)[1].split('"""', 1)[0]
    blocked = '["genai_prices"]'
    args = f'["usage", "{api.sample()}"]'
    out = subprocess.run(
        [sys.executable, "-c", code, blocked, args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "$0.10" in out.stdout and "no price known" not in out.stdout
    date = _table()["date"]
    assert "prices: genai-prices " in out.stdout and f"(snapshot of {date}, shipped with txcodec)" in out.stdout
