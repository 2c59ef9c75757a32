"""Old Claude Code sessions (``versions/``, see test_claude_code_old_versions.py) resumed by
the pinned ``claude`` (2.1.332) against the strict mock: converted Claude -> Claude, the
client sends what it sends for the original file, the subagent's records out of the main
thread (docs/claude_code.md#versions-read)."""

from __future__ import annotations

from pathlib import Path

import pytest

import txcodec
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.claude_code import comparable

pytestmark = pytest.mark.real_client

VERSIONS = Path(__file__).parent / "versions"
MAINS = {p.parent.name: p for p in sorted(VERSIONS.glob("*/*.jsonl")) if not p.name.startswith("agent-")}
PLAIN = ["2.1.220", "2.1.220-tty", "2.1.251"]


def resume_both(version, tmp_path):
    written, _ = txcodec.convert(MAINS[version], "claude_code")
    for rel, data in written.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    mine = check_resume(tmp_path / written.main, timeout=60)
    original = check_resume(MAINS[version], timeout=60)
    assert mine.resumed and original.resumed, (mine.rejected, mine.stderr, original.stderr)
    return comparable(mine.sent), comparable(original.sent)


@pytest.mark.parametrize("version", sorted(set(MAINS) - set(PLAIN)))
def test_old_session_resumes_in_the_newest_client_as_the_original(version, tmp_path):
    sent, original = resume_both(version, tmp_path)
    assert sent == original
    # the main thread only: the prompt, the call (2.1.332 renames Task to Agent), its result
    assert sent[0] == ("user", [("text", "count the files with an agent")])
    call = sent[1][1][-1]
    assert call[:3] == ("tool_use", "toolu_agent_1", "Agent")
    assert sent[2][1][0][:2] == ("tool_result", "toolu_agent_1")
    assert not any(b[0] == "text" and b[1] == "Count the files here" for _, blocks in sent for b in blocks)


@pytest.mark.parametrize("version", PLAIN)
def test_native_version_resumes_with_its_call_and_result(version, tmp_path):
    sent, original = resume_both(version, tmp_path)
    assert sent == original
    assert sent[0] == ("user", [("text", "count the files")])
    assert any(b[:3] == ("tool_use", "toolu_bash_1", "Bash") for _, blocks in sent for b in blocks)
    assert any(b[:2] == ("tool_result", "toolu_bash_1") for _, blocks in sent for b in blocks)
