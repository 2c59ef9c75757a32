"""Shared plumbing for the drivers of CLIs that talk Chat Completions (every client but
Claude Code, Codex and Gemini CLI): a throw-away HOME and project folder, one run against
:class:`~txcodec.resume_check.mock.openai_chat.ChatMock`, the history a resumed session
sent, in Common, and the report made of it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import ClassVar

from ..model.common import Message
from ..model.common import Text
from .mock.openai_chat import ChatMock
from .mock.openai_chat import Reply
from .mock.openai_chat import chat_requests
from .mock.openai_chat import request_messages
from .mock.server import MockServer
from .mock.server import Request
from .process import client_env
from .process import run_client
from .report import ClientMissing as ClientMissing  # qwen and pi import it from here
from .report import ResumeReport
from .report import require_client
from .sandbox import TempFolders
from .sandbox import temp_root


def binary(name: str, package: str) -> Path:
    return require_client(name)


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    requests: list[Request]
    rejected: list[str]
    home: Path
    cwd: Path

    @property
    def bodies(self) -> list[Any]:
        return [r.json() for r in self.requests]

    def history(self, prompt: str, strip: Callable[[Text], bool] | None = None) -> list[Message]:
        """What the first request carried before ``prompt`` (:func:`history_sent`); [] when
        the client asked the model nothing."""
        if not self.bodies:
            return []
        return history_sent(self.bodies[0], prompt) if strip is None else history_sent(self.bodies[0], prompt, strip)


@dataclass
class Sandbox(TempFolders):
    """``with Sandbox("qwen") as box: box.run(...)``: HOME and project under one temp dir.
    A client's subclass names itself (``NAME``, the temp dir's prefix) and its store's
    folder below HOME (``STORE``)."""

    prefix: str = ""
    root: Path = field(init=False)
    NAME: ClassVar[str] = ""
    STORE: ClassVar[str] = ""

    def __post_init__(self) -> None:
        self.root = temp_root(self.prefix or self.NAME)

    @property
    def store(self) -> Path:
        return self.home / self.STORE

    def run(
        self,
        argv: list[str],
        script: list[Reply] | None,
        env: Callable[[str], dict[str, str]],
        prepare: Callable[[str], None] | None = None,
        timeout: float = 90,
    ) -> Run:
        mock = ChatMock(list(script or []))
        with MockServer(mock) as server:
            if prepare is not None:
                prepare(server.url)
            environ = client_env(self.home, env(server.url))
            code, out, err = run_client(argv, self.cwd, environ, timeout)
            return Run(code, out, err, chat_requests(server), list(mock.rejected), self.home, self.cwd)


def history_sent(body: Any, prompt: str, strip: Callable[[Text], bool] = lambda t: False) -> list[Message]:
    """The conversation a resumed client sent before the new prompt: the request's
    messages in Common, without the client's own injected text (``strip``) and without
    the trailing prompt."""
    messages = request_messages(body)
    for message in messages:
        message.content = [b for b in message.content if not (isinstance(b, Text) and strip(b))]
    if messages and messages[-1].role == "user":
        last = messages[-1]
        if last.content and isinstance(last.content[-1], Text) and last.content[-1].text == prompt:
            last.content.pop()
        if not last.content:
            messages.pop()
    return [m for m in messages if m.content]


def resume_report(
    harness: str, client: str, session_id: str, run: Run, sent: list[Message], who: str, output: str | None = None
) -> ResumeReport:
    """The report of a resume run: what the mock rejected, and a run that asked the model
    without the file's history (``who`` started a new session). ``output``: the tail of the
    client's output to keep (stderr then stdout unless given)."""
    rejected = list(run.rejected)
    if run.exit_code == 0 and run.requests and not sent:
        rejected.append(f"{who} started a new session: the request holds no history from the file")
    return ResumeReport(
        harness,
        client,
        session_id,
        run.exit_code,
        len(run.requests),
        sent,
        rejected,
        (run.stderr + run.stdout if output is None else output)[-4000:],
    )


def document_session_id(data: bytes) -> str | None:
    """The ``sessionId`` of a session kept as one JSON document (cline, Continue)."""
    import json

    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value.get("sessionId") if isinstance(value, dict) and isinstance(value.get("sessionId"), str) else None


def rewrite_cwd(data: bytes, cwd: str, key: str = "cwd") -> bytes:
    """Point every line's ``cwd`` at the folder the check runs in (the clients only
    resume a session in its own project folder); other bytes are kept."""
    import json

    out = []
    for line in data.split(b"\n"):
        try:
            value = json.loads(line) if line.strip() else None
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get(key), str) and value[key] != cwd:
            value[key] = cwd
            line = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(line)
    return b"\n".join(out)
