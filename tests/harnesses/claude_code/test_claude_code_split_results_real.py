"""Issue 31 item 9 with the real ``claude`` (2.1.332): the Claude Code file written from a
Qwen Code session whose parallel results are records of their own resumes with both
results answering their calls, nothing rejected."""

from __future__ import annotations

import pytest
from test_claude_code_split_results import split_results

from txcodec import api
from txcodec.model.common import ToolResult
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client


def test_split_results_resume_attached(tmp_path):
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    qwen, _ = api.convert(split_results(), "qwen_code")
    written, _ = api.convert(qwen.files[qwen.main], "claude_code")
    path = tmp_path / written.main
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(written.files[written.main])
    report = check_resume(path, timeout=60)
    assert report.exit_code == 0 and report.rejected == [], (report.stderr, report.rejected)
    results = [(b.tool_use_id, b.content) for m in report.sent for b in m.content if isinstance(b, ToolResult)]
    assert results == [("c1", "A"), ("c2", "B")]
