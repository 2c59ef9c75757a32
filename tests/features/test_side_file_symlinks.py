"""Side files that are symlinks out of the session folder are not followed (issue 10, item 6).

A transcript must not make txcodec read, print or convert a file it does not hold: a
Claude Code ``tool-results/*.txt`` or ``subagents/agent-*.jsonl`` symlink, or a Gemini
subagent chat symlink, leading out of the session folder is left unread and reported; one
that stays inside the folder is still followed. The resume check's copy of a session
leaves such links out too.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from txcodec import api
from txcodec.cli import main
from txcodec.model.loss import LossReport
from txcodec.resume_check.claude_code import place_session

SID = "5e5e5e5e-1111-4222-8333-444444444444"
PERSISTED = "<persisted-output>\nFull output saved to: /p/tool-results/{name}\n</persisted-output>"


def _line(kind: str, uuid: str, parent: str | None, content, **extra) -> dict:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {"id": f"m-{uuid}", "model": "claude-x", "stop_reason": "tool_use"}
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": extra.pop("sid", SID),
        "cwd": "/w",
        "timestamp": "2026-01-01T00:00:00Z",
        "version": "2.1.230",
        "message": message,
        **extra,
    }


def _jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _claude_session(tmp_path: Path, secret_file: Path) -> Path:
    """A session whose tool result names ``tool-results/out.txt`` and ``inside.txt``."""
    project = tmp_path / "projects" / "-w"
    results = project / SID / "tool-results"
    results.mkdir(parents=True)
    (results / "real.txt").write_text("INSIDE-OUTPUT")
    (results / "out.txt").symlink_to(secret_file)
    (results / "inside.txt").symlink_to(results / "real.txt")
    main_file = project / f"{SID}.jsonl"
    main_file.write_bytes(
        _jsonl(
            [
                _line("user", "u1", None, "go"),
                _line(
                    "assistant",
                    "a1",
                    "u1",
                    [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "x"}}],
                ),
                _line(
                    "user",
                    "r1",
                    "a1",
                    [{"type": "tool_result", "tool_use_id": "t1", "content": PERSISTED.format(name="out.txt")}],
                ),
                _line(
                    "assistant",
                    "a2",
                    "r1",
                    [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "y"}}],
                ),
                _line(
                    "user",
                    "r2",
                    "a2",
                    [{"type": "tool_result", "tool_use_id": "t2", "content": PERSISTED.format(name="inside.txt")}],
                ),
            ]
        )
    )
    return main_file


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "elsewhere" / "secret.txt"
    path.parent.mkdir()
    path.write_text("OUTSIDE-SECRET")
    return path


def test_a_claude_tool_result_symlink_out_of_the_session_is_not_read(tmp_path, secret):
    main_file = _claude_session(tmp_path, secret)
    loss = LossReport()
    conversation = api.to_common(api.load(main_file), loss)
    outside_result, inside_result = conversation.messages[2].content[0], conversation.messages[4].content[0]
    assert outside_result.persisted_output is msgspec.UNSET  # the outside file: not read
    assert inside_result.persisted_output == "INSIDE-OUTPUT"  # a link within the folder: followed
    assert loss.counts().get("side-file:symlink-outside") == 1
    for command in (
        ["export", str(main_file)],
        ["export", str(main_file), "--to", "markdown"],
        ["show", str(main_file)],
        ["convert", str(main_file), "--to", "codex"],
    ):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 0, (command, result.output)
        assert "OUTSIDE-SECRET" not in result.output, command


def test_a_claude_subagent_symlink_out_of_the_session_is_not_converted(tmp_path):
    outside = tmp_path / "other-project" / "agent-a0000000000000009.jsonl"
    outside.parent.mkdir()
    outside.write_bytes(
        _jsonl(
            [
                _line("user", "x1", None, "OUTSIDE-AGENT", sid="ffffffff-1111-4222-8333-444444444444"),
                _line("assistant", "x2", "x1", [{"type": "text", "text": "OUTSIDE-REPLY"}]),
            ]
        )
    )
    project = tmp_path / "projects" / "-w"
    subagents = project / SID / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-a0000000000000009.jsonl").symlink_to(outside)
    main_file = project / f"{SID}.jsonl"
    main_file.write_bytes(
        _jsonl([_line("user", "u1", None, "go"), _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}])])
    )
    loss = LossReport()
    conversation = api.to_common(api.load(main_file), loss)
    assert conversation.children == [] and loss.counts().get("side-file:symlink-outside") == 1
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["convert", str(main_file), "--to", "claude_code", "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"OUTSIDE-AGENT" not in written and b"OUTSIDE-REPLY" not in written
    assert not list(out.rglob("agent-*"))


def test_a_gemini_subagent_chat_symlink_out_of_the_folder_is_not_read(tmp_path):
    from txcodec.kit import registry
    from txcodec.kit.registry import WriteOptions
    from txcodec.model.common import Conversation
    from txcodec.model.common import Message
    from txcodec.model.common import Meta
    from txcodec.model.common import Text

    def chat(session_id: str, text: str) -> bytes:
        conversation = Conversation(
            meta=Meta(id=session_id, cwd="/w"),
            messages=[Message("user", [Text(text)]), Message("assistant", [Text("ok")])],
        )
        written = registry.get("gemini_cli").write(conversation, LossReport(), WriteOptions())
        return written.files[written.main]

    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(chat("other", "OUTSIDE-CHAT"))
    chats = tmp_path / "chats"
    (chats / "parent-1").mkdir(parents=True)
    (chats / "parent-1" / "child.jsonl").symlink_to(outside)
    path = chats / "session-2026-01-01T00-00-parent-1.jsonl"
    path.write_bytes(chat("parent-1", "mine"))
    loss = LossReport()
    conversation = api.to_common(api.load(path), loss)
    assert conversation.children == [] and loss.counts().get("side-file:symlink-outside") == 1


def test_the_resume_check_copy_leaves_outside_symlinks_out(tmp_path, secret):
    main_file = _claude_session(tmp_path, secret)
    home, cwd = tmp_path / "home", tmp_path / "work"
    target = place_session(main_file, home, cwd, SID)
    copied = target.parent / SID / "tool-results"
    assert (copied / "real.txt").read_text() == "INSIDE-OUTPUT"
    assert (copied / "inside.txt").read_text() == "INSIDE-OUTPUT"
    assert not (copied / "out.txt").exists() and not (copied / "out.txt").is_symlink()
