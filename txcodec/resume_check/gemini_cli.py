"""The mock Gemini API, and the real ``gemini`` CLI run offline against it.

The CLI (``@google/gemini-cli``) talks to ``$GOOGLE_GEMINI_BASE_URL`` with the
``@google/genai`` SDK (docs/gemini_cli.md#how-the-real-client-is-driven):

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (the chat turns): answered
  from a script of :class:`Reply` objects, consumed in order, then a default "ok";
- ``POST /v1beta/models/<model>:generateContent`` (utility calls: next-speaker checks,
  summaries, ...): a one-shot JSON answer that does **not** consume the script;
- ``POST /v1beta/models/<model>:countTokens``: a token count.

SSE events are ``data: <json>`` lines; U+2028/U+2029 are escaped because a raw one breaks
the SDK's event splitting (docs/gemini_cli.md#how-the-real-client-is-driven; :func:`~txcodec.resume_check.mock.server.sse`).

:func:`check_resume` installs a session file into a throw-away ``HOME`` (the store is
``$HOME/.gemini``; ``GEMINI_CLI_HOME`` is set to the same folder, so the caller's setting
can never send the run to their real store), runs ``gemini -p continue --resume <sid>`` and
reports the history of the first chat request. The CLI exits 0 and starts a *new* session
when it does not find the file only in some paths (it mostly exits 1 with "Invalid
session identifier"), so "resumed" also requires that the request carried history.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.common import Block, Image, Message, RawBlock, Text, Thinking, ToolResult, ToolUse
from .mock.server import MockServer, Request, Response, json_response, sse
from .process import run_client, version_of
from .report import ClientMissing as ClientMissing
from .report import ResumeReport, require_client

MODEL = "gemini-2.5-pro"
RESUME_PROMPT = "continue"

_STREAM = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:?]+):(streamGenerateContent|generateContent|countTokens)")


# --- scripted replies ----------------------------------------------------------------


@dataclass
class Reply:
    """One model turn: Gemini ``parts`` (``{"text"}``, ``{"text", "thought": true}``,
    ``{"functionCall": {"name", "args"}}``), or an error status."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "STOP"
    status: int = 200
    usage: dict[str, int] = field(
        default_factory=lambda: {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}
    )


def text(value: str = "ok") -> Reply:
    return Reply([{"text": value}])


def call(name: str, args: dict[str, Any], *, say: str | None = None, thought: str | None = None) -> Reply:
    parts: list[dict[str, Any]] = []
    if thought:
        parts.append({"text": thought, "thought": True})
    if say:
        parts.append({"text": say})
    parts.append({"functionCall": {"name": name, "args": args}})
    return Reply(parts)


def _candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        out["finishReason"] = finish
    return out


def stream_events(reply: Reply, model: str) -> list[bytes]:
    """The reply as SSE chunks: one event per part, usage and finish reason on the last."""
    events: list[tuple[str | None, Any]] = []
    parts = reply.parts or [{"text": ""}]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        body: dict[str, Any] = {"candidates": [_candidate([part], reply.finish_reason if last else None)]}
        if last:
            body["usageMetadata"] = reply.usage
        body["modelVersion"] = model
        events.append((None, body))
    return sse(events)


# The system instruction of Gemini CLI's chat-compression calls (``ChatCompressionService``:
# a summary, then a "Critically evaluate the <state_snapshot>" verification, both with
# ``getCompressionPrompt``'s instruction; 0.61.0 bundle), made before a turn's own call
# and not always the same number of them, so they are answered by what they are, not by
# their place in the script.
COMPRESSION_MARKER = "distilling chat history into a structured XML <state_snapshot>"


def is_compression(request: Request) -> bool:
    try:
        body = request.json() or {}
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    return COMPRESSION_MARKER in json.dumps(body.get("systemInstruction") or "")


