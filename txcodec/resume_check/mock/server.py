"""A mock model server on 127.0.0.1 for driving the real agent CLIs offline.

The real APIs are not reachable here, so the conformance tests (and ``txcodec
check-resume``) point each CLI at one of these. The server records every request body
and answers from a script: each API module (anthropic, responses, gemini, openai_chat)
supplies a handler that turns a scripted reply into that API's wire format.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    chunks: list[bytes] | None = None  # sent one by one (server-sent events)


Handler = Callable[[Request, "MockServer"], Response]


def json_arguments(value: Any) -> Any:
    """A tool call's arguments as a client sends them, a JSON string, read back into the
    object it encodes; text that is not JSON stays text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def messages_problem(body: Any) -> str | None:
    """The first 400 of both the Messages and the Chat Completions APIs: a body that is not
    an object, or holds no ``messages``; None when the messages can be checked one by one."""
    if not isinstance(body, dict):
        return "body: not an object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return None


@dataclass
class ScriptedMock:
    """What the strict handlers (Anthropic Messages, Chat Completions) share: replies played
    from ``script`` in order, then ``default``; the paths they do not model, recorded; and in
    ``strict`` mode a request the real API would refuse, recorded in ``rejected`` and in the
    server's ``state["rejected"]``."""

    script: list[Any] = field(default_factory=list)
    strict: bool = True
    default: Any = None
    rejected: list[str] = field(default_factory=list)
    other_paths: list[str] = field(default_factory=list)

    def refusal(self, problems: list[str], server: MockServer) -> str | None:
        """The 400 message for ``problems`` (the API's rules the body breaks), which are
        recorded; None when there are none or the mock is not strict."""
        if not self.strict or not problems:
            return None
        self.rejected.extend(problems)
        server.state.setdefault("rejected", []).extend(problems)
        return "; ".join(problems)


@dataclass
class MockServer:
    """``with MockServer(handler) as server: ... server.url ... server.requests``."""

    handler: Handler
    requests: list[Request] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)  # for handlers that keep a script
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> MockServer:
        server = self
        lock = threading.Lock()

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with lock:
                    server.requests.append(request)
                    reply = server.handler(request, server)
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                if reply.chunks is None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    """Server-sent events; U+2028/U+2029 are escaped, since some SDKs split on them, and
    so is a lone surrogate (a model can send one as ``\\ud83d``; it has no UTF-8 form)."""
    chunks = []
    for event, data in events:
        text = json.dumps(data, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
        text = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
        head = f"event: {event}\n" if event else ""
        chunks.append(f"{head}data: {text}\n\n".encode())
    return chunks


def json_response(value: Any, status: int = 200) -> Response:
    return Response(status=status, body=json.dumps(value).encode())
