"""The Claude Code reader's rules, one table row per rule, each quoting its seed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from msgspec import UNSET
from support.paths import SEEDS

from txcodec import api
from txcodec.model.common import Artifact
from txcodec.model.common import Command
from txcodec.model.common import Image
from txcodec.model.common import Text
from txcodec.model.loss import LossReport

SID = "11111111-2222-4333-8444-555555555555"


def u(uuid, content, parent=None, **kw):
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": kw.pop("ts", "2026-01-01T00:00:00Z"),
        "cwd": "/w",
        "gitBranch": "main",
        "version": "2.1.230",
        "message": {"role": "user", "content": content},
        **kw,
    }


def a(uuid, mid, content, parent=None, stop="tool_use", usage=None, model="claude-x", **kw):
    msg = {"role": "assistant", "id": mid, "model": model, "content": content, "stop_reason": stop}
    if usage is not None:
        msg["usage"] = usage
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": kw.pop("ts", "2026-01-01T00:00:01Z"),
        "message": msg,
        **kw,
    }


def tu(i, name="Bash", inp=None):
    return {"type": "tool_use", "id": i, "name": name, "input": inp if inp is not None else {"command": "ls"}}


def tr(i, content="ok", **kw):
    return {"type": "tool_result", "tool_use_id": i, "content": content, **kw}


def U(n, inp=1, out=1):
    return {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def read(records, path: Path | None = None):
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    if path is not None:
        path.write_bytes(data)
        session = api.load(path, "claude_code")
    else:
        session = api.load(data, "claude_code")
    loss = LossReport()
    return api.to_common(session, loss), loss


def shape(conv):
    """Roles and block kinds, e.g. ['user:text', 'assistant:tool_use,tool_use']."""
    return [f"{m.role}:" + ",".join(type(b).__name__ for b in m.content) for m in conv.messages]


# --- rule tables ---------------------------------------------------------------------

RULES = [
    (
        "seed 000 rule 1: Drop duplicate records by (file, uuid) before anything else. ... Keep the first occurrence",
        [
            u("u1", "hi"),
            a("a1", "m1", [tu("t1")]),
            u("r1", [tr("t1", "full output")], toolUseResult={"stdout": "full output"}),
            u("r1", [tr("t1", "full output")], toolUseResult={"stdout": ""}),
        ],
        lambda c, loss: (
            c.messages[2].content[0].structured == {"stdout": "full output"} and loss.counts().get("duplicate") == 1
        ),
    ),
    (
        "seed 000 rule 2: Assemble by (message.id, line order), never by walking parentUuid "
        "... parallel tool dispatch forks it",
        [
            u("u1", "go"),
            a("a1", "m1", [tu("t1")], parent="u1"),
            a("a2", "m1", [tu("t2")], parent="a1"),
            u("r1", [tr("t1")], parent="a1"),
            u("r2", [tr("t2")], parent="a2"),
        ],
        lambda c, loss: shape(c) == ["user:Text", "assistant:ToolUse,ToolUse", "user:ToolResult,ToolResult"],
    ),
    (
        "seed 000: A call's fragments are not contiguous: on 24% of multi-fragment calls "
        "their own tool results sit between them",
        [
            u("u1", "go"),
            a("a1", "m1", [tu("t1")]),
            u("r1", [tr("t1")]),
            a("a2", "m1", [tu("t2")]),
            u("r2", [tr("t2")]),
            a("a3", "m2", [{"type": "text", "text": "done"}], stop="end_turn"),
        ],
        lambda c, loss: (
            shape(c) == ["user:Text", "assistant:ToolUse,ToolUse", "user:ToolResult,ToolResult", "assistant:Text"]
        ),
    ),
    (
        "seed 000 rule 3: Always iterate the full content array ... [image, text], "
        "where reading content[0] renders a base64 image as the user's prompt",
        [
            u(
                "u1",
                [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                    {"type": "text", "text": "what is this"},
                ],
            )
        ],
        lambda c, loss: (
            isinstance(c.messages[0].content[0], Image) and c.messages[0].content[1] == Text("what is this")
        ),
    ),
    (
        "seed 000: Usage: take the last fragment in LINE ORDER. Never sum",
        [
            u("u1", "go"),
            a("a1", "m1", [{"type": "thinking", "thinking": "", "signature": "s"}], stop=None, usage=U(0, 5, 1)),
            a("a2", "m1", [{"type": "text", "text": "x"}], stop="end_turn", usage=U(0, 5, 40)),
        ],
        lambda c, loss: c.messages[1].usage.output_tokens == 40 and c.messages[1].usage.input_tokens == 5,
    ),
    (
        "seed 000: Usage availability is gated on stop_reason, never on the field being present",
        [u("u1", "go"), a("a1", "m1", [{"type": "text", "text": "x"}], stop=None, usage=U(0, 5, 3))],
        lambda c, loss: c.messages[1].usage is UNSET and c.messages[1].stop_reason is None,
    ),
    (
        "seed 000: About 10% of calls never report a stop_reason ... Their usage block is present and wrong "
        "— an output count of one to five, a streaming stub"
        " (kept apart as usage_unverified, never as the call's usage: "
        "clients before 2.1.220 wrote null on nearly every fragment)",
        [
            u("u1", "go"),
            a("a1", "m1", [{"type": "text", "text": "x"}], stop=None, usage=U(0, 5, 1)),
            a("a2", "m1", [tu("t1")], stop=None, usage=U(0, 5, 3)),
        ],
        lambda c, loss: (
            c.messages[1].usage is UNSET
            and c.messages[1].usage_unverified.output_tokens == 3
            and c.messages[1].usage_unverified.input_tokens == 5
        ),
    ),
    (
        "seed 003: Slash-command markup has appeared on user lines (older CLIs) "
        "... only a body that is entirely envelope markup counts",
        [
            u(
                "c1",
                "<command-message>init is analyzing your codebase…</command-message>\n"
                "<command-name>/init</command-name>",
            ),
            u("c2", "<local-command-stdout>\u001b[2mdone\u001b[22m</local-command-stdout>", parent="c1"),
            u("c3", [{"type": "text", "text": "<command-name>/x</command-name>"}]),
        ],
        lambda c, loss: (
            # the older layout (message first, no args) is kept for the writer: envelopes are bijective
            c.messages[0].content
            == [
                Command(
                    name="/init",
                    message="init is analyzing your codebase…",
                    output="done",
                    envelope="<command-message>init is analyzing your codebase…</command-message>\n"
                    "<command-name>/init</command-name>",
                )
            ]
            and c.messages[0].source_ids == ["c1", "c2"]
            and shape(c)[1] == "user:Text"
        ),
    ),
    (
        "seed 000: toolUseResult is not always an object. On roughly 7% of results it is a bare string "
        "... shape-checked before any field access",
        [
            u("u1", "go"),
            a("a1", "m1", [tu("t1")]),
            u("r1", [tr("t1", "Error: x", is_error=True)], toolUseResult="Error: x"),
        ],
        lambda c, loss: c.messages[2].content[0].structured == "Error: x" and c.messages[2].content[0].is_error is True,
    ),
    (
        "seed 000: Absence of is_error does not mean success",
        [u("u1", "go"), a("a1", "m1", [tu("t1", "Read", {"file_path": "/x"})]), u("r1", [tr("t1")])],
        lambda c, loss: c.messages[2].content[0].is_error is None,
    ),
    (
        "seed 000: origin ... sits on the record and also on attachment.origin ... Its value is an open set",
        [
            {
                "type": "attachment",
                "uuid": "at1",
                "attachment": {"type": "queued_command", "prompt": "p", "origin": {"kind": "peer"}},
            },
            u("u1", "hello"),
            u("u2", "again", origin={"kind": "coordinator"}),
        ],
        # the attachment itself is kept as context, in a meta message of its own
        lambda c, loss: (
            [m.origin for m in c.messages if not m.meta] == ["peer", "coordinator"]
            and c.messages[0].content[0].kind == "queued_command"
        ),
    ),
    (
        "seed 003: only a body that is entirely envelope markup counts "
        "— a message that merely quotes the tags stays plain text",
        [u("u1", "see <command-name>/x</command-name>")],
        lambda c, loss: shape(c) == ["user:Text"],
    ),
    (
        "seed 003: <command-name> markup | Slash command the user ran ... <local-command-stdout> markup | "
        "What the command printed | Block::ToolResult paired via parentUuid ... unescapes on parse; "
        "ANSI escapes are stripped from command stdout",
        # the <local-command-caveat> (docs/claude_code.md#slash-commands) is kept on the
        # command's message: 2.1.332 resends it as recorded, and its wording changed
        [
            u("c0", "<local-command-caveat>Caveat: x</local-command-caveat>", isMeta=True),
            {
                "type": "system",
                "subtype": "local_command",
                "uuid": "c1",
                "parentUuid": "c0",
                "content": "<command-name>/model</command-name>\n            "
                "<command-message>model</command-message>\n            "
                "<command-args></command-args>",
            },
            {
                "type": "system",
                "subtype": "local_command",
                "uuid": "c2",
                "parentUuid": "c1",
                "content": "<local-command-stdout>Kept \u001b[1mDefault\u001b[22m <\\/x></local-command-stdout>",
            },
        ],
        lambda c, loss: (
            c.messages[0].content == [Command(name="/model", args="", message="model", output="Kept Default </x>")]
            and c.messages[0].extra.get("caveat") == "Caveat: x"
            and "envelope:caveat" not in loss.counts()
        ),
    ),
    (
        "seed 003: Title precedence is custom-title > agent-name > first summary; (custom-title wins)",
        [
            {"type": "summary", "summary": "S1", "leafUuid": "u1"},
            {"type": "summary", "summary": "S2", "leafUuid": "u1"},
            {"type": "agent-name", "agentName": "A"},
            {"type": "custom-title", "customTitle": "C"},
            u("u1", "x"),
        ],
        lambda c, loss: c.meta.title == "C",
    ),
    (
        "seed 003: Title precedence is custom-title > agent-name > first summary (no custom-title: agent-name)",
        [
            {"type": "summary", "summary": "S1", "leafUuid": "u1"},
            {"type": "summary", "summary": "S2"},
            {"type": "agent-name", "agentName": "A"},
        ],
        lambda c, loss: c.meta.title == "A",
    ),
    (
        "seed 003: Title precedence is custom-title > agent-name > first summary (summaries only: the first)",
        [{"type": "summary", "summary": "S1", "leafUuid": "u1"}, {"type": "summary", "summary": "S2"}],
        lambda c, loss: c.meta.title == "S1",
    ),
    (
        "seed 000: The boundary's uuid is the parentUuid of the immediately following isCompactSummary:true record "
        "... Never order an epoch boundary by timestamp "
        "... Both those entries and logicalParentUuid must be typed unresolved-capable",
        [
            u("u1", "x", ts="2026-01-01T00:00:05Z"),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "b1",
                "parentUuid": None,
                "logicalParentUuid": "nowhere",
                "timestamp": "2026-01-01T00:00:10Z",
                "compactMetadata": {"trigger": "auto", "preTokens": 9, "preservedMessages": {"allUuids": ["ghost"]}},
            },
            u("s1", "summary", parent="b1", isCompactSummary=True, ts="2026-01-01T00:00:09Z"),
        ],
        lambda c, loss: (
            c.epochs[0].start == 1
            and c.epochs[0].boundary_id == "b1"
            and c.epochs[0].logical_parent_id == "nowhere"
            and c.epochs[0].preserved_ids == ["ghost"]
            and c.messages[1].compact_summary
        ),
    ),
    (
        'seed 000: message.synthetic | message.model == "<synthetic>" ... seed 004: Assistant-level errors | '
        "Aborted mid-stream or truncated; API error record | "
        ".isAbortedMidStream==true or .truncatedAfterOutput==true; .isApiErrorMessage==true",
        [
            u("u1", "x"),
            a(
                "a1",
                "m1",
                [{"type": "text", "text": "API Error: 500"}],
                model="<synthetic>",
                stop="stop_sequence",
                isApiErrorMessage=True,
            ),
        ],
        lambda c, loss: c.messages[1].synthetic and c.messages[1].api_error and c.meta.models == [],
    ),
    (
        "seed 000: control.interrupt | [Request interrupted by user] ... seed 004: toolDenialKind | "
        'top level on user records | 48 occurrences, sole value "user-rejected"',
        [
            u("u1", "x"),
            a("a1", "m1", [tu("t1")]),
            u("r1", [tr("t1", "The user doesn't want to proceed", is_error=True)], toolDenialKind="user-rejected"),
            u("u2", [{"type": "text", "text": "[Request interrupted by user]"}]),
        ],
        lambda c, loss: c.messages[2].extra["tool_denial_kind"] == "user-rejected" and c.messages[3].interrupted,
    ),
    (
        "seed 004 s9: resolution must tolerate a missing file",
        [
            u("u1", "x"),
            a("a1", "m1", [tu("t1")]),
            u(
                "r1",
                [tr("t1", "<persisted-output>\nFull output saved to: /p/tool-results/abc.txt\n</persisted-output>")],
                toolUseResult={"stdout": "", "persistedOutputPath": "/p/tool-results/abc.txt"},
            ),
        ],
        lambda c, loss: (
            c.messages[2].content[0].persisted_output is UNSET and loss.counts().get("persisted-output:missing") == 1
        ),
    ),
    (
        "seed 003: Claude Code records a published local file as an Artifact tool call "
        "with file_path and description, followed by its tool result",
        [
            u("u1", "x"),
            a("a1", "m1", [tu("t1", "Artifact", {"file_path": "/w/r.html", "description": "report"})]),
            u("r1", [tr("t1", "published")], toolUseResult={"artifact_id": "x"}),
        ],
        lambda c, loss: (
            c.messages[1].content == [Artifact(path="/w/r.html", description="report")] and len(c.messages) == 2
        ),
    ),
    (
        "seed 004: a reader must tolerate unknown top-level type values rather than failing or dropping the file",
        [{"type": "brand-new", "x": 1}, u("u1", "x"), "not json at all"],
        lambda c, loss: shape(c) == ["user:Text"] and loss.counts().get("opaque") == 2,
    ),
]


def _seed_text() -> str:
    text = " ".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt")))
    return " ".join(text.replace("`", "").replace("*", "").split())


def _fragments(quote: str) -> list[str]:
    """The quoted seed text of a row: after each ``seed NNN...:`` label, split on `` ... ``;
    a trailing ``(...)`` is our note, not the seed's."""
    out = []
    for part in re.split(r"seed \d{3}[^:]*: ", quote)[1:]:
        part = re.sub(r"\s*\([^()]*\)$", "", part.strip()).removesuffix("...")
        out.extend(f.strip(" ;") for f in part.split(" ... ") if f.strip(" ;"))
    return out


