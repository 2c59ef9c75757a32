"""Redacted sessions of Codex, Gemini CLI, Qwen Code, pi and opencode still resume in their real clients
(against the strict mock model): each scenario session with fake secrets planted is redacted,
resumed, and what the client sends holds no planted value (docs/redact.md#resuming; Claude
Code's is tests/harnesses/claude_code/test_claude_code_redact_real.py)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from support.paths import GOLDEN
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec.kit import registry
from txcodec.redact import Redactor
from txcodec.redact import redact_paths

pytestmark = pytest.mark.real_client

SOURCES = {
    "codex": "codex/scenarios/*/rollout.jsonl",
    "gemini_cli": "gemini_cli/scenarios/*/session-*.jsonl",
    "qwen_code": "qwen_code/scenarios/*/*.jsonl",
    "pi": "pi/scenarios/*/session.jsonl",
    # opencode's store is a database: its scenario sessions are recorded as the client's own
    # export documents, which its resume check imports into a fresh store
    "opencode": "opencode/scenarios/*/export.json",
}


@pytest.mark.parametrize("harness", sorted(SOURCES))
def test_redacted_scenario_session_resumes(harness: str, tmp_path: Path) -> None:
    source = sorted(GOLDEN.glob(SOURCES[harness]))[0]
    planted = tmp_path / "in" / source.name
    planted.parent.mkdir()
    planted.write_bytes(plant(source.read_bytes(), harness))
    redacted = tmp_path / "out" / source.name
    report = redact_paths([planted], redacted, Redactor())
    assert report.findings and not leaks(redacted.read_text())
    check = registry.get(harness).check_resume
    after = check(redacted, timeout=90)
    assert after.resumed, (after.rejected, after.stderr[-2000:])
    assert after.sent and not leaks(msgspec.json.encode(after.sent).decode())
