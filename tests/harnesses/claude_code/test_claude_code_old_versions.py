"""Sessions written by old Claude Code versions (docs/claude_code.md#versions-read).

``versions/<version>/`` holds genuine sessions recorded with that version's CLI (from the
npm registry) against the mock Messages API: one ``Task`` call whose subagent runs Bash and
answers. 1.0.128 and 2.0.0 keep the subagent's records in the main file (``isSidechain:
true``); 2.0.30 and 2.0.77 write them to ``agent-<id>.jsonl`` beside it (with the
``Warmup`` agents each starts by itself); 2.1.100 (an ``Agent`` call) writes
``<sid>/subagents/agent-<id>.jsonl`` with a ``.meta.json``. 2.1.220 and 2.1.251 (the native
binaries) hold a prompt, one Bash call and its result; ``2.1.220-tty`` is 2.1.220 driven in a
pseudo-terminal (an interactive run, its permission mode cycled with shift+tab before a second
prompt). The corpus's 1.0.98 / 1.0.108 sessions (claude-code-viewer)
hold the same form with several Task calls in one turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import CORPUS

import txcodec
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.verify import verify_file

VERSIONS = Path(__file__).parent / "versions"
MAINS = {p.parent.name: p for p in sorted(VERSIONS.glob("*/*.jsonl")) if not p.name.startswith("agent-")}
PLAIN = ["2.1.220", "2.1.220-tty", "2.1.251"]  # a prompt, a Bash call, its result: no subagent
AGENTS = sorted(set(MAINS) - set(PLAIN))
VIEWER = CORPUS / "claude_code" / "claude-code-viewer" / "projects" / "sample-project"


def read(path: Path):
    loss = LossReport()
    return txcodec.to_common(txcodec.load(path), loss), loss


def kinds(loss: LossReport) -> set[str]:
    return {e.kind for e in loss.entries}


def test_the_recordings_are_the_versions_they_claim():
    assert sorted(MAINS) == ["1.0.128", "2.0.0", "2.0.30", "2.0.77", "2.1.100", "2.1.220", "2.1.220-tty", "2.1.251"]
    for name, path in MAINS.items():
        versions = {json.loads(line).get("version") for line in path.read_bytes().splitlines()}
        assert versions - {None} == {name.partition("-")[0]}


def test_record_types_by_version():
    # up to 2.0.0: user and assistant lines only (and summary); queue-operation by 2.0.30
    kinds = {v: {json.loads(line)["type"] for line in p.read_bytes().splitlines()} for v, p in MAINS.items()}
    assert kinds["1.0.128"] == kinds["2.0.0"] == {"user", "assistant"}
    assert kinds["2.0.30"] == kinds["2.0.77"] == {"queue-operation", "user", "assistant"}
    # by 2.1.100: attachment and last-prompt records
    assert kinds["2.1.100"] == {"queue-operation", "user", "assistant", "attachment", "last-prompt"}
    # 2.1.220 in -p mode writes no `mode` record (its permission mode rides on the user record);
    # 2.1.251 adds `atis-latch` after the prompt's attachments
    assert kinds["2.1.220"] == kinds["2.1.100"]
    assert kinds["2.1.251"] == kinds["2.1.100"] | {"atis-latch"}
    # an interactive 2.1.220 run writes the `mode` record first, then a `permission-mode` record at the
    # start and after each change, the AI title, file-history snapshots and system records
    assert kinds["2.1.220-tty"] == kinds["2.1.100"] - {"queue-operation"} | {
        "mode",
        "permission-mode",
        "ai-title",
        "file-history-snapshot",
        "system",
    }


def test_interactive_2_1_220_records_its_mode_and_each_permission_mode():
    records = [json.loads(line) for line in MAINS["2.1.220-tty"].read_bytes().splitlines()]
    assert records[0] == {"type": "mode", "mode": "normal", "sessionId": records[0]["sessionId"]}
    modes = [r["permissionMode"] for r in records if r["type"] == "permission-mode"]
    assert modes == ["bypassPermissions", "auto"]  # started with --dangerously-skip-permissions, then shift+tab
    prompts = [r["permissionMode"] for r in records if r["type"] == "user" and "permissionMode" in r]
    assert prompts == ["bypassPermissions", "auto"]  # each prompt also carries the mode it was typed in
    _, loss = read(MAINS["2.1.220-tty"])
    # bookkeeping with no Common slot: named, and the real-client test shows the resumed request unchanged
    assert {"record:mode", "record:permission-mode", "record:ai-title"} <= kinds(loss)


def test_atis_latch_of_2_1_251_is_named():
    (line,) = [line for line in MAINS["2.1.251"].read_bytes().splitlines() if b'"atis-latch"' in line]
    assert sorted(json.loads(line)) == ["atis", "sessionId", "type"]
    _, loss = read(MAINS["2.1.251"])
    # not carried by Common: the loss report names it (the real-client test shows the resumed request is unchanged)
    assert "record:atis-latch" in kinds(loss)


@pytest.mark.parametrize("version", PLAIN)
def test_native_versions_hold_the_prompt_the_call_and_its_result(version):
    conversation, _ = read(MAINS[version])
    assert conversation.messages[0].content[0].text == "count the files"
    calls = [b for m in conversation.messages for b in m.content if isinstance(b, ToolUse)]
    results = [b for m in conversation.messages for b in m.content if isinstance(b, ToolResult)]
    assert [(c.id, c.name) for c in calls] == [("toolu_bash_1", "Bash")]
    assert [r.tool_use_id for r in results] == ["toolu_bash_1"]
    texts = [b.text for m in conversation.messages if m.role == "assistant" for b in m.content if isinstance(b, Text)]
    assert "There is 1 file." in texts
    assert texts[-1] == ("Second answer." if version.endswith("-tty") else "There is 1 file.")
    for target in ("codex", "gemini_cli"):
        written, _ = txcodec.convert(MAINS[version], target)
        main = written.files[written.main].decode()
        assert "count the files" in main and "toolu_bash_1" in main and "There is 1 file." in main


def test_subagent_folder_with_meta_of_2_1_100():
    conversation, _ = read(MAINS["2.1.100"])
    (child,) = conversation.children
    assert child.link.via == "toolUseResult.agentId" and child.agent_type == "general-purpose"
    assert child.description == "count files"  # from the .meta.json, which names no toolUseId yet
    meta = next((MAINS["2.1.100"].parent / MAINS["2.1.100"].stem / "subagents").glob("*.meta.json"))
    assert json.loads(meta.read_bytes()) == {"agentType": "general-purpose", "description": "count files"}


@pytest.mark.parametrize("path", sorted(VERSIONS.glob("*/*.jsonl")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_file_round_trips_byte_for_byte(path):
    verified = verify_file(path)
    assert verified.ok and verified.harness == "claude_code" and verified.opaque == 0


@pytest.mark.parametrize("version", ["1.0.128", "2.0.0"])
def test_sidechain_records_in_the_main_file_are_a_child(version):
    conversation, loss = read(MAINS[version])
    # the main thread: prompt, Task call, its result, the answer; no subagent record in it
    assert [m.role for m in conversation.messages] == ["user", "assistant", "user", "assistant"]
    texts = [b.text for m in conversation.messages for b in m.content if isinstance(b, Text)]
    assert "Count the files here" not in texts and "sub: counting" not in texts
    call = next(b for b in conversation.messages[1].content if isinstance(b, ToolUse))
    result = next(b for b in conversation.messages[2].content if isinstance(b, ToolResult))
    assert call.name == "Task" and result.tool_use_id == call.id == "toolu_agent_1"
    (child,) = conversation.children
    assert child.link.via == "sidechain.prompt" and child.link.tool_use_id == "toolu_agent_1"
    assert child.agent_type == "general-purpose" and child.description == "count files"
    sub = child.conversation.messages
    assert [m.role for m in sub] == ["user", "assistant", "user", "assistant"]
    assert sub[0].content[0].text == "Count the files here"
    assert any(isinstance(b, ToolUse) and b.name == "Bash" for b in sub[1].content)
    assert "subagent:parentless" not in kinds(loss)


def test_a_sidechain_record_of_a_later_version_is_not_moved(tmp_path):
    # from 2.0.28 a subagent has a file of its own: sidechain records in a main file are not one
    path = tmp_path / MAINS["1.0.128"].name
    path.write_bytes(MAINS["1.0.128"].read_bytes().replace(b'"version":"1.0.128"', b'"version":"2.0.28"'))
    conversation, _ = read(path)
    assert conversation.children == [] and len(conversation.messages) == 8


def test_a_sidechain_file_read_on_its_own_is_its_conversation():
    # every record of a subagent's own file is a sidechain's: it is not moved out of itself
    conversation, _ = read(VERSIONS / "2.0.30" / "agent-aaaa6943.jsonl")
    assert conversation.children == [] and conversation.messages[0].content[0].text == "Count the files here"


@pytest.mark.parametrize("version,agent", [("2.0.30", "aaaa6943"), ("2.0.77", "ae98b1a")])
def test_agent_file_beside_the_session_is_a_child(version, agent):
    conversation, loss = read(MAINS[version])
    (child,) = conversation.children  # the Warmup agents were spawned by no call
    assert child.link.via == "toolUseResult.agentId" and child.link.agent_id == agent
    assert child.link.tool_use_id == "toolu_agent_1"
    assert child.conversation.messages[0].content[0].text == "Count the files here"
    assert "subagent:dangling-agent-id" not in kinds(loss)


def test_agent_file_beside_the_session_is_found_by_its_id_only(tmp_path):
    main = MAINS["2.0.30"]
    (tmp_path / main.name).write_bytes(main.read_bytes())
    conversation, loss = read(tmp_path / main.name)
    assert conversation.children == [] and "subagent:dangling-agent-id" in kinds(loss)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_bytes((main.parent / "agent-aaaa6943.jsonl").read_bytes())
    (tmp_path / "agent-aaaa6943.jsonl").symlink_to(outside)
    conversation, loss = read(tmp_path / main.name)
    assert conversation.children == [] and "side-file:symlink-outside" in kinds(loss)


@pytest.mark.parametrize("version", AGENTS)
def test_converts_to_claude_code_with_the_child_in_subagents(version):
    written, _ = txcodec.convert(MAINS[version], "claude_code")
    main = written.files[written.main].decode()
    users = [v["message"]["content"] for v in map(json.loads, main.splitlines()) if v.get("type") == "user"]
    assert "Tool result missing" not in main and "Count the files here" not in users
    agents = [name for name in written.files if "/subagents/agent-" in name and name.endswith(".jsonl")]
    assert len(agents) == 1 and "Count the files here" in written.files[agents[0]].decode()


def test_corpus_sessions_of_1_0_98_nest_every_task():
    conversation, loss = read(VIEWER / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    calls = [b.id for m in conversation.messages for b in m.content if isinstance(b, ToolUse) and b.name == "Task"]
    assert len(calls) == 5 and sorted(c.link.tool_use_id for c in conversation.children) == sorted(calls)
    assert not any(
        m.content and getattr(m.content[0], "text", "").startswith("Create React") for m in conversation.messages
    )
    # a Task call that failed validation started no sidechain; both others did
    conversation, loss = read(VIEWER / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert len(conversation.children) == 2 and "subagent:parentless" not in kinds(loss)
    written, _ = txcodec.convert(VIEWER / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "claude_code")
    assert "Tool result missing" not in written.files[written.main].decode()
