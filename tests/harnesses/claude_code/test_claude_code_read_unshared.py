"""The Claude Code reader puts no mutable object in two places of the conversation it
builds (its harness's ``read_unshared`` flag says so).

``conform`` keeps a message of such a reader as it is where its decoded copy would equal
it (``conform.fits_as_is``): a kept message is no copy, so an object the reader had put
in two messages (a tool input, a content list, a Usage) would stay in both, and a change
to one would change the other. Here every golden and corpus Claude Code session (with
its subagents, read whole and streamed, for a loss report that is read and for one that
is not), conversations written by the Claude Code writer and hypothesis mutants of real
lines are read, and every mutable object reachable from the conversation must be
reached once only (by ``id``); read whole, none may be one the session's records hold
either (a kept message is then no copy of them).
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
from support.paths import GOLDEN
from support.paths import corpus_files
from test_claude_code_read_golden import _SKIP
from test_claude_code_read_golden import CASES
from test_claude_code_read_golden import case_input
from test_claude_code_roundtrip_property import _save
from test_claude_code_roundtrip_property import conversations

from txcodec import api
from txcodec.core.errors import TxcodecError
from txcodec.core.errors import guarded
from txcodec.harnesses.claude_code import read as claude_read
from txcodec.harnesses.claude_code.write import write
from txcodec.harnesses.codex import write as codex_write
from txcodec.kit import conform
from txcodec.kit import registry
from txcodec.kit.load import streamed as load_streamed
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Text
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.loss import UnreadLoss

read = guarded(claude_read.read)  # as to_common calls it: too deep a mutant is an InputError
_IMMUTABLE = (str, bytes, int, float, bool, type(None), type(msgspec.UNSET), msgspec.Raw)


def shared(value: object) -> list[str]:
    """The paths at which a mutable object (a list, a dict, a struct, ...) already reached
    from an earlier path is reached again."""
    first: dict[int, str] = {}
    found: list[str] = []
    stack: list[tuple[object, str]] = [(value, "$")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _IMMUTABLE):
            continue
        if not isinstance(node, tuple):  # a tuple cannot change; what it holds may
            if id(node) in first:
                found.append(f"{path} is {first[id(node)]}")
                continue
            first[id(node)] = path
        if isinstance(node, dict):
            children = [(v, f"{path}[{k!r}]") for k, v in node.items()]
        elif isinstance(node, (list, tuple)):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        elif isinstance(node, msgspec.Struct):
            children = [(getattr(node, f), f"{path}.{f}") for f in node.__struct_fields__]
        else:
            raise AssertionError(f"{path}: the walk does not know {type(node).__name__}")
        stack.extend(reversed(children))  # depth first, in order: the earlier path is named first
    return found


def test_the_walk_finds_a_shared_object():
    """Not vacuous: an input shared by two calls, a content list by two messages, and
    the same message twice are each found."""
    args = {"cmd": ["ls"]}
    two_calls = Conversation(
        messages=[
            Message("assistant", [ToolUse("c1", "Bash", args)]),
            Message("assistant", [ToolUse("c2", "Bash", args)]),
        ]
    )
    assert shared(two_calls) == ["$.messages[1].content[0].input is $.messages[0].content[0].input"]
    content = [Text("a")]
    assert len(shared(Conversation(messages=[Message("user", content), Message("user", content)]))) == 1
    message = Message("user", [Text("a")])
    assert len(shared(Conversation(messages=[message, message]))) == 1
    assert shared(Conversation(messages=[Message("user", [Text("a")]), Message("user", [Text("a")])])) == []


def _readings(path) -> dict[str, object]:
    """``path`` read whole (with the records it keeps) and streamed, for a loss report read
    and one not read, and as ``to_common`` (after conform) gives it."""
    out = {}
    for name, loss in (("report", LossReport), ("unread", UnreadLoss)):
        whole = api.load(path, "claude_code")
        # nor with the records a loaded session keeps (the line's record, left untouched)
        out[f"whole, {name}"] = [read(whole, loss()), [line._record for line in whole.lines]]
        streamed = load_streamed(path, "claude_code")
        assert streamed is not None and streamed.pending is not None  # the streamed read is the one taken
        out[f"streamed, {name}"] = read(streamed, loss())
        out[f"to_common, {name}"] = api.to_common(load_streamed(path, "claude_code"), loss())
    return out


def _sessions() -> list:
    scenarios = sorted(
        p for p in (GOLDEN / "claude_code" / "scenarios").glob("*/*.jsonl") if not p.name.startswith(_SKIP)
    )
    return [case_input(case) for case in CASES] + scenarios + corpus_files("claude_code", (".jsonl",))


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_no_object_is_shared(path):
    for name, value in _readings(path).items():
        assert shared(value) == [], name


def test_the_sessions_hold_what_could_be_shared():
    """Not vacuous: the sessions walked hold subagents, tool calls with inputs, and
    messages conform keeps as they are."""
    conversations = [read(api.load(p, "claude_code"), LossReport()) for p in _sessions()]
    assert any(c.children for c in conversations)
    blocks = [b for c in conversations for m in c.messages for b in m.content]
    assert sum(isinstance(b, ToolUse) and isinstance(b.input, dict) for b in blocks) > 50
    assert sum(map(conform.fits_as_is, (m for c in conversations for m in c.messages))) > 200  # conform keeps these


def test_the_reader_is_flagged_unshared():
    assert registry.get("claude_code").read_unshared


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(c=conversations())
def test_no_object_is_shared_in_a_written_session(c, tmp_path_factory):
    written = write(c, LossReport(), WriteOptions())
    root = tmp_path_factory.mktemp("unshared")
    _save(written.files, root)
    for name, value in _readings(root / written.main).items():
        assert shared(value) == [], name


@settings(max_examples=200, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_no_object_is_shared_in_a_mutant(data):
    rng = fuzzing.Rng(lambda n: data.draw(st.integers(0, max(n - 1, 0))))
    mutant = fuzzing.mutant("claude_code", rng)
    note(f"mutant: {mutant[:2000]!r}")
    for loss in (LossReport, UnreadLoss):
        try:
            session = api.load(mutant, "claude_code")
            whole = read(session, loss())
            pending = load_streamed(mutant, "claude_code")  # None for no bytes at all
            streamed = read(pending, loss()) if pending is not None else None
        except TxcodecError:
            continue
        assert shared([whole, [line._record for line in session.lines]]) == []
        assert shared(streamed) == []


def _to_codex(path):
    try:
        written, loss = api.convert(path, "codex", from_="claude_code")
    except TxcodecError as exc:  # refused: the same refusal both ways
        return type(exc).__name__
    return written.files, loss.entries


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_kept_messages_convert_to_codex_as_their_copies_do(path, monkeypatch):
    """Claude Code -> Codex with the messages that fit kept, and with every one decoded:
    the same files, the same loss entries in the same order."""
    # a session without a time is written as of now
    monkeypatch.setattr(codex_write, "_now", lambda: "2025-01-01T00:00:00.000Z")
    fast = _to_codex(path)
    _not_unshared(monkeypatch)
    assert fast == _to_codex(path)


def _not_unshared(monkeypatch) -> None:
    """Claude Code registered as if its reader shared objects: conform decodes every message."""
    monkeypatch.setitem(
        registry._cache, "claude_code", msgspec.structs.replace(registry.get("claude_code"), read_unshared=False)
    )


def _page(path) -> str:
    """The page ``export --to html`` makes of ``path`` (a streamed read, a report nobody reads)."""
    from txcodec.export import html

    return html.render(api.to_common(load_streamed(path, "claude_code"), UnreadLoss()))


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_kept_messages_make_the_page_their_copies_make(path, monkeypatch):
    fast = _page(path)
    _not_unshared(monkeypatch)
    assert fast == _page(path)
