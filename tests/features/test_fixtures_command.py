"""``txcodec fixtures``: from a store built from the scenario library and the goldens, every
shape of the fixture checklist is found, cut to a minimal session that still holds it, loads
without diagnostics and verifies byte for byte, redacted, and listed in MANIFEST.tsv
(docs/redact.md#fixtures)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.planted_secrets import USER
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry
from txcodec.verify import verify_file


def test_every_shape_is_found_cut_and_verifies(tmp_path: Path) -> None:
    store = tmp_path / "store" / f"-home-{USER}-work"
    shutil.copytree(GOLDEN / "claude_code", store, ignore=shutil.ignore_patterns("*.json", "*.toml", "*.py"))
    for path in store.rglob("*.jsonl"):
        path.write_bytes(plant(path.read_bytes(), "claude_code"))
    out = tmp_path / "fixtures"
    result = CliRunner().invoke(main, ["fixtures", str(tmp_path / "store"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "not found" not in result.output
    shapes = {shape.name: shape for shape in registry.get("claude_code").fixtures.shapes}
    rows = list(csv.DictReader((out / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert {row["shape"] for row in rows} == set(shapes)
    for row in rows:
        path = out / row["file"]
        assert verify_file(path).ok, row["shape"]
        session = api.load(path, "claude_code")
        assert not session.diagnostics, row["shape"]
        records = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
        assert len(records) == int(row["lines"])
        assert any(shapes[row["shape"]].test(r) for r in records), row["shape"]  # still holds its shape
        assert not leaks(path.read_text()) and USER not in str(path)
    assert not leaks(result.output)
    # minimal: most fixtures are a handful of lines
    assert sorted(int(row["lines"]) for row in rows)[len(rows) // 2] <= 5


def test_shapes_not_found_are_listed(tmp_path: Path) -> None:
    source = next((GOLDEN / "claude_code" / "edit_read_write").glob("*.jsonl"))
    out = tmp_path / "fixtures"
    result = CliRunner().invoke(main, ["fixtures", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "not found: " in result.output
    rows = list(csv.DictReader((out / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert any(row["file"] == "(not found)" for row in rows)
    assert any(row["file"] != "(not found)" for row in rows)


def test_codex_shapes(tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    result = CliRunner().invoke(main, ["fixtures", str(GOLDEN / "codex"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    shapes = {shape.name: shape for shape in registry.get("codex").fixtures.shapes}
    rows = [r for r in csv.DictReader((out / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t")]
    assert {row["shape"] for row in rows if row["harness"] == "codex" and row["file"] != "(not found)"} == set(shapes)
    for row in rows:
        path = out / row["file"]
        assert verify_file(path).ok and not api.load(path, "codex").diagnostics, row["shape"]
        records = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
        assert records[0]["type"] == "session_meta" and any(shapes[row["shape"]].test(r) for r in records)


@pytest.mark.parametrize("harness", ["pi", "qwen_code", "gemini_cli"])
def test_other_harnesses(harness: str, tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    result = CliRunner().invoke(main, ["fixtures", str(GOLDEN / harness), "-o", str(out)])
    assert result.exit_code == 0, result.output
    shapes = {shape.name: shape for shape in registry.get(harness).fixtures.shapes}
    rows = [r for r in csv.DictReader((out / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t")]
    found = [row for row in rows if row["file"] != "(not found)"]
    assert len(found) >= (4 if harness == "gemini_cli" else 6)
    for row in found:
        path = out / row["file"]
        assert verify_file(path).ok and not api.load(path, harness).diagnostics, row["shape"]
        records = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
        assert any(shapes[row["shape"]].test(r) for r in records), row["shape"]
        if harness == "pi":
            assert records[0]["type"] == "session"
