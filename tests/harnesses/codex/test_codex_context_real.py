"""Codex -> Common -> Codex shows the model the context the original shows it: the developer
and user context items (permissions, environment_context, AGENTS.md, ...) that the pinned
codex (0.171.0) builds on resume of a scenario rollout and of its converted copy match, once
dates and the sandbox's temp paths are masked (docs/codex.md#resume-contract). The Claude
counterpart is test_claude_code_context_real.py."""

from __future__ import annotations

import json
import re

import pytest
from support.paths import GOLDEN

import txcodec
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.codex import resume

pytestmark = pytest.mark.real_client

SCENARIOS = sorted((GOLDEN / "codex" / "scenarios").glob("*/rollout.jsonl"))
DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+Z?)?")


def context(data: bytes) -> list[tuple[str, str]]:
    """The developer / user message texts of the first request after resume, masked."""
    with Sandbox() as box:
        _, run = resume(box, data, "continue", timeout=90)
        assert run.exit_code == 0 and run.inputs, run.stderr[-2000:]
        masked = []
        for item in run.inputs[0]:
            if not isinstance(item, dict) or item.get("type", "message") != "message":
                continue
            if item.get("role") not in ("developer", "user"):
                continue
            for part in item.get("content") or []:
                text = part.get("text", "") if isinstance(part, dict) else ""
                for folder in (box.root, box.home, box.cwd):
                    text = text.replace(str(folder), "<tmp>")
                masked.append((item["role"], DATE.sub("<date>", text)))
        return masked


@pytest.mark.parametrize("source", SCENARIOS, ids=lambda p: p.parent.name)
def test_scenarios_resume_with_the_same_context(source):
    written, _ = txcodec.convert(source, "codex")
    original = context(source.read_bytes())
    mine = context(written.files[written.main])
    assert any(role == "developer" for role, _ in original)  # the client sends its context items
    assert any("<environment_context>" in text for _, text in original)
    assert mine == original


def test_the_world_state_is_what_keeps_the_context(tmp_path):
    # without its world_state lines the copy resumes with the permissions and a skills update resent
    source = GOLDEN / "codex" / "scenarios" / "exec_command" / "rollout.jsonl"
    written, _ = txcodec.convert(source, "codex")
    lines = [line for line in written.files[written.main].splitlines() if b'"type":"world_state"' not in line]
    assert len(lines) < len(written.files[written.main].splitlines())
    original, stripped = context(source.read_bytes()), context(b"\n".join(lines) + b"\n")
    extra = [text for role, text in stripped if role == "developer"][
        len([1 for r, _ in original if r == "developer"]) :
    ]
    assert len(stripped) == len(original) + 2 and any("<permissions instructions>" in t for t in extra)


def test_the_turn_context_after_a_compaction_is_kept():
    # 0.171 diffs against the turn_context after a compaction: with none there (the writer used to
    # write only its own, at the start) it sent <permissions instructions> once more
    source = GOLDEN / "codex" / "scenarios" / "auto_compact" / "rollout.jsonl"
    written, _ = txcodec.convert(source, "codex")
    lines = written.files[written.main].splitlines()
    kept = [json.loads(line)["payload"] for line in lines if b'"type":"turn_context"' in line]
    original = [json.loads(line)["payload"] for line in source.read_bytes().splitlines() if b'"turn_context"' in line]
    assert kept == original and len(kept) == 3
    compaction = next(i for i, line in enumerate(lines) if b'"type":"compacted"' in line)
    without = lines[:compaction] + [line for line in lines[compaction:] if b'"type":"turn_context"' not in line]
    original, mine = context(source.read_bytes()), context(b"\n".join(without) + b"\n")
    extra = list(mine)
    for item in original:
        extra.remove(item)
    assert [role for role, _ in extra] == ["developer"] and "<permissions instructions>" in extra[0][1]


def test_claude_context_reaches_codex_as_its_own_items():
    # Claude Code's attachments (environment, date, ...) carried into Codex: codex 0.171 sends
    # each as a developer (sent as system) or user message item of its own after the prompt,
    # and the prompt's item and user_message event hold only what the user typed
    source = GOLDEN / "claude_code" / "scenarios" / "api_error" / "e043dbbb-da0e-4598-ab36-5b65b722b3d2.jsonl"
    written, loss = txcodec.convert(source, "codex")
    assert "write:context-as-text" not in loss.counts()
    with Sandbox() as box:
        _, run = resume(box, written.files[written.main], "continue", timeout=90)
        assert run.exit_code == 0 and run.inputs, run.stderr[-2000:]
        items = [i for i in run.inputs[0] if isinstance(i, dict) and i.get("type", "message") == "message"]
    said = [(i["role"], "".join(p.get("text", "") for p in i["content"])) for i in items]
    prompt = said.index(("user", "try something"))
    after = said[prompt + 1 : prompt + 9]
    assert [role for role, _ in after] == ["developer"] * 7 + ["user"]
    assert after[0][1].startswith("<system-reminder>\n# Environment") and "Today's date is" in after[6][1]
    assert "Attribution for git commits" in after[7][1]
    events = [
        json.loads(line)["payload"] for line in written.files[written.main].splitlines() if b"user_message" in line
    ]
    assert [e["message"] for e in events] == ["try something", "again please"]
