"""A mock Anthropic Messages API for :class:`~txcodec.resume_check.mock.server.MockServer`.

``POST /v1/messages`` answers from a script of :class:`Reply` objects, consumed in order
(then a default "ok" text reply), as SSE when the request has ``"stream": true`` and as
one JSON body otherwise. Any other path gets a harmless empty success, so a client
probing an endpoint we do not model keeps going; the paths are recorded on the server.

**Strict mode** answers 400 where the real API would (the rules are in :func:`violations`)
and records each rejection in ``server.state["rejected"]``. Each rule names its source
in a comment beside its check: the Messages API documentation
(platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls, "HTC" below),
the real API's own 400 messages as users reported them (issue threads, named by
repository and number), or what docs/claude_code.md#how-the-real-client-is-driven observed.

Positions in the pairing rules skip ``system`` messages. Consecutive messages of the same
role are **not** rejected: the Messages API reference documents that consecutive user or
assistant turns are combined into one.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ...model.common import Block
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from .server import MockServer
from .server import Request
from .server import Response
from .server import ScriptedMock
from .server import json_response
from .server import messages_problem
from .server import sse

MODEL = "claude-mock-1"

# --- scripted replies ----------------------------------------------------------------


@dataclass
class Reply:
    """One model reply: content blocks in the API's shape, or an error status."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None  # derived from the content when None
    status: int = 200
    error_type: str = "api_error"
    error_message: str = "mock error"
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 10, "output_tokens": 5})

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(b.get("type") == "tool_use" for b in self.content) else "end_turn"


def text(value: str = "ok") -> Reply:
    return Reply([{"type": "text", "text": value}])


def tool_use(name: str, input: dict[str, Any], id: str = "toolu_mock_1", *, say: str | None = None) -> Reply:
    blocks = [{"type": "text", "text": say}] if say else []
    return Reply(blocks + [{"type": "tool_use", "id": id, "name": name, "input": input}])


