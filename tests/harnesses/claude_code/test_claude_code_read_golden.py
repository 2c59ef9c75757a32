"""Golden Common JSON for every case in golden/claude_code/, and the whole corpus.

``pytest --update-golden`` (re)writes ``expected.common.json`` and
``expected.loss.json``; review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.kit.changes import to_json
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport

CASES = (
    sorted(p for p in (GOLDEN / "claude_code").glob("*") if p.is_dir() and p.name != "scenarios")
    if (GOLDEN / "claude_code").is_dir()
    else []
)
_SKIP = ("expected", "written", "output")


def case_input(case: Path) -> Path:
    """The case's main transcript: its one top-level .jsonl that is not an output."""
    found = sorted(p for p in case.glob("*.jsonl") if not p.name.startswith(_SKIP))
    with_sides = [p for p in found if (case / p.stem).is_dir()]
    if len(with_sides) == 1:
        return with_sides[0]
    if len(found) != 1:
        pytest.fail(f"{case}: expected one input .jsonl, found {[p.name for p in found]}")
    return found[0]


def pretty(value) -> bytes:
    return msgspec.json.format(value if isinstance(value, bytes) else msgspec.json.encode(value), indent=2) + b"\n"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_common(case, update_golden):
    loss = LossReport()
    conv = api.to_common(api.load(case_input(case), "claude_code"), loss)
    got = pretty(to_json(conv))
    got_loss = pretty(loss.counts())
    expected, expected_loss = case / "expected.common.json", case / "expected.loss.json"
    if update_golden or not expected.exists():
        if not update_golden:
            pytest.fail(f"{expected} is missing: run pytest --update-golden")
        expected.write_bytes(got)
        expected_loss.write_bytes(got_loss)
    assert got == expected.read_bytes()
    assert got_loss == expected_loss.read_bytes()


def _native_pairs(path: Path) -> tuple[set[str], set[str]]:
    """tool_use ids and tool_result ids in the source file itself."""
    uses, results = set(), set()
    for line in path.read_bytes().split(b"\n"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        m = r.get("message") if isinstance(r, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    uses.add(b.get("id", ""))
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    results.add(b.get("tool_use_id"))
    return uses, results


@pytest.mark.parametrize("path", corpus_files("claude_code", (".jsonl",)), ids=lambda p: p.name)
def test_corpus_converts_and_pairs(path):
    session = api.load(path, "claude_code")
    loss = LossReport()
    conv = api.to_common(session, loss)
    data = to_json(conv)
    assert data.startswith(b'{"version"')
    native_uses, native_results = _native_pairs(path)
    unpaired_in_source = native_uses - native_results
    uses, results = set(), set()
    for m in conv.messages:
        for b in m.content:
            if type(b) is ToolUse:
                uses.add(b.id)
            elif type(b) is ToolResult:
                results.add(b.tool_use_id)
    assert uses - results <= unpaired_in_source
    # every loss entry names this file or one of its side files, and a line inside it
    side = path.parent / path.stem
    line_counts: dict[str, int] = {}
    for e in loss.entries:
        assert e.kind and isinstance(e.file, str), e
        where = Path(e.file)
        assert where == path or side in where.parents, e
        if e.line is not msgspec.UNSET:
            if e.file not in line_counts:
                line_counts[e.file] = where.read_bytes().count(b"\n") + 1
            assert 1 <= e.line <= line_counts[e.file], e
    # each tool result follows its call: the message after the call holds it
    position = {}
    for i, m in enumerate(conv.messages):
        for b in m.content:
            if type(b) is ToolUse:
                position[b.id] = i
    for i, m in enumerate(conv.messages):
        for b in m.content:
            if type(b) is ToolResult and b.tool_use_id in position:
                assert i > position[b.tool_use_id]
