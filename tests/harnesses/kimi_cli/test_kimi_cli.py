"""Kimi CLI harness without the real client: codec, detection, reader, writer, store and
install. Each client fact the harness relies on is pinned here (test_kimi_cli_real.py
proves the writer's output resumes)."""

from __future__ import annotations

import hashlib
import json
import shlex

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support.chat_views import REGEN
from support.chat_views import pretty
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.core.errors import UnsafeId
from txcodec.harnesses.kimi_cli import CODEC
from txcodec.harnesses.kimi_cli import HARNESS
from txcodec.harnesses.kimi_cli import detect
from txcodec.harnesses.kimi_cli import store
from txcodec.harnesses.kimi_cli.records import Record
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import Opaque
from txcodec.model.native import decode_session

CASES = sorted(p for p in (GOLDEN / "kimi_cli").iterdir() if p.is_dir())
GENUINE = GOLDEN / "kimi_cli" / "tool_call_resumed" / "context.jsonl"
HANDWRITTEN = GOLDEN / "kimi_cli" / "handwritten" / "context.jsonl"


def load(data: bytes):
    return decode_session(data, CODEC, "kimi_cli")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert load(data).dump() == data


_line = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "_checkpoint", "_usage", "_system_prompt", "x"])},
    optional={
        "content": st.one_of(
            st.text(max_size=8),
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}), max_size=2),
        ),
        "id": st.integers(),
        "token_count": st.one_of(st.integers(), st.text(max_size=3)),
        "tool_call_id": st.text(max_size=5),
        "zz": st.integers(),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_line, max_size=6), st.booleans(), st.sampled_from([",", ", "]))
def test_structured_lines_roundtrip(lines, final_newline, sep):
    data = b"\n".join(json.dumps(v, separators=(sep, ":"), ensure_ascii=False).encode() for v in lines)
    data += b"\n" if final_newline and lines else b""
    assert load(data).dump() == data