def tool_uses(*calls: tuple[str, str, dict[str, Any]], say: str | None = None) -> Reply:
    """Parallel tool calls: ``(id, name, input)`` each."""
    blocks = [{"type": "text", "text": say}] if say else []
    return Reply(blocks + [{"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in calls])


def thinking(thought: str, then: str = "ok", signature: str = "sig-mock") -> Reply:
    return Reply([{"type": "thinking", "thinking": thought, "signature": signature}, {"type": "text", "text": then}])


def web_search(query: str, results: list[tuple[str, str]], then: str, id: str = "srvtoolu_mock_search_1") -> Reply:
    """A server-side web search in one reply, as the API gives it: the ``server_tool_use``
    call, its ``web_search_tool_result`` (``(url, title)`` each), then the answer."""
    found = [
        {"type": "web_search_result", "url": url, "title": title, "encrypted_content": f"ENC-{n}", "page_age": None}
        for n, (url, title) in enumerate(results, 1)
    ]
    return Reply(
        [
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": id, "content": found},
            {"type": "text", "text": then},
        ]
    )


def web_fetch(url: str, page: str, then: str, id: str = "srvtoolu_mock_fetch_1") -> Reply:
    """A server-side web fetch in one reply: the ``server_tool_use`` call, its
    ``web_fetch_tool_result`` (the page as a plain-text document), then the answer."""
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": page}}
    result = {"type": "web_fetch_result", "url": url, "content": document, "retrieved_at": "2026-01-01T00:00:00Z"}
    return Reply(
        [
            {"type": "server_tool_use", "id": id, "name": "web_fetch", "input": {"url": url}},
            {"type": "web_fetch_tool_result", "tool_use_id": id, "content": result},
            {"type": "text", "text": then},
        ]
    )


def error(status: int, message: str = "mock error", type: str = "api_error") -> Reply:
    return Reply(status=status, error_type=type, error_message=message)


# --- strict validation ---------------------------------------------------------------

_USER_BLOCKS = {"text", "image", "document", "search_result", "tool_result", "container_upload"}
_ASSISTANT_BLOCKS = {
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
}
# HTC: tool_result content is a string or a list of text, image, document or
# search_result blocks; tool_reference is the tool-search tool's result part.
_RESULT_PARTS = {"text", "image", "document", "search_result", "tool_reference"}
# anomalyco/opencode#1279: "messages.1.content.1.tool_use.id: String should match
# pattern '^[a-zA-Z0-9_-]+$'"
_TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")  # fullmatch: "$" would take a final newline
# Claude Code 2.1.332 sends its environment context as a ``system`` message inside
# ``messages`` (a beta the ``?beta=true`` endpoint accepts), text only.
# It adds a ``tool_addition`` block to that message when a tool disabled in the recorded
# run (``--disallowedTools``) is available on resume, under the mid-conversation-tool-
# changes beta it names in ``betas`` (the denied_tool scenario); whether the real API
# takes it is not known, so it is not flagged here.
_ROLES = {"user": _USER_BLOCKS, "assistant": _ASSISTANT_BLOCKS, "system": {"text", "tool_addition"}}


def violations(body: Any) -> list[str]:
    """Why the real Messages API would answer 400 to this request body ([] when it
    would not), each as ``messages.<i>.content.<j>: reason``."""
    problem = messages_problem(body)
    if problem is not None:
        return [problem]
    messages = body["messages"]
    out: list[str] = []
    last = len(messages) - 1
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            out.append(f"{where}.role: must be 'user', 'assistant' or 'system'")
            continue
        role, content = message["role"], message.get("content")
        # anthropics/claude-code#6774: "messages.0: all messages must have non-empty
        # content except for the optional final assistant message"
        prefill = role == "assistant" and i == last
        if isinstance(content, str):
            if not content and not prefill:
                out.append(f"{where}.content: must be non-empty")
            continue
        if not isinstance(content, list):
            out.append(f"{where}.content: must be a string or a list of blocks")
            continue
        # Claude Code 2.1.332 sends an empty ``system`` message after the first user
        # message when the file has no rendered context attachments; whether the real
        # API takes it is not known, so it is not flagged here.
        if not content and not prefill and role != "system":
            out.append(f"{where}.content: all messages must have non-empty content")
        allowed = _ROLES[role]
        for j, block in enumerate(content):
            out.extend(f"{where}.content.{j}: {why}" for why in _block_violations(block, allowed))
    out.extend(_pairing_violations(messages))
    return out


def _block_violations(block: Any, allowed: set[str]) -> list[str]:
    if not isinstance(block, dict):
        return ["block must be an object"]
    kind = block.get("type")
    # docs/claude_code.md#how-the-real-client-is-driven: an unknown block type is passed through by the client and
    # rejected by the real API; tool_use/tool_result belong to their own roles (HTC)
    if kind not in allowed:
        return [f"unexpected block type {kind!r}"]
    check = _BLOCK_CHECKS.get(kind)
    return check(block) if check else []


def _text(block: dict) -> list[str]:
    if not isinstance(block.get("text"), str):
        return ["text: Field required"]
    # aliasrobotics/cai#182: "messages: text content blocks must be non-empty";
    # anthropics/claude-code#23440: "... must contain non-whitespace text"
    if not block["text"]:
        return ["text content blocks must be non-empty"]
    return [] if block["text"].strip() else ["text content blocks must contain non-whitespace text"]


def _tool_use(block: dict) -> list[str]:
    out = []
    if not isinstance(block.get("id"), str) or not block.get("id"):
        out.append("tool_use.id: Field required")
    elif not _TOOL_ID.fullmatch(block["id"]):
        out.append("tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
    if not isinstance(block.get("name"), str) or not block.get("name"):
        out.append("tool_use.name: Field required")
    # HTC: input is "an object"; docs/claude_code.md#how-the-real-client-is-driven saw the real API answer a string
    # input with "tool_use.input: Input should be a valid dictionary"
    if not isinstance(block.get("input"), dict):
        out.append("tool_use.input: Input should be a valid dictionary")
    return out


def _tool_result(block: dict) -> list[str]:
    if not isinstance(block.get("tool_use_id"), str):
        return ["tool_result.tool_use_id: Field required"]
    content = block.get("content", "")
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        return ["tool_result.content: Input should be a valid string or list"]
    bad = [
        k
        for k, part in enumerate(content)
        if not isinstance(part, dict)
        or part.get("type") not in _RESULT_PARTS
        or (part.get("type") == "text" and not isinstance(part.get("text"), str))
    ]
    return [f"tool_result.content.{k}: not a valid content block" for k in bad]


def _thinking(block: dict) -> list[str]:
    # lbjlaq/Antigravity-Manager#1650: "messages.1.content.0.thinking.signature: Field
    # required" (docs/claude_code.md#how-the-real-client-is-driven: the client then retries without the thinking)
    if not isinstance(block.get("signature"), str):
        return ["thinking.signature: Field required"]
    return [] if isinstance(block.get("thinking"), str) else ["thinking.thinking: Field required"]


def _redacted(block: dict) -> list[str]:
    return [] if isinstance(block.get("data"), str) else ["redacted_thinking.data: Field required"]


def _source(kind: str):
    def check(block: dict) -> list[str]:
        return [] if isinstance(block.get("source"), dict) else [f"{kind}.source: Field required"]

    return check


_BLOCK_CHECKS = {
    "text": _text,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "thinking": _thinking,
    "redacted_thinking": _redacted,
    "image": _source("image"),
    "document": _source("document"),
}


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _pairing_violations(messages: list[Any]) -> list[str]:
    """tool_use ids must be answered in the very next message, which must be a user
    message whose tool_result blocks come before its other blocks.

    Sources: anthropics/claude-code#5989 ("`tool_use` ids were found without
    `tool_result` blocks immediately after ... in the next message"), #13460
    ("unexpected `tool_use_id` found in `tool_result` blocks ... in the previous
    message"), #20901 ("`tool_use` ids must be unique"); HTC and QwenLM/qwen-code#8161
    (checked against the real API): tool_result blocks come first in their message."""
    out: list[str] = []
    seen: set[str] = set()
    # in-conversation system messages do not take part in tool pairing
    messages = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            for block in _blocks(message):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    if block["id"] in seen:
                        out.append(f"messages.{i}: tool_use ids must be unique ({block['id']})")
                    seen.add(block["id"])
            continue
        previous = messages[i - 1] if i > 0 and isinstance(messages[i - 1], dict) else {}
        called = {
            b.get("id")
            for b in _blocks(previous)
            if previous.get("role") == "assistant" and b.get("type") == "tool_use"
        }
        other_seen = False
        for j, block in enumerate(_blocks(message)):
            if block.get("type") != "tool_result":
                other_seen = True
                continue
            if other_seen:
                out.append(f"messages.{i}.content.{j}: tool_result blocks must come first in the content")
            if block.get("tool_use_id") not in called:
                out.append(
                    f"messages.{i}.content.{j}: unexpected tool_use_id found in tool_result blocks: "
                    f"{block.get('tool_use_id')}. Each tool_result block must have a corresponding "
                    "tool_use block in the previous message."
                )
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        ids = [b.get("id") for b in _blocks(message) if b.get("type") == "tool_use"]
        if not ids:
            continue
        following = messages[i + 1] if i + 1 < len(messages) and isinstance(messages[i + 1], dict) else {}
        answered = {
            b.get("tool_use_id")
            for b in _blocks(following)
            if following.get("role") == "user" and b.get("type") == "tool_result"
        }
        missing = [x for x in ids if x not in answered]
        if missing:
            out.append(
                f"messages.{i}: tool_use ids were found without tool_result blocks immediately after: "
                + ", ".join(map(str, missing))
            )
    return out


# --- the handler ---------------------------------------------------------------------


@dataclass
class AnthropicMock(ScriptedMock):
    """The handler: ``MockServer(AnthropicMock([text("hi")], strict=True))``."""

    script: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=text)
    # a request whose first message contains a key is answered from that key's replies
    # instead: a background subagent calls the model while its parent does, in no fixed order
    routes: dict[str, list[Reply]] = field(default_factory=dict)
    _counter: Any = field(default_factory=lambda: itertools.count(1))

    def __call__(self, request: Request, server: MockServer) -> Response:
        path = request.path.split("?", 1)[0]
        if request.method != "POST" or path != "/v1/messages":
            return self._other(request, path)
        try:
            body = request.json()
        except ValueError:
            return _error(400, "invalid_request_error", "body: not valid JSON")
        refused = self.refusal(violations(body) if self.strict else [], server)
        if refused is not None:
            return _error(400, "invalid_request_error", refused)
        queue = self._route(body)
        if queue is None:
            queue = self.script
        reply = queue.pop(0) if queue else self.default
        if reply.status != 200:
            return _error(reply.status, reply.error_type, reply.error_message)
        message = self._message(reply, body.get("model") if isinstance(body, dict) else None)
        if isinstance(body, dict) and body.get("stream"):
            return Response(200, content_type="text/event-stream", chunks=sse(_events(message)))
        return json_response(message)

    def _route(self, body: Any) -> list[Reply] | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        first = json.dumps(messages[0]) if isinstance(messages, list) and messages else ""
        return next((replies for key, replies in self.routes.items() if key in first), None)

    def _other(self, request: Request, path: str) -> Response:
        self.other_paths.append(f"{request.method} {path}")
        if path.endswith("/count_tokens"):
            return json_response({"input_tokens": 10})
        return json_response({})

    def _message(self, reply: Reply, model: Any) -> dict[str, Any]:
        return {
            "id": f"msg_mock_{next(self._counter):04d}",
            "type": "message",
            "role": "assistant",
            "model": model if isinstance(model, str) else MODEL,
            "content": reply.content,
            "stop_reason": reply.final_stop_reason,
            "stop_sequence": None,
            "usage": _usage(reply),
        }


def _usage(reply: Reply) -> dict[str, Any]:
    """The reply's usage; with server tool calls, their counts (``server_tool_use``) as the
    API adds them."""
    usage: dict[str, Any] = dict(reply.usage)
    names = [b.get("name") for b in reply.content if b.get("type") == "server_tool_use"]
    if names:
        usage["server_tool_use"] = {
            "web_search_requests": names.count("web_search"),
            "web_fetch_requests": names.count("web_fetch"),
        }
    return usage


def _error(status: int, kind: str, message: str) -> Response:
    return json_response({"type": "error", "error": {"type": kind, "message": message}}, status)


def _events(message: dict[str, Any]) -> list[tuple[str, Any]]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {k: v for k, v in message["usage"].items() if k != "server_tool_use"} | {"output_tokens": 1}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {
                    "output_tokens": message["usage"].get("output_tokens", 0),
                    **(
                        {"server_tool_use": message["usage"]["server_tool_use"]}
                        if "server_tool_use" in message["usage"]
                        else {}
                    ),
                },
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


_STREAMED_INPUT = ("tool_use", "server_tool_use", "mcp_tool_use")


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        opening, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
    elif kind in _STREAMED_INPUT:
        # the API opens a client or server tool call with an empty input and streams it as
        # input_json_delta (the SDK's MessageStream applies them to tool_use, server_tool_use
        # and mcp_tool_use alike: ``tracksToolInput``); a server tool's result block
        # (web_search_tool_result, ...) has no delta and is sent whole, below
        opening = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}]
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": block.get("thinking", "")},
            {"type": "signature_delta", "signature": block.get("signature", "")},
        ]
    else:  # sent whole, as the API does for blocks without deltas
        opening, deltas = block, []
    events = [("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


# --- request body -> Common ----------------------------------------------------------


def request_messages(body: Any) -> list[Message]:
    """The ``messages`` of a request body as Common messages (blocks mapped one to one;
    a block Common has no type for becomes :class:`RawBlock`)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    out = []
    for message in messages or []:
        # the client's own context (``system`` messages) is not part of the conversation
        if not isinstance(message, dict) or message.get("role") == "system":
            continue
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Block] = [Text(content)]
        else:
            blocks = [api_block(b) for b in content or []]
        out.append(Message(role=role, content=blocks))
    return out


def api_block(block: Any) -> Block:
    if not isinstance(block, dict):
        return RawBlock("json", block)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return Text(block["text"])
    if kind == "thinking":
        sig = block.get("signature")
        return (
            Thinking(block.get("thinking") or "", signature=sig)
            if isinstance(sig, str)
            else Thinking(block.get("thinking") or "")
        )
    if kind == "redacted_thinking" and isinstance(block.get("data"), str):
        return RedactedThinking(block["data"])
    if kind == "tool_use":
        return ToolUse(id=str(block.get("id", "")), name=str(block.get("name", "")), input=block.get("input"))
    if kind == "tool_result":
        content = block.get("content", "")
        parts: str | list[Block] = (
            content
            if isinstance(content, str)
            else [api_block(p) for p in content or []]
            if isinstance(content, list)
            else json.dumps(content)
        )
        return ToolResult(tool_use_id=str(block.get("tool_use_id", "")), content=parts, is_error=block.get("is_error"))
    if kind in ("image", "document") and isinstance(block.get("source"), dict):
        source = block["source"]
        cls = Image if kind == "image" else Document
        fields: dict[str, Any] = {}
        if source.get("type") == "base64" or source.get("type") == "text":
            fields = {"media_type": source.get("media_type"), "data": source.get("data")}
        elif source.get("type") == "url":
            fields = {"url": source.get("url")}
        if kind == "document" and isinstance(block.get("title"), str):
            fields["title"] = block["title"]
        try:
            return cls(**{k: v for k, v in fields.items() if isinstance(v, str)})
        except TypeError:
            pass
    return RawBlock(str(kind), block)
