"""Continue CLI session -> Common conversation.

One history item is one message, in order: a ``user`` item's ``content`` (a string, or
parts ``text`` / ``imageUrl``) -> Text / Image; an ``assistant`` item's ``content`` -> Text,
``toolCalls`` -> ToolUse (``function.arguments`` is a JSON string), and its
``toolCallStates`` -> a user message of ToolResults after it (the client sends each state's
``output`` contents as one ``tool`` message when it resumes; ``status: "errored"`` is an
error). A ``tool`` item (not written by 1.5.47) is read as a result too. An item with a
``conversationSummary`` opens a compaction epoch (the client resumes from the first such
item). ``message.usage`` is the call's Chat Completions usage (``prompt_tokens`` counting
cached tokens); the session's ``usage`` is a running total and is not summed again.
"""

from __future__ import annotations

from typing import Any

from ...kit.read import call_arguments
from ...kit.read import content_blocks
from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...kit.read import url_image
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Epoch
from ...model.common import Message
from ...model.common import Meta
from ...model.common import Text
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.tools import tool_kind


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    meta = Meta(source_harness="continue_cli")
    conversation = Conversation(meta=meta)
    documents = [(n, v) for n, v in line_dicts(session) if isinstance(v, dict) and isinstance(v.get("history"), list)]
    if not documents:
        loss.add("record:invalid", "not a Continue session document", file=file)
        return conversation
    for n, value in line_dicts(session):
        if not isinstance(value, dict) or not isinstance(value.get("history"), list):
            loss.add("record:invalid", "not a Continue session document", file=file, line=n)
    n, value = documents[0]
    if isinstance(value.get("sessionId"), str):
        meta.id = value["sessionId"]
    if isinstance(value.get("title"), str):
        meta.title = value["title"]
    if isinstance(value.get("workspaceDirectory"), str) and value["workspaceDirectory"]:
        meta.cwd = value["workspaceDirectory"]
    messages = conversation.messages
    for i, item in enumerate(value["history"]):
        where = f"history[{i}]"
        with malformed(loss, file, n, where):  # an item of an unexpected shape is reported, the next one read
            message = item.get("message") if isinstance(item, dict) else None
            if not isinstance(message, dict):
                loss.add("record:invalid", f"{where}: an item without a message", file=file, line=n)
                continue
            role = message.get("role")
            if isinstance(item.get("contextItems"), list) and item["contextItems"]:
                loss.add(
                    "field:contextItems", f"{where}: context items (attached files) kept in extra", file=file, line=n
                )
            if role == "system":
                loss.add("record:system", f"{where}: the client's system message", file=file, line=n)
                continue
            if role == "tool":
                result = ToolResult(
                    str(message.get("toolCallId", message.get("tool_call_id", ""))), _text(message.get("content"))
                )
                _append_result(messages, result, where)
                continue
            if role not in ("user", "assistant"):
                loss.add(f"record:{role}", f"{where}: a message role Common has no place for", file=file, line=n)
                continue
            blocks = _content(message.get("content"))
            out = Message(role, blocks, source_ids=[where])
            if isinstance(item.get("contextItems"), list) and item["contextItems"]:
                out.extra["contextItems"] = item["contextItems"]
            if isinstance(item.get("conversationSummary"), str):
                out.compact_summary = True
                out.synthetic = True
                conversation.epochs.append(Epoch(start=len(messages), boundary_id=where))
            if role == "assistant":
                _assistant(out, message, meta)
            messages.append(out)
            if role == "assistant":
                for state in item.get("toolCallStates") or []:
                    result = _state(state)
                    if result is None:
                        loss.add("field:toolCallState", f"{where}: a tool call state without output", file=file, line=n)
                        continue
                    _append_result(messages, result, f"{where}.toolCallStates")
    return conversation


def _append_result(messages: list[Message], result: ToolResult, where: str) -> None:
    last = messages[-1] if messages else None
    if (
        last is not None
        and last.role == "user"
        and last.content
        and all(isinstance(b, ToolResult) for b in last.content)
    ):
        last.content.append(result)
    else:
        messages.append(Message("user", [result], source_ids=[where]))


def _assistant(out: Message, message: dict, meta: Meta) -> None:
    for call in message.get("toolCalls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        out.content.append(
            ToolUse(
                str(call.get("id", "")),
                name,
                call_arguments(function.get("arguments"), empty_is_object=True),
                tool_kind(name),
            )
        )
    usage = message.get("usage")
    if isinstance(usage, dict):
        out.usage = _usage(usage)
        if isinstance(usage.get("model"), str):
            out.model = usage["model"]
            if usage["model"] not in meta.models:
                meta.models.append(usage["model"])
    out.stop_reason = implied_stop(out.content)


def _state(state: Any) -> ToolResult | None:
    if not isinstance(state, dict) or not isinstance(state.get("output"), list):
        return None
    texts = [o.get("content") for o in state["output"] if isinstance(o, dict) and isinstance(o.get("content"), str)]
    status = state.get("status")
    result = ToolResult(
        str(state.get("toolCallId", "")),
        "\n".join(texts),
        is_error=True if status == "errored" else False if status == "done" else None,
    )
    if status not in ("done", "errored"):
        result.structured = {"status": status}
    return result


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.text for b in _content(content) if isinstance(b, Text))


def _content(content: Any) -> list[Block]:
    return content_blocks(content, _image)


def _image(kind: str | None, part: Any) -> list[Block] | None:
    if kind == "imageUrl" and isinstance(part.get("imageUrl"), dict):
        return [url_image(str(part["imageUrl"].get("url", "")))]
    return None


def _usage(value: dict) -> Usage:
    def count(v: Any) -> int:
        return v if isinstance(v, int) and v >= 0 else 0

    details = value.get("prompt_tokens_details") if isinstance(value.get("prompt_tokens_details"), dict) else {}
    cached, written = count(details.get("cached_tokens")), count(details.get("cache_write_tokens"))
    usage = Usage(
        input_tokens=max(count(value.get("prompt_tokens")) - cached - written, 0),
        output_tokens=count(value.get("completion_tokens")),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
    )
    reasoning = value.get("completion_tokens_details")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("reasoning_tokens"), int):
        usage.reasoning_output_tokens = reasoning["reasoning_tokens"]
    return usage