@pytest.mark.parametrize("quote", [r[0] for r in RULES], ids=[r[0][:60] for r in RULES])
def test_quote_is_the_seeds_own_words(quote):
    seeds = _seed_text()
    fragments = _fragments(quote)
    assert fragments
    for fragment in fragments:
        assert " ".join(fragment.split()) in seeds, fragment


@pytest.mark.parametrize("quote, records, check", RULES, ids=[r[0][:60] for r in RULES])
def test_rule(quote, records, check):
    data = b"".join((json.dumps(r).encode() if isinstance(r, dict) else r.encode()) + b"\n" for r in records)
    loss = LossReport()
    conv = api.to_common(api.load(data, "claude_code"), loss)
    assert check(conv, loss), (quote, shape(conv), loss.counts())


def test_meta():
    conv, _ = read(
        [
            u("u1", "x", ts="2026-01-01T00:00:05Z"),
            a("a1", "m1", [{"type": "text", "text": "y"}], stop="end_turn", ts="2026-01-01T00:00:02Z"),
            a(
                "a2",
                "m2",
                [{"type": "text", "text": "z"}],
                stop="end_turn",
                model="claude-y",
                ts="2026-01-01T00:00:09Z",
            ),
        ]
    )
    m = conv.meta
    assert (m.id, m.cwd, m.git_branch, m.client_version, m.models, m.started_at, m.ended_at, m.source_harness) == (
        SID,
        "/w",
        "main",
        "2.1.230",
        ["claude-x", "claude-y"],
        "2026-01-01T00:00:02Z",
        "2026-01-01T00:00:09Z",
        "claude_code",
    )


