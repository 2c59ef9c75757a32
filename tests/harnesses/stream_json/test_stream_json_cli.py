"""stream-json from the command line: ``txcodec convert`` with ``--prompt`` / ``--input``,
detection of captures however they start, cut-off captures, and the reader's folding of
partial messages (``--include-partial-messages``) with the result-text deduplication."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN
from support.paths import corpus_files

from txcodec import api
from txcodec.cli import main
from txcodec.harnesses.stream_json import read
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.loss import LossReport

SJ = GOLDEN / "stream_json"


def _lines(*values) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def _without_replays(data: bytes) -> bytes:
    return b"".join(line + b"\n" for line in data.splitlines() if b'"isReplay":true' not in line)


def _convert(*args: str):
    return CliRunner().invoke(main, ["convert", *args])


def _main_file(folder):
    [path] = [p for p in folder.rglob("*.jsonl") if "subagents" not in p.parts]
    return path


def _user_texts(path) -> list[str]:
    conversation = api.to_common(api.load(path, "claude_code"))
    return [b.text for m in conversation.messages if m.role == "user" for b in m.content if isinstance(b, Text)]


# --- prompts: --input, --prompt ---------------------------------------------------------


def test_input_option_takes_the_prompts_from_a_stdin_side_file(tmp_path):
    capture = tmp_path / "capture.jsonl"
    capture.write_bytes(_without_replays((SJ / "subagent" / "capture.jsonl").read_bytes()))
    out = _convert(
        str(capture),
        "--to",
        "claude_code",
        "--input",
        str(SJ / "subagent" / "input.jsonl"),
        "-o",
        str(tmp_path / "with"),
        "--loss",
    )
    assert out.exit_code == 0, out.output
    assert "prompt:missing" not in out.output
    assert _user_texts(_main_file(tmp_path / "with"))[0] == "delegate the count"
    # without it the prompt is a declared placeholder
    out = _convert(str(capture), "--to", "claude_code", "-o", str(tmp_path / "without"), "--loss")
    assert out.exit_code == 0 and "prompt:missing" in out.output
    assert _user_texts(_main_file(tmp_path / "without"))[0].startswith("[prompt not captured")


def test_input_option_with_control_lines_of_an_sdk_host(tmp_path):
    """The stdin side of an SDK host starts with control_request initialize."""
    out = _convert(
        str(SJ / "sdk_host" / "capture.jsonl"),
        "--to",
        "claude_code",
        "--input",
        str(SJ / "sdk_host" / "input.jsonl"),
        "-o",
        str(tmp_path / "s.jsonl"),
        "--loss",
    )
    assert out.exit_code == 0, out.output
    assert "record:control_request/initialize" in out.output and "prompt:missing" not in out.output
    assert _user_texts(tmp_path / "s.jsonl") == ["hello there"]


@pytest.mark.parametrize("case", ["subagent", "sdk_host"])
def test_input_side_gives_the_same_conversation_as_supplied_prompts(case):
    folder = SJ / case
    capture = _without_replays((folder / "capture.jsonl").read_bytes())
    strip = lambda c: [(m.role, m.content) for m in c.messages]  # noqa: E731
    loss = LossReport()
    from_input = read(
        api.load(capture, "stream_json"), loss, input_session=api.load(folder / "input.jsonl", "stream_json")
    )
    supplied = read(
        api.load(capture, "stream_json"), LossReport(), prompts=json.loads((folder / "prompts.json").read_text())
    )
    assert strip(from_input) == strip(supplied)
    assert [r["prompt"] for r in from_input.meta.extra["runs"]] == ["input"]
    assert "prompt:missing" not in loss.counts()


def test_prompt_and_input_are_refused_for_other_harnesses(tmp_path):
    [session] = [p for p in corpus_files("claude_code", (".jsonl",)) if p.stat().st_size < 200_000][:1]
    for extra in (["--prompt", "x"], ["--input", str(SJ / "subagent" / "input.jsonl")]):
        out = _convert(str(session), "--to", "codex", "-o", str(tmp_path / "x.jsonl"), *extra)
        assert out.exit_code == 1
        assert "is claude_code, not a stream_json capture" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "x.jsonl").exists()


def test_bad_input_file_is_named_in_the_loss_report(tmp_path):
    bad = tmp_path / "stdin.jsonl"
    bad.write_bytes(b'{"type":"user","message":{"role":"user","content":"hi"}}\nnot json\n')
    out = _convert(str(SJ / "two_runs" / "capture.jsonl"), "--to", "claude_code", "--input", str(bad), "--loss")
    assert out.exit_code == 0
    report = json.loads(out.stdout[out.stdout.index("{") :])
    [opaque] = [e for e in report["entries"] if e["kind"] == "opaque"]
    assert opaque["file"] == str(bad) and opaque["line"] == 2
    assert report["counts"]["prompt:missing"] == 1  # one stdin prompt for two runs


# --- detection ----------------------------------------------------------------------------

INIT = {"type": "system", "subtype": "init", "session_id": "s1", "cwd": "/w", "model": "m", "tools": []}


def _event(event: dict, mid: str = "msg_1") -> dict:
    return {
        "type": "stream_event",
        "event": event,
        "session_id": "s1",
        "parent_tool_use_id": None,
        "uuid": "u",
        "api_message_id": mid,
    }


def test_sdk_capture_starting_with_a_control_response_is_detected():
    data = (SJ / "sdk_host" / "capture.jsonl").read_bytes()
    assert json.loads(data.splitlines()[0])["type"] == "control_response"  # observed, 2.1.332
    assert api.detect(data) == "stream_json"


@pytest.mark.parametrize("head", ["control_request", "stream_event", "result"])
def test_capture_whose_head_is_gone_is_detected(head):
    source = SJ / "sdk_host" / ("input.jsonl" if head == "control_request" else "capture.jsonl")
    lines = [line for line in source.read_bytes().splitlines() if json.loads(line).get("type") == head]
    assert lines
    assert api.detect(b"\n".join(lines) + b"\n") == "stream_json"


def test_stdin_side_alone_is_detected_and_converts(tmp_path):
    data = _lines({"type": "user", "message": {"role": "user", "content": "only a prompt"}})
    assert api.detect(data) == "stream_json"
    src = tmp_path / "stdin.jsonl"
    src.write_bytes(data)
    out = _convert(str(src), "--to", "claude_code", "-o", str(tmp_path / "s.jsonl"))
    assert out.exit_code == 0, out.output
    assert _user_texts(tmp_path / "s.jsonl") == ["only a prompt"]


@pytest.mark.parametrize("path", corpus_files("codex", (".jsonl",))[:12], ids=lambda p: p.name)
def test_codex_rollouts_are_not_detected_as_stream_json(path):
    assert api.detect(api.read_bytes(path)) == "codex"


# --- cut-off captures -----------------------------------------------------------------------


@pytest.mark.parametrize("case", ["parallel_tools", "sdk_host", "two_runs"])
def test_capture_cut_off_mid_line_converts_with_the_cut_declared(case, tmp_path):
    data = (SJ / case / "capture.jsonl").read_bytes()
    lines = data.splitlines()
    # cut in the middle of the last assistant line
    k = max(i for i, line in enumerate(lines) if b'"type":"assistant"' in line[:20])
    src = tmp_path / "cut.jsonl"
    src.write_bytes(b"\n".join(lines[:k]) + b"\n" + lines[k][: len(lines[k]) // 2])
    out = _convert(str(src), "--to", "claude_code", "-o", str(tmp_path / "s.jsonl"), "--loss")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout[out.stdout.index("{") :])
    cut = [e for e in report["entries"] if e["kind"] == "opaque"]
    assert [(e["line"], e["detail"].startswith("cut off")) for e in cut] == [(k + 1, True)]
    session = api.load(tmp_path / "s.jsonl", "claude_code")
    assert session.diagnostics == []
    conversation = api.to_common(session)
    assert conversation.messages[-1].role in ("assistant", "user")
    if case != "two_runs":  # partial messages: what streamed of the cut line is kept
        assert report["counts"]["stream:unfinished-message"] == 1
        full = read(api.load(data, "stream_json"), LossReport(), prompts=["p"] * 2)
        cut_read = read(api.load(src.read_bytes(), "stream_json"), LossReport(), prompts=["p"] * 2)
        assert cut_read.messages[-1].content == full.messages[-1].content
        assert cut_read.messages[-1].interrupted


# --- partial messages: folding and result-text deduplication --------------------------------


def test_partial_thinking_is_folded_once_with_its_signature():
    conversation = read(api.load(SJ / "sdk_host" / "capture.jsonl"), LossReport(), prompts=["hello there"])
    [assistant] = [m for m in conversation.messages if m.role == "assistant"]
    assert assistant.content == [Thinking("the user greets me", signature="sig-mock"), Text("Hello back.")]
    assert assistant.stop_reason == "end_turn" and assistant.usage.output_tokens == 5  # from message_delta
    assert "from_result" not in assistant.extra and not assistant.interrupted


def test_result_text_is_not_repeated_when_it_streamed_only_as_deltas():
    data = _lines(
        INIT,
        _event({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "model": "m", "content": []}}),
        _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "the answer"}}),
        {"type": "result", "subtype": "success", "is_error": False, "result": "the answer", "session_id": "s1"},
    )
    conversation = read(api.load(data), LossReport(), prompts=["q"])
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", [Text("q")]),
        ("assistant", [Text("the answer")]),
    ]
    assert conversation.messages[1].extra["turn"]["subtype"] == "success"


def test_a_message_that_only_started_is_left_out_and_declared():
    data = _lines(
        INIT,
        _event({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "model": "m", "content": []}}),
    )
    loss = LossReport()
    conversation = read(api.load(data), loss, prompts=["q"])
    assert [m.role for m in conversation.messages] == ["user"]
    assert loss.counts()["stream:empty-message"] == 1 and "stream:unfinished-message" not in loss.counts()


def test_orphan_deltas_of_a_capture_cut_at_the_head_are_declared():
    data = _lines(_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}))
    loss = LossReport()
    read(api.load(data), loss)
    assert loss.lines("stream:orphan-event") == [1]


# --- subagents ----------------------------------------------------------------------------


def _assistant(mid: str, block: dict, parent: str | None) -> dict:
    return {
        "type": "assistant",
        "message": {"id": mid, "role": "assistant", "model": "m", "content": [block]},
        "session_id": "s1",
        "parent_tool_use_id": parent,
        "uuid": f"a-{mid}-{block.get('id', 't')}",
    }


def _result(tool_id: str, text: str, parent: str | None) -> dict:
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]},
        "session_id": "s1",
        "parent_tool_use_id": parent,
        "uuid": f"r-{tool_id}",
    }


def _prompt(text: str, parent: str) -> dict:
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "session_id": "s1",
        "parent_tool_use_id": parent,
        "uuid": f"p-{parent}",
    }


def test_subagents_nest_by_parent_tool_use_id_and_write_back():
    agent = lambda i, p: {"type": "tool_use", "id": i, "name": "Agent", "input": {"prompt": p}}  # noqa: E731
    data = _lines(
        INIT,
        _assistant("m1", agent("toolu_A", "outer"), None),
        _assistant("m1", agent("toolu_C", "sibling"), None),  # two subagents in parallel
        _prompt("outer", "toolu_A"),
        _assistant("m2", agent("toolu_B", "inner"), "toolu_A"),
        _prompt("inner", "toolu_B"),
        _assistant("m3", {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "ls"}}, "toolu_B"),
        _prompt("sibling", "toolu_C"),
        _result("toolu_x", "a b", "toolu_B"),
        _result("toolu_B", "inner done", "toolu_A"),
        _result("toolu_A", "outer done", None),
        _result("toolu_C", "sibling done", None),
        {"type": "result", "subtype": "success", "is_error": False, "result": "", "session_id": "s1"},
    )
    conversation = read(api.load(data), LossReport(), prompts=["go"])
    assert [m.role for m in conversation.messages] == ["user", "assistant", "user"]
    assert len(conversation.messages[2].content) == 2  # both results, one message
    outer, sibling = conversation.children
    assert (outer.link.tool_use_id, sibling.link.tool_use_id) == ("toolu_A", "toolu_C")
    [inner] = outer.conversation.children
    assert inner.link.tool_use_id == "toolu_B" and inner.spawn_depth == outer.spawn_depth + 1
    assert [m.role for m in inner.conversation.messages] == ["user", "assistant", "user"]
    assert sibling.conversation.children == []
    # the writer puts each subagent after its calling tool_use; reading it back nests the same way
    from txcodec.harnesses.stream_json import write
    from txcodec.kit.registry import WriteOptions

    written = write(conversation, LossReport(), WriteOptions())
    back = read(api.load(written.files[written.main]), LossReport())
    shape = lambda cs: [
        (
            c.link.tool_use_id,
            [(m.role, m.content) for m in c.conversation.messages],  # noqa: E731
            shape(c.conversation.children),
        )
        for c in cs
    ]
    assert shape(back.children) == shape(conversation.children)


@pytest.mark.parametrize("with_uuid", [False, True])
def test_both_sides_in_one_file_give_each_run_its_prompt(with_uuid):
    """A host that logs stdin and stdout in one file; an SDK host may give its stdin
    lines a uuid (the CLI's own user lines come only after init)."""

    def run(prompt: str, answer: str, mid: str) -> list[dict]:
        sent = {
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None,
            "session_id": "",
        }
        if with_uuid:
            sent["uuid"] = f"in-{mid}"
        return [
            sent,
            INIT,
            _assistant(mid, {"type": "text", "text": answer}, None),
            {"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": "s1"},
        ]

    loss = LossReport()
    conversation = read(api.load(_lines(*run("q1", "a1", "m1"), *run("q2", "a2", "m2"))), loss)
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", [Text("q1")]),
        ("assistant", [Text("a1")]),
        ("user", [Text("q2")]),
        ("assistant", [Text("a2")]),
    ]
    assert [r["prompt"] for r in conversation.meta.extra["runs"]] == ["input", "input"]
    assert loss.counts() == {}


def test_convert_stdin_side_writes_the_prompts_as_input_lines(tmp_path):
    from txcodec.model.common import Command

    src = next((GOLDEN / "claude_code").glob("*/*.jsonl"))
    out = tmp_path / "input.jsonl"
    result = CliRunner().invoke(main, ["convert", str(src), "--to", "stream_json", "--stdin-side", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert lines and all(x["type"] == "user" and x["message"]["role"] == "user" for x in lines)
    assert all(x["parent_tool_use_id"] is None for x in lines)
    # a command becomes the text the user typed, with exactly one slash
    assert Command(name="/cost", output="Total: $1").as_text() == "/cost\nTotal: $1"
    assert Command(name="model", args="opus").as_text() == "/model opus"


def test_stdin_side_is_refused_for_other_targets(tmp_path):
    src = next((GOLDEN / "claude_code").glob("*/*.jsonl"))
    result = CliRunner().invoke(main, ["convert", str(src), "--to", "codex", "--stdin-side"])
    assert result.exit_code == 1 and "stream_json" in result.output
