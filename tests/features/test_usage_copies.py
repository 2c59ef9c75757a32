"""Issue 34.1: a session converted and installed by txcodec carries its source's usage;
``txcodec usage`` counts each model call once across harnesses and says what it left
out as a copy (docs/usage.md#converted-sessions)."""

from __future__ import annotations

import json
import os
import time

import msgspec
import pytest
from click.testing import CliRunner
from msgspec import UNSET
from support.paths import CORPUS

from txcodec.cli import main

MODERN = CORPUS / "claude_code" / "generated" / "claude_write_edit_2turns.jsonl"  # 2.1.332: verified usage
STORE_ENV = (
    "AIDER_CHAT_HISTORY_FILE",
    "CLAUDE_CONFIG_DIR",
    "CLINE_DATA_DIR",
    "CLINE_DB_DATA_DIR",
    "CLINE_DIR",
    "CLINE_SESSION_DATA_DIR",
    "CODEX_HOME",
    "CONTINUE_GLOBAL_DIR",
    "COPILOT_HOME",
    "GEMINI_CLI_HOME",
    "KIMI_SHARE_DIR",
    "OPENHANDS_CONVERSATIONS_DIR",
    "OPENHANDS_PERSISTENCE_DIR",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "VIBE_HOME",
    "XDG_DATA_HOME",
)


@pytest.fixture
def home(tmp_path, monkeypatch):
    root = tmp_path / "home"
    project = root / ".claude" / "projects" / "-home-u-shop"
    project.mkdir(parents=True)
    from txcodec import api

    for source in (api.sample("claude_code"), MODERN):
        (project / source.name).write_bytes(source.read_bytes())
        old = time.time() - 86400
        os.utime(project / source.name, (old, old))  # the sessions were written before they are converted
    for name in STORE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return root


def _usage(*args: str) -> dict:
    out = CliRunner().invoke(main, ["usage", "--by", "harness", "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.mark.parametrize("target", ["codex", "gemini_cli", "continue_cli"])
def test_usage_is_the_same_before_and_after_convert_install(home, target):
    before = _usage()
    assert [r["harness"] for r in before["rows"]] == ["claude_code"] and before["totals"]["calls"] > 0
    assert before["copies"] == []
    out = CliRunner().invoke(main, ["convert", "--all", "--from", "claude_code", "--to", target, "--install"])
    assert out.exit_code == 0, out.output
    after = _usage()
    keep = ("calls", "input_tokens", "output_tokens", "cache_read_input_tokens", "total_tokens", "cost_usd")
    assert {k: after["totals"][k] for k in keep} == {k: before["totals"][k] for k in keep}
    assert [r["harness"] for r in after["rows"]] == ["claude_code"]
    # what was left out, and where it was counted
    assert after["copies"] and all("already counted in" in line for line in after["copies"])
    table = CliRunner().invoke(main, ["usage", "--by", "harness"])
    assert "not counted again:" in table.output and "converted cop" in table.output


def test_a_copy_s_own_new_calls_still_count(tmp_path):
    """A converted copy resumed in its new client adds calls of its own: those count."""
    from txcodec import api
    from txcodec.usage import usage

    source = tmp_path / "a.jsonl"
    source.write_bytes(MODERN.read_bytes())
    conversation = api.to_common(api.load(source))
    last = next(m for m in reversed(conversation.messages) if m.role == "assistant" and m.usage is not UNSET)
    prompt = next(m for m in conversation.messages if m.role == "user")
    conversation.messages.append(msgspec.structs.replace(prompt, id="u_new", timestamp="2031-01-01T00:00:00.000Z"))
    conversation.messages.append(msgspec.structs.replace(last, id="msg_new", timestamp="2031-01-01T00:00:01.000Z"))
    written, _ = api.convert(conversation, "codex")
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(written.files[written.main])
    os.utime(source, (1, 1))
    report = usage([source, copy], by=["harness"], prices=False)
    alone = usage([source], by=["harness"], prices=False)
    assert report.totals.calls == alone.totals.calls + 1
    assert len(report.copies) == 1 and report.copies[0].startswith(f"{copy}: {alone.totals.calls} calls already")
