"""The classes of resume differences found on fresh genuine sessions (issue 11), each on
the scenario session that shows it (``tests/support/scenarios/``, recorded from the real CLIs).
These check the written files; ``tests/features/test_scenarios.py`` resumes them with the real
clients."""

from __future__ import annotations

import json

import pytest
from support.scenarios import recorded

from txcodec import api
from txcodec.harnesses.claude_code.envelopes import CAVEAT_TEXT
from txcodec.kit import registry
from txcodec.kit.changes import to_json
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import RedactedThinking
from txcodec.model.common_json import from_json
from txcodec.model.loss import LossReport


def scenario(harness: str, name: str):
    found = [s for s in recorded(harness) if s.name == name]
    if not found:
        pytest.fail(f"{harness}/{name} is not recorded: python tests/support/scenarios {name}")
    return found[0]


def read(harness: str, name: str):
    loss = LossReport()
    found = scenario(harness, name)
    session = api.load(found.main, harness)
    if harness == "stream_json":  # the prompts were given on argv: not in the capture
        session.prompts = list(found.prompts)
    return api.to_common(session, loss), loss


def write(conversation, target: str):
    loss = LossReport()
    written = registry.get(target).write(conversation, loss, WriteOptions())
    return [json.loads(line) for line in written.files[written.main].splitlines() if line.strip()], loss


# 1. redacted thinking --------------------------------------------------------------------


@pytest.mark.parametrize("harness", ["claude_code", "stream_json"])
def test_redacted_thinking_is_a_common_block_and_goes_back_to_claude(harness):
    conversation, _ = read(harness, "redacted_thinking")
    blocks = [b for m in conversation.messages for b in m.content if isinstance(b, RedactedThinking)]
    assert len(blocks) == 1 and blocks[0].data.startswith("EmwK")
    assert from_json(to_json(conversation)) == conversation
    lines, loss = write(conversation, "claude_code")
    content = [b for v in lines if v.get("type") == "assistant" for b in v["message"]["content"]]
    assert {"type": "redacted_thinking", "data": blocks[0].data} in content
    assert "write:thinking-without-signature" not in loss.counts()


def test_every_writer_handles_redacted_thinking():
    conversation, _ = read("claude_code", "redacted_thinking")
    data = next(b.data for m in conversation.messages for b in m.content if isinstance(b, RedactedThinking))
    codex, _ = write(conversation, "codex")
    assert any(
        v["payload"].get("type") == "reasoning" and v["payload"].get("encrypted_content") == data
        for v in codex
        if v["type"] == "response_item"
    )
    pi, _ = write(conversation, "pi")
    assert any(
        p == {"type": "thinking", "thinking": "", "thinkingSignature": data, "redacted": True}
        for v in pi
        if v.get("type") == "message"
        for p in v["message"].get("content") or []
        if isinstance(p, dict)
    )
    back = api.to_common(api.load(b"\n".join(json.dumps(v).encode() for v in pi) + b"\n", "pi"))
    assert any(isinstance(b, RedactedThinking) and b.data == data for m in back.messages for b in m.content)
    for target in ("gemini_cli", "qwen_code"):
        _, loss = write(conversation, target)
        assert loss.counts().get("write:redacted-thinking") == 1, target
    sj, _ = write(conversation, "stream_json")
    assert any(
        b == {"type": "redacted_thinking", "data": data}
        for v in sj
        if v.get("type") == "assistant"
        for b in v["message"]["content"]
    )


# 2. the local-command caveat ---------------------------------------------------------------


def _caveats(lines):
    return [
        v["message"]["content"]
        for v in lines
        if v.get("type") == "user" and v.get("isMeta") and "local-command-caveat" in str(v["message"]["content"])
    ]


def test_the_source_caveat_is_kept_and_a_made_up_one_has_the_written_versions_wording():
    conversation, _ = read("claude_code", "local_commands")
    source = _caveats(scenario("claude_code", "local_commands").lines())
    lines, _ = write(conversation, "claude_code")
    assert _caveats(lines) == source and len(source) == 2
    for m in conversation.messages:
        m.extra.pop("caveat", None)
    lines, _ = write(conversation, "claude_code")
    assert _caveats(lines) and all(CAVEAT_TEXT in c for c in _caveats(lines))
    assert all(CAVEAT_TEXT in c for c in source)  # 2.1.332's own wording (the scenario pins it)


