"""Files written by old Gemini CLI versions (docs/gemini_cli.md#versions-read).

``versions/0.1.22/tmp/<sha256 of the project root>/checkpoint-demo.json`` is genuine:
gemini 0.1.22 run in its interactive mode (a pty) against the mock Gemini API, one prompt,
a ``list_directory`` call, the answer, then ``/chat save demo``. 0.1.x keeps no other
session file; a checkpoint is the chat history as a bare JSON list of API contents."""

from __future__ import annotations

import hashlib
from pathlib import Path

import txcodec
from txcodec.harnesses.gemini_cli.records import Checkpoint
from txcodec.harnesses.gemini_cli.store import discover
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.summary import summarize
from txcodec.verify import verify_file

CHECKPOINT = next((Path(__file__).parent / "versions" / "0.1.22").glob("tmp/*/checkpoint-*.json"))
PROJECT = "/tmp/oldver/rec/gem01/project"


def test_checkpoint_is_recognised_and_round_trips():
    session = txcodec.load(CHECKPOINT)
    assert session.harness == "gemini_cli" and [type(r) for r in session.records] == [Checkpoint]
    verified = verify_file(CHECKPOINT)
    assert verified.ok and verified.harness == "gemini_cli" and verified.opaque == 0


def test_checkpoint_reads_as_its_conversation():
    loss = LossReport()
    conversation = txcodec.to_common(txcodec.load(CHECKPOINT), loss)
    messages = conversation.messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "assistant", "user", "assistant"]
    # the CLI's context message and its canned reply are not the user's or the model's words
    assert messages[0].meta and messages[1].synthetic and not messages[2].meta
    (call,) = messages[4].content
    (result,) = messages[5].content
    assert isinstance(call, ToolUse) and isinstance(result, ToolResult)
    # the functionCall part has no id: it takes its functionResponse's
    assert call.name == "list_directory" and call.id == result.tool_use_id != ""
    assert result.content == f"Directory listing for {PROJECT}:\na.txt"
    assert summarize(conversation).first_prompt == "list the files"
    assert conversation.meta.id == "checkpoint-demo" and conversation.meta.extra["gemini_checkpoint_tag"] == "demo"
    # the folder is named by the sha256 of the project root the context message names
    assert CHECKPOINT.parent.name == hashlib.sha256(PROJECT.encode()).hexdigest()
    assert conversation.meta.cwd == PROJECT
    assert loss.entries == []


def test_checkpoint_converts_to_a_conversation():
    for target in ("gemini_cli", "claude_code", "codex"):
        written, _ = txcodec.convert(CHECKPOINT, target)
        main = written.files[written.main].decode()
        assert "list the files" in main and "list_directory" in main and "There is one file" in main, target


def test_checkpoint_is_listed(tmp_path):
    folder = tmp_path / "tmp" / CHECKPOINT.parent.name
    folder.mkdir(parents=True)
    (folder / CHECKPOINT.name).write_bytes(CHECKPOINT.read_bytes())
    (folder / "checkpoint-other.json").write_text('{"not": "a history"}')  # so named, not a checkpoint
    (info,) = discover(tmp_path)
    assert info.id == "checkpoint-demo" and info.project == CHECKPOINT.parent.name and info.legacy
