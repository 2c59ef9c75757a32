"""The Claude Code writer without the real client: bytes, chain shape, loss entries,
the strict mock's rules, and hypothesis properties."""

from __future__ import annotations

import json
import uuid

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.paths import GOLDEN

from txcodec import api
from txcodec.harnesses.claude_code.envelopes import parse_envelope
from txcodec.harnesses.claude_code.write import NAMESPACE
from txcodec.harnesses.claude_code.write import write
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Artifact
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Command
from txcodec.model.common import Conversation
from txcodec.model.common import Epoch
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.resume_check.mock.anthropic import violations

ENVELOPE = ("sessionId", "timestamp", "cwd", "gitBranch", "version", "isSidechain", "userType", "entrypoint")


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]


def _conv(**kw) -> Conversation:
    return Conversation(
        meta=Meta(id="s", title="T", cwd="/tmp/p q"),
        messages=[
            Message("user", [Text("hi")]),
            Message(
                "assistant",
                [Text("two"), ToolUse("t1", "Bash", {"command": "a"}), ToolUse("t2", "Bash", {"command": "b"})],
            ),
            Message("user", [ToolResult("t1", "A"), ToolResult("t2", "B")]),
            Message("assistant", [Text("done")]),
        ],
        **kw,
    )


def test_same_input_same_bytes_and_uuid5_ids():
    a = write(_conv(), LossReport(), WriteOptions())
    b = write(_conv(), LossReport(), WriteOptions())
    assert a.files == b.files
    assert a.main == f"-tmp-p-q/{a.session_id}.jsonl"
    for line in _lines(a.files[a.main]):
        if "uuid" in line:
            assert uuid.UUID(line["uuid"]).version == 5
    assert uuid.UUID(a.session_id) == uuid.uuid5(NAMESPACE, "session:s")


def test_chain_shape_matches_the_cli():
    w = write(_conv(), LossReport(), WriteOptions())
    lines = _lines(w.files[w.main])
    convo = [l for l in lines if l["type"] in ("user", "assistant")]
    for line in convo:
        assert all(k in line for k in ENVELOPE)
    by_call = {
        l["message"]["content"][0]["id"]: l["uuid"]
        for l in convo
        if l["type"] == "assistant" and l["message"]["content"][0]["type"] == "tool_use"
    }
    results = [l for l in convo if l["type"] == "user" and isinstance(l["message"]["content"], list)]
    assert [r["parentUuid"] for r in results] == [by_call["t1"], by_call["t2"]]
    assert convo[-1]["parentUuid"] == results[-1]["uuid"]  # the next assistant hangs off the last result
    ids = {l["message"]["id"] for l in convo if l["type"] == "assistant"}
    assert len(ids) == 2  # one message id per assistant message, shared by its block records
    assert lines[0] == {"type": "summary", "summary": "T", "leafUuid": convo[-1]["uuid"]}
    assert lines[-2]["type"] == "custom-title" and lines[-1]["type"] == "last-prompt"
    assert lines[-1]["leafUuid"] == convo[-1]["uuid"]


def test_api_fixes_are_declared():
    c = Conversation(
        messages=[
            Message("user", [Text("x")]),
            Message("assistant", [ToolUse("t", "apply_patch", "raw"), ToolUse("u", "Bash", None)]),
            Message("user", [ToolResult("t", [ToolUse("z", "n", {})])]),
        ]
    )
    loss = LossReport()
    w = write(c, loss, WriteOptions())
    assert loss.counts() == {"write:missing-tool-result": 1, "write:result-part-as-text": 1, "write:wrapped-input": 2}
    inputs = [l["message"]["content"][0]["input"] for l in _lines(w.files[w.main]) if l["type"] == "assistant"]
    assert inputs == [{"input": "raw"}, {"input": None}]


def test_artifact_bytes_stay_beneath_the_session_folder():
    c = Conversation(
        messages=[Message("user", [Text("x")]), Message("assistant", [Artifact("../../../etc/passwd", data="aGk=")])]
    )
    w = write(c, LossReport(), WriteOptions(cwd="/w"))
    extra = [p for p in w.files if p != w.main]
    assert extra == [f"-w/{w.session_id}/artifacts/001-passwd"] and w.files[extra[0]] == b"hi"


