"""Issue 31 item 4: a command envelope is written back in the source's own order and
whitespace (seed 003: envelopes are bijective), while it still says what the Command says."""

from __future__ import annotations

import json

from txcodec import api
from txcodec.model.common import Command

SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
SKILL = (
    "<command-message>changelog</command-message>\n<command-name>/changelog</command-name>\n"
    "<command-args>2.0</command-args>"
)


def _session(body: str) -> bytes:
    common = {"isSidechain": False, "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": SID, "cwd": "/w"}
    line = {"parentUuid": None, "type": "user", "message": {"role": "user", "content": body}, "uuid": "u1", **common}
    reply = {"id": "m1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    answer = {"parentUuid": "u1", "type": "assistant", "message": reply, "uuid": "a1", **common}
    return "".join(json.dumps(x) + "\n" for x in (line, answer)).encode()


def _bodies(written) -> list[str]:
    lines = [json.loads(line) for line in written.files[written.main].splitlines()]
    return [line["content"] for line in lines if line.get("subtype") == "local_command"]


def test_the_source_layout_is_written_back():
    written, loss = api.convert(_session(SKILL), "claude_code")
    assert _bodies(written) == [SKILL]
    assert not [k for k in loss.counts() if k.startswith("write:")]


def test_an_edited_command_is_rendered_anew():
    conv = api.to_common(api.load(_session(SKILL), "claude_code"))
    [command] = conv.messages[0].content
    assert isinstance(command, Command) and command.envelope == SKILL
    command.args = "2.1"  # the recorded layout no longer says this
    written, _ = api.convert(conv, "claude_code")
    [body] = _bodies(written)
    assert body.startswith("<command-name>/changelog</command-name>") and "<command-args>2.1</command-args>" in body


def test_the_usual_layout_is_not_stored_twice():
    usual = (
        "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
        "            <command-args></command-args>"
    )
    [command] = api.to_common(api.load(_session(usual), "claude_code")).messages[0].content
    assert command.envelope is not None and not isinstance(command.envelope, str)
