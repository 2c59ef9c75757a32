"""Issue 31: a conversion that writes no conversation is an error, not a success (a file no
reader made a message of gave a 0-byte file and exit 0)."""

from __future__ import annotations

from click.testing import CliRunner

from txcodec.cli import main

EMPTY = b'{"type":"summary","summary":"only a title","leafUuid":"u1"}\n'


def test_convert_of_no_conversation_fails_and_writes_nothing(tmp_path):
    src = tmp_path / "empty.jsonl"
    src.write_bytes(EMPTY)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["convert", str(src), "--from", "claude_code", "--to", "codex", "-o", str(out)])
    assert result.exit_code == 1
    assert "no conversation to write" in result.output and "Traceback" not in result.output
    assert not out.exists() or not any(out.rglob("*"))


def test_convert_of_a_conversation_still_succeeds(tmp_path):
    src = tmp_path / "one.jsonl"
    src.write_bytes(
        b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n'
    )
    result = CliRunner().invoke(main, ["convert", str(src), "--from", "claude_code", "--to", "codex"])
    assert result.exit_code == 0, result.output