def test_compaction_and_subagents():
    child = Child(
        ChildLink("meta.toolUseId", tool_use_id="t1", agent_id="a0123456789abcdef"), _conv(), agent_type="Explore"
    )
    c = _conv(epochs=[Epoch(start=2, trigger="auto")], children=[child])
    c.messages[2:2] = [Message("user", [Text("summary")], compact_summary=True)]
    c.epochs[0].start = 2
    w = write(c, LossReport(), WriteOptions())
    lines = _lines(w.files[w.main])
    boundary = next(l for l in lines if l.get("subtype") == "compact_boundary")
    summary = next(l for l in lines if l.get("isCompactSummary"))
    assert boundary["parentUuid"] is None and summary["parentUuid"] == boundary["uuid"]
    base = f"-tmp-p-q/{w.session_id}/subagents/agent-a0123456789abcdef"
    assert list(w.files)[1:] == [f"{base}.jsonl", f"{base}.meta.json"]
    assert all(
        l["isSidechain"] and l["agentId"] == "a0123456789abcdef"
        for l in _lines(w.files[f"{base}.jsonl"])
        if "uuid" in l
    )
    assert json.loads(w.files[f"{base}.meta.json"])["toolUseId"] == "t1"


def test_strict_mock_rules():
    ok = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "r"}]}],
            },
        ]
    }
    assert violations(ok) == []
    bad_input = json.loads(json.dumps(ok))
    bad_input["messages"][1]["content"][0]["input"] = "s"
    assert any("valid dictionary" in v for v in violations(bad_input))
    unpaired = {"messages": ok["messages"][:2] + [{"role": "user", "content": "x"}]}
    assert any("without tool_result" in v for v in violations(unpaired))
    bad_content = json.loads(json.dumps(ok))
    bad_content["messages"][2]["content"][0]["content"] = [{"a": 1}]
    assert violations(bad_content)
    assert violations({"messages": [{"role": "user", "content": [{"type": "mystery"}]}]})
    assert violations(
        {
            "messages": [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]},
            ]
        }
    )


_text = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["</local-command-stdout>", "<\\/x>", "<\\\\/", "</command-name>"]
)


@settings(max_examples=60, deadline=None)
@given(name=_text, args=_text, out=_text)
def test_hostile_command_payloads_survive(name, args, out):
    c = Conversation(messages=[Message("user", [Command("/" + name, args=args, output=out)])])
    w = write(c, LossReport(), WriteOptions())
    bodies = [l["content"] for l in _lines(w.files[w.main]) if l.get("subtype") == "local_command"]
    command, output = parse_envelope(bodies[0]), parse_envelope(bodies[1])
    assert command.get("command-name") == "/" + name and command.get("command-args") == args
    assert output.get("local-command-stdout") == out


