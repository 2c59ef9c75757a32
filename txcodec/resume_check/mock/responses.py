"""A mock OpenAI Responses API (what Codex talks to), and the reverse mapping of a
request's ``input`` into Common messages.

The script is a list of replies; each reply is the list of output items one model call
returns (Responses items: ``message``, ``reasoning``, ``function_call``,
``custom_tool_call``). ``POST .../responses`` pops the next reply and streams it as SSE:
``response.created``, ``response.output_item.added`` / ``.done`` per item, then
``response.completed`` with a usage block. When the script runs out, the mock answers with
a short assistant message so a client never hangs.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from ...model.common import Image
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from .server import MockServer
from .server import Request
from .server import Response
from .server import json_arguments
from .server import json_response
from .server import sse

Item = dict[str, Any]


def text(value: str) -> Item:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any], call_id: str) -> Item:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id}


def custom_tool_call(name: str, input: str, call_id: str) -> Item:
    return {"type": "custom_tool_call", "name": name, "input": input, "call_id": call_id}


def reasoning(summary: str) -> Item:
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": None}


_ids = itertools.count(1)


def _with_id(item: Item) -> Item:
    prefix = {"message": "msg", "reasoning": "rs", "function_call": "fc", "custom_tool_call": "ctc"}.get(
        item["type"], "it"
    )
    return {"id": f"{prefix}_{next(_ids):04d}", "status": "completed", **item}


def reply_events(items: list[Item], response_id: str, usage: dict[str, Any] | None = None) -> list[bytes]:
    """The SSE stream for one model call that returns ``items``."""
    response = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
    events: list[tuple[str | None, Any]] = [("response.created", {"type": "response.created", "response": response})]
    done = []
    for index, item in enumerate(items):
        item = _with_id(item)
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item})
        )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
        )
        done.append(item)
    usage = usage or {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    completed = {**response, "status": "completed", "output": done, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": completed}))
    return sse(events)


def handler(script: list[list[Item]]):
    """A :class:`MockServer` handler that plays ``script`` one reply per model call."""
    queue = list(script)

    def handle(request: Request, server: MockServer) -> Response:
        if request.method == "POST" and request.path.rstrip("/").endswith("/responses"):
            items = queue.pop(0) if queue else [text("Done.")]
            calls = sum(1 for r in server.requests if r.method == "POST" and r.path.rstrip("/").endswith("/responses"))
            return Response(content_type="text/event-stream", chunks=reply_events(items, f"resp_{calls:04d}"))
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            return json_response({"object": "list", "data": [], "models": []})
        return json_response({"error": {"message": f"mock: no route for {request.method} {request.path}"}}, status=404)

    return handle


def model_requests(server: MockServer) -> list[Request]:
    return [r for r in server.requests if r.method == "POST" and r.path.rstrip("/").endswith("/responses")]


# --- request input -> Common -------------------------------------------------------------


_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.S)


def _content_blocks(parts: Any) -> list[Any]:
    if isinstance(parts, str):
        return [Text(parts)]
    blocks: list[Any] = []
    for part in parts or []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            blocks.append(Text(part.get("text", "")))
        elif kind == "input_image":
            url = part.get("image_url") or ""
            m = _DATA_URL.match(url)  # a data URL reads as the Codex reader reads it
            blocks.append(Image(media_type=m.group(1), data=m.group(2)) if m else Image(url=url))
        else:
            blocks.append(Text(json.dumps(part, sort_keys=True)))
    return blocks


def input_to_common(items: list[Any]) -> list[Message]:
    """The ``input`` array of a Responses request as Common messages, in order.

    Developer and system messages become ``meta`` user messages (``extra.role`` keeps the
    real role); consecutive items of one role are merged, the way a conversation reads.
    """
    messages: list[Message] = []

    def push(role: str, block: Any, meta: bool = False, extra: dict | None = None) -> None:
        last = messages[-1] if messages else None
        if last is not None and last.role == role and last.meta == meta and not meta and last.extra == (extra or {}):
            last.content.append(block)
            return
        messages.append(Message(role=role, content=[block], meta=meta, extra=extra or {}))

    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "user")
            blocks = _content_blocks(item.get("content"))
            if role in ("developer", "system"):
                messages.append(Message(role="user", content=blocks, meta=True, extra={"role": role}))
                continue
            for block in blocks:
                push("assistant" if role == "assistant" else "user", block)
        elif kind == "reasoning":
            summary = "\n\n".join(
                s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)
            )  # as the reader joins them
            enc = item.get("encrypted_content")
            push("assistant", Thinking(summary, **({"encrypted": enc} if isinstance(enc, str) else {})))
        elif kind == "function_call":
            name, namespace = item.get("name", ""), item.get("namespace")
            if isinstance(namespace, str) and namespace.startswith("mcp__"):
                name = f"{namespace}__{name}"  # an MCP call, named as the codex reader names it
            push("assistant", ToolUse(item.get("call_id", ""), name, json_arguments(item.get("arguments"))))
        elif kind == "custom_tool_call":
            push("assistant", ToolUse(item.get("call_id", ""), item.get("name", ""), item.get("input")))
        elif kind == "local_shell_call":
            push("assistant", ToolUse(item.get("call_id") or item.get("id") or "", "local_shell", item.get("action")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            content = output if isinstance(output, str) else _content_blocks(output)
            push("user", ToolResult(item.get("call_id", ""), content))
        else:
            push("assistant" if kind.endswith("_call") else "user", Text(json.dumps(item, sort_keys=True)))
    return messages
