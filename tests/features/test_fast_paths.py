"""The fast paths the writers take (issue 12) write the very bytes of the slow ones.

Each fast path stands in for a reference that the goldens were made with: the Claude
Code writer's msgspec ``dumps`` for ``json.dumps(ensure_ascii=False, separators=(",", ":"))``,
``derive_uuid`` for ``uuid.UUID(bytes=sha1(...)[:16], version=5)``. Both are compared on
generated values and on every corpus and golden session converted to Claude Code.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

import msgspec
import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.core.errors import TxcodecError
from txcodec.core.ids import derive_uuid
from txcodec.core.ids import uuid_namer
from txcodec.harnesses.claude_code import write as claude_write
from txcodec.kit import conform
from txcodec.kit.changes import to_json
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import RawBlock
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import has_lone_surrogates
from txcodec.model.native import without_lone_surrogates


def reference_dumps(value):
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def reference_uuid(namespace: uuid.UUID, value: str) -> str:
    digest = hashlib.sha1(namespace.bytes + value.encode("utf-8", "surrogatepass")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))


# every code point, lone surrogates and controls included; floats of every kind (NaN,
# infinities, exponents both ways), ints past 64 bits
_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
_scalars = st.none() | st.booleans() | st.integers() | st.integers(-(2**70), 2**70) | st.floats() | _text
_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_text, inner, max_size=5), max_leaves=30
)


@settings(max_examples=1500, deadline=None)
@given(_json)
def test_dumps_writes_the_reference_bytes(value):
    assert claude_write.dumps(value) == reference_dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        1e16,
        1e-5,
        1.5e-7,
        float("nan"),
        float("inf"),
        -float("inf"),
        2**64,
        -(2**63) - 1,
        2**200,
        "\ud800",
        "a\udfffb",
        "\x00\x1f\x7f\u2028\u2029",
        {"k\ud83d": [0.1, "\u00cb"]},
        "\u02cb",
        {"\u02cb": 1},
    ],
)
def test_dumps_edge_values(value):
    # 1e16 and 1e-5 are spelled differently by msgspec (1e16, 0.00001): the float marker
    # sends them down the reference path; "\u02cb" is UTF-8 CB 8B, a harmless false alarm
    assert claude_write.dumps(value) == reference_dumps(value)


def reference_dumps_lines(lines, loose=()):
    return b"".join(reference_dumps(line) + b"\n" for line in lines)


def reference_namer(namespace, prefix):
    return lambda name: reference_uuid(namespace, prefix + name)


def _has_float(value) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(map(_has_float, value.values()))
    return isinstance(value, list) and any(map(_has_float, value))


@settings(max_examples=500, deadline=None)
@given(st.lists(_json, max_size=8))
def test_dumps_lines_writes_the_reference_bytes(lines):
    # the writer marks the lines that may hold a float; the others go through in one call
    loose = {i for i, line in enumerate(lines) if _has_float(line)}
    assert claude_write.dumps_lines(lines, loose) == reference_dumps_lines(lines)


@settings(max_examples=1000, deadline=None)
@given(st.uuids(), _text, _text)
def test_uuid_namer_is_derive_uuid_of_prefix_and_name(namespace, prefix, name):
    assert uuid_namer(namespace, prefix)(name) == reference_uuid(namespace, prefix + name)


@settings(max_examples=2000, deadline=None)
@given(st.uuids(), _text)
def test_derive_uuid_is_uuid5(namespace, value):
    assert derive_uuid(namespace, value) == reference_uuid(namespace, value)
    if not re.search(r"[\ud800-\udfff]", value):
        assert derive_uuid(namespace, value) == str(uuid.uuid5(namespace, value))


def _sources() -> list[Path]:
    golden = sorted(p for p in GOLDEN.rglob("*.jsonl") if "subagents" not in p.parts)
    return golden + corpus_files()


def _converted(path: Path):
    try:
        written, _ = api.convert(path, "claude_code")
    except TxcodecError as exc:  # not a session Claude Code can be written from: the same refusal both ways
        return type(exc).__name__
    return written.files


def _common(path: Path):
    try:
        loss = LossReport()
        return to_json(api.to_common(api.load(path), loss)), loss.entries
    except TxcodecError as exc:
        return type(exc).__name__


def reference_fit(message):
    return conform._message_decoder.decode(conform._encoder.encode(message))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_converted_sessions_are_byte_identical(path, monkeypatch):
    """Every golden and corpus session read into Common and converted to Claude Code,
    with the fast paths and with the references."""
    fast, fast_common = _converted(path), _common(path)
    monkeypatch.setattr(claude_write, "dumps", reference_dumps)
    monkeypatch.setattr(claude_write, "dumps_lines", reference_dumps_lines)
    monkeypatch.setattr(claude_write, "derive_uuid", reference_uuid)
    monkeypatch.setattr(claude_write, "uuid_namer", reference_namer)
    monkeypatch.setattr(conform, "_fit_message", reference_fit)
    monkeypatch.setattr(conform, "fits_as_is", lambda message: False)
    monkeypatch.setattr(claude_write, "PLAIN_RESULTS", False)
    assert _common(path) == fast_common
    assert _converted(path) == fast


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), 1e300, 2**70, -(2**64), {"a": [1.5, msgspec.Raw(b'{"x":2}')]}, "\u00cb"]
)
def test_conform_fast_path_matches_the_json_pass(value):
    message = Message("assistant", [ToolUse("call_1", "Bash", {"v": value}), RawBlock("x", {"v": value})])
    assert conform._fit_message(message) == reference_fit(message)


_id = _text | st.sampled_from(["call_1", "toolu_01", ""])
_odd = st.sampled_from([1.5, float("nan"), 2**70, (1, 2), {1: "a"}, msgspec.Raw(b"[1]"), b"x", msgspec.UNSET])
_plain = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


def _message_strategy(odd, value):
    """Messages whose fields and free-form values may be ``odd`` (never, for the usual)."""
    absent_or = lambda values: st.just(msgspec.UNSET) | values  # noqa: E731
    text = _text | odd
    usage = st.builds(
        Usage,
        st.integers(0, 2**64),
        st.integers(0, 9),
        st.integers(0, 9),
        st.integers(0, 9),
        absent_or(st.integers(0, 9) | odd),
    )
    parts = st.lists(
        st.builds(Text, text) | st.builds(Image, absent_or(_text), absent_or(_text), absent_or(text)), max_size=3
    )
    blocks = st.one_of(
        st.builds(Text, text),
        st.builds(Thinking, _text, absent_or(_text), absent_or(text)),
        st.builds(ToolUse, _id, _id | odd, value, st.sampled_from(["generic", "shell_exec"])),
        st.builds(
            ToolResult,
            _id,
            _text | parts | odd,
            st.sampled_from([None, True, False]) | odd,
            absent_or(value),
            absent_or(text),
        ),
        st.builds(RawBlock, _text, value),
        st.builds(Image, absent_or(_text), absent_or(_text)),
    )
    return st.builds(
        Message,
        st.sampled_from(["user", "assistant"]) | odd,
        st.lists(blocks, max_size=4),
        absent_or(text),
        absent_or(text),
        st.lists(text, max_size=2),
        absent_or(_text),
        st.sampled_from([msgspec.UNSET, None, "end_turn"]) | odd,
        absent_or(usage),
        absent_or(usage),
        st.booleans(),
        st.booleans(),
        st.booleans() | odd,
        st.booleans(),
        st.booleans(),
        absent_or(text),
        st.dictionaries(_text, value, max_size=3),
    )


_messages = (
    _message_strategy(st.nothing(), _plain)
    | _message_strategy(st.nothing(), _plain | _odd | st.lists(_odd, max_size=2))
    | _message_strategy(_odd, _json | _odd | st.lists(_odd, max_size=2))
)


@settings(max_examples=3000, deadline=None)
@given(_messages)
def test_a_message_kept_as_it_is_equals_its_decoded_copy(message):
    """conform keeps a message of a reader that shares nothing (``checked``) where
    fits_as_is says its decoded copy would equal it: it must."""
    if conform.fits_as_is(message):
        try:
            copy = conform._fit_message(message)  # what conform would put in its place
        except UnicodeEncodeError:  # a lone surrogate, which no reader leaves in Common
            assume(False)
        assert copy == message
        assert repr(copy) == repr(message)  # the same types too: True is no 1, a tuple no list


def test_fits_as_is_keeps_the_usual_messages_and_refuses_the_odd():
    usual = Message(
        "assistant",
        [Text("hi"), Thinking("t", encrypted="e"), ToolUse("c1", "shell", {"cmd": ["ls", 1, None, True]})],
        usage=Usage(1, 2, 3, 4),
        extra={"codex_phase": "final"},
    )
    assert conform.fits_as_is(usual)
    assert conform.fits_as_is(
        Message("user", [ToolResult("c1", "out"), ToolResult("c2", [Text("a"), Image(url="u")], True)])
    )
    assert conform.fits_as_is(
        Message("user", [ToolResult("c1", "out", structured={"stdout": "out", "lines": [1, None, True]})])
    )
    for odd in (1.5, float("nan"), 2**64, (1,), {1: 2}, msgspec.Raw(b"1"), b"x", msgspec.UNSET):
        assert not conform.fits_as_is(Message("assistant", [ToolUse("c1", "shell", {"v": [odd]})])), odd
        assert not conform.fits_as_is(Message("user", [Text("a")], extra={"k": odd})), odd
        assert not conform.fits_as_is(Message("user", [ToolResult("c1", "out", structured={"k": [odd]})])), odd
    nested: object = "x"
    for _ in range(100):
        nested = [nested]
    assert not conform.fits_as_is(Message("assistant", [ToolUse("c1", "shell", nested)]))  # the decode decides
    assert not conform.fits_as_is(Message("user", [RawBlock("x", {})]))


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"\\", b"\\\\", b"\\ud83d", b"\\ude00", b"\\uD800", b"\\uDC00", b"u", b"d8", b"x", b'"', b"\\u0041", b"\n"]
        ),
        max_size=14,
    )
)
def test_lone_surrogate_scan_agrees_with_the_repair(parts):
    """The whole-file check the lone-surrogate report starts with finds exactly the
    escapes the per-line repair would replace."""
    data = b"".join(parts)
    assert has_lone_surrogates(data) == (without_lone_surrogates(data) is not None)


_json_text = _json.map(lambda v: json.dumps(v, ensure_ascii=False)) | _json.map(json.dumps) | _text


@settings(max_examples=1500, deadline=None)
@given(_json_text)
def test_codex_arguments_decode_as_json_loads(text):
    # the Codex reader decodes function_call arguments with msgspec where it can
    from txcodec.harnesses.codex.read import _arguments

    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            _arguments(text)
        return
    got = _arguments(text)
    assert json.dumps(got) == json.dumps(expected)  # NaN != NaN: compared as text


_FLOATS = {"small": 1e-05, "big": 1e16, "nan": float("nan"), "inf": float("inf"), "plain": 0.5}
# what msgspec refuses: a whole run of lines then goes the careful way, hiding a missed float
_REFUSED = {"huge": 2**70, "lone": "\ud800"}


@pytest.mark.parametrize("extra", [{}, _REFUSED], ids=["floats", "floats-and-refused"])
def test_claude_writer_checks_every_free_form_value_for_floats(monkeypatch, extra):
    """The writer skips the float check on lines holding only Common's typed values; the
    source's own values (tool inputs, structured results, raw result parts, raw blocks)
    are checked, so their floats are written as ``json.dumps`` writes them."""
    from txcodec.model.common import Conversation
    from txcodec.model.common import Meta
    from txcodec.model.common import Text
    from txcodec.model.common import ToolResult

    messages = [
        Message("user", [Text("go")]),
        Message(
            "assistant",
            [
                Text("calling"),
                ToolUse("toolu_1", "Bash", {**_FLOATS, **extra}),
                ToolUse("toolu_2", "Bash", {"n": 1}),
                RawBlock("redacted_thinking", {"type": "redacted_thinking", "data": "x", "f": 1e-7}),
            ],
        ),
        Message(
            "user",
            [
                ToolResult("toolu_1", "out", structured={"took": 1e-05}),
                ToolResult("toolu_2", [RawBlock("search_result", {"type": "search_result", "score": 1e22})]),
            ],
        ),
        Message("assistant", [Text("done")]),
    ]
    conversation = Conversation(meta=Meta(source_harness="codex", id="s1"), messages=messages)
    fast = claude_write.write(conversation, LossReport(), claude_write.WriteOptions())
    monkeypatch.setattr(claude_write, "dumps_lines", reference_dumps_lines)
    reference = claude_write.write(conversation, LossReport(), claude_write.WriteOptions())
    assert fast.files == reference.files
    text = next(iter(fast.files.values())).decode()
    for spelled in ("1e-05", "1e+16", "NaN", "Infinity", "1e-07", "1e+22", *(["\\ud800"] if extra else [])):
        assert spelled in text
