"""A session carried through three harnesses by conversion, Claude -> Codex -> Gemini ->
Claude, and resumed by the real claude (2.1.332) against the mock: the prompt, every call
with its result, and the answers reach the request it sends, or the hop that lost one
names it with a write-side loss entry (docs/resume.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import GOLDEN

import txcodec
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.resume_check.claude_code import check_resume

pytestmark = pytest.mark.real_client

HOPS = ["codex", "gemini_cli", "claude_code"]


def facts(path: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    conversation = txcodec.to_common(txcodec.load(path), LossReport())
    return messages_facts(conversation.messages)


def messages_facts(messages) -> tuple[list[str], list[str], list[str], list[str]]:
    prompts = [b.text for m in messages if m.role == "user" for b in m.content if type(b) is Text]
    answers = [b.text for m in messages if m.role == "assistant" for b in m.content if type(b) is Text]
    calls = [b.id for m in messages for b in m.content if isinstance(b, ToolUse)]
    results = [b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResult)]
    return prompts, answers, calls, results


@pytest.mark.parametrize("scenario", ["parallel_tools", "write_edit"])
def test_claude_codex_gemini_claude_keeps_or_names_every_fact(scenario, tmp_path):
    source = next((GOLDEN / "claude_code" / "scenarios" / scenario).glob("*.jsonl"))
    path, lost = source, []
    for hop in HOPS:
        written, loss = txcodec.convert(path, hop)
        lost += [e for e in loss.entries if e.kind.startswith("write:")]
        for rel, data in written.files.items():
            (tmp_path / hop / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / hop / rel).write_bytes(data)
        path = tmp_path / hop / written.main
    report = check_resume(path, timeout=90)
    assert report.resumed, (report.rejected, report.stderr)
    prompts, answers, calls, results = facts(source)
    got_prompts, got_answers, got_calls, got_results = messages_facts(report.sent)
    named = " ".join(f"{e.kind} {e.detail}" for e in lost)
    for prompt in prompts[:1]:  # the user's own prompt (context reminders become text on the way)
        assert any(prompt in text for text in got_prompts) or prompt in named
    for answer in answers:
        assert any(answer in text for text in got_answers) or answer in named
    assert calls and sorted(got_calls) == sorted(calls)  # call ids survive every hop
    assert sorted(got_results) == sorted(results)