# 3. Codex -> Codex ------------------------------------------------------------------------


def test_codex_summary_parts_and_annotations_come_back():
    s = scenario("codex", "reasoning_summaries")
    conversation, _ = read("codex", "reasoning_summaries")
    lines, _ = write(conversation, "codex")

    # what the model is sent: not the item ids, statuses or the client's own turn metadata
    # (codex sends none of them back; tests/features/test_scenarios.py compares what it sends)
    def items(values, kind):
        return [
            {
                k: v
                for k, v in line["payload"].items()
                if k not in ("id", "status", "internal_chat_message_metadata_passthrough")
            }
            for line in values
            if line.get("type") == "response_item" and line["payload"].get("type") == kind
        ]

    for kind in ("reasoning", "message"):
        assert items(lines, kind) == items(s.lines(), kind), kind
    assert any(len(i["summary"]) == 2 for i in items(lines, "reasoning"))


# 4. Claude -> Codex compaction ----------------------------------------------------------------


def test_claude_compaction_preserved_messages_go_into_codex_replacement_history():
    conversation, _ = read("claude_code", "manual_compact")
    (epoch,) = conversation.epochs
    assert epoch.preserved_ids
    preserved = [m for m in conversation.messages[: epoch.start] if set(epoch.preserved_ids) & set(m.source_ids)]
    lines, _ = write(conversation, "codex")
    (compacted,) = [v for v in lines if v["type"] == "compacted"]
    history = compacted["payload"]["replacement_history"]
    texts = [p.get("text") for item in history for p in item.get("content") or []]
    assert texts[0] == conversation.messages[epoch.start].content[0].text  # the summary first
    for m in preserved:
        for b in m.content:
            if getattr(b, "text", None):
                assert b.text in texts


# 5. a stream-json background task ---------------------------------------------------------------


def test_a_background_task_notification_turn_keeps_the_final_text_once_and_its_prompt():
    """The capture prints a second init for the notification's turn and both result lines
    at the end; the final text is there once, and the <task-notification> prompt is the
    one the CLI wrote in its own session file of the same run."""
    found = scenario("stream_json", "background_subagent")
    conversation, loss = read("stream_json", "background_subagent")
    texts = [b.text for m in conversation.messages for b in m.content if m.role == "assistant" and hasattr(b, "text")]
    assert texts.count("The background agent reports 1 file.") == 1
    assert not any(m.extra.get("missing_prompt") for m in conversation.messages)
    (ours,) = [m for m in conversation.messages if m.origin == "task-notification"]
    own = [
        json.loads(raw)
        for raw in (found.folder / json.loads((found.folder / "scenario.json").read_text())["cli_session"])
        .read_bytes()
        .splitlines()
    ]
    (theirs,) = [
        v["message"]["content"]
        for v in own
        if v.get("type") == "user" and (v.get("origin") or {}).get("kind") == "task-notification"
    ]
    assert ours.content[0].text == theirs
    assert loss.counts()["stream:task-notification-rebuilt"] == 1
    lines, _ = write(conversation, "claude_code")
    assert [(v.get("origin") or {}).get("kind") for v in lines if v.get("type") == "user"].count(
        "task-notification"
    ) == 1


@pytest.mark.real_client
def test_codex_sends_the_item_metadata_to_the_openai_provider_only(tmp_path):
    """Why the scenario comparison leaves ``internal_chat_message_metadata_passthrough``
    out: the original (recorded under the built-in openai provider) is resumed with it,
    our file (which names no provider) under a custom one without it."""
    from support.scenarios.views import PASSTHROUGH
    from support.scenarios.views import check_resume

    found = scenario("codex", "remote_compact")
    conversation, _ = read("codex", "remote_compact")
    written = registry.get("codex").write(conversation, LossReport(), WriteOptions())
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(written.files[written.main])

    def keyed(report):
        assert report.resumed, report.stderr[-800:]
        return any(PASSTHROUGH in item for item in report.raw_input if isinstance(item, dict))

    assert keyed(check_resume("codex", found.main))
    assert not keyed(check_resume("codex", path))


