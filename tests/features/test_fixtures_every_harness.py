"""``txcodec fixtures`` for every harness that declares the checklist's shapes: on a store built
from its golden sessions (the scenario library's runs of the real clients, and the hand-made
ones), planted with secrets, every declared shape that some record there holds is found, and
each fixture verifies byte for byte, loads without diagnostics, still holds its shape and
leaks no planted value (docs/redact.md#fixtures)."""

from __future__ import annotations

import csv
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry
from txcodec.redact import _harness_of
from txcodec.verify import verify_file

DECLARED = sorted(name for name, harness in registry.harnesses().items() if harness.fixtures is not None)
# the JSONL harnesses; the others keep a session as one document or a database, which a cut by
# lines does not fit (docs/redact.md#fixtures)
JSONL = {
    "claude_code", "codex", "gemini_cli", "qwen_code", "pi", "kimi_cli", "droid", "copilot_cli", "mistral_vibe",
    "stream_json",
}  # fmt: skip


def test_every_jsonl_harness_declares_its_shapes() -> None:
    assert set(DECLARED) == JSONL


def _records(path: Path) -> list[dict]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = msgspec.json.decode(line)
        except msgspec.DecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _holds(shape, records: list[dict]) -> bool:
    for record in records:
        try:
            if shape.test(record):
                return True
        except (KeyError, TypeError, AttributeError):
            continue
    return False


@pytest.mark.parametrize("harness", DECLARED)
def test_every_shape_present_is_found_and_verifies(harness: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    present: set[str] = set()
    shapes = {shape.name: shape for shape in registry.get(harness).fixtures.shapes}
    for source in sorted((GOLDEN / harness).rglob("*.jsonl")):
        if _harness_of(source) != harness:
            continue  # a stream-json scenario's Claude Code session: Claude Code's
        target = store / source.relative_to(GOLDEN / harness)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(plant(source.read_bytes(), harness))
        records = _records(target)
        present |= {name for name, shape in shapes.items() if _holds(shape, records)}
    # the goldens hold most of what is declared (a shape not there is one no scenario makes yet)
    assert len(present) >= min(4, len(shapes)) and len(present) * 3 >= len(shapes) * 2 - 3, sorted(present)
    out = tmp_path / "fixtures"
    result = CliRunner().invoke(main, ["fixtures", str(store), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = [r for r in csv.DictReader((out / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t")]
    found = {row["shape"]: row for row in rows if row["harness"] == harness and row["file"] != "(not found)"}
    assert set(found) == present, (sorted(present - set(found)), result.output)
    for name, row in found.items():
        path = out / row["file"]
        assert verify_file(path).ok, name
        assert not api.load(path, harness).diagnostics, name
        assert _holds(shapes[name], _records(path)), name  # the cut still holds its shape
        assert len(_records(path)) == int(row["lines"])
        assert not leaks(path.read_text()), name
    assert not leaks(result.output)
