"""Claude Code <-> Codex through the CLI and the API, proven with the real clients:

* a Codex rollout converted to Claude Code resumes in ``claude`` (2.1.332) with the
  conversation Common holds;
* a Claude Code session converted to Codex resumes in ``codex`` (0.171.0) with the
  ``input`` the conversation means once the writer's declared mapping is applied (tool
  names, commands as text, ...) -- and as the same thread, not a silent new session;
* round trips Codex -> Claude -> Codex and Claude -> Codex -> Claude change only what the
  loss reports declare.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import CORPUS
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.harnesses.codex.write import TOOL_MAP
from txcodec.harnesses.codex.write import codex_tool
from txcodec.harnesses.codex.write import command_text
from txcodec.model.common import Command
from txcodec.model.common import Context
from txcodec.model.common import Conversation
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.resume_check import claude_code as claude
from txcodec.resume_check import codex

pytestmark = pytest.mark.real_client

TIMEOUT = 60

CODEX_SOURCES = [
    *sorted((GOLDEN / "codex").glob("*/rollout.jsonl")),
    *sorted((CORPUS / "codex/generated").glob("*.jsonl")),
    CORPUS / "codex/session-migrate/codex-0.144.4/basic.jsonl",
]
CLAUDE_SOURCES = [
    *sorted((GOLDEN / "claude_code").glob("*/*.jsonl")),
    CORPUS / "claude_code/spotter/short.jsonl",
    CORPUS / "claude_code/spotter/tool_heavy.jsonl",
    *sorted((CORPUS / "claude_code/generated").glob("*.jsonl")),
    CORPUS / "claude_code/session-migrate/claude-2.1.209/basic.jsonl",
]


def _id(path: Path) -> str:
    return "/".join(path.parts[-2:])


@pytest.fixture(scope="module", autouse=True)
def _clients():
    # never skip: a missing client is a failure with the command that installs it
    claude.claude_binary()
    codex.codex_binary()


# --- converting ----------------------------------------------------------------------------


def convert_cli(src: Path, from_: str, to: str, out: Path) -> tuple[Path, dict[str, int]]:
    """``txcodec convert SRC --from F --to T -o OUT --loss``: the main file written and
    the loss counts it printed."""
    out.mkdir(parents=True, exist_ok=True)
    result = CliRunner().invoke(main, ["convert", str(src), "--from", from_, "--to", to, "-o", str(out), "--loss"])
    assert result.exit_code == 0, result.output + (result.stderr or "")
    written = [Path(line.removeprefix("wrote ")) for line in result.stderr.splitlines() if line.startswith("wrote ")]
    assert written, result.stderr
    return written[0], json.loads(result.stdout)["counts"]


def convert_api(source: Path | bytes, from_: str, to: str, folder: Path):
    written, loss = api.convert(source, to, from_=from_)
    for rel, data in written.files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return folder / written.main, written, loss


def test_cli_and_api_write_the_same_bytes(tmp_path):
    for src, from_, to in [(CODEX_SOURCES[0], "codex", "claude_code"), (CLAUDE_SOURCES[-1], "claude_code", "codex")]:
        main_file, counts = convert_cli(src, from_, to, tmp_path / f"cli-{to}")
        _, written, loss = convert_api(src, from_, to, tmp_path / f"api-{to}")
        assert main_file.read_bytes() == written.files[written.main]
        assert counts == loss.counts()


def common_of(path: Path, harness: str) -> Conversation:
    return api.to_common(api.load(path, harness))


def last_epoch(conv: Conversation, preserved: bool = True) -> list[Message]:
    """What a resumed client's model sees: the last compaction's summary, the messages
    it preserved (Claude Code's preservedSegment; unless not ``preserved``), then what
    came after."""
    if not conv.epochs:
        return conv.messages
    epoch = max(conv.epochs, key=lambda e: e.start)
    keep = set(epoch.preserved_ids) if preserved else set()
    preserved = [m for m in conv.messages[: epoch.start] if keep & set(m.source_ids)]
    return conv.messages[epoch.start : epoch.start + 1] + preserved + conv.messages[epoch.start + 1 :]


# --- Codex -> Claude Code -----------------------------------------------------------------


@pytest.mark.parametrize("src", CODEX_SOURCES, ids=_id)
def test_codex_to_claude_resumes_with_the_conversation(src, tmp_path):
    main_file, counts = convert_cli(src, "codex", "claude_code", tmp_path / "out")
    report = claude.check_resume(main_file, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    conv = common_of(src, "codex")
    assert claude.comparable(report.sent) == claude.comparable(last_epoch(conv), prompt=None)
    # declared: reasoning has no Anthropic signature; Codex's kept pre-compaction history
    unsigned = sum(1 for m in conv.messages for b in m.content if isinstance(b, Thinking))
    assert counts.get("write:thinking-without-signature", 0) == unsigned
    if conv.epochs and any(m.role == "user" and m.origin == "human" for m in conv.messages[: conv.epochs[-1].start]):
        # (or, for a compaction without summary text, its history became the summary)
        assert counts.get("compaction:kept-history", 0) + counts.get("compaction:summary-from-history", 0) >= 1


# --- Claude Code -> Codex -----------------------------------------------------------------


def as_codex_writes(conv: Conversation, preserved: bool = True) -> list[Message]:
    """The conversation as the Codex writer means to write it, by its declared rules
    (docs/mapping.md): Claude tools mapped (``write:tool-mapped``), slash commands as
    text (``write:command-as-text``), no error flags on results (``write:is_error``),
    results without a call left out (``write:orphan-result``), Claude's context (hook
    output, reminders, the environment) as the text its model saw, in a message item of its
    own where it was: a user one here, a developer one for what was sent as system, which
    ``codex.comparable`` leaves out with codex's own context (test_codex_context_real.py
    checks those reach codex); one that recorded no text is left out (``write:context``);
    and from the last compaction on (the summary is the replacement history)."""
    out, calls = [], set()
    for m in last_epoch(conv, preserved):
        if m.api_error and m.synthetic:
            continue  # a client-side API error is an ``error`` event: the model never saw it
        blocks = []
        for b in m.content:
            if isinstance(b, Context):
                if isinstance(b.text, str) and b.text and b.role != "system":
                    blocks.append(Text(b.text))
            elif isinstance(b, ToolUse):
                _, name, value, _ = codex_tool(b.name, b.input)
                blocks.append(ToolUse(b.id, name, value))
                calls.add(b.id)
            elif isinstance(b, ToolResult):
                if b.tool_use_id in calls:
                    blocks.append(ToolResult(b.tool_use_id, _output(b.content)))
            elif isinstance(b, Command):
                blocks.append(Text(command_text(b)))
            else:
                blocks.append(b)
        if not blocks and m.content:
            continue  # it held only context that recorded no text, or developer context
        out.append(Message(m.role, blocks, meta=m.meta, extra=m.extra, compact_summary=m.compact_summary))
    return out


def _output(content):
    """A result's content as the writer gives it to Codex: blocks Codex has no part for
    become their JSON text (``write:block:*``), a text-only list one string."""
    if isinstance(content, str):
        return content
    parts = [
        x if isinstance(x, (Text, Image)) else Text(json.dumps(msgspec.to_builtins(x), ensure_ascii=False))
        for x in content
    ]
    return "\n".join(x.text for x in parts) if all(isinstance(x, Text) for x in parts) else parts


def _all_blocks(conv: Conversation) -> list:
    return [b for m in conv.messages for b in m.content] + [
        b for c in conv.children for b in _all_blocks(c.conversation)
    ]


def expected_losses(conv: Conversation) -> dict[str, int]:
    """How many entries of each declared kind converting ``conv`` to Codex must report."""
    blocks = [b for m in conv.messages for b in m.content]
    calls = {b.id for b in blocks if isinstance(b, ToolUse)}
    contexts = [b for b in _all_blocks(conv) if isinstance(b, Context)]  # carried in subagents too
    return {
        "write:context-as-text": 0,  # Codex gives context as items of its own (Harness.writes_context)
        "write:context": sum(1 for b in contexts if not (isinstance(b.text, str) and b.text)),
        "write:tool-mapped": sum(
            1 for b in blocks if isinstance(b, ToolUse) and b.name in TOOL_MAP and isinstance(b.input, dict)
        ),
        "write:command-as-text": sum(1 for b in blocks if isinstance(b, Command)),
        "write:is_error": sum(1 for b in blocks if isinstance(b, ToolResult) and b.is_error and b.tool_use_id in calls),
        "write:thinking-signature": sum(
            1 for b in blocks if isinstance(b, Thinking) and b.thinking and isinstance(b.signature, str)
        ),
    }


@pytest.mark.parametrize("src", CLAUDE_SOURCES, ids=_id)
def test_claude_to_codex_resumes_with_the_intended_input(src, tmp_path):
    conv = common_of(src, "claude_code")
    if not conv.messages and not conv.children:
        # metadata records only (titles, modes, links): a conversion that writes no
        # conversation is an error and writes nothing, not a rollout codex cannot resume
        out = tmp_path / "out"
        result = CliRunner().invoke(
            main, ["convert", str(src), "--from", "claude_code", "--to", "codex", "-o", str(out)]
        )
        assert result.exit_code == 1 and "no conversation to write" in result.output, result.output
        assert not out.exists() or not any(out.iterdir())
        return
    main_file, counts = convert_cli(src, "claude_code", "codex", tmp_path / "out")
    report = codex.check_resume(main_file, timeout=TIMEOUT)
    assert report.session_id == codex.canonical_relpath(main_file.read_bytes())[0]
    intended = codex.comparable(as_codex_writes(conv))
    if not intended:  # nothing to resume: codex starts a new session, and the check says so
        assert not report.resumed and "new session" in " ".join(report.rejected)
        return
    assert report.resumed, (report.rejected, report.stderr)  # rejected also catches a silent new session
    assert codex.comparable(report.sent) == intended
    for kind, n in expected_losses(conv).items():
        assert counts.get(kind, 0) == n, (kind, counts)


def test_claude_to_codex_through_the_api(tmp_path):
    """``api.convert`` the same way, checked against the resumed input too."""
    src = CORPUS / "claude_code/generated/claude_write_edit_2turns.jsonl"
    main_file, written, loss = convert_api(src, "claude_code", "codex", tmp_path)
    report = codex.check_resume(main_file, timeout=TIMEOUT)
    assert report.resumed and report.session_id == written.session_id, report.stderr
    conv = common_of(src, "claude_code")
    assert codex.comparable(report.sent) == codex.comparable(as_codex_writes(conv))
    kinds = [b[2] for m in codex.comparable(report.sent) for b in m[1] if b[0] == "call"]
    assert "apply_patch" in kinds and "Write" not in kinds and "Edit" not in kinds  # mapped, and declared:
    assert loss.counts()["write:tool-mapped"] == expected_losses(conv)["write:tool-mapped"]


# --- round trips ---------------------------------------------------------------------------


def _codex_history(data: bytes) -> list:
    with codex.Sandbox() as box:
        _, run = codex.resume(box, data, timeout=TIMEOUT)
        assert run.exit_code == 0 and run.requests, run.stderr[-2000:]
        return codex.normalize(codex.history_items(run.inputs[0], "continue"))


@pytest.mark.parametrize("src", CODEX_SOURCES, ids=_id)
def test_codex_claude_codex_round_trip(src, tmp_path):
    original = src.read_bytes()
    as_claude, w1, loss1 = convert_api(original, "codex", "claude_code", tmp_path / "claude")
    _, w2, loss2 = convert_api(as_claude, "claude_code", "codex", tmp_path / "codex")
    before, after = _codex_history(original), _codex_history(w2.files[w2.main])
    counts = loss1.counts() | loss2.counts()
    # reasoning has no Anthropic signature: the Claude writer leaves it out (declared)
    if counts.get("write:thinking-without-signature"):
        before = [i for i in before if i.get("type") != "reasoning"]
    if counts.get("compaction:kept-history"):
        # codex resumed the original with the user messages before its summary; through
        # Claude Code the context starts at the summary (declared)
        conv = common_of(src, "codex")
        summary = conv.messages[conv.epochs[-1].start].content[0].text
        start = next(
            n
            for n, i in enumerate(before)
            if i.get("type") == "message" and any(p.get("text") == summary for p in i["content"])
        )
        kept = [n for n, i in enumerate(before[:start]) if i.get("role") == "user" and not codex_prelude(i)]
        assert kept, "compaction:kept-history declared, but codex kept nothing before the summary"
        before = [i for n, i in enumerate(before) if n not in kept]
    if counts.get("compaction:summary-from-history"):
        # a compaction that wrote no summary (remote): codex resumed the original with its
        # replacement history; through Claude Code that history is one summary text (declared)
        before = _history_as_summary(src, before)
    assert after == before
    # nothing else was approximated on the way back: Codex's own tools keep their names
    assert "write:tool-unmapped" not in counts and "write:tool-mapped" not in counts


def _history_as_summary(src: Path, items: list) -> list:
    conv = common_of(src, "codex")
    summary = conv.messages[conv.epochs[-1].start]
    history = codex.normalize(summary.extra["codex_replacement_history"])
    start = next(n for n in range(len(items)) if items[n : n + len(history)] == history)
    text = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary.content[0].text}]}
    return items[:start] + [text] + items[start + len(history) :]


def codex_prelude(item: dict) -> bool:
    from txcodec.harnesses.codex.prelude import prelude_kind

    return all(prelude_kind(p.get("text", "")) for p in item.get("content") or [])


def _tool_view(view: list) -> list:
    """claude.comparable with the declared Codex approximations folded in: tool calls by
    id (their names and inputs are mapped: ``write:tool-mapped``), results without the
    error flag (``write:is_error``); whitespace-only texts left out."""
    out = []
    for role, blocks in view:
        new = []
        for b in blocks:
            if b[0] == "text" and not b[1].strip():
                continue  # claude sends no whitespace-only text block (the API rejects them)
            if b[0] == "tool_use":
                new.append(("tool_use", b[1]))
            elif b[0] == "tool_result":
                new.append(("tool_result", b[1], b[2]))
            else:
                new.append(b)
        out.append((role, new))
    return out


@pytest.mark.parametrize("src", CLAUDE_SOURCES, ids=_id)
def test_claude_codex_claude_round_trip(src, tmp_path):
    as_codex, _, loss1 = convert_api(src, "claude_code", "codex", tmp_path / "codex")
    main_file, _, loss2 = convert_api(as_codex, "codex", "claude_code", tmp_path / "claude")
    conv = common_of(src, "claude_code")
    # back from Codex, a compaction's replacement history beyond its summary is declared
    # (compaction:kept-history), not written: Claude resumes from the summary
    expected = claude.comparable(as_codex_writes(conv, preserved=False), prompt=None)
    if len(as_codex_writes(conv)) > len(as_codex_writes(conv, preserved=False)):
        assert "compaction:kept-history" in loss2.counts()
    if not expected:  # nothing to resume: the source holds no conversation
        assert not [m for m in common_of(main_file, "claude_code").messages if m.content]
        return
    report = claude.check_resume(main_file, timeout=TIMEOUT)
    assert report.resumed, (report.rejected, report.stderr)
    assert _tool_view(claude.comparable(report.sent)) == _tool_view(expected)
    # the source's context came back as user text (write:context-as-text) and claude sent
    # it: comparable leaves ``<system-reminder>`` texts out, so they are looked up here
    sent = {b.text.removesuffix("\n") for m in report.sent for b in m.content if isinstance(b, Text)}
    carried = [b.text for m in last_epoch(conv, False) for b in m.content if isinstance(b, Context) and b.text]
    assert [t for t in carried if t.removesuffix("\n") not in sent] == []
    # the calls keep their ids and carry the mapped Codex tools
    sent_calls = [b for m in claude.comparable(report.sent) for b in m[1] if b[0] == "tool_use"]
    assert sent_calls == [b for m in expected for b in m[1] if b[0] == "tool_use"]
