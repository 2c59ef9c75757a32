"""Old Codex rollouts (``versions/``, see test_codex_old_versions.py) resumed by the pinned
``codex`` (0.171.0) against the mock: converted Codex -> Codex, each resumes with its whole
history; the 0.20 original itself is refused by 0.171.0 (docs/codex.md#versions-read)."""

from __future__ import annotations

from pathlib import Path

import pytest

import txcodec
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.resume_check.codex import check_resume

pytestmark = pytest.mark.real_client

VERSIONS = Path(__file__).parent / "versions"
ROLLOUTS = {p.parent.name: p for p in sorted(VERSIONS.glob("*/rollout-*"))}
# the shell tool: `shell` with a command array up to 0.50, `exec_command` from 0.100
SHELL = {"0.1.2505172129": "shell", "0.20.0": "shell", "0.100.0": "exec_command", "0.150.0": "exec_command"}


@pytest.mark.parametrize("version", sorted(ROLLOUTS))
def test_old_rollout_converted_resumes_with_its_history(version, tmp_path):
    written, _ = txcodec.convert(ROLLOUTS[version], "codex")
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(written.files[written.main])
    report = check_resume(path, timeout=90)
    assert report.exit_code == 0 and report.rejected == [], report.stderr
    blocks = [(m.role, b) for m in report.sent for b in m.content]
    assert ("user", Text("list the files")) in blocks
    call = next(b for _, b in blocks if isinstance(b, ToolUse))
    assert call.name == SHELL[version] and call.id == "call_ls_1"
    assert any(isinstance(b, ToolResult) and b.tool_use_id == "call_ls_1" for _, b in blocks)
    assert ("assistant", Text("There is one file: a.txt.")) in blocks


def test_the_pinned_client_does_not_resume_a_0_20_rollout_itself(tmp_path):
    report = check_resume(ROLLOUTS["0.20.0"], timeout=90)
    assert report.exit_code != 0 and report.sent == []


@pytest.mark.parametrize("version", ["0.100.0", "0.150.0"])
def test_the_pinned_client_resumes_a_newer_original_as_its_copy(version, tmp_path):
    written, _ = txcodec.convert(ROLLOUTS[version], "codex")
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(written.files[written.main])
    mine, original = check_resume(path, timeout=90), check_resume(ROLLOUTS[version], timeout=90)
    assert original.exit_code == 0 and original.rejected == [], original.stderr
    assert mine.sent == original.sent
