"""Codex -> Claude Code takes shortcuts (issue 12); each gives what its reference gives.

- ``convert`` streams a rollout (decoded a batch at a time, each batch read and dropped;
  an events-only rollout read again whole) where the reference loads it whole first;
- the lone-surrogate report checks only the lines a loaded session decoded outside a
  whole batch (``readkit.surrogate_suspects``) where the reference scans the whole file;
- the Codex origin searches only the lines not decoded as a response item or an event
  (``codex.origin.codex_meta_candidates``) where the reference searches every line;
- the Claude Code writer's msgspec encoding and record namer (see test_fast_paths);
- ``conform`` keeps the Codex reader's messages that fit as they are (``read.unshared``)
  where the reference decodes every one;
- the Claude Code writer writes a message of plain tool results (``PLAIN_RESULTS``)
  without the general steps of a user message;
- ``convert`` goes from a rollout's lines to the Claude Code lines directly
  (``claude_code.from_codex``, ``ENABLED``) for the rollouts it knows, tool outputs
  pasted as their JSON bytes, and bails out to the path above for the others.

Every Codex golden and corpus rollout, odd variants of each (CRLF, bad UTF-8, unknown
record types, non-canonical escapes, lone surrogates, forks, duplicate "type" keys, a
huge line, no final newline) and hypothesis mutants are converted with the shortcuts and
with the references: the files, the loss entries (in order) and the origin must agree.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st
from support import fuzzing
from support.paths import CORPUS
from support.paths import GOLDEN
from support.paths import corpus_files
from test_fast_paths import reference_dumps
from test_fast_paths import reference_dumps_lines
from test_fast_paths import reference_namer
from test_fast_paths import reference_uuid

from txcodec import api
from txcodec.core.errors import TxcodecError
from txcodec.harnesses.claude_code import from_codex
from txcodec.harnesses.claude_code import write as claude_write
from txcodec.harnesses.codex import origin as codex_origin
from txcodec.kit import read as readkit
from txcodec.kit import registry
from txcodec.kit.load import streamed
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport


def _rollouts() -> list:
    golden = sorted(p for p in (GOLDEN / "codex").rglob("*.jsonl") if p.name != "written.jsonl")
    return golden + [p for p in corpus_files("codex") if p.suffix == ".jsonl"]


_FORK_META = (
    b'{"type":"session_meta","timestamp":"2025-01-01T00:00:00Z",'
    b'"payload":{"id":"019c4e6b-adb2-77a4-8ce5-4bfb85d1c029","cwd":"/a"}}'
)
_ODD_LINES = [
    b'{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"\xff\xfe"}]}}',
    b'{"type":"zzz","timestamp":"x","payload":{}}',
    b'{"type":"response_item","payload":{"type":"nope","x":1}}',
    b"not json",
    b"",
    # duplicate "type" keys: the last one is the line's type for a plain decode
    b'{"type":"response_item","payload":{"type":"message","role":"user","content":[]},"type":"session_meta"}',
    b'{"payload":{"id":"019c4e6b-adb2-77a4-8ce5-4bfb85d1c02b"},"type":"response_item","type":"session_meta"}',
    b'{"type":"session_meta","payload":{"id":"019c4e6b-adb2-77a4-8ce5-4bfb85d1c02c"},"type":"event_msg"}',
]


def _variants(data: bytes) -> dict[str, bytes]:
    lines = data.split(b"\n")
    huge = (
        b'{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"'
        + b"x\\n" * 200_000
        + b'"}}'
    )
    return {
        "as is": data,
        "crlf": data.replace(b"\n", b"\r\n"),
        "odd lines": b"\n".join(lines[:3] + _ODD_LINES + lines[3:]),
        "escapes": data.replace(b'"text":"', b'"text":"\\ud800\\u00e9\\/', 3).replace(
            b'"output":"', b'"output":"\\udfff\\ud83d\\ude00', 2
        ),
        "fork": b"\n".join(lines[:3] + [_FORK_META] + lines[3:]),
        "forked_from_id": data.replace(
            b'"payload":{"id":', b'"payload":{"forked_from_id":"019c4e6b-adb2-77a4-8ce5-4bfb85d1c02a","id":', 1
        ),
        "huge line": b"\n".join(lines[:2] + [huge] + lines[2:]),
        "no final newline": data.rstrip(b"\n"),
        "events only": b"\n".join(line for line in lines if b'"response_item"' not in line),
        # a call answered twice (the second answer is an orphan), and a result whose call is another's
        "answered twice": b"\n".join(sum(([line, line] if b'_output"' in line else [line] for line in lines), [])),
        "answers swapped": data.replace(b'"call_id":"', b'"call_id":"x', 1),
        # what the fused path pastes, decodes or leaves to the reference: outputs with escapes
        # msgspec does not write, with bad UTF-8, calls without outputs, a float argument,
        # an empty text, an unknown event
        "output escapes": data.replace(b'"output":"', b'"output":"\\u00e9\\/\\u001b\\\\u\\t'),
        "output bad utf-8": data.replace(b'"output":"', b'"output":"\xc3(', 1),
        "no outputs": b"\n".join(line for line in lines if b'_output"' not in line),
        "float argument": data.replace(b'"arguments":"{', b'"arguments":"{\\"f\\":1.5,', 1),
        "empty text": data.replace(b'"text":"', b'"text":"","was":"', 2),
        "unknown event": b"\n".join(
            lines[:2] + [b'{"type":"event_msg","payload":{"type":"brand_new","x":1}}'] + lines[2:]
        ),
    }


def _converted(data: bytes, path=None):
    """The conversion of ``data`` (from bytes, and from ``path`` holding them: a mapped
    file), and the origin to_common gives."""
    try:
        written, loss = api.convert(data, "claude_code", from_="codex")
        common = api.to_common(api.load(data, "codex"))
    except TxcodecError as exc:  # refused: the same refusal both ways
        return type(exc).__name__
    out = [written.files, loss.entries, common.meta.started_by, common.meta.forked_from]
    if path is not None:
        path.write_bytes(data)
        from_path, path_loss = api.convert(path, "claude_code", from_="codex")
        out += [from_path.files, path_loss.entries]
    return out


def _both(data: bytes, path=None):
    fast = _converted(data, path)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(from_codex, "ENABLED", False)  # read into Common, written from Common
        # not streamed, and conform decodes every message
        m.setitem(
            registry._cache,
            "codex",
            msgspec.structs.replace(registry.get("codex"), read_streams=False, read_unshared=False),
        )
        m.setattr(claude_write, "PLAIN_RESULTS", False)  # every user message takes the general steps
        m.setattr(readkit, "surrogate_suspects", lambda session: None)
        m.setattr(codex_origin, "codex_meta_candidates", lambda lines: lines)
        m.setattr(claude_write, "dumps", reference_dumps)
        m.setattr(claude_write, "dumps_lines", reference_dumps_lines)
        m.setattr(claude_write, "derive_uuid", reference_uuid)
        m.setattr(claude_write, "uuid_namer", reference_namer)
        return fast, _converted(data, path)


@pytest.mark.parametrize("path", _rollouts(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_shortcuts_give_the_reference_conversion(path, tmp_path):
    for name, data in _variants(path.read_bytes()).items():
        fast, reference = _both(data, tmp_path / "rollout.jsonl")
        assert fast == reference, name


def test_the_shortcuts_are_taken():
    """Not vacuous: a loaded rollout knows its suspect lines (none when every batch was
    whole), and the origin search leaves most lines out."""
    data = (GOLDEN / "codex" / "hand_built" / "rollout.jsonl").read_bytes()
    assert streamed(data, "codex").pending is not None  # convert reads it as it decodes it
    session = api.load(data, "codex")
    assert readkit.surrogate_suspects(session) is not None
    assert len(codex_origin.codex_meta_candidates(session.lines)) < len(session.lines)
    odd = api.load(
        b"\n".join(
            [
                data.split(b"\n")[0],
                b'{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"\\ud800"}]}}',
                b"{}",
            ]
        ),
        "codex",
    )
    assert readkit.surrogate_suspects(odd) == [0, 1, 2]  # the batch was refused: every line is checked


@settings(max_examples=150, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_shortcuts_give_the_reference_conversion_of_mutants(data):
    rng = fuzzing.Rng(lambda n: data.draw(st.integers(0, max(n - 1, 0))))
    mutant = fuzzing.mutant("codex", rng)
    note(f"mutant: {mutant[:2000]!r}")
    fast, reference = _both(mutant)
    assert fast == reference


_call_ids = st.sampled_from(["call_1", "call_2", "call 3"])  # "call 3" is no id the API takes
_results = st.builds(
    ToolResult,
    _call_ids,
    st.sampled_from(["out", "", "a\udfffb", "x", [Text("part")]]),
    st.sampled_from([None, None, True, False]),
    st.sampled_from([msgspec.UNSET] * 3 + [{"k": 1.5}]),
)
_turns = st.lists(
    st.tuples(
        st.lists(_call_ids, max_size=3),  # the assistant message's calls
        st.lists(
            st.sampled_from([0, 0, 0, 1]).flatmap(
                lambda k: _results if k == 0 else st.builds(Text, st.sampled_from(["hi", ""]))
            ),
            min_size=1,
            max_size=4,
        ),  # the user message after it
        st.sampled_from([False, False, True]),
        st.sampled_from([msgspec.UNSET, msgspec.UNSET, "human"]),
    ),
    max_size=4,
)


@settings(max_examples=600, derandomize=True, deadline=None, database=None)
@given(_turns)
def test_plain_results_give_what_the_general_steps_give(turns):
    """The writer's shortcut for a message of plain tool results against the general
    steps of a user message: calls answered, answered twice, not answered, answered by
    another call's result, results that are errors, lists, structured or beside text."""
    messages = []
    for calls, answers, meta, origin in turns:
        messages.append(Message("assistant", [ToolUse(c, "shell", {"cmd": "ls"}) for c in calls] or [Text("ok")]))
        messages.append(Message("user", list(answers), meta=meta, origin=origin))
    written = []
    for plain in (True, False):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(claude_write, "PLAIN_RESULTS", plain)
            loss = LossReport()
            files = claude_write.write(
                Conversation(meta=Meta(id="s"), messages=messages), loss, registry.WriteOptions()
            ).files
            written.append((files, loss.entries))
    assert written[0] == written[1]