def handler(script: list[Reply], summary: Reply | None = None):
    """A :class:`MockServer` handler that plays ``script`` on the chat endpoint; with a
    ``summary``, every compression call (:func:`is_compression`, on either endpoint) gets
    that answer and leaves the script alone."""
    queue = list(script)

    def handle(request: Request, server: MockServer) -> Response:
        match = _STREAM.match(request.path)
        if request.method != "POST" or match is None:
            return json_response({})
        model, method = match.groups()
        if method == "countTokens":
            return json_response({"totalTokens": 10})
        if summary is not None and is_compression(request):
            if method == "generateContent":
                return json_response({"candidates": [_candidate(summary.parts, "STOP")], "usageMetadata": summary.usage})
            return Response(content_type="text/event-stream", chunks=stream_events(summary, model))
        if method == "generateContent":
            return json_response(
                {"candidates": [_candidate([{"text": "{}"}], "STOP")], "usageMetadata": {"totalTokenCount": 1}}
            )
        reply = queue.pop(0) if queue else text("ok")
        if reply.status != 200:
            body = {"error": {"code": reply.status, "message": "mock error", "status": "INTERNAL"}}
            return json_response(body, status=reply.status)
        return Response(content_type="text/event-stream", chunks=stream_events(reply, model))

    return handle


def chat_requests(server: MockServer) -> list[Request]:
    """The chat-turn requests (``streamGenerateContent``), in order."""
    return [r for r in server.requests if ":streamGenerateContent" in r.path]


# --- request contents -> Common ------------------------------------------------------


def contents_to_messages(contents: list[Any]) -> list[Message]:
    """Gemini ``contents`` (``{role: user|model, parts}``) as Common messages: a
    ``functionResponse`` becomes a tool_result, a ``thought`` part a thinking block."""
    messages = []
    for content in contents or []:
        if not isinstance(content, dict):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        blocks = [part_to_block(p) for p in content.get("parts") or []]
        messages.append(Message(role=role, content=blocks))
    return messages


def part_to_block(part: Any) -> Block:
    if not isinstance(part, dict):
        return Text(part) if isinstance(part, str) else RawBlock("part", part)
    if "functionCall" in part:
        fc = part["functionCall"] or {}
        return ToolUse(id=fc.get("id") or "", name=fc.get("name") or "", input=fc.get("args", {}))
    if "functionResponse" in part:
        fr = part["functionResponse"] or {}
        return ToolResult(tool_use_id=fr.get("id") or "", content=response_text(fr.get("response")))
    if "text" in part:
        if part.get("thought"):
            return Thinking(thinking=part["text"] or "")
        return Text(part["text"] or "")
    if "inlineData" in part and isinstance(part["inlineData"], dict):
        data = part["inlineData"]
        return Image(media_type=data.get("mimeType", ""), data=data.get("data", ""))
    return RawBlock("part", part)


def response_text(response: Any) -> str:
    """A ``functionResponse.response`` as text: the CLI wraps results as ``{output}`` or
    ``{error}``; anything else is shown as JSON."""
    if isinstance(response, dict) and len(response) == 1:
        (key, value), = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value
    return json.dumps(response, ensure_ascii=False, sort_keys=True)


# --- running the CLI -------------------------------------------------------------------



def gemini_binary() -> Path:
    return require_client("gemini")


@functools.lru_cache(maxsize=4)
def client_version(binary: Path | None = None) -> str:
    # sandboxed like every run: even --version registers a project under ~/.gemini
    code, out, _ = version_of(binary or gemini_binary(), timeout=60, home_vars=("GEMINI_CLI_HOME",))
    version = out.strip().splitlines()[-1] if out.strip() else ""
    return f"gemini {version}" if code == 0 and version else "gemini (unknown version)"


