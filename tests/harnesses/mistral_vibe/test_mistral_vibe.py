"""Mistral Vibe harness without the real client: codec, detection, both readers, the
unified store's digest chain, the legacy writer, store and install
(test_mistral_vibe_real.py proves the writer's output resumes)."""

from __future__ import annotations

import hashlib
import json
import shutil

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
from txcodec.harnesses.mistral_vibe import CODEC
from txcodec.harnesses.mistral_vibe import HARNESS
from txcodec.harnesses.mistral_vibe import detect
from txcodec.harnesses.mistral_vibe import store
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session

UNIFIED = GOLDEN / "mistral_vibe" / "unified_resumed"
LEGACY = GOLDEN / "mistral_vibe" / "handwritten_legacy"
SID = "ada8c86e-ac76-a171-408d-14f4d3389705"


def load(data: bytes):
    return decode_session(data, CODEC, "mistral_vibe")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_roundtrip(data):
    assert load(data).dump() == data


_line = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "x"])},
    optional={
        "content": st.text(max_size=8),
        "message_id": st.text(max_size=5),
        "name": st.one_of(st.none(), st.text(max_size=3)),
        "tool_call_id": st.text(max_size=5),
        "store_format": st.text(max_size=5),
        "zz": st.integers(),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_line, max_size=6), st.booleans(), st.sampled_from([",", ", "]))
def test_structured_lines_roundtrip(lines, final_newline, sep):
    data = b"\n".join(json.dumps(v, separators=(sep, ":"), ensure_ascii=False).encode() for v in lines)
    data += b"\n" if final_newline and lines else b""
    assert load(data).dump() == data


