"""``list``'s row details read lean (``Store.summarize``: Claude Code, Codex) equal what the
session read whole to Common gives (``sessions._full_entry``): on every golden and corpus
file, on mutated lines, and through ``discover`` (docs/speed.md, issue 37)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support import fuzzing
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import sessions
from txcodec.kit import registry
from txcodec.sessions import SessionRow

LEAN = ("claude_code", "codex")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _files(harness: str) -> list[Path]:
    found = [p for p in corpus_files(harness) if p.suffix in (".jsonl", ".json", ".zst")]
    found += sorted(p for p in (GOLDEN / harness).rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
    return found


def _both(harness: str, path: Path) -> tuple[object, object]:
    row = SessionRow(harness=harness, session_id="s", path=str(path))
    return sessions._lean_entry(row), sessions._full_entry(row)


@pytest.mark.parametrize("harness", LEAN)
def test_the_lean_details_equal_the_full_read_on_every_golden_and_corpus_file(harness):
    assert registry.get(harness).store.summarize is not None
    lean_files = 0
    files = _files(harness)
    for path in files:
        lean, full = _both(harness, path)
        if lean is not None:
            assert lean == full, path
            lean_files += 1
    # the lean read is the one taken on real sessions (what it passes by is rare)
    assert lean_files >= 25 and lean_files >= len([p for p in files if p.suffix == ".jsonl"]) - 4


# -- a file described with its details, from one read (Store.describe_lean) -------------------------

DESCRIBED_LEAN = [h for h in LEAN if registry.get(h).store.describe_lean is not None]


def _plain(item: object) -> object:
    return item.to_dict() if hasattr(item, "to_dict") else msgspec.to_builtins(item)


def _described_both(harness: str, root: Path) -> tuple[object, object]:
    """The file under ``root`` as ``describe_item`` describes it with ``summarize``'s details,
    and as ``describe_lean`` describes it."""
    store = registry.get(harness).store
    (item,) = store.discover_files(root)
    alone = _plain(store.describe_item(item)), store.summarize(_layout_path(root, harness))
    (item,) = store.discover_files(root)
    described, details = store.describe_lean(item)
    return alone, (_plain(described), details)


def _layout_path(root: Path, harness: str) -> Path:
    return root / fuzzing.LISTED[harness]


@pytest.mark.parametrize("harness", DESCRIBED_LEAN)
def test_a_file_described_with_its_details_is_described_as_alone_on_every_golden_and_corpus_file(harness, tmp_path):
    path = _layout_path(tmp_path, harness)
    path.parent.mkdir(parents=True)
    files = [p for p in _files(harness) if p.suffix == ".jsonl"]
    for source in files:
        shutil.copyfile(source, path)
        alone, lean = _described_both(harness, tmp_path)
        assert lean == alone, source
    assert len(files) >= 25


# -- mutated lines ---------------------------------------------------------------------------------

_SEEDS = {
    "claude_code": sorted(p for p in (GOLDEN / "claude_code").glob("*/*.jsonl") if p.stat().st_size < 200_000),
    "codex": sorted(p for p in (GOLDEN / "codex").rglob("*.jsonl") if p.stat().st_size < 200_000),
}
# the keys the reader decides a message by, and values of every shape for them
_KEYS = (
    ("type",),
    ("uuid",),
    ("parentUuid",),
    ("isMeta",),
    ("isSidechain",),
    ("isCompactSummary",),
    ("version",),
    ("subtype",),
    ("content",),
    ("attachment",),
    ("customTitle",),
    ("agentName",),
    ("summary",),
    ("forkedFrom",),
    ("message",),
    ("message", "id"),
    ("message", "model"),
    ("message", "role"),
    ("message", "content"),
    ("payload",),
    ("payload", "type"),
    ("payload", "role"),
    ("payload", "content"),
    ("payload", "call_id"),
    ("payload", "name"),
    ("payload", "output"),
    ("payload", "model"),
    ("payload", "id"),
)
_VALUES = st.sampled_from(
    [
        None,
        True,
        0,
        "",
        "x",
        "user",
        "assistant",
        "message",
        "<synthetic>",
        "attachment",
        "local_command",
        "function_call_output",
        "developer",
        "2.0.1",
        "<command-name>/model</command-name>",
        "<local-command-stdout>ok</local-command-stdout>",
        "# AGENTS.md\nhi",
        [],
        {},
        [{"type": "text", "text": " typed "}],
        [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}],
        [{"type": "tool_use", "id": "toolu_1", "name": "Artifact", "input": {"file_path": "a"}}],
        [{"type": "input_text", "text": "<environment_context>"}],
        [{"type": "input_text", "text": 3}],
        [{"type": "odd"}],
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {"type": "hook_additional_context", "content": [1]},
        {"sessionId": "other", "messageUuid": "m"},
    ]
)


# lines no record is: and a BOM, a lone surrogate escape (lines the codec still types, the
# line scans not), whitespace, two objects on one line
_GARBAGE = [
    b"",
    b"not json",
    b"[1]",
    b'"s"',
    b'{"type": 5}',
    b"{",
    b" ",
    b"{} {}",
    b'\xef\xbb\xbf{"type": "user", "message": {"role": "user", "content": "bom"}, "timestamp": "2030-01-01"}',
    b'{"type": "user", "message": {"role": "user", "content": "\\ud800"}, "timestamp": "2030-01-02"}',
]


def _set(value: dict, key: tuple[str, ...], new: object) -> None:
    for part in key[:-1]:
        inner = value.get(part)
        if not isinstance(inner, dict):
            return
        value = inner
    value[key[-1]] = new


@st.composite
def _mutants(draw, harness: str) -> bytes:
    seed = draw(st.sampled_from(_SEEDS[harness]))
    lines = seed.read_bytes().split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, max(0, len(lines) - 1)))
        op = draw(st.sampled_from(["set", "set", "set", "drop", "dup", "dup", "garbage", "swap", "cr"]))
        if op == "drop" and len(lines) > 1:
            del lines[n]
        elif op == "dup":  # a copy of a line somewhere else
            lines.insert(draw(st.integers(0, len(lines))), lines[n])
        elif op == "garbage":
            lines.insert(n, draw(st.sampled_from(_GARBAGE)))
        elif op == "cr":
            lines[n] += b"\r"
        elif op == "swap":
            m = draw(st.integers(0, max(0, len(lines) - 1)))
            lines[n], lines[m] = lines[m], lines[n]
        else:
            try:
                value = msgspec.json.decode(lines[n])
            except msgspec.DecodeError:
                continue
            if isinstance(value, dict):
                _set(value, draw(st.sampled_from(_KEYS)), draw(_VALUES))
                lines[n] = msgspec.json.encode(value)
    return b"\n".join(lines)


@pytest.mark.parametrize("harness", LEAN)
def test_the_lean_details_equal_the_full_read_on_mutated_lines(harness):
    """...and the store's row of a file described with its details equals its row alone."""
    folder = Path(tempfile.mkdtemp(prefix="lean-"))
    path = _layout_path(folder, harness)
    path.parent.mkdir(parents=True)
    seen = {"lean": 0}

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=_mutants(harness))
    def check(data: bytes) -> None:
        path.write_bytes(data)
        lean, full = _both(harness, path)
        if lean is not None:
            seen["lean"] += 1
            assert lean == full, data
        if harness in DESCRIBED_LEAN:
            alone, described = _described_both(harness, folder)
            assert described == alone, data

    try:
        check()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert seen["lean"] >= 50  # most mutants are still read lean, not passed to the full read