# --- the fused path (claude_code.from_codex) ------------------------------------------------

# the golden rollouts the fused path must take (the others hold an image, a compaction's own
# model call, lines of no known shape: the reference reads them)
_FUSED_GOLDEN = [
    "scenarios/apply_patch",
    "scenarios/exec_command",
    "scenarios/parallel_calls",
    "scenarios/reasoning_summaries",
    "scenarios/remote_compact",
    "scenarios/three_turns",
    "scenarios/web_search",
    "tool_call_genuine",
    "compaction_remote",
]


def _fused(data: bytes):
    return from_codex.convert(data, None, None, None)


def test_the_fused_path_is_taken():
    """Not vacuous: the fused path converts the rollouts it should, each as the reference
    does, rather than always bailing out."""
    taken = [
        name for name in _FUSED_GOLDEN if _fused((GOLDEN / "codex" / name / "rollout.jsonl").read_bytes()) is not None
    ]
    assert taken == _FUSED_GOLDEN
    real = [
        p
        for p in corpus_files("codex")
        if p.name.startswith("rollout-") and p.suffix == ".jsonl" and "malformed" not in p.parts
    ]
    if real:  # the corpus's real rollouts (token counts, redacted arguments, unknown events): half or more take it
        fused = [p.name for p in real if _fused(p.read_bytes()) is not None]
        assert len(fused) * 2 >= len(real), fused


