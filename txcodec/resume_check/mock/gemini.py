"""A mock Gemini API for :class:`~txcodec.resume_check.mock.server.MockServer`, the one
the real ``gemini`` CLI (``@google/gemini-cli``, :mod:`txcodec.resume_check.gemini_cli`)
talks to through ``$GOOGLE_GEMINI_BASE_URL`` with the ``@google/genai`` SDK
(docs/gemini_cli.md#how-the-real-client-is-driven):

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (the chat turns): answered
  from a script of :class:`Reply` objects, consumed in order, then a default "ok";
- ``POST /v1beta/models/<model>:generateContent`` (utility calls: next-speaker checks,
  summaries, ...): a one-shot JSON answer that does **not** consume the script;
- ``POST /v1beta/models/<model>:countTokens``: a token count.

SSE events are ``data: <json>`` lines; U+2028/U+2029 are escaped because a raw one breaks
the SDK's event splitting (docs/gemini_cli.md#how-the-real-client-is-driven;
:func:`~txcodec.resume_check.mock.server.sse`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ...model.common import Block
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from .server import MockServer
from .server import Request
from .server import Response
from .server import json_response
from .server import sse

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
                return json_response(
                    {"candidates": [_candidate(summary.parts, "STOP")], "usageMetadata": summary.usage}
                )
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
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value
    return json.dumps(response, ensure_ascii=False, sort_keys=True)
