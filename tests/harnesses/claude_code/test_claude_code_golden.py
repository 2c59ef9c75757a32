"""The golden Claude Code cases (golden/claude_code/, one per row of docs/claude_code.md#golden-cases's fixture
checklist): every file round-trips byte for byte, no line is opaque, and each case really
holds the shapes its row names (the checklist's predicates, in Python)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN

import txcodec
from txcodec.harnesses.claude_code import records as r
from txcodec.harnesses.claude_code.origin import is_clear_head
from txcodec.harnesses.claude_code.store import discover
from txcodec.model.native import Opaque

CASES_DIR = GOLDEN / "claude_code"
CASES = sorted(
    p.name for p in CASES_DIR.iterdir() if p.is_dir() and p.name != "scenarios"
)  # scenarios: test_scenarios.py


def files(case: str) -> list[Path]:
    return sorted(
        p
        for p in (CASES_DIR / case).rglob("*")
        if p.suffix in (".jsonl", ".json") and not p.name.startswith("expected")
    )


def main_records(case: str) -> list:
    folder = CASES_DIR / case
    (main,) = [p for p in folder.glob("*.jsonl") if not p.name.startswith("expected")]
    return txcodec.load(main).records


def tool_results(recs):
    return [
        b
        for rec in recs
        if isinstance(rec, r.UserRecord) and isinstance(rec.message.content, list)
        for b in rec.message.content
        if isinstance(b, r.ToolResultBlock)
    ]


def tool_uses(recs):
    return [
        b
        for rec in recs
        if isinstance(rec, r.AssistantRecord) and isinstance(rec.message.content, list)
        for b in rec.message.content
        if isinstance(b, r.ToolUseBlock)
    ]


def carriers(recs):
    out = []
    for rec in recs:
        if isinstance(rec, r.UserRecord):
            shape, value = r.tool_use_result_shape(rec.tool_use_result)
            if shape != "absent":
                out.append((shape, value))
    return out


def objects(recs):
    return [v for shape, v in carriers(recs) if shape == "object"]


def load_all(case: str, pattern: str):
    return [rec for p in sorted((CASES_DIR / case).rglob(pattern)) for rec in txcodec.load(p).records]


# The checklist's structural predicates (docs/claude_code.md#golden-cases), one entry per case.
SHAPES = {
    "streaming_duplication": lambda recs: any(
        isinstance(x, r.AssistantRecord) and (x.api_block_index or 0) > 0 for x in recs
    ),
    "bash_carriers": lambda recs: (
        any("stdout" in c for c in objects(recs))
        and any(c.get("backgroundTaskId") for c in objects(recs))
        and any(c.get("gitOperation") for c in objects(recs))
    ),
    "failure": lambda recs: sum(b.is_error is True for b in tool_results(recs)) >= 2,
    "persisted_output": lambda recs: any(c.get("persistedOutputPath") for c in objects(recs)),
    "carrier_type_mismatch": lambda recs: {s for s, _ in carriers(recs)} >= {"string", "array", "json-string"},
    "edit_read_write": lambda recs: (
        any(c.get("structuredPatch") for c in objects(recs))
        and {c.get("type") for c in objects(recs)} >= {"image", "parts", "file_unchanged", "create"}
    ),
    "agent_launch": lambda recs: (
        any(c.get("status") == "async_launched" for c in objects(recs))
        and any(c.get("toolStats") for c in objects(recs))
        and any(u.name == "Agent" for u in tool_uses(recs))
    ),
    "subagent_lineage": lambda recs: True,  # checked on the side files below
    "task_notification": lambda recs: any(
        isinstance(x, r.UserRecord) and x.origin is not r.UNSET and r.raw_json(x.origin)["kind"] == "task-notification"
        for x in recs
    ),
    "session_lineage": lambda recs: (
        any(getattr(x, "forked_from", r.UNSET) is not r.UNSET for x in recs)
        and any(isinstance(x, r.LastPromptRecord) for x in recs)
        and len({x.message.model for x in recs if isinstance(x, r.AssistantRecord)}) == 2
    ),
    # genuine: the /clear successor's head chain (docs/lineage.md)
    "lineage_genuine": lambda recs: is_clear_head(
        [msgspec.json.decode(msgspec.json.encode(x)) for x in recs if isinstance(x, (r.UserRecord, r.SystemRecord))][:3]
    ),
    "interruption_denial": lambda recs: (
        any(getattr(x, "tool_denial_kind", r.UNSET) == "user-rejected" for x in recs)
        and any(getattr(x, "interrupted_message_id", r.UNSET) is not r.UNSET for x in recs)
    ),
    "assistant_errors": lambda recs: (
        any(getattr(x, "is_aborted_mid_stream", None) is True for x in recs)
        and any(getattr(x, "truncated_after_output", None) is True for x in recs)
        and any(getattr(x, "is_api_error_message", None) is True for x in recs)
    ),
    "compaction": lambda recs: (
        any(getattr(x, "is_compact_summary", None) is True for x in recs)
        and any(isinstance(x, r.SystemRecord) and x.subtype == "compact_boundary" for x in recs)
    ),
    "attachment_signals": lambda recs: (
        {msgspec.json.decode(x.attachment)["type"] for x in recs if isinstance(x, r.AttachmentRecord)}
        >= {"hook_blocking_error", "read_truncation_notice"}
    ),
    "mcp": lambda recs: (
        any(u.name.startswith("mcp__") for u in tool_uses(recs))
        and any(getattr(x, "mcp_meta", r.UNSET) is not r.UNSET for x in recs)
    ),
    "block_array_results": lambda recs: (
        {type(p) for b in tool_results(recs) if isinstance(b.content, list) for p in b.content}
        >= {r.TextBlock, r.ImageBlock, r.ToolReferenceBlock}
    ),
    "thinking": lambda recs: (
        {
            bool(b.thinking)
            for x in recs
            if isinstance(x, r.AssistantRecord)
            for b in x.message.content
            if isinstance(b, r.ThinkingBlock)
        }
        == {True, False}
    ),
    "host_ui": lambda recs: (
        any(
            isinstance(x, r.UserRecord) and isinstance(x.message.content, str) and "<command-name>" in x.message.content
            for x in recs
        )
        and any(isinstance(x, r.QueueOperationRecord) and x.operation == "dequeue" for x in recs)
    ),
    "workflow": lambda recs: any(c.get("workflowName") for c in objects(recs)),
    "line_splitting_guard": lambda recs: all(
        ch in "".join(str(x.message.content) for x in recs if hasattr(x, "message")) for ch in "\u2028\u2029\r"
    ),
    "private_key_shapes": lambda recs: (
        any(isinstance(x, r.FileHistorySnapshotRecord) for x in recs) and any(c.get("answers") for c in objects(recs))
    ),
    "metadata_records": lambda recs: (
        {type(x) for x in recs}
        >= {
            r.SummaryRecord,
            r.CustomTitleRecord,
            r.AgentNameRecord,
            r.AiTitleRecord,
            r.ModeRecord,
            r.PermissionModeRecord,
            r.FileHistoryDeltaRecord,
            r.AtisLatchRecord,
            r.BridgeSessionRecord,
            r.PrLinkRecord,
            r.CostStateRecord,
            r.FrameLinkRecord,
            r.ArtifactAutoreactLedgerRecord,
            r.ArtifactCommentMonitorRecord,
        }
    ),
}


def test_every_checklist_row_has_a_case():
    rows = {tomllib.loads((CASES_DIR / c / "case.toml").read_text())["row"] for c in CASES}
    checklist = {
        "Streaming duplication",
        "Bash carrier variants",
        "Failure",
        "Persisted output",
        "Carrier type mismatch",
        "Edit/Read/Write variants",
        "Agent launch vs result",
        "Subagent lineage",
        "Subagent result delivery",
        "Session lineage",
        "Interruption and denial",
        "Assistant-level errors",
        "Compaction",
        "Attachment signals",
        "MCP",
        "Block-array results",
        "Thinking",
        "Host/UI records",
        "Workflow",
        "Line-splitting guard",
        "Private-key shapes (sanitized)",
    }
    assert checklist <= rows
    assert set(SHAPES) == set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_case_round_trips_and_is_fully_typed(case):
    found = files(case)
    assert found
    for path in found:
        session = txcodec.load(path)
        assert session.harness == "claude_code", path
        assert session.dump() == path.read_bytes(), path
        for _ in session:
            pass
        assert session.dump() == path.read_bytes(), path
        assert not [(n, o.diagnostic) for n, o in session.diagnostics], path
        assert not any(isinstance(rec, Opaque) for rec in session.records)


@pytest.mark.parametrize("case", CASES)
def test_case_holds_its_shapes(case):
    assert SHAPES[case](main_records(case)), f"{case} lacks a shape its checklist row names"


def test_side_file_shapes():
    metas = load_all("subagent_lineage", "agent-*.meta.json")
    assert any(m.parent_agent_id == "a3b5c7d9e1f3a5b70" and m.depth == 2 for m in metas)
    assert all(m.tool_use_id and m.agent_type for m in metas)
    subs = load_all("subagent_lineage", "agent-*.jsonl")
    assert all(x.is_sidechain is True and isinstance(x.agent_id, str) for x in subs)
    journal = load_all("workflow", "journal.jsonl")
    assert [type(x) for x in journal] == [r.JournalStarted, r.JournalResult]
    assert [type(x) for x in load_all("workflow", "wf_*.json")] == [r.WorkflowRun]


def test_cases_form_a_store():
    """The golden folder is itself a store: every case is found, with its side files."""
    sessions = {s.session_id: s for s in discover(CASES_DIR)}
    by_case = {s.primary_dir.name: s for s in sessions.values()}
    assert set(by_case) == set(CASES)
    workflow = by_case["workflow"]
    assert workflow.counts["workflow_agents"] == 1 and list(workflow.files.journals) == ["wf_3f9a1c2e-7b4d"]
    assert list(workflow.workflow_scripts) == ["wf_3f9a1c2e-7b4d"]
    assert by_case["persisted_output"].counts["tool_results"] == 1
    assert by_case["subagent_lineage"].counts["subagents"] == 2
    assert by_case["metadata_records"].status == "metadata-only"
    assert by_case["metadata_records"].title == "cart fix"
