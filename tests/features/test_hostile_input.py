"""Issue 10, symptoms 1 and 2, and the error contract (docs/guarantees.md).

1. A ``type`` that is not a string made ``load`` raise (claude_code, codex, stream_json
   detection and decoding); now the line is opaque with a diagnostic, in every codec.
2. Valid but unusual input crashed readers and writers: a ``server_tool_use`` block, a
   TodoWrite whose ``todos`` is not a list, a Codex ``compacted`` whose message is not a
   string.

The suite runs in strict mode (tests/conftest.py), so an unexpected exception is raised
as it is, never turned into "internal error": reaching that guard fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

import txcodec
from txcodec import api
from txcodec.cli import INTERNAL_ERROR
from txcodec.cli import main
from txcodec.core.errors import InputError
from txcodec.core.errors import InternalError
from txcodec.core.errors import StoreError
from txcodec.core.errors import TxcodecError
from txcodec.kit import registry
from txcodec.model.loss import LossReport

NON_STRING_TAGS = [{}, [], 1, 1.5, True, None, {"type": "user"}, ["user"]]
SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"


def _claude(*records: dict) -> bytes:
    base = {
        "sessionId": SID,
        "cwd": "/tmp/p",
        "version": "2.1.0",
        "timestamp": "2026-01-01T00:00:00Z",
        "isSidechain": False,
    }
    lines = []
    parent = None
    for n, record in enumerate(records):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        lines.append(json.dumps({**base, "parentUuid": parent, "uuid": uuid, **record}))
        parent = uuid
    return ("\n".join(lines) + "\n").encode()


def _assistant(*blocks: dict) -> dict:
    return {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": list(blocks),
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }


def _user(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


# --- symptom 1: load never raises ------------------------------------------------------


# every codec and detection over them: the line-based ones, the document ones (Continue,
# opencode, Kilo, Cline), whose own key is another field, and the folder and Markdown ones
# aider's history is Markdown, where a JSON line is only text (tested below); Mistral Vibe's
# lines are told apart by ``role``, not ``type``
CODECS = sorted(set(registry.harnesses()) - {"aider"})
TAG = {"mistral_vibe": "role"}
WRITERS = sorted(name for name, h in registry.harnesses().items() if h.write is not None)


@pytest.mark.parametrize("tag", NON_STRING_TAGS, ids=repr)
@pytest.mark.parametrize(
    "extra", [{}, {"payload": {}}, {"message": {"content": []}}, {"id": "x", "sessionId": "s"}], ids=str
)
@pytest.mark.parametrize("harness", [None, *CODECS])
def test_a_non_string_type_is_an_opaque_line(harness, tag, extra):
    key = TAG.get(harness, "type")
    data = json.dumps({key: tag, **extra}).encode() + b"\n"
    session = txcodec.load(data, harness)
    assert session.dump() == data
    [(line, opaque)] = session.diagnostics
    assert line == 1 and opaque.diagnostic  # kept as bytes, with a reason
    if harness not in (None, "jsonl", "gemini_cli") and tag is not None:
        assert opaque.diagnostic == f"'{key}' is not a string but {_kind(tag)}"


@pytest.mark.parametrize("tag", NON_STRING_TAGS, ids=repr)
def test_a_json_line_in_an_aider_history_is_text(tag):
    data = b"#### hi  \n\n" + json.dumps({"type": tag}).encode() + b"\n"
    session = txcodec.load(data, "aider")
    assert session.dump() == data
    messages = api.to_common(session).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].content[0].text == json.dumps({"type": tag})


def _kind(tag):
    return {dict: "an object", list: "an array", bool: "a boolean"}.get(type(tag), "a number")


def test_a_non_string_type_inside_a_real_session_keeps_the_rest():
    data = (
        _claude(_user("hello"), _assistant({"type": "text", "text": "hi"}))
        + b'{"type":{},"sessionId":"x","uuid":"y"}\n'
    )
    session = txcodec.load(data)
    assert session.harness == "claude_code" and session.dump() == data
    assert [n for n, _ in session.diagnostics] == [3]
    loss = LossReport()
    conv = api.to_common(session, loss)
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert loss.lines("opaque") == [3]


@pytest.mark.parametrize(
    "command", [["inspect"], ["show"], ["export"], ["usage"], ["convert", "--to", "codex", "-o", "OUT"]]
)
@pytest.mark.parametrize("body", [b'{"type":{}}\n', b'{"type":[],"payload":{}}\n'])
def test_cli_gives_one_line_not_a_traceback(tmp_path, command, body):
    path = tmp_path / "t.jsonl"
    path.write_bytes(body)
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    result = CliRunner().invoke(main, [*args[:1], str(path), *args[1:]])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and str(path) in errors[0], result.output
        assert "Traceback" not in result.output


def test_list_survives_a_hostile_file_in_the_store(tmp_path):
    project = tmp_path / "projects" / "-tmp-p"
    project.mkdir(parents=True)
    (project / f"{SID}.jsonl").write_bytes(_claude(_user("hello"), _assistant({"type": "text", "text": "hi"})))
    (project / "11111111-1111-4111-8111-111111111111.jsonl").write_bytes(b'{"type":{}}\n{"type":[],"payload":{}}\n')
    result = CliRunner().invoke(
        main, ["list", "--root", str(tmp_path / "projects"), "--harness", "claude_code", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert SID in result.output


# --- symptom 2: valid input that crashed readers and writers ---------------------------

SERVER_TOOL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}


@pytest.mark.parametrize("command", [["show", "--no-color"], ["export"], ["export", "--to", "markdown"]])
def test_server_tool_use_block_shows_and_exports(tmp_path, command):
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(_claude(_user("search"), _assistant(SERVER_TOOL, {"type": "text", "text": "found it"})))
    result = CliRunner().invoke(main, [command[0], str(path), *command[1:]])
    assert result.exit_code == 0, result.output
    assert "found it" in result.output and "server_tool_use" in result.output


@pytest.mark.parametrize("target", WRITERS)
def test_server_tool_use_block_converts(tmp_path, target):
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(_claude(_user("search"), _assistant(SERVER_TOOL, {"type": "text", "text": "found it"})))
    written, loss = api.convert(path, target)
    assert any(b"found it" in body for body in written.files.values())
    assert "srvtoolu_1" in json.dumps(loss.to_dict()) or any(b"srvtoolu_1" in b for b in written.files.values())


@pytest.mark.parametrize("todos", [True, "x", 3, [1, "a", None], {"a": 1}, [{"content": 5}]], ids=repr)
@pytest.mark.parametrize("target", WRITERS)
def test_todowrite_with_odd_todos_converts(tmp_path, target, todos):
    call = {"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": {"todos": todos}}
    result = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
    }
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(_claude(_user("plan"), _assistant(call), result, _assistant({"type": "text", "text": "done"})))
    written, _ = api.convert(path, target)
    for name, body in written.files.items():  # a session of several files (OpenHands events) is read as one
        (tmp_path / "out" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "out" / name).write_bytes(body)
    back = api.to_common(txcodec.load(tmp_path / "out" / written.main, target))
    # a text-only target (aider) holds the calls as text beside "done", paragraphs apart
    assert any("done" in getattr(b, "text", "").split("\n\n") for m in back.messages for b in m.content)


def test_codex_compacted_with_a_non_string_message_shows(tmp_path):
    path = tmp_path / "rollout.jsonl"
    lines = [
        {
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "session_meta",
            "payload": {"id": SID, "timestamp": "2026-01-01T00:00:00Z", "cwd": "/tmp"},
        },
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        },
        {"timestamp": "2026-01-01T00:00:02Z", "type": "compacted", "payload": {"message": True}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(main, ["show", str(path), "--no-color"])
    assert result.exit_code == 0, result.output
    assert "hi" in result.output


# --- the error contract ---------------------------------------------------------------


def test_library_errors_are_txcodec_errors(tmp_path):
    with pytest.raises(StoreError) as missing:
        txcodec.load(tmp_path / "nope.jsonl")
    assert isinstance(missing.value, OSError) and "nope.jsonl" in str(missing.value)
    with pytest.raises(InputError) as unknown:
        api.convert(b"", "no_such_harness")
    assert isinstance(unknown.value, ValueError)
    with pytest.raises(TxcodecError):
        api.to_common(txcodec.load(b"garbage\n"))


def test_an_unexpected_exception_is_internal_outside_strict_mode(monkeypatch):
    def broken(session, loss):
        raise KeyError("boom")

    harness = registry.get("pi")
    monkeypatch.setattr(registry, "_cache", {**registry._cache, "pi": msgspec.structs.replace(harness, read=broken)})
    session = txcodec.load(b'{"type":"session","id":"x"}\n', "pi")
    with pytest.raises(KeyError):  # strict (the suite): the bug shows as it is
        api.to_common(session)
    monkeypatch.setenv("TXCODEC_STRICT", "0")
    with pytest.raises(InternalError, match="internal error, please report: KeyError"):
        api.to_common(session)


def test_cli_guard_exits_70_with_one_line(monkeypatch, tmp_path):
    from txcodec.cli import options

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(options, "read_common", broken)
    monkeypatch.setattr("txcodec.cli.show.read_common", broken)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"{}\n")
    monkeypatch.setenv("TXCODEC_STRICT", "0")
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == INTERNAL_ERROR
    assert result.output.strip().splitlines() == ["Error: internal error, please report: ZeroDivisionError: boom"]
    monkeypatch.setenv("TXCODEC_STRICT", "1")
    result = CliRunner().invoke(main, ["show", str(path)])
    assert isinstance(result.exception, ZeroDivisionError)  # tests see the bug itself


def test_usage_errors_exit_2(tmp_path):
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "missing.jsonl"), "--to", "codex"])
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["show"])
    assert result.exit_code == 2


# --- Common output fits its schema (txcodec.kit.conform) -----------------------------------


def test_conform_sets_aside_what_does_not_fit_the_schema():
    from txcodec.kit.conform import conform
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Meta
    from txcodec.model.common import RawBlock
    from txcodec.model.common import Text
    from txcodec.model.common import ToolUse

    bad = Conversation(
        meta=Meta(id={"not": "a string"}),
        messages=[  # type: ignore[arg-type]
            Message("user", [Text("fine"), ToolUse({"id": 1}, "Bash", {})]),  # type: ignore[arg-type]
            Message({"role": 1}, [Text("no role")]),  # type: ignore[arg-type]
            Message("assistant", [Text("also fine")]),
        ],
    )
    loss = LossReport()
    good = conform(bad, loss)
    assert good.meta.id is msgspec.UNSET
    assert [m.role for m in good.messages] == ["user", "assistant"]
    assert good.messages[0].content[0] == Text("fine")
    raw = good.messages[0].content[1]
    assert isinstance(raw, RawBlock) and raw.source_type == "tool_use" and raw.value["id"] == {"id": 1}
    details = " | ".join(e.detail for e in loss.entries)
    assert set(loss.counts()) == {"read:malformed"}
    for expected in ("$.meta.id", "kept as a raw block", "the element is dropped"):
        assert expected in details, details
    assert conform(good, LossReport()) == good  # what fits is left alone


def test_conform_turns_raw_values_into_plain_ones():
    from txcodec.kit.conform import conform
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import RawBlock

    conversation = Conversation(
        messages=[Message("assistant", [RawBlock("server_tool_use", msgspec.Raw(b'{"a":[1]}'))])]
    )
    loss = LossReport()
    assert conform(conversation, loss).messages[0].content[0].value == {"a": [1]}
    assert not loss


@pytest.mark.parametrize("strict_mode", ["0", "1"])
def test_cli_tells_txcodec_errors_as_one_line_exit_1(monkeypatch, tmp_path, strict_mode):
    """An error the library raises on purpose, even a plain TxcodecError (here a folder
    whose manifest is not one), is the user's problem: one line naming it, exit 1, not
    "internal error" with 70, in strict mode too."""
    out = tmp_path / "ds"
    out.mkdir()
    (out / "_txcodec_manifest.json").write_bytes(b"garbage\n")
    source = next(
        p
        for p in sorted((Path(__file__).resolve().parents[2] / "golden" / "claude_code").rglob("*.jsonl"))
        if "subagents" not in p.parts
    )
    monkeypatch.setenv("TXCODEC_STRICT", strict_mode)
    result = CliRunner().invoke(main, ["export", str(source), "--to", "parquet", "-o", str(out)])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "not a txcodec manifest" in lines[0], lines
    assert "internal error" not in result.output


def test_plain_converts_a_value_deeper_than_the_stack():
    """A tool input a few hundred levels deep decodes (msgspec's limit is higher than the
    two frames a level :func:`native.plain` took), so a writer wrote it and the Gemini
    CLI reader of that file failed: plain falls back to a loop of its own."""
    from txcodec.model.common import Message
    from txcodec.model.common import ToolUse
    from txcodec.model.native import _plain
    from txcodec.model.native import plain

    deep: list = []
    leaf = deep
    for _ in range(5000):
        leaf.append([])
        leaf = leaf[0]
    leaf.append({"b": 1, "a": msgspec.Raw(b"2")})
    value = [Message("assistant", [ToolUse("1", "x", {"z": deep, "y": 1}, "other")])]
    out = plain(value)
    assert list(out[0]["content"][0]["input"]) == ["z", "y"]  # keys in their order
    node = out[0]["content"][0]["input"]["z"]
    for _ in range(5000):
        node = node[0]
    assert node == [{"b": 1, "a": msgspec.Raw(b"2")}]
    shallow = [Message("user", [ToolUse("1", "x", {"b": [1, {"c": None}]}, "other")])]
    assert plain(shallow) == _plain(shallow)