def test_the_benchmark_rollout_takes_the_fused_path(tmp_path, monkeypatch):
    """The shapes of benchmarks/bench_speed.py's rollout (a Claude Code session converted
    to Codex) take the fused path, and it gives the reference conversion."""
    import sys

    sys.path.insert(0, str(GOLDEN.parent / "benchmarks"))
    try:
        import bench_common
    finally:
        sys.path.pop(0)
    # the benchmark's sessions, from the corpus the tests use (a fresh clone skips this test)
    monkeypatch.setattr(bench_common, "SOURCES", sorted((CORPUS / "claude_code" / "spotter").glob("*-*-*-*-*.jsonl")))
    written, _ = api.convert(bench_common.build(3), "codex", from_="claude_code")
    rollout = next(iter(written.files.values()))
    fused = _fused(rollout)
    assert fused is not None
    fast, reference = _both(rollout, tmp_path / "rollout.jsonl")
    assert fast == reference
    assert [fused[0].files, fused[1].entries] == reference[:2]


def _long_rollout(turns: list[tuple[int, bool]]) -> bytes:
    """A rollout of ``turns``: each that many human prompts, then (when True) an answer and
    its token count; thousands of lines, so that messages are written while it is read."""
    ts = "2026-12-01T00:00:01.000Z"
    lines = [
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {"id": "01a22f31-57e7-79e3-ac81-23bece3717f4", "timestamp": ts, "cwd": "/tmp/p"},
        }
    ]
    total = 0
    for prompts, answered in turns:
        for _ in range(prompts):
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": f"prompt {len(lines)}"}],
                    },
                }
            )
        if answered:
            total += 10
            usage = {
                "input_tokens": total,
                "cached_input_tokens": 0,
                "output_tokens": 1,
                "reasoning_output_tokens": 0,
                "total_tokens": total + 1,
            }
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": f"answer {len(lines)}"}],
                    },
                }
            )
            lines.append(
                {
                    "timestamp": ts,
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}},
                }
            )
    return b"".join(msgspec.json.encode(line) + b"\n" for line in lines)