_block = st.one_of(
    st.builds(Text, _text),
    st.builds(
        ToolUse,
        st.sampled_from(["t1", "t2"]),
        st.text(max_size=5),
        st.none() | st.dictionaries(st.text(max_size=3), st.integers()) | _text,
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.lists(_block, max_size=3)), max_size=6))
def test_written_twice_identical_and_api_valid(messages):
    c = Conversation(messages=[Message(r, b) for r, b in messages])
    a, b = write(c, LossReport(), WriteOptions()), write(c, LossReport(), WriteOptions())
    assert a.files == b.files
    # the records, merged the way the client does, make a request the API accepts
    merged: list[dict] = []
    for line in _lines(a.files[a.main]):
        if line.get("type") not in ("user", "assistant"):
            continue
        content = line["message"]["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        # the client drops whitespace-only text blocks before sending (observed, 2.1.332)
        content = [b for b in content if b.get("type") != "text" or b["text"].strip()]
        if not content:  # and with them a message left empty
            continue
        if merged and merged[-1]["role"] == line["type"]:
            merged[-1]["content"].extend(content)
        else:
            merged.append({"role": line["type"], "content": list(content)})
    if merged:
        assert [v for v in violations({"messages": merged}) if "tool_use ids must be unique" not in v] == []


def test_a_direct_subagent_keeps_its_id_over_a_deeper_repeat():
    """Siblings claim their ids before their own children do (found by hypothesis)."""
    grandchild = Child(ChildLink("meta.toolUseId", agent_id="a0000000000000000"), _conv(), spawn_depth=2)
    first = Child(ChildLink("meta.toolUseId", agent_id="a0000000000000001"), _conv(children=[grandchild]))
    second = Child(ChildLink("meta.toolUseId", agent_id="a0000000000000000"), _conv())
    loss = LossReport()
    w = write(_conv(children=[first, second]), loss, WriteOptions())
    metas = {
        rel.rsplit("agent-", 1)[1]: json.loads(data) for rel, data in w.files.items() if rel.endswith(".meta.json")
    }
    assert "parentAgentId" not in metas["a0000000000000000.meta.json"]  # the direct child kept it
    (renamed,) = [
        m for name, m in metas.items() if name not in ("a0000000000000000.meta.json", "a0000000000000001.meta.json")
    ]
    assert renamed["parentAgentId"] == "a0000000000000001" and loss.counts() == {"write:agent-id": 1}


def _persisted(content: str, structured=None) -> Conversation:
    result = ToolResult("t1", content, persisted_output="the whole output\n")
    if structured is not None:
        result.structured = structured
    return Conversation(
        meta=Meta(id="s", cwd="/tmp/p q"),
        messages=[
            Message("user", [Text("print a lot")]),
            Message("assistant", [ToolUse("t1", "Bash", {"command": "seq 1 99999"})]),
            Message("user", [result]),
            Message("assistant", [Text("done")]),
        ],
    )


MARKER = "<persisted-output>\nOutput too large. Full output saved to: /h/.claude/projects/-p/S/tool-results/{}\n\n"


def test_a_persisted_output_is_written_where_its_marker_names_it():
    # the client keeps the whole output in <sid>/tool-results/ (docs/claude_code.md#persisted-output)
    for conversation in (
        _persisted(MARKER.format("b1x.txt")),  # a plain result: the marker names the file
        _persisted(MARKER.format("b1x.txt"), {"persistedOutputPath": "/h/x/tool-results/b1x.txt", "stdout": ""}),
    ):
        written = write(conversation, LossReport(), WriteOptions())
        assert written.files[f"-tmp-p-q/{written.session_id}/tool-results/b1x.txt"] == b"the whole output\n"


def test_a_persisted_output_with_a_lone_surrogate_is_written_without_an_error():
    conversation = _persisted(MARKER.format("b1x.txt"))
    conversation.messages[2].content[0].persisted_output = "a \ud83d b"  # Common JSON may hold one
    written = write(conversation, LossReport(), WriteOptions())
    assert written.files[f"-tmp-p-q/{written.session_id}/tool-results/b1x.txt"] == b"a ? b"


def test_a_persisted_output_name_that_cannot_name_a_file_is_the_call_id():
    for name in ("$(id).txt", "..", ".hidden"):
        written = write(_persisted(MARKER.format(name)), LossReport(), WriteOptions())
        side = [rel for rel in written.files if "/tool-results/" in rel]
        assert side == [f"-tmp-p-q/{written.session_id}/tool-results/t1.txt"], name


def test_a_recorded_persisted_output_comes_back_byte_for_byte():
    # the non_ascii scenario (real claude 2.1.332): a 300k-line output saved beside the transcript
    folder = GOLDEN / "claude_code" / "scenarios" / "non_ascii"
    [main] = folder.glob("*.jsonl")
    [saved] = folder.glob("*/tool-results/*.txt")
    written, _ = api.convert(main, "claude_code")
    assert written.files[f"{written.main.rsplit('/', 1)[0]}/{main.stem}/tool-results/{saved.name}"] == (
        saved.read_bytes()
    )
