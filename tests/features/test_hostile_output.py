"""Issue 33, items 11, 12 and 14: session text that reaches a terminal is text, and a bad
``--endpoint`` or a receiver that does not speak HTTP is one line, never a traceback.

* ``txcodec sql`` printed values as Rich markup: ``[/x]`` raised MarkupError (exit 70) and
  ``[link=…]`` made a live terminal link;
* ``show`` passed OSC sequences (window title, hyperlinks) to the terminal, and with
  ``--color`` CSI ones (clear screen): now shown as ``cat -v`` shows them, unless ``--raw``;
* ``metrics --endpoint`` raised InvalidURL and HTTPException (exit 70).
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from txcodec.cli import main

SID = "0b6e1d0c-55a8-4e57-9d4c-2f1e1a7d9c01"
ESC = "\x1b"
# a window title, a hyperlink, clear-screen and cursor-home, a CR that would overwrite the line
HOSTILE = f"{ESC}]0;owned{chr(7)} {ESC}]8;;http://evil.example{ESC}\\click{ESC}]8;;{ESC}\\ {ESC}[2J{ESC}[H tail\rX"


def _session(tmp_path: Path, text: str) -> Path:
    base = {"sessionId": SID, "cwd": "/tmp/p", "version": "2.1.0", "timestamp": "2026-01-01T00:00:00Z"}
    records = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": text}},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {
                "id": "m1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "ok " + text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
    ]
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- item 14: terminal escapes ----------------------------------------------------------------


@pytest.mark.parametrize("color", ["--no-color", "--color"])
def test_show_neutralises_escape_sequences(tmp_path, color):
    path = _session(tmp_path, HOSTILE)
    result = CliRunner().invoke(main, ["show", color, str(path)])
    assert result.exit_code == 0, result.output
    # colour codes are txcodec's own; none of the session's escapes reaches the terminal
    body = result.output.replace(f"{ESC}[0m", "")
    for sequence in (f"{ESC}]0;", f"{ESC}]8;", f"{ESC}[2J", f"{ESC}[H", "\r"):
        assert sequence not in body, repr(sequence)
    assert "^[]0;owned^G" in result.output and "^[[2J" in result.output


def test_show_raw_passes_the_text_as_it_is(tmp_path):
    path = _session(tmp_path, HOSTILE)
    result = CliRunner().invoke(main, ["show", "--no-color", "--raw", str(path)])
    assert result.exit_code == 0 and f"{ESC}]0;owned" in result.output


def test_safe_text_is_cat_v():
    from txcodec.export.text import safe_text

    assert safe_text("a\tb\nc") == "a\tb\nc"
    assert safe_text("\x1b[31m\x00\x7f\x9b") == "^[[31m^@^?M-^["
    assert safe_text("héllo ✓") == "héllo ✓"


# --- item 11: txcodec sql ---------------------------------------------------------------------


def test_sql_prints_values_as_text_not_markup(tmp_path):
    pytest.importorskip("duckdb")
    query = (
        "select '[/x] closes nothing' as a, '[link=http://evil.example]click[/link]' as b, "
        "chr(27) || ']0;owned' || chr(7) as c"
    )
    result = CliRunner().invoke(main, ["sql", "-d", str(tmp_path), query])
    assert result.exit_code == 0, result.output
    assert "[/x] closes nothing" in result.output
    assert "[link=http://evil.example]click[/link]" in result.output
    assert ESC not in result.output and "^[]0;owned^G" in result.output


# --- item 12: metrics --endpoint ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["http://a b/", "http://host:port/", "http://host:99999/", "http://x/\nHost: y", "http://[::1/", "http:///x"]
)
def test_metrics_refuses_a_bad_url_in_one_line(tmp_path, url):
    path = _session(tmp_path, "hi")
    result = CliRunner().invoke(main, ["metrics", str(path), "--endpoint", url])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "--endpoint" in errors[0], result.output


class _Receiver:
    """A TCP server that reads a request and answers ``reply`` (anything but valid HTTP)."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


REPLIES = {
    "bad-status-line": b"garbage\r\n\r\n",
    "unknown-version": b"HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n",
    "long-header": b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
    "too-many-headers": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % n for n in range(150)) + b"\r\n",
}


@pytest.mark.parametrize("reply", REPLIES.values(), ids=REPLIES.keys())
def test_metrics_reports_a_receiver_that_does_not_speak_http(tmp_path, reply):
    pytest.importorskip("google.protobuf")
    path = _session(tmp_path, "hi")
    receiver = _Receiver(reply)
    try:
        result = CliRunner().invoke(main, ["metrics", str(path), "--endpoint", receiver.url])
    finally:
        receiver.close()
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "127.0.0.1" in errors[0], result.output
