"""A batch of lines the codec's batch decoder refuses (one line of a record type it does not
know yet, a BOM, a blank line, two objects on a line, a lone surrogate, a line nested too
deeply) is decoded a line at a time. With ``runs`` (the listings), the lines the batch decoder
takes alone come back as whole batches: the same records as without, and the listings, which
look again at every line not decoded whole, do not for those (docs/speed.md, issue 37)."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import GOLDEN

from txcodec.harnesses.claude_code.codec import CODEC as CLAUDE
from txcodec.harnesses.codex.codec import CODEC as CODEX
from txcodec.model.native import decode_batches

_CODECS = {"claude_code": CLAUDE, "codex": CODEX}

_REFUSED = {
    "a record type not known yet": json.dumps({"type": "tool_use", "uuid": "t1", "name": "bash"}).encode(),
    "a content block not known yet": json.dumps(
        {"type": "assistant", "uuid": "a9", "message": {"role": "assistant", "content": [{"type": "fallback"}]}}
    ).encode(),
    "an item not known yet": json.dumps({"type": "response_item", "payload": {"type": "new_item"}}).encode(),
    "a BOM": b"\xef\xbb\xbf{}",
    "a blank line": b"",
    "two objects on a line": b"{} {}",
    "a lone surrogate": b'{"type": "user", "uuid": "u9", "x": "\\ud800"}',
    "nested too deeply": b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not JSON": b"{garbage}",
}


def _lines(harness: str) -> list[bytes]:
    """The golden files' lines, 300 of them: more than two batches."""
    found = [
        line
        for path in sorted((GOLDEN / harness).rglob("*.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line.startswith(b"{")
    ]
    return found[:300]


def _record(record: object) -> object:
    try:
        return type(record).__name__, msgspec.json.encode(record)
    except TypeError:  # an opaque line
        return type(record).__name__, repr(record)


def _decoded(harness: str, data: bytes, runs: bool) -> list[tuple[bytes, object, bool]]:
    out = []
    for batch, _, whole in decode_batches(data, _CODECS[harness], runs=runs):
        out.extend((bytes(line._raw), _record(line._record), whole) for line in batch)
    return out


def _alone(harness: str, raw: bytes) -> bool:
    """Whether the codec's batch decoder takes the line alone, as one record."""
    try:
        found = _CODECS[harness].decode_batch(raw)
    except RecursionError:
        return False
    return found is not None and len(found) == 1


def _check(harness: str, lines: list[bytes], refused: set[int]) -> None:
    data = b"\n".join(lines) + b"\n"
    plain, runs = _decoded(harness, data, False), _decoded(harness, data, True)
    # the same lines and records either way
    assert [(raw, record) for raw, record, _ in runs] == [(raw, record) for raw, record, _ in plain]
    assert any(not whole for _, _, whole in plain)  # the case is one: a batch refused
    # every line of the seed the batch decoder takes alone comes whole; no refused line does
    for n, (raw, _, whole) in enumerate(runs):
        assert whole is (n not in refused and raw[:1] == b"{" and _alone(harness, raw)), (n, raw[:80])
        if n in refused:
            assert not whole


@pytest.mark.parametrize("harness", sorted(_CODECS))
@pytest.mark.parametrize("where", [0, 5, -1])
def test_a_line_with_a_cr_before_its_lf_comes_whole_among_refused_ones(harness, where):
    lines = _lines(harness)
    lines.insert(len(lines) // 2, _REFUSED["a record type not known yet"])
    at = where if where >= 0 else len(lines) - 1
    lines[at] += b"\r"
    data = b"\n".join(lines) + b"\n"
    runs = _decoded(harness, data, True)
    assert runs[at][2] is _alone(harness, lines[at]) is True
    assert [r[:2] for r in runs] == [r[:2] for r in _decoded(harness, data, False)]


@pytest.mark.parametrize("harness", sorted(_CODECS))
@pytest.mark.parametrize("odd", sorted(_REFUSED))
@pytest.mark.parametrize("where", [0, 1, 7, 64, -1])
def test_a_refused_line_leaves_the_lines_around_it_whole(harness, odd, where):
    lines = _lines(harness)
    at = where if where >= 0 else len(lines)
    lines.insert(at, _REFUSED[odd])
    _check(harness, lines, {at})


@settings(max_examples=40, deadline=None)
@given(harness=st.sampled_from(sorted(_CODECS)), data=st.data())
def test_refused_lines_anywhere_give_the_same_records(harness, data):
    lines = _lines(harness)
    odd = data.draw(st.lists(st.sampled_from(sorted(_REFUSED)), min_size=1, max_size=12))
    refused = set()
    for kind in odd:
        at = data.draw(st.integers(0, len(lines)))
        lines.insert(at, _REFUSED[kind])
        refused = {n + (n >= at) for n in refused} | {at}
    _check(harness, lines, refused)
