"""A redacted Claude Code session still resumes in the real ``claude`` (against the strict mock
Messages API): the session with fake secrets planted resumes, its redacted copy resumes with as
many messages, and what the client sends from the copy holds no planted value
(docs/redact.md#resuming)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN
from support.planted_secrets import USER
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec.redact import Redactor
from txcodec.redact import redact_paths
from txcodec.resume_check.claude_code import check_resume
from txcodec.resume_check.claude_code import comparable
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client

TIMEOUT = 60


def test_redacted_session_resumes(tmp_path: Path) -> None:
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    (source,) = (GOLDEN / "claude_code" / "edit_read_write").glob("*.jsonl")
    planted = tmp_path / "in" / f"-home-{USER}-work" / source.name
    planted.parent.mkdir(parents=True)
    planted.write_bytes(plant(source.read_bytes(), "claude_code"))
    report = redact_paths([planted], tmp_path / "out" / source.name, Redactor())
    assert report.findings
    redacted = tmp_path / "out" / source.name
    assert not leaks(redacted.read_text())
    before = check_resume(planted, timeout=TIMEOUT)
    after = check_resume(redacted, timeout=TIMEOUT)
    assert before.resumed, (before.rejected, before.stderr)
    assert after.resumed, (after.rejected, after.stderr)
    assert len(after.sent) == len(before.sent)
    assert leaks(msgspec.json.encode(comparable(before.sent)).decode())  # the planted copy sends them
    assert not leaks(msgspec.json.encode(comparable(after.sent)).decode())