@pytest.mark.parametrize("main_file", [LEGACY / "messages.jsonl", UNIFIED / "CURRENT"], ids=["legacy", "unified"])
def test_golden(main_file):
    """The session file round-trips byte for byte, reads to ``common.json``, which writes to
    ``written.jsonl`` (TXCODEC_REGEN_GOLDEN=1 to update the last two)."""
    case = main_file.parent
    session = api.load(main_file)
    assert session.harness == "mistral_vibe" and not session.diagnostics
    assert session.dump() == main_file.read_bytes()
    loss = LossReport()
    conversation = api.to_common(session, loss)
    assert not loss.entries  # the digest chain holds, nothing is left out
    written = HARNESS.write(conversation, LossReport(), WriteOptions(cwd="/p"))
    for name, data in {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def test_detection():
    assert api.detect((UNIFIED / "CURRENT").read_bytes()) == "mistral_vibe"
    assert api.detect((LEGACY / "messages.jsonl").read_bytes()) == "mistral_vibe"
    assert api.detect((GOLDEN / "kimi_cli" / "handwritten" / "context.jsonl").read_bytes()) == "kimi_cli"
    for other in ("qwen_code", "pi", "codex", "copilot_cli", "claude_code", "kimi_cli"):
        for case in (GOLDEN / other).iterdir():
            for f in case.glob("*.jsonl"):
                assert (
                    detect([json.loads(x) for x in f.read_bytes().splitlines() if x.strip()][:40]) == 0
                    or api.detect(f.read_bytes()) != "mistral_vibe"
                ), f


def test_unified_digest_rules_hold_on_the_genuine_session():
    """Each digest of the chain as 3.0.2 computed it: SHA-256 of the bytes without the
    final line feed (``CURRENT`` -> manifest -> part files -> chunk names)."""
    current = json.loads((UNIFIED / "CURRENT").read_bytes())
    assert current["store_format"] == "mistral.vibe.unified-session-store/v1" and current["session_id"] == SID
    gen = UNIFIED / "generations" / current["generation"]
    manifest_bytes = (gen / "manifest.json").read_bytes()
    assert hashlib.sha256(manifest_bytes.rstrip(b"\n")).hexdigest() == current["manifest_sha256"]
    assert hashlib.sha256(manifest_bytes).hexdigest() != current["manifest_sha256"]  # the final LF is not hashed
    manifest = json.loads(manifest_bytes)
    for part in ("checkpoint", "projection_state", "runtime_state"):
        assert store.digest((gen / manifest[part]["path"]).read_bytes()) == manifest[part]["sha256"]
        for chunk in manifest[part]["chunks"]:
            assert store.digest((UNIFIED / "chunks" / f"{chunk}.json").read_bytes()) == chunk
    history, errors = store.unified_history(UNIFIED, current)
    assert errors == [] and len(history) == 8 and all(e["source"] == "history" for e in history)


def test_an_edited_unified_session_is_reported(tmp_path):
    """The client refuses an edited session ("manifest digest mismatch"): the reader still
    reads it and reports each broken digest; the store's files are never written."""
    copy = tmp_path / SID
    shutil.copytree(UNIFIED, copy)
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    (chunk,) = [
        p
        for p in (copy / "chunks").iterdir()
        if b"read hello.txt" in p.read_bytes() and p.read_bytes().startswith(b'[{"message')
    ]
    chunk.write_bytes(chunk.read_bytes().replace(b"read hello.txt", b"read HELLO.txt"))
    loss = LossReport()
    c = api.to_common(api.load(copy), loss)
    assert c.messages[0].content == [Text("read HELLO.txt")]
    assert loss.counts() == {"store:digest": 1} and "digest differs from its name" in loss.entries[0].detail
    assert all(p.read_bytes() == data for p, data in before.items() if p != chunk)


def test_unified_session_reads_as_the_client_sent_it():
    c = api.to_common(api.load(UNIFIED))
    assert c.meta.id == SID and c.meta.cwd == "/tmp/txcodec-vibe-a3_96tal/project" and c.meta.models == ["mock-model"]
    assert [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2
    assert c.messages[1].content == [
        Text("Reading."),
        ToolUse("call_mock_1", "bash", {"command": "cat hello.txt"}, "shell_exec"),
    ]
    result = c.messages[2].content[0]
    assert (
        isinstance(result, ToolResult)
        and result.is_error is False
        and json.loads(result.content)["stdout"] == "hello world\n"
    )


def test_legacy_session_reads_with_its_meta():
    c = api.to_common(api.load(LEGACY))  # the folder is the session
    assert c.meta.id == "5e551011-0000-4000-8000-0000000c2a01" and c.meta.cwd == "/home/user/proj"
    assert c.meta.title == "hand-written legacy session" and c.meta.started_at == "2026-11-01T00:00:00+00:00"
    assert c.messages[1].content[1] == ToolUse("call_h1", "bash", {"command": "ls"}, "shell_exec")
    assert c.messages[2].content == [ToolResult("call_h1", "HW a.txt")]


def test_hostile_lines_are_reported_not_raised():
    data = (
        b"\n".join(
            [
                b'{"role":"user","content":"hi","message_id":"m"}',
                b"not json",
                b"[1]",
                b'{"role":"system","content":"s"}',
                b'{"role":"assistant","content":"x","tool_calls":"nope","message_id":"m2"}',
                b'{"role":"odd","message_id":"m3"}',
                b'{"store_format":"mistral.vibe.unified-session-store/v0"}',
            ]
        )
        + b"\n"
    )
    session = api.load(data, "mistral_vibe")
    assert session.dump() == data
    loss = LossReport()
    c = api.to_common(session, loss)
    counts = loss.counts()
    assert (
        counts["record:invalid"] == 3
        and counts["message:system"] == 1
        and counts["message:odd"] == 1
        and counts["read:malformed"] == 1
    )
    assert c.messages[0].content == [Text("hi")]
    # a CURRENT with a generation that could name another folder is refused in one line
    bad = b'{"store_format":"mistral.vibe.unified-session-store/v1","generation":"../x","manifest_sha256":"0"}\n'
    loss = LossReport()
    assert api.to_common(api.load(bad), loss).messages == [] and "store:unified-without-folder" in loss.counts()


def test_unified_current_with_a_bad_generation_is_one_clear_error(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "meta.json").write_text('{"session_id": "x"}')
    (tmp_path / "s" / "CURRENT").write_text(
        '{"store_format":"mistral.vibe.unified-session-store/v1","generation":"../../etc"}\n'
    )
    result = CliRunner().invoke(main, ["show", str(tmp_path / "s")])
    assert result.exit_code != 0 and "no valid generation" in result.output and "Traceback" not in result.output


def _conversation(**meta) -> Conversation:
    return Conversation(
        meta=Meta(**meta),
        messages=[
            Message("user", [Text("hi")], timestamp="2026-01-01T00:00:00Z", meta=True),
            Message(
                "assistant",
                [Thinking("hmm", signature="sig"), Text("let me look"), ToolUse("c1", "bash", {"command": "ls"})],
            ),
            Message("user", [ToolResult("c1", "a.txt", is_error=True), ToolResult("zz", "stray")]),
            Message("assistant", [Text("done")]),
        ],
    )


def test_writer_writes_the_legacy_form():
    loss = LossReport()
    sid = "3f0e0000-0000-4000-8000-000000000001"
    written = HARNESS.write(
        _conversation(id=sid, cwd="/home/u/p", started_at="2026-02-03T04:05:06Z", title="T"), loss, WriteOptions()
    )
    folder = "logs/session/session_20260203_040506_3f0e0000"
    assert written.session_id == sid and list(written.files) == [f"{folder}/messages.jsonl", f"{folder}/meta.json"]
    meta = json.loads(written.files[f"{folder}/meta.json"])
    assert meta == {
        "session_id": sid,
        "start_time": "2026-02-03T04:05:06+00:00",
        "end_time": "2026-02-03T04:05:06+00:00",
        "environment": {"working_directory": "/home/u/p"},
        "title": "T",
    }
    lines = [json.loads(x) for x in written.files[written.main].splitlines()]
    assert [line["role"] for line in lines] == ["user", "assistant", "tool", "user", "assistant"]
    assert lines[0]["injected"] is True and all("message_id" in line for line in lines if line["role"] != "tool")
    assert lines[1]["reasoning_content"] == "hmm" and lines[1]["tool_calls"] == [
        {"id": "c1", "index": 0, "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    ]
    assert lines[2] == {"role": "tool", "content": "a.txt", "tool_call_id": "c1", "name": "bash"}
    assert {"write:thinking-signature", "write:orphan-result", "write:timestamps-usage"} <= set(loss.counts())
    # written twice, the same bytes (message ids are derived, not random)
    again = HARNESS.write(
        _conversation(id=sid, cwd="/home/u/p", started_at="2026-02-03T04:05:06Z", title="T"),
        LossReport(),
        WriteOptions(),
    )
    assert again.files == written.files


def test_writer_ids():
    with pytest.raises(UnsafeId):
        HARNESS.write(_conversation(), LossReport(), WriteOptions(session_id="../escape"))
    loss = LossReport()
    written = HARNESS.write(_conversation(id="ses_abc"), loss, WriteOptions())
    assert {"write:session-id", "write:cwd"} <= set(loss.counts()) and written.session_id.count("-") == 4


def test_store_discovery_and_install(tmp_path, monkeypatch):
    monkeypatch.setenv("VIBE_HOME", str(tmp_path / "vh"))
    assert store.default_root() == tmp_path / "vh"
    monkeypatch.delenv("VIBE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.default_root() == tmp_path / "home" / ".vibe"
    root = tmp_path / "vh"
    shutil.copytree(UNIFIED, root / "logs" / "session" / "unified" / SID)
    written = api.convert(LEGACY, "mistral_vibe")[0]
    paths = api.install(written, "mistral_vibe", root)
    assert paths[0].name == "messages.jsonl" and paths[0].parent.name == "session_20261101_000000_5e551011"
    infos = {i.id: i for i in store.discover(root)}
    assert infos[SID].form == "unified" and infos[SID].path.endswith("CURRENT")
    assert infos["5e551011-0000-4000-8000-0000000c2a01"].form == "legacy"
    assert infos["5e551011-0000-4000-8000-0000000c2a01"].cwd == "/home/user/proj"
    listed = CliRunner().invoke(main, ["list", "--json"], env={"VIBE_HOME": str(root), "HOME": str(tmp_path / "h")})
    assert listed.exit_code == 0 and SID in listed.stdout and "5e551011" in listed.stdout, listed.output


def test_a_session_folder_is_one_session(tmp_path):
    runner = CliRunner()
    for folder in (UNIFIED, LEGACY):
        shown = runner.invoke(main, ["show", str(folder)])
        assert shown.exit_code == 0 and "user" in shown.stdout, shown.output
        verified = runner.invoke(main, ["verify", str(folder)])
        assert verified.exit_code == 0 and "1 file: all byte-identical" in verified.output, verified.output
    out = tmp_path / "out.jsonl"
    converted = runner.invoke(main, ["convert", "--to", "claude_code", str(UNIFIED), "-o", str(out)])
    assert converted.exit_code == 0, converted.output
    assert len(api.to_common(api.load(out)).messages) == 8


def test_cli_install_prints_the_resume_command(tmp_path):
    result = CliRunner().invoke(
        main, ["convert", "--to", "mistral_vibe", "--install", str(UNIFIED)], env={"VIBE_HOME": str(tmp_path)}
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().split(" && ")[-1] == f"vibe --resume {SID}"  # after a cd to the session's folder
    assert (tmp_path / "logs" / "session" / "session_20261201_033936_ada8c86e" / "meta.json").is_file()


def test_registered():
    assert registry.get("mistral_vibe") is HARNESS and HARNESS.check_resume is not None
    assert api.sample("mistral_vibe").name == "messages.jsonl"
