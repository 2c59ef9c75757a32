"""A Gemini CLI 0.1.22 ``/chat save`` checkpoint (``versions/``, see
test_gemini_cli_old_versions.py), converted to the current session file, resumed by the
pinned ``gemini`` (0.61.0) against the mock (docs/gemini_cli.md#versions-read)."""

from __future__ import annotations

from pathlib import Path

import pytest

import txcodec
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.resume_check.gemini_cli import check_resume

pytestmark = pytest.mark.real_client

CHECKPOINT = next((Path(__file__).parent / "versions" / "0.1.22").glob("tmp/*/checkpoint-*.json"))


def test_checkpoint_converted_resumes_with_its_history(tmp_path):
    written, _ = txcodec.convert(CHECKPOINT, "gemini_cli")
    for rel, data in written.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    report = check_resume(tmp_path / written.main, timeout=120)
    assert report.exit_code == 0 and report.rejected == [], report.stderr
    blocks = [(m.role, b) for m in report.sent for b in m.content]
    # what the 0.1.22 model saw is sent again: its context message, after the new client's own
    assert any(r == "user" and isinstance(b, Text) and b.text.startswith("This is the Gemini CLI.") for r, b in blocks)
    assert ("user", Text("list the files")) in blocks
    call = next(b for _, b in blocks if isinstance(b, ToolUse))
    assert call.name == "list_directory"
    assert any(isinstance(b, ToolResult) and b.tool_use_id == call.id for _, b in blocks)
    assert ("assistant", Text("There is one file: a.txt.")) in blocks
