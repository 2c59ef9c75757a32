"""A mock OpenAI Chat Completions API for :class:`~txcodec.resume_check.mock.server.MockServer`.

Most clients (Qwen Code, pi, opencode, cline, ...: the drivers built on
:mod:`txcodec.resume_check.chat_cli`) speak Chat Completions to an OpenAI-compatible
endpoint (docs/qwen_code.md#how-the-real-client-is-driven).
``POST /v1/chat/completions`` answers from a script of :class:`Reply`
objects, consumed in order (then a default "ok" text reply): as SSE ``chat.completion.chunk``
events ending in ``data: [DONE]`` when the request has ``"stream": true``, else as one
``chat.completion`` body. ``GET /v1/models`` lists the mock model; any other path gets a
harmless empty success and is recorded.

**Strict mode** answers 400 where the real API would for the history a resumed client
sends: a role outside system/developer/user/assistant/tool, a ``tool`` message whose
``tool_call_id`` no earlier assistant ``tool_calls`` entry named, an assistant tool call
left without its ``tool`` answer before the next user or assistant turn, and
``function.arguments`` that are not a JSON string.

:func:`request_messages` turns a request's ``messages`` back into Common messages, so a
resume check can compare what the client sent with what the file says.
"""

from __future__ import annotations

import itertools
import json
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
from ...model.tools import tool_kind
from .server import MockServer
from .server import Request
from .server import Response
from .server import ScriptedMock
from .server import json_arguments
from .server import json_response
from .server import messages_problem
from .server import sse

MODEL = "mock-model"
PATH = "/v1/chat/completions"

# --- scripted replies ----------------------------------------------------------------