SETTINGS: dict[str, Any] = {
    # without it the CLI picks a "gateway" auth and -p exits 41 (docs/gemini_cli.md#how-the-real-client-is-driven)
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        # the default deletes sessions older than 30 days: a converted old session would vanish
        "sessionRetention": {"enabled": False},
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    requests: list[Request]
    gemini_home: Path  # the ~/.gemini folder of the run
    cwd: Path

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``--output-format stream-json`` events."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            if event.get("type") == "init":
                return event.get("session_id")
        return None

    def sessions(self) -> list[Path]:
        """Main session files (``tmp/<slug>/chats/session-*.jsonl``), oldest name first."""
        return sorted((self.gemini_home / "tmp").glob("*/chats/session-*.json*"))

    @property
    def contents(self) -> list[list[Any]]:
        return [(r.json() or {}).get("contents", []) for r in chat_requests_of(self.requests)]


def chat_requests_of(requests: list[Request]) -> list[Request]:
    return [r for r in requests if ":streamGenerateContent" in r.path]


@dataclass
class Sandbox:
    """A throw-away HOME (its ``.gemini`` is the store) and project folder."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="txcodec-gemini-")))
    model: str = MODEL

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def gemini_home(self) -> Path:
        return self.home / ".gemini"

    @property
    def cwd(self) -> Path:
        return self.root / "project"

    def __enter__(self) -> Sandbox:
        self.gemini_home.mkdir(parents=True, exist_ok=True)
        self.cwd.mkdir(parents=True, exist_ok=True)
        settings = self.gemini_home / "settings.json"
        if not settings.exists():
            settings.write_text(json.dumps(SETTINGS, indent=2))
        return self

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def env(self, url: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GEMINI_CLI_HOME": str(self.home),
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": "dummy",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "CI": "1",
        }

    def run(self, prompt: str, *args: str, script: list[Reply] | None = None, timeout: float = 90,
            summary: Reply | None = None) -> Run:
        binary = gemini_binary()
        with MockServer(handler(script or [], summary)) as server:
            command = [
                str(binary), "-p", prompt, "--output-format", "stream-json", "--yolo", "--model", self.model, *args,
            ]
            code, out, err = run_client(command, self.cwd, self.env(server.url), timeout, "gemini")
            requests = list(server.requests)
        return Run(code, out, err, requests, self.gemini_home, self.cwd)


def check_resume(
    path: str | os.PathLike[str], prompt: str = RESUME_PROMPT, timeout: float = 90, **_: Any
) -> ResumeReport:
    """Install the Gemini session at ``path`` for a throw-away project, run
    ``gemini -p <prompt> --resume <sid>`` and report the history the CLI sent."""
    from ..api import read_bytes
    from ..harnesses.gemini_cli.store import install_session, session_id_of

    path = Path(path)
    data = read_bytes(path)
    session_id = session_id_of(data) or ""
    binary = gemini_binary()
    with Sandbox() as box:
        name = path.name[: -len(".zst")] if path.name.endswith(".zst") else path.name
        install_session(box.gemini_home, str(box.cwd), name, data)
        run = box.run(prompt, "--resume", session_id, timeout=timeout)
        first = run.contents[0] if run.contents else []
        sent = contents_to_messages(first)
        if sent and sent[-1].role == "user" and _is_prompt(sent[-1], prompt):
            sent = sent[:-1]  # the new turn, not history
        rejected = []
        if run.exit_code == 0 and run.requests and not sent:
            rejected.append("gemini started a new session: the request carried no history from the file")
        if run.session_id and session_id and run.session_id != session_id:
            rejected.append(f"gemini ran session {run.session_id}, not {session_id}")
        return ResumeReport(
            harness="gemini_cli",
            client=client_version(binary),
            session_id=session_id,
            exit_code=run.exit_code,
            requests=len(chat_requests_of(run.requests)),
            sent=sent,
            rejected=rejected,
            stderr=run.stderr[-4000:],
        )


def _is_prompt(message: Message, prompt: str) -> bool:
    texts = [b.text for b in message.content if isinstance(b, Text)]
    return bool(texts) and texts[-1].strip() == prompt
