"""Codex -> Common -> Codex shows the model the context the original shows it: the developer
and user context items (permissions, environment_context, AGENTS.md, ...) that the pinned
codex (0.171.0) builds on resume of a scenario rollout and of its converted copy match, once
dates and the sandbox's temp paths are masked (docs/codex.md#resume-contract). The Claude
counterpart is test_claude_code_context_real.py."""

from __future__ import annotations

import re

import pytest
from support.paths import GOLDEN

import txcodec
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.codex import resume

pytestmark = pytest.mark.real_client

SCENARIOS = sorted((GOLDEN / "codex" / "scenarios").glob("*/rollout.jsonl"))
# after a compaction 0.171 also diffs against the turn_context that follows it, which Common
# does not carry verbatim (the writer writes its own): see test_compacted_scenarios_resend_the_permissions
COMPACTED = {"auto_compact", "remote_compact"}
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


@pytest.mark.parametrize(
    "source", [p for p in SCENARIOS if p.parent.name not in COMPACTED], ids=lambda p: p.parent.name
)
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


@pytest.mark.parametrize("name", sorted(COMPACTED))
def test_compacted_scenarios_resend_the_permissions(name):
    # the one context item left: a <permissions instructions> developer item sent once more
    source = GOLDEN / "codex" / "scenarios" / name / "rollout.jsonl"
    written, _ = txcodec.convert(source, "codex")
    original, mine = context(source.read_bytes()), context(written.files[written.main])
    assert len(mine) == len(original) + 1 and set(mine) == set(original)
    extra = list(mine)
    for item in original:
        extra.remove(item)
    assert [role for role, _ in extra] == ["developer"] and "<permissions instructions>" in extra[0][1]