@dataclass
class Call:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    """One model reply: optional reasoning, text and tool calls, or an error status."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    reasoning: str = ""
    status: int = 200
    error_message: str = "mock error"
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    )

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"


def text(value: str = "ok") -> Reply:
    return Reply(text=value)


def tool_call(name: str, arguments: dict[str, Any], id: str = "call_mock_1", *, say: str = "") -> Reply:
    return Reply(text=say, calls=[Call(id, name, arguments)])


def thinking(thought: str, then: str = "ok") -> Reply:
    return Reply(text=then, reasoning=thought)


def error(status: int, message: str = "mock error") -> Reply:
    return Reply(status=status, error_message=message)


# --- strict validation ---------------------------------------------------------------

_ROLES = {"system", "developer", "user", "assistant", "tool"}


def violations(body: Any) -> list[str]:
    """Why a Chat Completions endpoint would answer 400 to this body ([] when not)."""
    problem = messages_problem(body)
    if problem is not None:
        return [problem]
    messages = body["messages"]
    out: list[str] = []
    called: set[str] = set()
    pending: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            out.append(f"{where}.role: must be one of {sorted(_ROLES)}")
            continue
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in called:
                out.append(f"{where}: tool message answers unknown tool_call_id {call_id!r}")
            elif call_id in pending:
                pending.remove(call_id)
            continue
        if role in ("user", "assistant") and pending:
            out.append(f"{where}: tool_calls without a tool message before it: {', '.join(pending)}")
            pending = []
        if role == "assistant":
            for j, call in enumerate(message.get("tool_calls") or []):
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
                    out.append(f"{where}.tool_calls.{j}.function.arguments: must be a JSON string")
                    continue
                if isinstance(call.get("id"), str):
                    called.add(call["id"])
                    pending.append(call["id"])
    return out


# --- the handler ---------------------------------------------------------------------


@dataclass
class ChatMock(ScriptedMock):
    """The handler: ``MockServer(ChatMock([tool_call(...), text("done")]))``."""

    script: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=text)
    _counter: Any = field(default_factory=lambda: itertools.count(1))

    def __call__(self, request: Request, server: MockServer) -> Response:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path.endswith("/chat/completions"):
            return self._complete(request, server)
        self.other_paths.append(f"{request.method} {path}")
        if path.endswith("/models"):
            return json_response({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "mock"}]})
        return json_response({})

    def _complete(self, request: Request, server: MockServer) -> Response:
        try:
            body = request.json()
        except ValueError:
            return _error(400, "body: not valid JSON")
        refused = self.refusal(violations(body) if self.strict else [], server)
        if refused is not None:
            return _error(400, refused)
        reply = self.script.pop(0) if self.script else self.default
        if reply.status != 200:
            return _error(reply.status, reply.error_message)
        model = body.get("model") if isinstance(body.get("model"), str) else MODEL
        ident = f"chatcmpl-mock-{next(self._counter):04d}"
        if body.get("stream"):
            return Response(200, content_type="text/event-stream", chunks=_stream(reply, ident, model))
        return json_response(_completion(reply, ident, model))


def _error(status: int, message: str) -> Response:
    return json_response({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status)


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
        for i, c in enumerate(reply.calls)
    ]


def _completion(reply: Reply, ident: str, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in _tool_calls(reply)]
    return {
        "id": ident,
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": dict(reply.usage),
    }


def _stream(reply: Reply, ident: str, model: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> tuple[None, dict[str, Any]]:
        body = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        body.update(extra)
        return None, body

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.reasoning:
        events.append(chunk({"reasoning_content": reply.reasoning}))
    if reply.text:
        events.append(chunk({"content": reply.text}))
    if reply.calls:
        events.append(chunk({"tool_calls": _tool_calls(reply)}))
    events.append(chunk({}, reply.finish_reason, usage=dict(reply.usage)))
    return sse(events) + [b"data: [DONE]\n\n"]


def chat_requests(server: MockServer) -> list[Request]:
    """The model requests a client made (not model listings or other probes)."""
    return [r for r in server.requests if r.method == "POST" and r.path.split("?", 1)[0].endswith("/chat/completions")]


# --- request body -> Common ----------------------------------------------------------


def request_messages(body: Any) -> list[Message]:
    """A request's ``messages`` as Common messages. System/developer messages (the
    client's own instructions) are left out; ``tool`` messages become ``tool_result``
    blocks of a user message, merged with the user turn that follows them."""
    messages = body.get("messages") if isinstance(body, dict) else None
    out: list[Message] = []
    names: dict[str, str] = {}
    for message in messages or []:
        if not isinstance(message, dict) or message.get("role") in ("system", "developer"):
            continue
        role = message.get("role")
        if role == "assistant":
            blocks: list[Block] = []
            reasoning = message.get("reasoning_content") or message.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                blocks.append(Thinking(reasoning))
            blocks.extend(_parts(message.get("content")))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = function.get("name", "")
                names[call.get("id", "")] = name
                blocks.append(
                    ToolUse(call.get("id", ""), name, json_arguments(function.get("arguments")), tool_kind(name))
                )
            out.append(Message("assistant", blocks))
            continue
        if role == "tool":
            result = ToolResult(message.get("tool_call_id", ""), _result_content(message.get("content")))
            if out and out[-1].role == "user" and all(isinstance(b, ToolResult) for b in out[-1].content):
                out[-1].content.append(result)
            else:
                out.append(Message("user", [result]))
            continue
        blocks = _parts(message.get("content"))
        if out and out[-1].role == "user" and all(isinstance(b, ToolResult) for b in out[-1].content):
            out[-1].content.extend(blocks)  # the turn that follows tool results joins them
        else:
            out.append(Message("user", blocks))
    return out


def _result_content(value: Any) -> str | list[Block]:
    if isinstance(value, str):
        return value
    return _parts(value)


def _parts(content: Any) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else [content]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            blocks.append(Text(part.get("text", "")))
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append(Image(media_type=media, data=data))
            else:
                blocks.append(Image(url=url))
        else:
            blocks.append(RawBlock(str(kind), part))
    return blocks