def test_a_file_the_lean_read_cannot_be_sure_of_is_read_whole(tmp_path):
    # a main file with nothing but an old client's sidechain records (a subagent's file read alone)
    path = tmp_path / "0f0e0d0c-0000-4000-8000-000000000002.jsonl"
    record = {
        "type": "user",
        "uuid": "u1",
        "isSidechain": True,
        "version": "1.0.30",
        "sessionId": "s",
        "message": {"role": "user", "content": "hi"},
    }
    path.write_bytes(msgspec.json.encode(record) + b"\n")
    row = SessionRow(harness="claude_code", session_id="s", path=str(path))
    assert registry.get("claude_code").store.summarize(str(path)) is None
    assert sessions._read_entry(row) == sessions._full_entry(row)
    assert sessions._full_entry(row).messages == 1


# -- through discover ------------------------------------------------------------------------------


def test_a_cold_listing_reads_no_session_to_common_and_gives_the_full_reads_rows(tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    for path in _SEEDS["claude_code"][:12]:
        shutil.copy(path, project / path.name)
    day = home / ".codex" / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    for n, path in enumerate(_SEEDS["codex"][:8]):
        shutil.copy(path, day / f"rollout-2026-01-02T00-00-0{n}-0f0e0d0c-0000-4000-8000-00000000001{n}.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    full_reads: list[str] = []
    full = sessions._full_entry

    def counted(row: SessionRow) -> object:
        full_reads.append(row.path or "")
        return full(row)

    monkeypatch.setattr(sessions, "_full_entry", counted)
    lean_rows = list(sessions.discover(index=False))
    assert lean_rows and not full_reads
    monkeypatch.setattr(sessions, "_lean_entry", lambda row: None)  # every file read whole
    assert list(sessions.discover(index=False)) == lean_rows
    assert len(full_reads) == len(lean_rows)


class _Refused:
    """A decoder that takes nothing: every line read in the two steps of before."""

    def decode(self, data: object) -> object:
        raise msgspec.ValidationError("refused")

    decode_lines = decode


def _scans(path: Path, data: bytes) -> tuple[object, object]:
    from txcodec.harnesses.codex import scan

    one = scan.scan(path, data)
    real = scan._line_peek
    scan._line_peek = _Refused()
    try:
        return one, scan.scan(path, data)
    finally:
        scan._line_peek = real


def test_a_rollout_line_and_its_payload_peeked_in_one_decode_give_the_two_step_scan():
    for path in _files("codex"):
        one, two = _scans(path, path.read_bytes())
        assert one == two, path


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=_mutants("codex"))
def test_the_one_decode_scan_equals_the_two_step_scan_on_mutated_lines(data):
    one, two = _scans(Path("rollout-x.jsonl"), data)
    assert one == two


def test_assistant_lines_without_a_message_id_are_told_apart_by_their_line_in_the_file(tmp_path):
    """An assistant line without ``message.id`` is a message of its own, keyed by its line
    number (docs/claude_code_reader.md#reconstruction-rules). The lean read decodes a batch of
    lines at a time: two such lines at the same place in two batches are still two messages."""
    from txcodec.model import native

    def line(n: int, kind: str) -> bytes:
        message = {"role": kind, "content": [{"type": "text", "text": f"{kind} {n}"}]}
        return msgspec.json.encode({"type": kind, "uuid": f"u{n}", "sessionId": "s", "message": message})

    lines = [line(n, "user" if n % 2 else "assistant") for n in range(native._BATCH + 10)]
    path = tmp_path / f"{fuzzing.LISTED_SID}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    lean, full = _both("claude_code", path)
    assert lean == full and full.messages == len(lines)


# A value the codec keeps as bytes (msgspec.Raw) is not checked when its line decodes: a string in
# it that is not UTF-8, or a number past range, fails only where the full read decodes it, and the
# full read then drops that record. The lean read must not count what the full read drops. (Each
# user line below holds a text block too, so that it is a turn: one dropped changes the count.)
_NOT_DECODABLE = (b'"\xe1"', b'{"medi\xe1_type": "x"}', b"1e999", b"-" + b"9" * 5000)
_TEXT = b'{"type":"text","text":"and this"}'
_ASSISTANT_PLACES = {
    "a tool call's input": b'{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":BAD}}',
    "an Artifact call's input": b'{"type":"tool_use","id":"toolu_9","name":"Artifact","input":{"file_path":BAD}}',
    "a server tool call's input": b'{"type":"server_tool_use","id":"srv_9","name":"web_search","input":BAD}',
    "an unknown block": b'{"type":"odd_block","value":BAD}',
    "a tool result on an assistant line": b'{"type":"tool_result","tool_use_id":"toolu_1","content":{"v":BAD}}',
    "an image's source": b'{"type":"image","source":{"type":"base64","data":BAD}}',
    "a document's source": b'{"type":"document","source":BAD}',
}
_USER_PLACES = {
    "a user image's source": b'{"type":"image","source":BAD}',
    "a tool result's content": b'{"type":"tool_result","tool_use_id":"toolu_1","content":{"v":BAD}}',
    "an image in a tool result": b'{"type":"tool_result","tool_use_id":"toolu_1","content":'
    b'[{"type":"image","source":BAD}]}',
}
_GOOD_BLOCK = b'{"type":"text","text":"ok"}'
_GOOD_RESULT = b'{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}'


def _session(assistant_block: bytes, user_block: bytes, extra: bytes = b"") -> bytes:
    def line(kind: str, n: int, content: bytes, more: bytes = b"") -> bytes:
        return (
            b'{"type":"%s","uuid":"u%d","parentUuid":null,"sessionId":"s","timestamp":"2030-01-01T00:00:0%dZ",'
            b'"message":{"role":"%s","id":"m%d","model":"claude-x","content":%s}%s}'
            % (kind.encode(), n, n, kind.encode(), n, content, more)
        )

    tool_call = b'{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}'
    return b"\n".join(
        [
            line("user", 1, b'"first prompt"'),
            line("assistant", 2, b"[%s,%s]" % (tool_call, assistant_block)),
            line("user", 3, b"[%s,%s]" % (user_block, _TEXT), extra),
            b'{"type":"system","subtype":"compact_boundary","uuid":"u4","sessionId":"s","compactMetadata":META}',
            line("assistant", 5, b"[%s]" % _GOOD_BLOCK),
        ]
    )


def _cases() -> dict[str, bytes]:
    cases = {}
    for bad in _NOT_DECODABLE:
        good_meta = b'{"trigger":"auto"}'
        for place, block in _ASSISTANT_PLACES.items():
            cases[f"{place}, {bad!r:.20}"] = _session(block.replace(b"BAD", bad), _GOOD_RESULT).replace(
                b"META", good_meta
            )
        for place, block in _USER_PLACES.items():
            cases[f"{place}, {bad!r:.20}"] = _session(_GOOD_BLOCK, block.replace(b"BAD", bad)).replace(
                b"META", good_meta
            )
        with_result = _session(_GOOD_BLOCK, _GOOD_RESULT, b',"toolUseResult":{"stdout":%s}' % bad)
        cases[f"toolUseResult, {bad!r:.20}"] = with_result.replace(b"META", good_meta)
        cases[f"compactMetadata, {bad!r:.20}"] = _session(_GOOD_BLOCK, _GOOD_RESULT).replace(b"META", bad)
    return cases


_CASES = _cases()


@pytest.mark.parametrize("name", _CASES)
def test_a_kept_value_the_full_read_cannot_decode_is_not_counted_by_the_lean_read(tmp_path, name):
    good = tmp_path / "good" / f"{fuzzing.LISTED_SID}.jsonl"
    good.parent.mkdir()
    good.write_bytes(_session(_GOOD_BLOCK, _GOOD_RESULT).replace(b"META", b"{}"))
    lean, full = _both("claude_code", good)
    assert lean == full and full.messages == 4  # the session, every value decodable, is read lean
    path = tmp_path / good.name
    path.write_bytes(_CASES[name])
    lean, full = _both("claude_code", path)
    assert lean is None or lean == full
