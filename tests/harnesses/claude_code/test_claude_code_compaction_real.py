"""Compaction with preserved messages, resumed by the real ``claude`` (2.1.332).

On resume the CLI reads the last ``compact_boundary``'s
``compactMetadata.preservedMessages`` (``anchorUuid`` + ``uuids``; or walks
``preservedSegment`` from ``tailUuid`` up to ``headUuid``), drops every record before
the boundary except those, chains them after the anchor (the summary) and hangs the
later turns off the last of them. The writer names the records of Common's preserved
messages there; the context Claude Code sends must be the summary, the preserved
messages, then the later turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txcodec.harnesses.claude_code.write import write
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.claude_code import comparable
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client

TIMEOUT = 45


def _conversation(preserved: list[str]) -> Conversation:
    messages = [
        Message("user", [Text("old question")]),
        Message("assistant", [Text("old answer")]),
        Message("user", [Text("kept question")]),
        Message("assistant", [Text("kept answer"), ToolUse("toolu_k1", "Bash", {"command": "echo kept"})]),
        Message("user", [ToolResult("toolu_k1", "kept", is_error=False)]),
        Message("user", [Text("This session is being continued. Summary: we kept two turns.")], compact_summary=True),
        Message("user", [Text("new question")]),
        Message("assistant", [Text("new answer")]),
    ]
    for i, m in enumerate(messages):
        m.source_ids = [f"src-{i}"]
    return Conversation(
        meta=Meta(id="preserved"), messages=messages, epochs=[Epoch(start=5, trigger="auto", preserved_ids=preserved)]
    )


def _save(written, folder: Path) -> Path:
    for rel, data in written.files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return folder / written.main


@pytest.fixture(scope="module", autouse=True)
def _claude_installed():
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")


def test_preserved_messages_resume_after_the_summary(tmp_path):
    conversation = _conversation(["src-2", "src-3", "src-4", "never-written"])
    loss = LossReport()
    written = write(conversation, loss, WriteOptions())
    assert loss.counts() == {"write:preserved-unresolved": 1}
    lines = [json.loads(line) for line in written.files[written.main].splitlines()]
    boundary = next(line for line in lines if line.get("subtype") == "compact_boundary")
    preserved = boundary["compactMetadata"]["preservedMessages"]
    summary = next(line for line in lines if line.get("isCompactSummary"))
    assert preserved["anchorUuid"] == summary["uuid"] and len(preserved["uuids"]) == 4  # text, text, tool_use, result

    report = check_resume(_save(written, tmp_path), timeout=TIMEOUT)
    assert report.rejected == [] and report.exit_code == 0, (report.rejected, report.stderr)
    m = conversation.messages
    assert comparable(report.sent) == comparable([m[5], m[2], m[3], m[4], m[6], m[7]], prompt=None)


def test_without_preserved_messages_the_context_starts_at_the_summary(tmp_path):
    conversation = _conversation([])
    written = write(conversation, LossReport(), WriteOptions())
    report = check_resume(_save(written, tmp_path / "none"), timeout=TIMEOUT)
    assert report.rejected == [] and report.exit_code == 0, (report.rejected, report.stderr)
    assert comparable(report.sent) == comparable(conversation.messages[5:], prompt=None)
