"""The Codex listing scan peeks at a rollout's lines in one decode where every line is
one JSON object, else line by line: both give the same row (docs/speed.md, issue 37)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import sessions
from txcodec.core.jsonl import object_lines
from txcodec.harnesses.codex import details
from txcodec.harnesses.codex import scan
from txcodec.harnesses.codex import store
from txcodec.sessions import SessionRow

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
    "a line nested too deeply": _line("response_item", {"type": "function_call", "name": "x"}).replace(
        b'"name"', b'"deep": ' + b"[" * 100_000 + b"]" * 100_000 + b', "name"'
    ),
    # events, of which the count takes only an error: the listing reads their payloads for their type alone
    "an error event": _line("event_msg", {"type": "error", "message": "boom"}),
    "an error event spelt with an escape": _line("event_msg", {"type": "error", "message": "boom"}).replace(
        b'"error"', b'"\\u0065rror"'
    ),
    "an error event whose message is not text": _line("event_msg", {"type": "error", "message": 5}),
    "an error event with a lone surrogate": _line("event_msg", {"type": "error", "message": "\\ud800"}).replace(
        b"\\\\ud800", b"\\ud800"
    ),
    "an event of a new type": _line("event_msg", {"type": "new_kind", "n": [1]}),
    "an event with a null payload": _line("event_msg", None),
    "an event whose payload is text": _line("event_msg", "boom"),
    # a tagged struct checks every "type" key, the codec's lenient path keeps the last
    "an error event typed twice, error last": _line("event_msg", {"type": "x", "message": "m"}).replace(
        b'"message"', b'"type": "error", "message"'
    ),
    "an error event typed twice, error first": _line("event_msg", {"type": "error", "message": "m"}).replace(
        b'"message"', b'"type": "x", "message"'
    ),
    # a turn's context, read once for the scan's model and the count's
    "a turn context": _line("turn_context", {"model": "gpt-odd", "cwd": "/w"}),
    "a turn context of another type": _line("turn_context", {"type": 5, "model": "gpt-odd"}),
    "a turn context whose cwd is a number": _line("turn_context", {"cwd": 1, "model": "gpt-odd"}),
    "a turn context whose model is a number": _line("turn_context", {"model": 5}),
    "a turn context with a model twice": _line("turn_context", {"model": "gpt-odd"}).replace(
        b'{"model"', b'{"model": 5, "model"'
    ),
    "a turn context that is null": _line("turn_context", None),
    # a key decoded as any value has its strings checked as UTF-8: where one is not, the count's
    # TurnContext, or the scan's peek, refuses the payload that a skipping decoder takes
    "a turn context whose sandbox policy is not UTF-8": _line(
        "turn_context", {"model": "gpt-odd", "sandbox_policy": {"type": "full-access"}}
    ).replace(b"full-access", b"full\xff\xffaccess"),
    "a turn context whose id is not UTF-8": _line("turn_context", {"model": "gpt-odd", "id": "t"}).replace(
        b'"id": "t"', b'"id": "t\xff"'
    ),
    "a turn context with a number past range": _line("turn_context", {"model": "gpt-odd", "summary": 1}).replace(
        b'"summary": 1', b'"summary": 1e999'
    ),
}
_COUNTED = {odd for odd in _ODD_LINES if "event" in odd or "turn context" in odd}


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


# a rollout whose count an odd line can change: an error event between the reasoning and the
# answer makes the answer a message of its own, a second turn context a second model
_BUILT = [
    _line("session_meta", {"id": "0f0e0d0c-0000-4000-8000-000000000001", "cwd": "/w", "cli_version": "0.171.0"}),
    _line("turn_context", {"model": "gpt-5", "cwd": "/w"}),
    _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
    _line("response_item", {"type": "reasoning", "summary": []}),
    _line(
        "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    ),
    _line("event_msg", {"type": "token_count", "info": None}),
]


@pytest.mark.parametrize("odd", sorted(_COUNTED))
@pytest.mark.parametrize("where", [0, 4, -1])
def test_an_event_or_turn_context_gives_the_details_of_the_full_read(tmp_path, odd, where):
    """The listing decodes events for their type alone (an error typed by the codec) and a
    turn's context once, for both the scan and the count: its details are the full read's,
    its row the scan's."""
    lines = list(_BUILT)
    lines.insert(where if where >= 0 else len(lines), _ODD_LINES[odd])
    path = tmp_path / "rollout-2026-01-01T00-00-00-0f0e0d0c-0000-4000-8000-000000000001.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    row = SessionRow(harness="codex", session_id="s", path=str(path))
    lean = sessions._lean_entry(row)
    assert lean is not None and lean == sessions._full_entry(row)
    found = scan.SessionInfo(id="", path=str(path))
    read, whole = details.summarize_scanning(path, path.read_bytes(), found)
    assert whole and sessions._entry(read) == lean
    found.id = found.id or scan.id_from_name(path.name)
    assert msgspec.to_builtins(found) == msgspec.to_builtins(scan.scan(path))