# 6. Qwen parallel results ---------------------------------------------------------------------


def test_qwen_results_in_records_of_their_own_are_all_kept():
    conversation, _ = read("qwen_code", "parallel_results")
    lines, loss = write(conversation, "qwen_code")
    responses = [p["functionResponse"] for v in lines if v["type"] == "tool_result" for p in v["message"]["parts"]]
    assert sorted(r["id"] for r in responses) == ["call_par_1", "call_par_2"]
    assert not {"write:synthetic-result", "write:orphan-result"} & set(loss.counts())


# 8. lone surrogates -----------------------------------------------------------------------------


def test_a_lone_surrogate_is_declared():
    s = scenario("claude_code", "hostile_strings")
    assert b"\\ud83d" in s.main.read_bytes()
    conversation, loss = read("claude_code", "hostile_strings")
    lines = [
        n
        for n, raw in enumerate(s.main.read_bytes().split(b"\n"), 1)
        if b"\\ud83d" in raw and b"\\ud83d\\ude" not in raw
    ]
    assert loss.lines("text:lone-surrogate") == lines
    assert "\ufffd" in to_json(conversation).decode()


# 7. Codex usage counts compaction calls -------------------------------------------------------


@pytest.mark.real_client  # runs the pinned ccusage
def test_codex_usage_counts_compaction_calls_like_ccusage(tmp_path):
    """Three turns and two local compactions: five model calls. ``txcodec usage`` and the
    real ccusage agree on the tokens."""
    import os
    import subprocess

    from txcodec.resume_check.report import find_client
    from txcodec.usage import session_usage

    s = scenario("codex", "auto_compact")
    conversation, _ = read("codex", "auto_compact")
    (row,) = session_usage(conversation)
    compactions = sum(1 for line in s.lines() if line.get("type") == "compacted")
    turns = sum(1 for m in conversation.messages if m.role == "assistant" and not m.synthetic)
    assert compactions == 2 and row.calls == turns + compactions == 5
    ccusage = find_client("ccusage")
    assert ccusage is not None, "ccusage is pinned in clients/package.json"
    folder = tmp_path / "sessions" / "2026" / "12" / "01"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-01T00-00-00-{conversation.meta.id}.jsonl").write_bytes(s.main.read_bytes())
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path)}
    done = subprocess.run(
        [str(ccusage), "codex", "session", "--json", "--offline"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-1000:]
    totals = json.loads(done.stdout)["totals"]
    assert row.total_tokens == totals["totalTokens"] and row.input_tokens == totals["inputTokens"]


# Claude's Agent/Task calls in Codex ---------------------------------------------------------


@pytest.mark.real_client
def test_codex_offers_subagents_only_as_its_multi_agent_namespace():
    """What docs/mapping.md says a Claude Agent call becomes in Codex rests on the tool
    list codex 0.171.0 sends: no Agent or Task tool; sub-agents are the functions of the
    ``multi_agent_v1`` namespace."""
    from txcodec.resume_check.codex import Sandbox
    from txcodec.resume_check.mock import responses as r

    with Sandbox() as box:
        run = box.run(["hi"], [[r.text("ok")]], timeout=120)
        tools = run.requests[0].json()["tools"]
    names = {t.get("name") for t in tools}
    assert not {"Agent", "Task"} & names
    (namespace,) = [t for t in tools if t.get("name") == "multi_agent_v1"]
    assert {"spawn_agent", "send_input", "wait_agent", "close_agent"} <= {t["name"] for t in namespace["tools"]}
    conversation, _ = read("claude_code", "foreground_subagent")
    lines, loss = write(conversation, "codex")
    calls = [
        v["payload"] for v in lines if v["type"] == "response_item" and v["payload"].get("type") == "function_call"
    ]
    assert any(c["name"] == "Agent" for c in calls) and "write:tool-unmapped" in loss.counts()
