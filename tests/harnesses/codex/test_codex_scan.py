"""The Codex listing scan peeks at a rollout's lines in one decode where every line is
one JSON object, else line by line: both give the same row (docs/speed.md, issue 37)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec.core.jsonl import object_lines
from txcodec.harnesses.codex import scan
from txcodec.harnesses.codex import store

_ROLLOUTS = sorted((GOLDEN / "codex").rglob("*.jsonl"))


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    at_once = msgspec.to_builtins(scan.scan(path))
    with monkeypatch.context() as patched:
        patched.setattr(scan, "object_lines", lambda data: None)  # line by line
        one_by_one = msgspec.to_builtins(scan.scan(path))
    return at_once, one_by_one


def test_a_rollout_scans_the_same_at_once_as_line_by_line(monkeypatch):
    files = [p for p in corpus_files("codex") if p.suffix == ".jsonl"] + _ROLLOUTS
    at_once = 0
    for path in files:
        first, second = _both(path, monkeypatch)
        assert first == second, path
        at_once += object_lines(path.read_bytes()) is not None
    assert at_once >= len(_ROLLOUTS) // 2  # most rollouts are read at once


def _line(kind: str, payload: object, **extra: object) -> bytes:
    return json.dumps({"timestamp": "2026-01-01T00:00:09Z", "type": kind, "payload": payload, **extra}).encode()


_ODD_LINES = {
    "a blank line": b"",
    "only spaces": b"   ",
    "a BOM": b"\xef\xbb\xbf" + _line("response_item", {"type": "message", "role": "user", "content": []}),
    "a CR before the LF": _line("response_item", {"type": "function_call", "name": "x"}) + b"\r",
    "two objects on a line": _line("response_item", {"type": "message", "role": "assistant"}) + b" {}",
    "a role of another type": _line("response_item", {"type": "function_call", "role": 5}),
    "a role of another type in an event": _line("event_msg", {"type": "agent_message", "message": "m", "role": []}),
    "an escaped role": _line("response_item", {"type": "function_call", "name": "x"}).replace(
        b'"name"', b'"\\u0072ole": 5, "name"'
    ),
    "a payload that is a string": _line("response_item", "text"),
    "no payload": json.dumps({"type": "message", "role": "user", "timestamp": "2026-01-02"}).encode(),
    "a lone surrogate": _line("response_item", {"type": "message", "role": "user", "content": "\\ud800"}).replace(
        b"\\\\ud800", b"\\ud800"
    ),
    "not an object": b"[1]",
}


@pytest.mark.parametrize("odd", sorted(_ODD_LINES))
@pytest.mark.parametrize("where", [0, 1, -1])
def test_an_odd_line_scans_the_same_at_once_as_line_by_line(tmp_path, monkeypatch, odd, where):
    seed = next(p for p in _ROLLOUTS if p.stat().st_size < 100_000)
    lines = seed.read_bytes().rstrip(b"\n").split(b"\n")
    lines.insert(where if where >= 0 else len(lines), _ODD_LINES[odd])
    path = tmp_path / "rollout-2026-01-01T00-00-00-0f0e0d0c-0000-4000-8000-000000000001.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    first, second = _both(path, monkeypatch)
    assert first == second


@pytest.mark.parametrize("odd", sorted(_ODD_LINES))
@pytest.mark.parametrize("where", [0, 1, -1])
def test_a_rollout_described_with_its_details_is_described_as_alone(tmp_path, odd, where):
    """``describe_lean`` takes the scan from the records its details are read from: the same
    row as the scan alone, whatever the odd line (a role the peek refuses and the record's
    struct does not check, a line the codec still types and the scan does not)."""
    seed = next(p for p in _ROLLOUTS if p.stat().st_size < 100_000)
    lines = seed.read_bytes().rstrip(b"\n").split(b"\n")
    lines.insert(where if where >= 0 else len(lines), _ODD_LINES[odd])
    path = tmp_path / "sessions" / "2026" / "01" / "01"
    path.mkdir(parents=True)
    (path / "rollout-2026-01-01T00-00-00-0f0e0d0c-0000-4000-8000-000000000001.jsonl").write_bytes(
        b"\n".join(lines) + b"\n"
    )
    (alone,) = [store.describe_item(info) for info in store.discover_files(tmp_path)]
    (lean,) = [store.describe_lean(info)[0] for info in store.discover_files(tmp_path)]
    assert msgspec.to_builtins(lean) == msgspec.to_builtins(alone)