@pytest.mark.parametrize(
    "turns",
    [
        [(2500, False)],
        [(1, True), (1500, False), (1, True), (2000, True), (3, False)],
        [(1, True)] * 1200 + [(1200, True)],
    ],
    ids=["prompts only", "long stretches", "answers"],
)
def test_messages_written_while_the_rollout_is_read(turns, tmp_path):
    """Long stretches with no answer, or no token count, between batches of lines: each
    message is written once nothing later can change it, and the file is the reference's."""
    rollout = _long_rollout(turns)
    assert _fused(rollout) is not None
    fast, reference = _both(rollout, tmp_path / "rollout.jsonl")
    assert fast == reference


def test_pasted_outputs_are_what_msgspec_writes():
    """A tool output is pasted as its JSON bytes only when they hold no ``\\u`` or ``\\/``
    escape and are valid UTF-8: then they are msgspec's own encoding of the string,
    because msgspec escapes exactly ``"``, ``\\`` and the control characters, those with a
    short escape as ``\\b \\f \\n \\r \\t`` and every other one as ``\\u00XX``."""
    encode, decode = msgspec.json.encode, msgspec.json.decode
    short = {"\b": b"\\b", "\f": b"\\f", "\n": b"\\n", "\r": b"\\r", "\t": b"\\t", '"': b'\\"', "\\": b"\\\\"}
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        expected = short.get(char, f"\\u{code:04x}".encode() if code < 0x20 else char.encode())
        assert encode(char) == b'"' + expected + b'"', hex(code)
    pieces = ['\\"', "\\\\", "\\b", "\\f", "\\n", "\\r", "\\t", "a", " ", "é", "😀", "\u2028", "\x7f", "\uffff", "/"]
    for first in pieces:
        for second in pieces:
            raw = f'"{first}{second}x"'.encode()
            pasted = from_codex._output(msgspec.Raw(raw))
            if b"\\u" in raw or b"\\/" in raw:  # an escaped backslash before u or /: decoded, to be safe
                assert pasted == decode(raw)
            else:
                assert type(pasted) is msgspec.Raw and bytes(pasted) == raw == encode(decode(raw))
    for raw in [
        b'"\\u00e9"',
        b'"a\\/b"',
        b'"\\u0001"',
        b'"\\\\u"',
        b'"\\\\/"',
    ]:  # decoded, then written as msgspec writes it
        assert from_codex._output(msgspec.Raw(raw)) == decode(raw)
    for raw in [b'"\xff"', b'"\xed\xa0\x80"', b"[]", b"{}", b"1"]:  # bad UTF-8 and non-strings are the reference's
        with pytest.raises(from_codex._Bail):
            from_codex._output(msgspec.Raw(raw))
