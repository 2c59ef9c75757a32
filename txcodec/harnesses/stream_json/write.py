"""Common conversation -> stream-json lines: what ``claude -p --output-format stream-json
--verbose --replay-user-messages`` would have printed (``write``), and the stdin side,
the prompts for ``claude -p --input-format stream-json`` (``write_input``).

The output follows the real CLI's shape (2.1.332): each prompt starts a run with a
``system``/``init`` line and ends with a ``result`` line; the prompt is written as a
replayed ``user`` line (``isReplay``) so the capture carries it; an assistant message
is one line per content block sharing ``message.id``; parallel tool results are one
``user`` line each; a subagent's messages follow its calling tool_use line with
``parent_tool_use_id``, framed by ``task_started``/``task_notification``. Unlike the CLI,
the assistant lines carry the message's final ``stop_reason`` and ``usage`` (the CLI
prints null and the message_start snapshot there), so nothing Common held is lost.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from msgspec import UNSET

from ...core.ids import check_id
from ...core.ids import derive_uuid
from ...core.ids import is_safe_id
from ...core.ids import shown
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Child
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Text
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from .blocks import to_api

_NS = uuid.UUID("6f0b7f3e-0f55-4d0c-9a3c-3e8d2f1b7a11")
_encode = msgspec.json.Encoder().encode


def _is_prompt(message: Message) -> bool:
    return message.role == "user" and not (message.content and all(isinstance(b, ToolResult) for b in message.content))


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }


class _Writer:
    def __init__(self, conversation: Conversation, loss: LossReport, session_id: str) -> None:
        self.conversation = conversation
        self.loss = loss
        self.sid = session_id
        self.lines: list[dict[str, Any]] = []
        self.counter = 0
        self.children: dict[str, Child] = {}
        self.written_children: set[int] = set()
        self._index_children(conversation.children)

    def _index_children(self, children: list[Child]) -> None:
        for child in children:
            if isinstance(child.link.tool_use_id, str):
                self.children.setdefault(child.link.tool_use_id, child)

    def uuid(self, hint: str | None = None) -> str:
        self.counter += 1
        return hint or derive_uuid(_NS, f"{self.sid}/{self.counter}")

    def emit(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    # --- runs ------------------------------------------------------------------------
    def run(self) -> None:
        meta = self.conversation.meta
        runs = _split_runs(self.conversation.messages)
        saved = meta.extra.get("runs") if isinstance(meta.extra.get("runs"), list) else []
        for index, run in enumerate(runs):
            info = saved[index] if index < len(saved) and isinstance(saved[index], dict) else {}
            self.init(info)
            for message in run:
                self.message(message, None, run)
            self.result(run, info)
        unlinked = [c for c in self.conversation.children if id(c) not in self.written_children]
        for child in unlinked:
            self.loss.add(
                "write:child-unlinked",
                f"subagent {child.link.tool_use_id!r}: its tool call is not in the conversation; written at the end",
            )
            self.child(child, child.link.tool_use_id if isinstance(child.link.tool_use_id, str) else "")

    def init(self, info: dict[str, Any]) -> None:
        meta = self.conversation.meta
        saved = meta.extra.get("init") if isinstance(meta.extra.get("init"), dict) else {}
        line: dict[str, Any] = {"type": "system", "subtype": "init"}
        cwd = info.get("cwd", meta.cwd if meta.cwd is not UNSET else None)
        if cwd is not None:
            line["cwd"] = cwd
        line["session_id"] = self.sid
        line["tools"] = saved.get("tools", [])
        line["mcp_servers"] = saved.get("mcp_servers", [])
        model = info.get("model", meta.models[0] if meta.models else None)
        if model is not None:
            line["model"] = model
        if "permission_mode" in saved:
            line["permissionMode"] = saved["permission_mode"]
        line["slash_commands"] = saved.get("slash_commands", [])
        if meta.client_version is not UNSET:
            line["claude_code_version"] = meta.client_version
        line["uuid"] = self.uuid()
        self.emit(line)

    def result(self, run: list[Message], info: dict[str, Any]) -> None:
        assistants = [m for m in run if m.role == "assistant"]
        last = assistants[-1] if assistants else None
        turn = last.extra.get("turn") if last is not None and isinstance(last.extra.get("turn"), dict) else {}
        turn = turn or (info.get("result") if isinstance(info.get("result"), dict) else {})
        text = ""
        if last is not None:
            text = "".join(b.text for b in last.content if isinstance(b, Text))
        is_error = bool(turn.get("is_error", last is not None and last.api_error))
        line: dict[str, Any] = {
            "type": "result",
            "subtype": turn.get("subtype", "success"),
            "is_error": is_error,
            "duration_ms": turn.get("duration_ms", 0),
            "duration_api_ms": turn.get("duration_api_ms", 0),
            "num_turns": turn.get("num_turns", len({m.id if m.id is not UNSET else id(m) for m in assistants})),
            "result": text,
            "session_id": self.sid,
        }
        for key in ("total_cost_usd", "stop_reason", "terminal_reason", "errors"):
            if key in turn:
                line[key] = turn[key]
        usage = turn.get("usage")
        if usage is None:
            total = Usage()
            for m in assistants:
                if isinstance(m.usage, Usage):
                    total = total + m.usage
            usage = _usage(total)
        line["usage"] = usage
        if "model_usage" in turn:
            line["model_usage_since_last_result"] = turn["model_usage"]
        if "model_usage_total" in turn:
            line["modelUsage"] = turn["model_usage_total"]
        line["permission_denials"] = self._denials(run)
        line["uuid"] = self.uuid()
        self.emit(line)

    def _denials(self, run: list[Message]) -> list[dict[str, Any]]:
        calls = {b.id: b for m in run for b in m.content if isinstance(b, ToolUse)}
        saved = self.conversation.meta.extra.get("permissions")
        out = []
        for entry in saved if isinstance(saved, list) else []:
            if isinstance(entry, dict) and entry.get("decision") == "deny" and entry.get("tool_use_id") in calls:
                call = calls[entry["tool_use_id"]]
                out.append({"tool_name": call.name, "tool_use_id": call.id, "tool_input": call.input})
        return out

    # --- messages --------------------------------------------------------------------
    def _envelope(self, line: dict[str, Any], parent: str | None, message: Message, hint: str | None) -> dict[str, Any]:
        line["parent_tool_use_id"] = parent
        line["session_id"] = self.sid
        line["uuid"] = self.uuid(hint)
        if message.timestamp is not UNSET:
            line["timestamp"] = message.timestamp
        return line

    def message(self, message: Message, parent: str | None, run: list[Message] | None = None) -> None:
        where = f"message {message.id if message.id is not UNSET else message.role}"
        if message.role == "assistant":
            self.assistant(message, parent, run, where)
        else:
            self.user(message, parent, where)

    def assistant(self, message: Message, parent: str | None, run: list[Message] | None, where: str) -> None:
        if message.extra.get("from_result") and run is not None and message is run[-1]:
            return  # the result line carries it, as in the capture it came from
        mid = (
            message.id
            if message.id is not UNSET
            else "msg_" + derive_uuid(_NS, f"{self.sid}/m{self.counter}").replace("-", "")[:24]
        )
        blocks = [b for b in (to_api(x, self.loss, where) for x in message.content) if b is not None]
        hints = message.source_ids if len(message.source_ids) == max(len(blocks), 1) else []
        body_base: dict[str, Any] = {"id": mid, "type": "message", "role": "assistant"}
        if message.model is not UNSET:
            body_base["model"] = message.model
        for k, block in enumerate(blocks or [None]):
            body = dict(body_base, content=[block] if block is not None else [])
            body["stop_reason"] = None if message.stop_reason is UNSET else message.stop_reason
            body["stop_sequence"] = None
            if isinstance(message.usage, Usage):
                body["usage"] = _usage(message.usage)
            line = self._envelope({"type": "assistant", "message": body}, parent, message, hints[k] if hints else None)
            if message.api_error:
                line["is_api_error_message"] = True
                if "api_error_status" in message.extra:
                    line["api_error_status"] = message.extra["api_error_status"]
            self.emit(line)
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                child = self.children.get(block["id"])
                if child is not None and id(child) not in self.written_children:
                    self.child(child, block["id"])

    def user(self, message: Message, parent: str | None, where: str) -> None:
        blocks = [b for b in (to_api(x, self.loss, where) for x in message.content) if b is not None]
        results = [b for b in message.content if isinstance(b, ToolResult)]
        if message.extra.get("missing_prompt"):
            self.loss.add("write:missing-prompt", f"{where}: a placeholder for a prompt the source lacked; not written")
            return
        if results and len(results) == len(message.content):
            hints = message.source_ids if len(message.source_ids) == len(results) else []
            meta = message.extra.get("tool_result_meta")
            for k, (block, result) in enumerate(zip(blocks, results)):
                body = {"role": "user", "content": [block]}
                line = self._envelope({"type": "user", "message": body}, parent, message, hints[k] if hints else None)
                if result.structured is not UNSET:
                    line["tool_use_result"] = result.structured
                if isinstance(meta, list):
                    mine = [x for x in meta if isinstance(x, dict) and x.get("id") == result.tool_use_id]
                    if mine:
                        line["tool_result_meta"] = mine
                self.emit(line)
            return
        content: Any = blocks
        if len(message.content) == 1 and isinstance(message.content[0], Text):
            content = message.content[0].text
        hint = message.source_ids[0] if len(message.source_ids) == 1 else None
        line = self._envelope({"type": "user", "message": {"role": "user", "content": content}}, parent, message, hint)
        if parent is None and _is_prompt(message) and not (message.meta or message.synthetic):
            line["isReplay"] = True
        if message.meta or message.synthetic:
            line["isSynthetic"] = True
        self.emit(line)

    def child(self, child: Child, tool_use_id: str) -> None:
        self.written_children.add(id(child))
        started: dict[str, Any] = {"type": "system", "subtype": "task_started"}
        if child.link.agent_id is not UNSET:
            started["task_id"] = child.link.agent_id
        started["tool_use_id"] = tool_use_id
        if child.description is not UNSET:
            started["description"] = child.description
        if child.agent_type is not UNSET:
            started["subagent_type"] = child.agent_type
        started["uuid"] = self.uuid()
        started["session_id"] = self.sid
        self.emit(started)
        self._index_children(child.conversation.children)
        for message in child.conversation.messages:
            self.message(message, tool_use_id)
        done: dict[str, Any] = {"type": "system", "subtype": "task_notification"}
        if child.link.agent_id is not UNSET:
            done["task_id"] = child.link.agent_id
        done["tool_use_id"] = tool_use_id
        done["status"] = child.link.status if child.link.status is not UNSET else "completed"
        summary = child.conversation.meta.extra.get("summary")
        if isinstance(summary, str):
            done["summary"] = summary
        done["uuid"] = self.uuid()
        done["session_id"] = self.sid
        self.emit(done)


def _split_runs(messages: list[Message]) -> list[list[Message]]:
    """A run starts at each prompt (a user message that is not only tool results and
    not injected context)."""
    runs: list[list[Message]] = []
    for message in messages:
        starts = _is_prompt(message) and not (message.meta or message.synthetic)
        if starts or not runs:
            runs.append([])
        runs[-1].append(message)
    return runs


def session_id_for(conversation: Conversation, options: WriteOptions | None) -> str:
    if options is not None and options.session_id:
        return options.session_id
    if isinstance(conversation.meta.id, str) and conversation.meta.id:
        return conversation.meta.id
    return derive_uuid(_NS, _encode(conversation).decode("utf-8", "replace"))


def output_lines(
    conversation: Conversation, loss: LossReport, options: WriteOptions | None = None
) -> list[dict[str, Any]]:
    writer = _Writer(conversation, loss, session_id_for(conversation, options))
    writer.run()
    return writer.lines


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(_encode(line) + b"\n" for line in lines)


def write(conversation: Conversation, loss: LossReport, options: WriteOptions | None = None) -> Written:
    """Common -> the stdout lines of ``claude -p --output-format stream-json --verbose``,
    or with ``options.stdin_side`` the stdin lines (:func:`write_input`)."""
    if options is not None and options.session_id:
        check_id(options.session_id, "session id")
    sid = session_id_for(conversation, options)
    # the id is kept in the lines as it is (data); the file is named by it only when safe
    name = sid if is_safe_id(sid) else derive_uuid(_NS, sid)
    if name != sid:
        loss.add("write:file-name", f"session id {shown(sid)} cannot name a file; the file is named {name}")
    if options is not None and options.stdin_side:
        return Written(sid, {f"{name}.input.jsonl": write_input(conversation, loss, options)})
    lines = output_lines(conversation, loss, WriteOptions(session_id=sid, cwd=options.cwd if options else None))
    return Written(sid, {f"{name}.jsonl": _jsonl(lines)})


def input_lines(
    conversation: Conversation, loss: LossReport, options: WriteOptions | None = None
) -> list[dict[str, Any]]:
    sid = session_id_for(conversation, options) if options is not None and options.session_id else ""
    out = []
    for n, message in enumerate(conversation.messages):
        if not _is_prompt(message):
            continue
        where = f"message {n}"
        if message.extra.get("missing_prompt"):
            loss.add("write:missing-prompt", f"{where}: the source lacked this prompt; not sent")
            continue
        if message.meta or message.synthetic:
            loss.add("write:injected-context", f"{where}: context the client injected, not a prompt; not sent")
            continue
        blocks = [b for b in (to_api(x, loss, where) for x in message.content) if b is not None]
        content: Any = blocks
        if len(message.content) == 1 and isinstance(message.content[0], Text):
            content = message.content[0].text
        out.append(
            {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
                "session_id": sid,
            }
        )
    return out


def write_input(conversation: Conversation, loss: LossReport, options: WriteOptions | None = None) -> bytes:
    """Common -> stdin lines for ``claude -p --input-format stream-json``: one ``user``
    line per prompt. Assistant turns cannot be sent (the CLI makes its own)."""
    assistants = sum(1 for m in conversation.messages if m.role == "assistant")
    if assistants:
        loss.add(
            "write:input-side", f"{assistants} assistant message(s) have no stdin form; only the prompts are written"
        )
    return _jsonl(input_lines(conversation, loss, options))
