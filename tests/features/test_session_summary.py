"""One definition of a session's title, first prompt and message count
(txcodec.model.summary), shared by ``list``, the HTML index and the Parquet rows, checked
on every golden and scenario session and in the stores the issue found wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN

from txcodec import api
from txcodec import sessions
from txcodec.cli import main
from txcodec.model import summary
from txcodec.model.common import Text

# what is no session of its own: expected outputs, side files, the captures' notes
_NOT_SESSIONS = ("written", "expected", "common", "scenario", "loss", "prompts", "row", "record", "meta", "input")


def _golden_sessions() -> list[Path]:
    found = []
    for path in sorted(GOLDEN.rglob("*")):
        if not path.is_file() or path.suffix not in (".jsonl", ".json") or "subagents" in path.parts:
            continue
        if path.stem.startswith(_NOT_SESSIONS) or {"chunks", "generations", "workflows", "events"} & set(path.parts):
            continue
        if api.detect(path.read_bytes()) != "jsonl":  # (cline's task file: no session)
            found.append(path)
    return found


def _row(path: Path) -> sessions.SessionRow:
    row = sessions.SessionRow(harness=api.load(path).harness, session_id="", path=str(path))
    sessions.describe_row(row)
    return row


@pytest.mark.parametrize("path", _golden_sessions(), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_a_listed_row_says_what_the_conversation_says(path):
    conv = api.to_common(api.load(path))
    row = _row(path)
    assert row.messages == summary.message_count(conv)
    assert row.first_prompt == summary.first_prompt(conv)
    assert row.title == summary.title(conv) or summary.title(conv) is None
    # tool results are no messages: a session whose calls were answered counts fewer rows than Common holds
    assert row.messages == sum(1 for m in conv.messages if summary.typed(m))
    scenario = path.parent / "scenario.json"
    prompts = json.loads(scenario.read_text()).get("prompts") if scenario.exists() else None
    said = [" ".join(b.text for b in m.content if type(b) is Text) for m in conv.messages if m.role == "user"]
    if prompts and any(prompts[0] in text for text in said):  # (a compaction may have dropped it)
        # the first thing typed, whatever context the client put before it
        assert row.first_prompt is not None
        assert row.first_prompt.encode("utf-8", "replace") == prompts[0].strip()[: summary.PROMPT_MAX].encode(
            "utf-8", "replace"
        )


def test_tool_results_injected_context_and_summaries_are_not_messages():
    conv = api.to_common(api.load(GOLDEN / "codex" / "scenarios" / "exec_command" / "rollout.jsonl"))
    # developer/environment context, the call, its output, the answer: two turns of the
    # user's and the model's, whatever Common holds beside them
    assert summary.first_prompt(conv) == "list the folder"
    assert summary.message_count(conv) < len(conv.messages)


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """A HOME whose Codex, Gemini CLI, Copilot CLI and Mistral Vibe stores hold genuine
    sessions of the pinned clients (the goldens), copied where each client keeps them."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "VIBE_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    codex = tmp_path / ".codex" / "sessions" / "2026" / "12" / "01"
    codex.mkdir(parents=True)
    rollout = GOLDEN / "codex" / "scenarios" / "exec_command" / "rollout.jsonl"
    sid = json.loads(rollout.read_text().split("\n", 1)[0])["payload"]["id"]
    shutil.copy(rollout, codex / f"rollout-2026-12-01T00-00-00-{sid}.jsonl")
    gemini = GOLDEN / "gemini_cli" / "scenarios" / "three_turns"
    chats = tmp_path / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    (gemini_file,) = gemini.glob("session-*.jsonl")
    shutil.copy(gemini_file, chats / gemini_file.name)
    copilot = GOLDEN / "copilot_cli" / "scenarios" / "parallel_calls" / "events.jsonl"
    copilot_sid = json.loads(copilot.read_text().split("\n", 1)[0])["data"]["sessionId"]
    (tmp_path / ".copilot" / "session-state" / copilot_sid).mkdir(parents=True)
    shutil.copy(copilot, tmp_path / ".copilot" / "session-state" / copilot_sid / "events.jsonl")
    vibe = tmp_path / ".vibe" / "logs" / "session" / "unified"
    vibe.mkdir(parents=True)
    unified = GOLDEN / "mistral_vibe" / "unified_resumed"
    shutil.copytree(unified, vibe / json.loads((unified / "meta.json").read_text())["session_id"])
    return {p: api.to_common(api.load(p)) for p in (rollout, gemini_file, copilot, unified / "CURRENT")}


def test_list_shows_titles_and_counts_in_every_store(stores):
    result = CliRunner().invoke(main, ["list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["harness"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {"codex", "gemini_cli", "copilot_cli", "mistral_vibe"}
    assert rows["codex"]["first_prompt"] == "list the folder"  # codex 0.171: no event_msg user_message
    for harness, conv in zip(("codex", "gemini_cli", "copilot_cli", "mistral_vibe"), stores.values()):
        row = rows[harness]
        assert row["first_prompt"] and row["first_prompt"] == summary.first_prompt(conv), harness
        assert row["messages"] == summary.message_count(conv) > 0, harness


def test_the_html_index_counts_as_list_does(stores, tmp_path):
    listed = {r["path"]: r for r in json.loads(CliRunner().invoke(main, ["list", "--json"]).stdout)}
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["export", "--all", "--to", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = [page["row"] for page in json.loads((out / ".txcodec-export.json").read_text())["pages"].values()]
    assert len(rows) == len(listed)
    assert sorted(r["messages"] for r in rows) == sorted(r["messages"] for r in listed.values())
    assert sorted(r["prompt"] for r in rows) == sorted(" ".join(r["first_prompt"].split()) for r in listed.values())


def test_the_parquet_rows_count_and_title_as_list_does(stores, tmp_path):
    pytest.importorskip("pyarrow")
    from txcodec.export import dataset

    listed = {r["session_id"]: r for r in json.loads(CliRunner().invoke(main, ["list", "--json"]).stdout)}
    out = tmp_path / "dataset"
    result = CliRunner().invoke(main, ["export", "--all", "--to", "parquet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = {r["session_id"]: r for r in dataset.read_tables(out)["sessions"].to_pylist() if r["parent_key"] is None}
    assert set(rows) == set(listed)
    for sid, row in rows.items():
        assert row["message_count"] == listed[sid]["messages"], sid
        assert row["title"] == listed[sid]["title"], sid
