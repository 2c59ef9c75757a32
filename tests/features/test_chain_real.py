"""A session carried through three harnesses by conversion, Claude -> Codex -> Gemini ->
Claude, and resumed by the real claude (2.1.332) against the mock: the prompt, every call
with its result, and the answers reach the request it sends, or the hop that lost one
names it with a write-side loss entry (docs/resume.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import GOLDEN

import txcodec
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.codex import resume

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


def test_codex_claude_codex_keeps_the_mcp_calls(tmp_path):
    """Codex -> Claude -> Codex with the MCP scenario (a notes server behind tool_search),
    resumed by the real codex (0.171): the prompt, the answer and both MCP calls with their
    outputs reach the request, each call again under codex's namespace (mcp__notes + lookup,
    by way of Claude's mcp__notes__lookup); the tool search, which Claude has no form for, is
    named by the Claude hop."""
    source = GOLDEN / "codex" / "scenarios" / "mcp_tool_search" / "rollout.jsonl"
    data, lost = source.read_bytes(), []
    for hop in ("claude_code", "codex"):
        written, loss = txcodec.convert(data, hop)
        lost += [(e.kind, e.detail) for e in loss.entries if e.kind.startswith("write:")]
        data = written.files[written.main]
    assert sorted(detail.split("'")[1] for kind, detail in lost if kind == "write:context") == [
        "tool_search_call",
        "tool_search_output",
    ]
    assert not [kind for kind, _ in lost if kind != "write:context"]  # nothing else lost on the way
    with Sandbox() as box:
        _, run = resume(box, data, "continue", timeout=90)
    assert run.exit_code == 0 and run.inputs, run.stderr[-2000:]
    sent = run.inputs[0]
    calls = [i for i in sent if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [(c.get("namespace"), c["name"], c["call_id"]) for c in calls] == [
        ("mcp__notes", "lookup", "call_mcp_1"),
        ("mcp__notes", "lookup", "call_mcp_2"),
    ]
    outputs = {
        i["call_id"]: str(i["output"]) for i in sent if isinstance(i, dict) and i.get("type") == "function_call_output"
    }
    assert "Alpha is the first note." in outputs["call_mcp_1"] and "no note named 'beta'" in outputs["call_mcp_2"]
    texts = json.dumps([i for i in sent if isinstance(i, dict) and i.get("type") == "message"])
    assert "look up alpha and beta in the notes" in texts
    assert "Alpha is the first note; there is no note named beta." in texts
