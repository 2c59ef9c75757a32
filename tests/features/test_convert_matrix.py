"""Every harness to every other through the CLI (``txcodec convert --from X --to Y``).

Each conversion must exit 0 and write a file the target's own codec and reader take
without a diagnostic. What the target cannot hold must be in the loss report: for one
representative session per harness, the ``write:*`` kinds of every pair are pinned by
the pairwise table in ``docs/mapping.md`` (so the table is the code's behaviour, and a
change to either shows here)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.paths import ROOT

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry
from txcodec.model.loss import LossReport

HARNESSES = [
    "claude_code",
    "codex",
    "stream_json",
    "gemini_cli",
    "qwen_code",
    "pi",
    "copilot_cli",
    "continue_cli",
    "opencode",
    "kilo",
    "kimi_cli",
    "mistral_vibe",
    "cline",
    "openhands",
    "aider",
    "droid",
]

# one session per harness with what that harness typically holds: thinking, tool calls
# with results, the client's own injected context (all but stream_json written by the
# real client)
REPRESENTATIVE = {
    "claude_code": GOLDEN / "claude_code" / "streaming_duplication" / "e575d681-a4a1-5c75-815e-1531b635afe0.jsonl",
    "codex": GOLDEN / "codex" / "tool_call_genuine" / "rollout.jsonl",
    "stream_json": GOLDEN / "stream_json" / "parallel_tools" / "capture.jsonl",
    "gemini_cli": GOLDEN / "gemini_cli" / "tool_call_resumed" / "session-2026-11-30T06-32-c72f91ab.jsonl",
    "qwen_code": GOLDEN / "qwen_code" / "tool_call_resumed" / "session.jsonl",
    "pi": GOLDEN / "pi" / "tool_call" / "session.jsonl",
    "copilot_cli": GOLDEN / "copilot_cli" / "tool_call_resumed" / "events.jsonl",
    "continue_cli": GOLDEN / "continue_cli" / "tool_call_resumed" / "session.json",
    "opencode": GOLDEN / "opencode" / "tool_call_resumed" / "export.json",
    "kilo": GOLDEN / "kilo" / "tool_call_resumed" / "export.json",
    "kimi_cli": GOLDEN / "kimi_cli" / "tool_call_resumed" / "context.jsonl",
    "mistral_vibe": GOLDEN / "mistral_vibe" / "unified_resumed" / "CURRENT",
    "cline": next((GOLDEN / "cline" / "tool_call_resumed").glob("*.messages.json")),
    "openhands": GOLDEN / "openhands" / "tool_call_resumed" / "1124e205b2e047d19cd605c88100e9ff",
    "aider": GOLDEN / "aider" / "tool_call_resumed" / ".aider.chat.history.md",
    "droid": next((GOLDEN / "droid" / "tool_call_resumed").glob("*-*.jsonl")),
}


def _file_names(harness: str) -> tuple[str, ...]:
    """The file names that alone say a file is ``harness``'s (its store's ``file_names``)."""
    store = registry.get(harness).store
    return store.file_names if store is not None else ()


def _golden_sources() -> list[tuple[str, Path]]:
    """Every golden input of every harness (the cases' native files)."""
    found = []
    for harness in HARNESSES:
        for case in sorted(p for p in (GOLDEN / harness).iterdir() if p.is_dir() and p.name != "scenarios"):
            for path in sorted(case.iterdir()):
                if path.name in (
                    "common.json",
                    "written.jsonl",
                    "loss.json",
                    "prompts.json",
                    "meta.json",
                ) or path.name.startswith("expected"):
                    continue
                if harness == "cline" and not path.name.endswith(".messages.json"):
                    continue  # the session record beside the messages file is not a session
                if path.suffix in (".jsonl", ".json") and path.is_file():
                    found.append((harness, path))
                elif (
                    path.is_dir() and registry.session_in_folder(path) == path
                ):  # a session kept as a folder (OpenHands)
                    found.append((harness, path))
                elif path.name in _file_names(harness):  # found by its name (aider)
                    found.append((harness, path))
    return found


def convert(source: str, target: str, path: Path, out: Path) -> tuple[Path, dict]:
    """Run the CLI; return the main written file and the loss report."""
    out.mkdir(parents=True, exist_ok=True)
    result = CliRunner().invoke(
        main, ["convert", "--from", source, "--to", target, str(path), "-o", str(out), "--loss"]
    )
    assert result.exit_code == 0, f"{source} -> {target} ({path.name}): {result.output}"
    report = json.loads(result.stdout[result.stdout.index("{") :])
    wrote = [Path(line[len("wrote ") :]) for line in result.stderr.splitlines() if line.startswith("wrote ")]
    assert wrote and all(p.is_file() for p in wrote), result.stderr
    return wrote[0], report  # the main file comes first


def loss_kinds(report: dict) -> set[str]:
    return {kind for kind in report["counts"] if kind.startswith("write:")}


def _check_target(target: str, path: Path) -> None:
    session = api.load(path, target)
    assert not session.diagnostics, (target, session.diagnostics[:3])
    # a file found by its name (aider's Markdown history) has no bytes to detect
    assert api.detect(path.read_bytes()) == target or path.name in _file_names(target)
    conversation = registry.get(target).read(session, LossReport())
    assert conversation.messages


@pytest.mark.parametrize("source,path", _golden_sources(), ids=lambda v: v if isinstance(v, str) else v.parent.name)
def test_every_golden_session_converts_to_every_harness(source, path, tmp_path):
    empty = not api.to_common(api.load(path, source)).messages  # a metadata-only case
    for target in HARNESSES:
        if empty:  # a conversion that writes no conversation is an error, and writes nothing
            out = tmp_path / target
            args = ["convert", "--from", source, "--to", target, str(path), "-o", str(out)]
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 1 and "no conversation to write" in result.output, (target, result.output)
            assert not out.exists()
            continue
        main_file, report = convert(source, target, path, tmp_path / target)
        _check_target(target, main_file)


# --- the pairwise table in docs/mapping.md ------------------------------------------


def documented_pairs() -> dict[tuple[str, str], set[str]]:
    """The ``write:*`` kinds in the "Every pair" table: rows are sources, columns targets."""
    text = (ROOT / "docs" / "mapping.md").read_text(encoding="utf-8")
    section = text.split("## Every pair", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip().strip("`") for c in rows[0].strip("|").split("|")][1:]
    table = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        source = cells[0].strip("`* ")
        for target, cell in zip(header, cells[1:]):
            table[(source, target)] = set(re.findall(r"`(write:[^`]+)`", cell))
    return table


def test_the_documented_table_covers_every_pair():
    assert set(documented_pairs()) == {(s, t) for s in HARNESSES for t in HARNESSES}


@pytest.mark.parametrize("source", HARNESSES)
def test_representative_losses_are_the_documented_ones(source, tmp_path):
    table = documented_pairs()
    for target in HARNESSES:
        main_file, report = convert(source, target, REPRESENTATIVE[source], tmp_path / target)
        _check_target(target, main_file)
        assert loss_kinds(report) == table[(source, target)], f"{source} -> {target}"


def test_a_target_that_cannot_hold_something_says_so(tmp_path):
    """The cells are not empty by accident: each of these is a real incapacity."""
    table = documented_pairs()
    assert "write:thinking" in table[("claude_code", "gemini_cli")]  # signature-only thinking has no text
    assert "write:thinking" in table[("claude_code", "qwen_code")]
    assert "write:cwd" in table[("gemini_cli", "qwen_code")]  # no .project_root beside the file
    assert "write:tool-unmapped" in table[("pi", "codex")]