def test_an_edited_record_keeps_keys_the_typed_view_does_not_know():
    data = b'{"role": "_usage", "token_count": 20, "later": [1, 2]}\n{"role":"user","content":"hi"}\n'
    session = load(data)
    session[0] = Record(role="_usage", token_count=99)
    out = session.dump().split(b"\n")
    assert json.loads(out[0]) == {"role": "_usage", "token_count": 99, "later": [1, 2]}
    assert out[1] == b'{"role":"user","content":"hi"}'


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case):
    """``context.jsonl`` round-trips byte for byte, reads to ``common.json``, which writes
    to ``written.jsonl`` (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    path = case / "context.jsonl"
    session = api.load(path)
    assert session.harness == "kimi_cli" and not session.diagnostics
    assert session.dump() == path.read_bytes()
    conversation = api.to_common(session)
    written = HARNESS.write(conversation, LossReport(), WriteOptions(cwd="/p"))
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_detection():
    """The client's own ``_system_prompt`` / ``_checkpoint`` / ``_usage`` lines are decisive;
    a file of plain chat lines (the hand-written one, what the writer emits) is still
    Kimi's; the other harnesses' goldens are not."""
    values = [json.loads(line) for line in GENUINE.read_bytes().splitlines()]
    assert detect(values) >= 20 and api.detect(GENUINE.read_bytes()) == "kimi_cli"
    assert api.detect(HANDWRITTEN.read_bytes()) == "kimi_cli"
    for other in ("qwen_code", "pi", "codex", "copilot_cli", "claude_code"):
        for case in (GOLDEN / other).iterdir():
            for f in case.glob("*.jsonl"):
                if f.name != "written.jsonl" or other != "kimi_cli":
                    assert api.detect(f.read_bytes()) != "kimi_cli", f


def test_genuine_session_reads_as_the_client_sends_it():
    """Written by kimi 1.51.0: two prompts, a ``Shell`` call each, the second after ``-r``.
    Bookkeeping lines are skipped; the system prompt is reported."""
    loss = LossReport()
    c = HARNESS.read(api.load(GENUINE), loss)
    assert c.meta.id == "tool_call_resumed"
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    assert c.messages[0].content == [Text("read hello.txt")]
    call = c.messages[1].content[1]
    assert c.messages[1].content[0] == Text("Reading.")
    assert isinstance(call, ToolUse) and (call.id, call.name, call.input) == (
        "call_mock_1",
        "Shell",
        {"command": "cat hello.txt"},
    )
    result = c.messages[2].content[0]
    assert isinstance(result, ToolResult) and result.tool_use_id == "call_mock_1"
    assert result.content == [Text("<system>Command executed successfully.</system>"), Text("hello world\n")]
    assert c.messages[5].content == [
        ToolUse("call_mock_2", "Shell", {"command": "wc -w hello.txt"}, "shell_exec")
    ]  # content []
    assert [m.stop_reason for m in c.messages if m.role == "assistant"] == ["tool_use", "end_turn"] * 2
    assert loss.counts() == {"record:_system_prompt": 1}
    roles = [json.loads(x)["role"] for x in GENUINE.read_bytes().splitlines()]
    assert roles.count("_checkpoint") == 6 and roles.count("_usage") == 8 and roles[0] == "_system_prompt"


def test_hostile_lines_are_reported_not_raised():
    data = (
        b"\n".join(
            [
                b'{"role":"user","content":"hi"}',
                b"not json",
                b"[1,2]",
                b'{"role": 5}',
                b'{"role":"assistant","content":7}',
                b'{"role":"assistant","content":"x","tool_calls":"nope"}',
                b'{"role":"tool","tool_call_id":"../x","content":{"a":1}}',
                b'{"role":"system","content":"be nice"}',
                b'{"role":"weird"}',
                b'{"role":"user","content":[{"type":"audio_url","audio_url":{"url":"a"}}, 3]}',
            ]
        )
        + b"\n"
    )
    session = api.load(data, "kimi_cli")
    assert session.dump() == data
    loss = LossReport()
    c = api.to_common(session, loss)
    counts = loss.counts()
    assert counts["record:invalid"] == 3 and counts["message:system"] == 1 and counts["record:weird"] == 1
    assert counts["read:malformed"] >= 2
    assert c.messages[0].content == [Text("hi")]


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi"), Image(media_type="image/png", data="AAAA")], timestamp="2026-01-01T00:00:00Z"),
            Message(
                "assistant",
                [Thinking("hmm", signature="sig"), Text("let me look"), ToolUse("c1", "Shell", {"command": "ls"})],
                usage=Usage(input_tokens=3),
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), ToolResult("zz", "stray"), Text("and?")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_lines_are_the_clients_own_shape():
    loss = LossReport()
    written = HARNESS.write(
        _conversation(id="3f0e0000-0000-4000-8000-000000000001", cwd="/home/u/p"), loss, WriteOptions()
    )
    sid = written.session_id
    digest = hashlib.md5(b"/home/u/p").hexdigest()
    assert sid == "3f0e0000-0000-4000-8000-000000000001"
    assert list(written.files) == [f"sessions/{digest}/{sid}/context.jsonl", "kimi.json"]
    assert json.loads(written.files["kimi.json"]) == {
        "work_dirs": [{"path": "/home/u/p", "kaos": "local", "last_session_id": sid}]
    }
    lines = [json.loads(x) for x in written.files[written.main].splitlines()]
    assert lines == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "think", "think": "hmm"}, {"type": "text", "text": "let me look"}],
            "tool_calls": [
                {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}
            ],
        },
        {"role": "tool", "content": "a.txt", "tool_call_id": "c1"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "[tool result zz]\nstray"}, {"type": "text", "text": "and?"}],
        },
        {"role": "assistant", "content": "done"},
    ]
    assert {"write:thinking-signature", "write:orphan-result", "write:timestamps-usage"} <= set(loss.counts())
    back = api.to_common(api.load(written.files[written.main], "kimi_cli"))
    assert back.messages[1].content[2] == ToolUse("c1", "Shell", {"command": "ls"}, "shell_exec")


def test_writer_ids_and_cwd():
    assert HARNESS.write(_conversation(id="hw-kimi-1"), LossReport(), WriteOptions(cwd="/p")).session_id == "hw-kimi-1"
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="../escape"))
    loss = LossReport()
    written = HARNESS.write(_conversation(id="a/../b"), loss, WriteOptions())
    assert "/" not in written.session_id and {"write:cwd", "write:session-id"} <= set(loss.counts())
    assert written.main.startswith(f"sessions/{hashlib.md5(b'/').hexdigest()}/")


def test_store_and_install_register_the_work_folder(tmp_path, monkeypatch):
    """``$KIMI_SHARE_DIR``, else ``~/.kimi``; install writes the folder and merges the work
    folder into an existing ``kimi.json`` (the client truncates an unregistered session)."""
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "share"))
    assert store.default_root() == tmp_path / "share"
    monkeypatch.delenv("KIMI_SHARE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.default_root() == tmp_path / "home" / ".kimi"
    root = tmp_path / "share"
    root.mkdir()
    (root / "kimi.json").write_text(
        json.dumps({"work_dirs": [{"path": "/other", "kaos": "local", "last_session_id": None}], "x": 1})
    )
    written = api.convert(GENUINE, "kimi_cli", cwd="/work/proj")[0]
    paths = api.install(written, "kimi_cli", root)
    assert (
        paths[0] == root / "sessions" / hashlib.md5(b"/work/proj").hexdigest() / "tool_call_resumed" / "context.jsonl"
    )
    registry_ = json.loads((root / "kimi.json").read_text())
    assert registry_["x"] == 1 and registry_["work_dirs"] == [
        {"path": "/other", "kaos": "local", "last_session_id": None},
        {"path": "/work/proj", "kaos": "local", "last_session_id": "tool_call_resumed"},
    ]
    (root / "sessions" / "abc" / "orphan").mkdir(parents=True)
    (root / "sessions" / "abc" / "orphan" / "context.jsonl").write_bytes(HANDWRITTEN.read_bytes())
    infos = {i.id: i for i in store.discover(root)}
    assert infos["tool_call_resumed"].cwd == "/work/proj" and infos["tool_call_resumed"].registered
    assert infos["tool_call_resumed"].messages == 8  # user and assistant lines, a run of tool answers as one
    assert not infos["orphan"].registered
    # the installed file reads its work folder back from kimi.json
    assert api.to_common(api.load(paths[0])).meta.cwd == "/work/proj"
    # never overwrites
    with pytest.raises(Exception, match="exists"):
        api.install(written, "kimi_cli", root)


def test_install_refuses_a_broken_registry(tmp_path):
    (tmp_path / "kimi.json").write_text("[not json")
    written = api.convert(HANDWRITTEN, "kimi_cli", cwd="/p")[0]
    result = CliRunner().invoke(
        main,
        ["convert", "--to", "kimi_cli", "--install", "--cwd", "/p", str(HANDWRITTEN)],
        env={"KIMI_SHARE_DIR": str(tmp_path)},
    )
    assert result.exit_code != 0 and "kimi.json" in result.output and "Traceback" not in result.output
    assert written.files  # nothing else to see: the error named the file


def test_cli_install_prints_the_resume_command(tmp_path):
    result = CliRunner().invoke(
        main,
        ["convert", "--to", "kimi_cli", "--install", "--cwd", str(tmp_path), str(HANDWRITTEN)],
        env={"KIMI_SHARE_DIR": str(tmp_path / "share")},
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"cd {shlex.quote(str(tmp_path))} && kimi -r handwritten"  # run where it was filed
    assert json.loads((tmp_path / "share" / "kimi.json").read_text())["work_dirs"][0]["path"] == str(tmp_path)


def test_opaque_lines_keep_their_bytes():
    session = load(b'{"role":"user","content":"a"}\n{"no_role":1}\n')
    assert isinstance(session[1], Opaque) and session.dump() == b'{"role":"user","content":"a"}\n{"no_role":1}\n'


def test_registered():
    assert registry.get("kimi_cli") is HARNESS and HARNESS.check_resume is not None
    assert api.sample("kimi_cli").name == "context.jsonl"


def test_a_session_folder_is_one_session(tmp_path):
    """``show``, ``convert`` and ``verify`` take the session folder (``context.jsonl``
    beside ``wire.jsonl`` and ``state.json``) as the one session it is."""
    root = tmp_path / "share"
    written = api.convert(GENUINE, "kimi_cli", cwd=str(tmp_path))[0]
    context = api.install(written, "kimi_cli", root)[0]
    folder = context.parent
    (folder / "wire.jsonl").write_text('{"type": "metadata", "protocol_version": "1.10"}\n')
    (folder / "state.json").write_text('{"version": 1}\n')
    runner = CliRunner()
    shown = runner.invoke(main, ["show", str(folder)])
    assert shown.exit_code == 0 and "read hello.txt" in shown.stdout, shown.output
    verified = runner.invoke(main, ["verify", str(folder)])
    assert (
        verified.exit_code == 0
        and "1 file: all byte-identical" in verified.output
        and "wire.jsonl" not in verified.output
    )
    out = tmp_path / "out.jsonl"
    converted = runner.invoke(main, ["convert", "--to", "claude_code", str(folder), "-o", str(out)])
    assert converted.exit_code == 0, converted.output
    assert api.load(out).harness == "claude_code"  # one session, not a batch of three files
    assert api.load(folder).dump() == context.read_bytes()
    listed = runner.invoke(main, ["list", "--json"], env={"KIMI_SHARE_DIR": str(root), "HOME": str(tmp_path / "h")})
    assert listed.exit_code == 0 and "tool_call_resumed" in listed.stdout, listed.output