def test_persisted_output_resolved(tmp_path):
    project = tmp_path / "proj"
    (project / SID / "tool-results").mkdir(parents=True)
    (project / SID / "tool-results" / "abc.txt").write_text("the whole output")
    conv, loss = read(
        [
            u("u1", "x"),
            a("a1", "m1", [tu("t1")]),
            u(
                "r1",
                [tr("t1", "<persisted-output>\nFull output saved to: /p/tool-results/abc.txt\n</persisted-output>")],
            ),
        ],
        project / f"{SID}.jsonl",
    )
    assert conv.messages[2].content[0].persisted_output == "the whole output"
    assert "persisted-output:missing" not in loss.counts()


def _agent(folder: Path, agent_id: str, meta: dict | None, records: list) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"agent-{agent_id}.jsonl").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    if meta is not None:
        (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta))


def test_subagents(tmp_path):
    """docs/claude_code_reader.md#subagents: meta.toolUseId, toolUseResult.agentId, parentAgentId nesting
    (spawnDepth defaults to 1), workflow journal; a child with no parent at all is recorded, not asserted."""
    project = tmp_path / "proj"
    sub = project / SID / "subagents"
    main = [
        u("u1", "x"),
        a(
            "a1",
            "m1",
            [tu("t1", "Agent", {"prompt": "p"}), tu("t2", "Agent", {"prompt": "q"}), tu("t3", "Workflow", {})],
        ),
        u("r1", [tr("t1")], toolUseResult={"agentId": "a1", "status": "async_launched"}),
        u("r2", [tr("t2")], toolUseResult={"agentId": "a2", "status": "completed"}),
        u("r3", [tr("t3")], toolUseResult={"runId": "wf_1", "status": "async_launched"}),
        a("a2", "m2", [tu("t9", "Agent", {"prompt": "r"})]),
        u("r9", [tr("t9")], toolUseResult={"agentId": "gone", "status": "async_launched"}),
    ]
    child = [
        u("c1", "task", isSidechain=True, agentId="a1"),
        a("c2", "cm", [tu("n1", "Agent", {"prompt": "deeper"})], isSidechain=True),
        u("c3", [tr("n1")], isSidechain=True),
    ]
    _agent(sub, "a1", {"agentType": "general-purpose", "spawnDepth": 1, "toolUseId": "t1"}, child)
    _agent(sub, "a2", {"agentType": "Explore"}, [u("d1", "task2", isSidechain=True)])
    _agent(
        sub,
        "a3",
        {"agentType": "x", "spawnDepth": 2, "parentAgentId": "a1", "toolUseId": "n1"},
        [u("e1", "nested", isSidechain=True)],
    )
    _agent(sub, "a4", None, [u("f1", "orphan", isSidechain=True)])
    _agent(sub / "workflows" / "wf_1", "w1", {"agentType": "workflow-subagent"}, [u("g1", "wf", isSidechain=True)])
    (sub / "workflows" / "wf_1" / "journal.jsonl").write_text(
        '{"type":"started","key":"k","agentId":"w1"}\n{"type":"started","key":"k2","agentId":"w2"}\n'
    )
    conv, loss = read(main, project / f"{SID}.jsonl")
    links = {c.link.agent_id: c for c in conv.children}
    assert set(links) == {"a1", "a2", "a4", "w1"}
    assert (
        links["a1"].link.via == "meta.toolUseId"
        and links["a1"].link.tool_use_id == "t1"
        and links["a1"].link.status == "async_launched"
    )
    assert (
        links["a2"].link.via == "toolUseResult.agentId"
        and links["a2"].link.status == "completed"
        and links["a2"].spawn_depth == 1
    )
    assert (
        links["w1"].link.via == "journal"
        and links["w1"].link.tool_use_id == "t3"
        and links["w1"].link.workflow_run == "wf_1"
    )
    assert links["a4"].link.via == "none"
    nested = links["a1"].conversation.children
    assert [(c.link.agent_id, c.link.parent_agent_id, c.spawn_depth) for c in nested] == [("a3", "a1", 2)]
    counts = loss.counts()
    assert counts["subagent:parentless"] == 1
    assert counts["subagent:dangling-agent-id"] == 1
    assert counts["subagent:journal-without-transcript"] == 1


def test_envelope_fields_without_a_common_slot_are_counted_with_their_lines():
    # issue 3: the loss report counts "fields without a slot" by kind, with line numbers
    conv, loss = read(
        [
            u("u1", "hi", promptId="p1", userType="external", entrypoint="cli"),
            a("a1", "m1", [{"type": "text", "text": "ok"}], parent="u1", stop="end_turn", requestId="req_1"),
        ]
    )
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert loss.lines("field:promptId") == [1]
    assert loss.lines("field:userType") == [1]
    assert loss.lines("field:requestId") == [2]
    assert loss.lines("field:uuid") == [] and loss.lines("field:sessionId") == []  # carried
