"""Ids from a source are data, never paths or shell text (issue 10, items 3 and 4).

- the Gemini reader does not read the folder a ``sessionId`` names (``../victim``, an
  absolute path), and a 400-character one still reads;
- every registered writer, on generated conversations with hostile ids, cwds, agent ids
  and artifact paths, returns only safe relative names (hypothesis);
- a source of each of the 7 formats whose id is ``$(touch ...)``, a UUID with a trailing
  newline or ``../..``, converted with ``--install`` to every store: the printed resume
  command, run by a shell, is one harmless argument, and every file lands in the store.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from txcodec import api
from txcodec.cli import main
from txcodec.core import ids
from txcodec.core.errors import UnsafeId
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Artifact
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport

PLACEHOLDER = "11111111-2222-4333-8444-555555555555"


def _conversation(session_id=PLACEHOLDER, cwd="/tmp/project", text="hello", **meta) -> Conversation:
    return Conversation(
        meta=Meta(id=session_id, cwd=cwd, started_at="2026-01-02T03:04:05.000Z", **meta),
        messages=[
            Message("user", [Text(text)], timestamp="2026-01-02T03:04:05.000Z"),
            Message(
                "assistant",
                [Text("answer"), ToolUse("call_1", "Bash", {"command": "ls"})],
                timestamp="2026-01-02T03:04:06.000Z",
            ),
            Message("user", [ToolResult("call_1", "a.txt")], timestamp="2026-01-02T03:04:07.000Z"),
            Message("assistant", [Text("done")], timestamp="2026-01-02T03:04:08.000Z"),
        ],
    )


# --- the rules themselves ------------------------------------------------------------------


def test_the_rules_match_whole_strings():
    assert ids.is_uuid(PLACEHOLDER) and not ids.is_uuid(PLACEHOLDER + "\n") and not ids.is_uuid(" " + PLACEHOLDER)
    assert ids.is_safe_id("agent-1.v2_x") and ids.is_safe_id("a" * ids.MAX_ID)
    for bad in ("", ".", "..", ".hidden", "a/b", "a\\b", "a\nb", "ok\n", "$(touch x)", "a" * (ids.MAX_ID + 1), None, 7):
        assert not ids.is_safe_id(bad), bad
    for bad in ("/abs", "a/../b", "a//b", "a/./b", "a\x00b", "a\nb", "a\\b", "", "a/", "x/" + "n" * 256):
        assert not ids.is_safe_relpath(bad), bad
    assert ids.is_safe_relpath("-tmp-p/" + PLACEHOLDER + "/subagents/agent-a0.jsonl")
    with pytest.raises(UnsafeId):
        ids.check_id("../x")
    assert isinstance(UnsafeId("x"), ValueError)


# --- item 3: the Gemini reader and the folder a sessionId names ------------------------------


def _gemini_chat(session_id: str, text: str) -> bytes:
    written = registry.get("gemini_cli").write(_conversation(text=text), LossReport(), WriteOptions(session_id="s1"))
    lines = written.files[written.main].split(b"\n")
    header = json.loads(lines[0])
    header["sessionId"] = session_id
    return b"\n".join([json.dumps(header).encode(), *lines[1:]])


@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_a_gemini_session_id_does_not_name_a_folder_to_read(tmp_path, kind):
    chats = tmp_path / "store" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    victim = tmp_path / "store" / "tmp" / "proj" / "victim"
    victim.mkdir()
    (victim / "other.jsonl").write_bytes(_gemini_chat("other", "VICTIM-SECRET"))
    sid = "../victim" if kind == "relative" else str(victim)
    path = chats / "session-2026-01-02T03-04-x.jsonl"
    path.write_bytes(_gemini_chat(sid, "mine"))
    loss = LossReport()
    conversation = api.to_common(api.load(path), loss)
    assert conversation.children == [] and "subagent:unsafe-id" in loss.counts()
    assert b"VICTIM-SECRET" not in msgspec.json.encode(conversation)
    for command in (
        ["show", str(path)],
        ["export", str(path), "--to", "markdown"],
        ["convert", str(path), "--to", "claude_code"],
    ):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 0, (command, result.output)
        assert "VICTIM-SECRET" not in result.output, command


def test_a_gemini_session_id_of_400_characters_still_reads(tmp_path):
    path = tmp_path / "session-2026-01-02T03-04-y.jsonl"
    path.write_bytes(_gemini_chat("x" * 400, "long id"))
    loss = LossReport()
    conversation = api.to_common(api.load(path), loss)
    assert conversation.meta.id == "x" * 400 and [m.role for m in conversation.messages][:2] == ["user", "assistant"]
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == 0 and "long id" in result.output, result.output


def test_a_gemini_subagent_folder_named_by_a_safe_id_is_still_read(tmp_path):
    """The check keeps the real layout working: chats/<parent id>/<child>.jsonl."""
    chats = tmp_path / "chats"
    (chats / "parent-1").mkdir(parents=True)
    (chats / "parent-1" / "child.jsonl").write_bytes(_gemini_chat("child-1", "from the child"))
    path = chats / "session-2026-01-02T03-04-p.jsonl"
    path.write_bytes(_gemini_chat("parent-1", "parent"))
    conversation = api.to_common(api.load(path), LossReport())
    assert [c.link.agent_id for c in conversation.children] == ["child-1"]


# --- item 4: every writer returns safe names (generated conversations) ------------------------

HOSTILE = [
    "$(touch /tmp/txcodec-pwned)",
    "../../../etc/passwd",
    "/etc/passwd",
    PLACEHOLDER + "\n",
    "a\x00b",
    "..",
    ".",
    "",
    "x" * 400,
    "back\\slash",
    "new\nline",
    "a/b",
    "~root",
    "-rf",
    " ",
]
# lone surrogates are left to the encoding tests: here only what names a file
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_ids = st.one_of(st.sampled_from(HOSTILE), _text, st.just(PLACEHOLDER))
_cwds = st.one_of(st.sampled_from(HOSTILE + ["/tmp/ok", "/", "relative/dir"]), _text)


@st.composite
def conversations(draw) -> Conversation:
    conversation = _conversation(session_id=draw(_ids), cwd=draw(_cwds), title=draw(st.one_of(st.just("T"), _ids)))
    artifact_path = draw(st.one_of(st.sampled_from(HOSTILE), _text))
    conversation.messages[1].content.append(Artifact(path=artifact_path, data="aGk="))
    children = []
    for n in range(draw(st.integers(0, 2))):
        child = _conversation(session_id=draw(_ids), cwd=draw(_cwds), text=f"child {n}")
        children.append(
            Child(link=ChildLink(via="meta.toolUseId", agent_id=draw(_ids), tool_use_id=draw(_ids)), conversation=child)
        )
    conversation.children = children
    return conversation


WRITERS = sorted(name for name, h in registry.harnesses().items() if h.write is not None)


@pytest.mark.parametrize("harness", WRITERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation=conversations(), stdin_side=st.booleans())
def test_every_writer_returns_only_safe_relative_names(harness, conversation, stdin_side):
    options = WriteOptions(stdin_side=stdin_side and harness == "stream_json")
    try:
        written = registry.get(harness).write(conversation, LossReport(), options)
    except UnsafeId:
        # a cwd too long for a folder name (the client could not make it either) is refused
        assert len(conversation.meta.cwd.encode()) > 200, conversation.meta.cwd
        return
    assert written.files
    for rel in written.files:
        assert ids.is_safe_relpath(rel), (harness, rel)
        for bad in HOSTILE[:4]:
            assert bad not in rel, (harness, rel)


@pytest.mark.parametrize("harness", WRITERS)
def test_an_unusable_source_id_is_replaced_and_reported(harness):
    loss = LossReport()
    written = registry.get(harness).write(_conversation(session_id="$(touch /tmp/x)"), loss, WriteOptions())
    assert "$(" not in written.main
    assert "write:session-id" in loss.counts() or "write:file-name" in loss.counts(), loss.counts()


@pytest.mark.parametrize("harness", [h for h in WRITERS if registry.get(h).store is not None])
def test_a_callers_unusable_session_id_is_refused(harness):
    with pytest.raises(UnsafeId):
        registry.get(harness).write(_conversation(), LossReport(), WriteOptions(session_id="../../x"))


def test_a_claude_source_with_an_empty_cwd_does_not_name_the_root():
    written = registry.get("claude_code").write(_conversation(cwd=""), LossReport(), WriteOptions())
    assert written.main == f"-/{PLACEHOLDER}.jsonl"


# --- item 4: the printed resume command, from each of the 7 source formats ---------------------

SOURCES = ["claude_code", "codex", "stream_json", "gemini_cli", "qwen_code", "pi", "common"]
TARGETS = ["claude_code", "codex", "gemini_cli", "qwen_code", "pi"]
CLIENT_WORD = {"claude_code": "claude", "codex": "codex", "gemini_cli": "gemini", "qwen_code": "qwen", "pi": "pi"}


def _source(fmt: str, session_id: str, folder: Path) -> Path:
    """A session of format ``fmt`` whose id is ``session_id``: written with a placeholder
    UUID, which is then replaced in the bytes (JSON-escaped) wherever it occurs."""
    conversation = _conversation()
    if fmt == "common":
        data = msgspec.json.encode(conversation)
        name = "source.common.json"
    else:
        written = registry.get(fmt).write(conversation, LossReport(), WriteOptions(session_id=PLACEHOLDER))
        data, name = written.files[written.main], "source" + ("".join(Path(written.main).suffixes[-1:]) or ".jsonl")
    escaped = json.dumps(session_id)[1:-1].encode()
    path = folder / name
    path.write_bytes(data.replace(PLACEHOLDER.encode(), escaped))
    return path


@pytest.fixture
def stores(tmp_path, monkeypatch):
    root = tmp_path / "stores"
    env = {
        "CLAUDE_CONFIG_DIR": root / "claude",
        "CODEX_HOME": root / "codex",
        "GEMINI_CLI_HOME": root / "gemini",
        "QWEN_HOME": root / "qwen",
        "PI_CODING_AGENT_DIR": root / "pi",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return root


@pytest.mark.parametrize(
    "session_id", ["$(touch {marker})", PLACEHOLDER + "\n", "../../../{name}"], ids=["command", "newline", "dotdot"]
)
@pytest.mark.parametrize("source", SOURCES)
def test_resume_commands_and_installed_files_from_hostile_ids(source, session_id, stores, tmp_path):
    marker = tmp_path / "pwned"
    session_id = session_id.format(marker=marker, name="escaped")
    src = _source(source, session_id, tmp_path)
    if source != "common":
        assert api.to_common(api.load(src), LossReport()).meta.id == session_id  # the id reached the reader
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    for target in TARGETS:
        args = ["convert", str(src), "--to", target, "--install", "--cwd", str(project)]
        if source == "common":
            args += ["--from", "common"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (source, target, result.output)
        line = result.stdout.strip().splitlines()[0].removeprefix(f"cd {shlex.quote(str(project))} && ")
        words = shlex.split(line)
        assert words[0] == CLIENT_WORD[target] and len(words) == 3, line
        assert ids.is_safe_id(words[2]), (source, target, line)
        # what a user pastes into a shell: the id is one argument, never a command
        echoed = subprocess.run(["sh", "-c", "printf '%s\\n' " + line.split(" ", 1)[1]], capture_output=True, text=True)
        assert echoed.stdout.splitlines() == words[1:], (line, echoed.stdout)
        for installed in (p for p in stores.rglob("*") if p.is_file()):
            assert "\n" not in installed.name and installed.resolve().is_relative_to(stores.resolve()), installed
    assert not marker.exists()
    assert not (tmp_path.parent / "escaped").exists() and not list(tmp_path.glob("escaped*"))


@pytest.mark.parametrize("harness", ["codex", "qwen_code"])
def test_the_resume_check_refuses_an_id_that_would_name_a_file_outside(harness, tmp_path):
    """check-resume installs the file under its id in a throw-away store: an id such as
    ``../../x`` is refused before any file is written or any client started."""
    written = registry.get(harness).write(_conversation(), LossReport(), WriteOptions(session_id=PLACEHOLDER))
    path = tmp_path / "session.jsonl"
    path.write_bytes(
        written.files[written.main].replace(PLACEHOLDER.encode(), b"../../../escaped-" + PLACEHOLDER.encode())
    )
    with pytest.raises(UnsafeId):
        registry.get(harness).check_resume(path)
