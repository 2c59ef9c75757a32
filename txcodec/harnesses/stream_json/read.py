"""stream-json capture -> Common conversation.

A capture is a sequence of *runs*: each prompt makes the CLI print a ``system``/``init``
line, the assistant and user (tool result) lines, and a ``result`` line (observed on
2.1.332, also for the second prompt of one ``--input-format stream-json`` process).
Captures of several ``claude -p`` invocations may be concatenated.

The prompt that started a run is not on stdout (it was an argument) unless the host
passed ``--replay-user-messages`` (a ``user`` line with ``isReplay``). It is taken, in
order, from: that replayed line; the input side (``{"type":"user",...}`` lines without a
``uuid`` or before the run's init, interleaved in the same file, or passed as
``input_session``); ``prompts`` (one
per run, from the user); else a placeholder user message marked
``extra["missing_prompt"]`` and a ``prompt:missing`` loss entry, so the conversation
still alternates and a written session still resumes.

Assembly: the assistant lines of one API message (one content block per line, same
``message.id``) become one message; partial ``stream_event`` deltas only fill in what no
assistant line carried (a message cut off mid-stream), and their ``message_delta``
gives the final ``stop_reason`` and output tokens; consecutive tool-result lines become
one user message; the ``result`` text is added only when no assistant text of that run
carried it (docs/stream_json.md#what-maps-where-reader). Lines with ``parent_tool_use_id`` go to a child
conversation under that tool call (docs/stream_json.md#what-maps-where-reader).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import msgspec
from msgspec import UNSET

from ...kit.read import malformed
from ...kit.read import report_unknown_keys
from ...model.common import Child
from ...model.common import ChildLink
from ...model.common import Command
from ...model.common import Context
from ...model.common import Conversation
from ...model.common import Epoch
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RedactedThinking
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import Opaque
from ...model.native import builtins
from ...model.tools import tool_kind
from .blocks import content_to_common
from .records import AssistantLine
from .records import ControlCancelRequestLine
from .records import ControlRequestLine
from .records import ControlResponseLine
from .records import ResultLine
from .records import StreamEventLine
from .records import SystemLine
from .records import UserLine

MISSING_PROMPT_TEXT = "[prompt not captured: the stream-json output does not contain the prompt of this run]"


def _set(value: Any) -> Any:
    return None if value is UNSET else value


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    fields = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return Usage(**{k: value[k] for k in fields if isinstance(value.get(k), int)})


@dataclass
class _Stream:
    """Partial deltas of one API message (``--include-partial-messages``)."""

    message: Message
    thread: _Thread
    main: bool  # of the main conversation (not a subagent)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    lines_seen: int = 0  # assistant lines that carried a finished block
    stopped: bool = False
    start_usage: dict[str, Any] | None = None


@dataclass
class _Thread:
    """The messages of the main conversation or of one subagent."""

    messages: list[Message] = field(default_factory=list)
    by_id: dict[str, Message] = field(default_factory=dict)  # API message id -> message
    results_open: bool = False  # the last message is a user message of tool results only

    def add_assistant(self, line: AssistantLine, n: int) -> Message:
        m = line.message
        mid = m.id if isinstance(m.id, str) else None
        blocks = content_to_common(m.content)
        target = self.by_id.get(mid) if mid else None
        if target is None:
            target = Message(role="assistant", id=mid if mid else UNSET)
            if isinstance(m.model, str):
                target.model = m.model
            if isinstance(line.timestamp, str):
                target.timestamp = line.timestamp
            self.messages.append(target)
            if mid:
                self.by_id[mid] = target
        target.content.extend(blocks)
        if isinstance(line.uuid, str):
            target.source_ids.append(line.uuid)
        if line.is_api_error_message:
            target.api_error = True
            if line.api_error_status is not UNSET:
                target.extra["api_error_status"] = line.api_error_status
        if m.model == "<synthetic>":
            target.synthetic = True
        if isinstance(m.stop_reason, str):  # null on the live lines; set on replays of finished ones
            target.stop_reason = m.stop_reason
        self.results_open = False
        return target

    def add_user(self, line: UserLine, message_content: list, n: int) -> Message:
        only_results = bool(message_content) and all(isinstance(b, ToolResult) for b in message_content)
        if only_results and self.results_open:
            target = self.messages[-1]
            target.content.extend(message_content)
        else:
            target = Message(role="user", content=list(message_content))
            if isinstance(line.timestamp, str):
                target.timestamp = line.timestamp
            self.messages.append(target)
        if isinstance(line.uuid, str):
            target.source_ids.append(line.uuid)
        if line.tool_use_result is not UNSET and only_results and len(message_content) == 1:
            message_content[0].structured = line.tool_use_result
        if isinstance(line.tool_result_meta, list):
            target.extra.setdefault("tool_result_meta", []).extend(line.tool_result_meta)
        if line.is_synthetic:
            target.synthetic = True
        self.results_open = only_results
        return target


@dataclass
class _Run:
    line: int
    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    slot: int = 0  # where the run's prompt goes in the main thread
    prompted: bool = False
    prompt_source: str = ""
    streamed_text: bool = False
    last_assistant: Message | None = None
    result: dict[str, Any] | None = None
    prompt: Message | None = None  # the run's prompt message, once placed
    compaction: dict[str, Any] | None = None  # the run's compact_boundary metadata
    compact_summary: Message | None = None  # the summary the CLI replayed after the boundary
    notified: list[dict[str, Any]] = field(default_factory=list)  # main-thread task notifications
    notified_line: int = 0

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "prompt": self.prompt_source}
        for key in ("session_id", "model", "cwd"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.result is not None:
            out["result"] = self.result
        return out


class _Reader:
    def __init__(self, loss: LossReport, file: str | None, prompts: list[str] | None, input_only: bool = False) -> None:
        self.loss = loss
        self.input_only = input_only  # every prompt line is the stdin side
        self.file = file
        self.prompts = list(prompts or [])
        self.main = _Thread()
        self.children: dict[str, _Thread] = {}  # parent tool_use id -> subagent thread
        self.child_info: dict[str, dict[str, Any]] = {}
        self.tool_holder: dict[str, str | None] = {}  # tool_use id -> thread key (None = main)
        self.runs: list[_Run] = []
        self.run: _Run | None = None
        # runs whose result line is still to come: a task notification starts a run of its
        # own in the same process, and the CLI prints every run's result at the end
        self.awaiting: deque[_Run] = deque()
        self.inputs: deque[Message] = deque()
        self.streams: dict[str, _Stream] = {}
        self.permissions: list[dict[str, Any]] = []
        self.requests: dict[str, dict[str, Any]] = {}
        self.meta = Meta(source_harness="stream_json")
        self.session_ids: list[str] = []
        self.init: dict[str, Any] = {}

    # --- dispatch ----------------------------------------------------------------------
    def feed(self, record: Any, n: int) -> None:
        handler = self.HANDLERS.get(type(record))
        if handler is None:
            if isinstance(record, Opaque):
                kind = f"record:{record.type}" if record.type else "opaque"
                self.loss.add(kind, record.diagnostic, file=self.file, line=n)
            else:
                tag = type(record).__struct_config__.tag
                self.loss.add(f"record:{tag}", "protocol line; no Common form", file=self.file, line=n)
            return
        handler(self, record, n)
        sid = getattr(record, "session_id", None)
        if isinstance(sid, str) and sid and sid not in self.session_ids:
            self.session_ids.append(sid)

    def _thread(self, parent: Any) -> tuple[_Thread, str | None]:
        if isinstance(parent, str) and parent:
            return self.children.setdefault(parent, _Thread()), parent
        return self.main, None

    # --- runs ----------------------------------------------------------------------------
    def _open_run(self, n: int) -> _Run:
        run = _Run(line=n, slot=len(self.main.messages))
        self.runs.append(run)
        self.run = run
        return run

    def _ensure_run(self, n: int) -> _Run:
        return self.run if self.run is not None else self._open_run(n)

    def _close_run(self) -> None:
        run = self.run
        if run is None:
            return
        self.run = None
        self._finish_streams()
        if run.prompted:
            return
        index = len(self.runs) - 1
        if self.inputs:
            prompt, run.prompt_source = self.inputs.popleft(), "input"
        elif index < len(self.prompts) and self.prompts[index] is not None:
            prompt, run.prompt_source = Message(role="user", content=[Text(self.prompts[index])]), "supplied"
            prompt.extra["supplied_prompt"] = True
        else:
            prompt = Message(role="user", content=[Text(MISSING_PROMPT_TEXT)], extra={"missing_prompt": True})
            run.prompt_source = "missing"
            self.loss.add(
                "prompt:missing",
                f"run {index + 1} (init at line {run.line}): the prompt is not in the capture; "
                "pass it with --prompt (one per run) or capture with --replay-user-messages",
                file=self.file,
                line=run.line,
            )
        self.main.messages.insert(run.slot, prompt)
        run.prompt = prompt
        run.prompted = True
        if run.slot == len(self.main.messages) - 1:  # nothing to merge tool results into now
            self.main.results_open = False

    def on_system(self, line: SystemLine, n: int) -> None:
        handler = self.SYSTEM.get(line.subtype if isinstance(line.subtype, str) else "")
        if handler is not None:
            handler(self, line, n)
        else:
            self.loss.add(f"record:system/{_set(line.subtype)}", "progress or bookkeeping line", file=self.file, line=n)

    def on_init(self, line: SystemLine, n: int) -> None:
        previous = self.run
        self._close_run()
        run = self._open_run(n)
        if previous is not None and previous.result is None and previous.notified:
            # observed on 2.1.332: a background task's notification is a turn of its own,
            # started by the CLI in the same process (a new init); its prompt is the
            # <task-notification> the CLI wrote in its session file
            self.awaiting.append(previous)
            prompt = Message(
                role="user",
                content=[Text(_notification_text(previous.notified.pop(0), self.child_info))],
                origin="task-notification",
                extra={"rebuilt_from_line": previous.notified_line},
            )
            self.main.messages.insert(run.slot, prompt)
            run.prompt, run.prompted, run.prompt_source = prompt, True, "task-notification"
            self.loss.add(
                "stream:task-notification-rebuilt",
                "a background task's notification turn: its <task-notification> prompt is rebuilt from the "
                "task_notification line in 2.1.332's wording",
                file=self.file,
                line=n,
            )
        run.session_id = line.session_id if isinstance(line.session_id, str) else None
        run.model = line.model if isinstance(line.model, str) else None
        run.cwd = line.cwd if isinstance(line.cwd, str) else None
        meta = self.meta
        if run.session_id and meta.id is UNSET:
            meta.id = run.session_id
        if run.cwd and meta.cwd is UNSET:
            meta.cwd = run.cwd
        if run.model and run.model not in meta.models:
            meta.models.append(run.model)
        if isinstance(line.claude_code_version, str) and meta.client_version is UNSET:
            meta.client_version = line.claude_code_version
        if not self.init:
            keep = ("tools", "mcp_servers", "permission_mode", "slash_commands", "agents", "output_style")
            self.init = {k: getattr(line, k) for k in keep if getattr(line, k) is not UNSET}

    def on_task_started(self, line: SystemLine, n: int) -> None:
        if isinstance(line.tool_use_id, str):
            info = self.child_info.setdefault(line.tool_use_id, {})
            for key in ("task_id", "subagent_type", "description", "prompt"):
                if getattr(line, key) is not UNSET:
                    info[key] = getattr(line, key)

    def on_task_notification(self, line: SystemLine, n: int) -> None:
        if isinstance(line.tool_use_id, str):
            info = self.child_info.setdefault(line.tool_use_id, {})
            if line.status is not UNSET:
                info["status"] = line.status
            if isinstance(line.summary, str):
                info["summary"] = line.summary
            if self.run is not None and self.tool_holder.get(line.tool_use_id, "?") is None:
                # a task the main thread started: the CLI may answer its notification
                self.run.notified.append({k: getattr(line, k) for k in NOTIFICATION_FIELDS})
                self.run.notified_line = n

    def on_permission_denied(self, line: SystemLine, n: int) -> None:
        self._permission(
            tool_use_id=_set(line.tool_use_id),
            tool_name=_set(line.tool_name),
            decision="deny",
            reason=_set(line.decision_reason),
            message=_set(line.message),
            source="system/permission_denied",
            line=n,
        )

    def on_compact_boundary(self, line: SystemLine, n: int) -> None:
        """``/compact`` or autocompaction: the next replayed user message is the summary
        the CLI resumes from (with the messages ``preserved_messages`` names)."""
        run = self._ensure_run(n)
        meta = line.compact_metadata if isinstance(line.compact_metadata, dict) else {}
        run.compaction = dict(meta, boundary_id=line.uuid if isinstance(line.uuid, str) else None)

    def _compactions(self) -> list[Epoch]:
        """An epoch per compaction whose summary was captured; a ``/compact`` prompt and
        its ``<local-command-stdout>`` become one command after the summary, as the CLI
        records it in its own session file."""
        messages = self.main.messages
        epochs = []
        for run in self.runs:
            if run.compaction is None or run.compact_summary is None:
                continue
            if run.prompt is not None and run.prompt in messages and _slash(run.prompt) is not None:
                name, args = _slash(run.prompt)
                messages.remove(run.prompt)
                at = next(i for i, m in enumerate(messages) if m is run.compact_summary) + 1
                command = Command(name=name, args=args)
                after = messages[at] if at < len(messages) else None
                stdout = _stdout(after) if after is not None else None
                if stdout is not None:
                    command.output = stdout
                    messages.remove(after)
                messages.insert(at, Message("user", [command], source_ids=run.prompt.source_ids))
            meta = run.compaction
            kept = meta.get("preserved_messages") if isinstance(meta.get("preserved_messages"), dict) else {}
            uuids = [u for u in kept.get("uuids") or [] if isinstance(u, str)]
            epoch = Epoch(
                start=next(i for i, m in enumerate(messages) if m is run.compact_summary), preserved_ids=uuids
            )
            if isinstance(meta.get("boundary_id"), str):
                epoch.boundary_id = meta["boundary_id"]
            if isinstance(meta.get("trigger"), str):
                epoch.trigger = meta["trigger"]
            if isinstance(meta.get("pre_tokens"), int):
                epoch.pre_tokens = meta["pre_tokens"]
            epochs.append(epoch)
        return epochs

    def _local_commands(self) -> None:
        """A local command (``/cost``, ``/context``) prints as an assistant line of model
        ``<synthetic>``; the CLI records it as a command with its stdout: so it is read,
        the prompt and that line becoming one :class:`Command`."""
        messages = self.main.messages
        # where each message is, found once (a follow ends a capture at each look: a search
        # per run cost the runs times the messages); the edits are made after, from the end
        position = {id(m): i for i, m in enumerate(messages)}
        edits: list[tuple[int, Message]] = []
        for run in self.runs:
            prompt = run.prompt
            # a run whose prompt was not captured and whose only answer is a <synthetic> line
            # ran a local command too: the model never saw its output (issue 31 item 8)
            unnamed = prompt is not None and prompt.extra.get("missing_prompt") is True
            at = position.get(id(prompt)) if prompt is not None else None
            if at is None or (_slash(prompt) is None and not unnamed):
                continue
            reply = messages[at + 1] if at + 1 < len(messages) else None
            if reply is None or reply.role != "assistant" or reply.model != "<synthetic>" or reply.api_error:
                continue
            if unnamed and (run.last_assistant is not reply or any(type(b) is not Text for b in reply.content)):
                continue
            if unnamed:
                name, args = "", UNSET
                self.loss.add(
                    "command:name-not-captured",
                    "a local command's output (a <synthetic> line) kept as a command without its name",
                    file=self.file,
                    line=run.line,
                )
            else:
                name, args = _slash(prompt)
            output = "\n".join(b.text for b in reply.content if isinstance(b, Text))
            command = Message(
                "user", [Command(name=name, args=args, output=output)], source_ids=prompt.source_ids + reply.source_ids
            )
            edits.append((at, command))
        for at, command in sorted(edits, key=lambda edit: edit[0], reverse=True):  # each a prompt and its reply
            messages[at] = command
            del messages[at + 1]

    def on_hook_response(self, line: SystemLine, n: int) -> None:
        """A hook's ``additionalContext`` is context the model is sent: a SessionStart hook's
        becomes the ``hook_additional_context`` attachment 2.1.332 records in its session file
        (a context message before the run's prompt). A resumed run's (``SessionStart:resume``)
        is not in that file, so not carried (docs/stream_json.md#hooks)."""
        text = _additional_context(line.output)
        event, name = _set(line.hook_event), _set(line.hook_name)
        if text is None or not isinstance(event, str) or (isinstance(name, str) and name.endswith(":resume")):
            self.loss.add(
                f"record:system/{line.subtype}",
                "hook output the session file keeps no context of",
                file=self.file,
                line=n,
            )
            return
        block = Context("hook_additional_context", text=f"{event} hook additional context: {text}", role="system")
        if event == "SessionStart":  # as the session file of the same run holds it
            block.source = "claude_code"
            attachment = {"type": "hook_additional_context", "content": [text], "hookName": event}
            block.value = {"attachment": attachment | {"toolUseID": event, "hookEvent": event}}
        message = Message(role="user", content=[block], meta=True)
        self.main.messages.append(message)

    def _quiet(self, line: SystemLine, n: int) -> None:
        """Progress lines whose facts live elsewhere (the messages, the result)."""
        self.loss.add(f"record:system/{line.subtype}", "progress line; no Common form", file=self.file, line=n)

    # --- conversation --------------------------------------------------------------------
    def on_assistant(self, line: AssistantLine, n: int) -> None:
        run = self._ensure_run(n)
        thread, key = self._thread(line.parent_tool_use_id)
        message = thread.add_assistant(line, n)
        for block in message.content:
            if isinstance(block, ToolUse):
                self.tool_holder.setdefault(block.id, key)
        model = line.message.model
        if isinstance(model, str) and model != "<synthetic>" and key is None and model not in self.meta.models:
            self.meta.models.append(model)
        stream = self.streams.get(message.id) if isinstance(message.id, str) else None
        if stream is not None:
            stream.lines_seen += 1
        if key is None:
            run.last_assistant = message
            if any(isinstance(b, Text) and b.text for b in content_to_common(line.message.content)):
                run.streamed_text = True
        self._timestamp(line.timestamp)

    def on_user(self, line: UserLine, n: int) -> None:
        content = content_to_common(line.message.content)
        thread, key = self._thread(line.parent_tool_use_id)
        is_prompt = key is None and not any(isinstance(b, ToolResult) for b in content)
        # the input side: a prompt sent on stdin. The CLI prints its own user lines (with a
        # uuid) only inside a run, after init; an SDK host may give its stdin lines a uuid too.
        stdin_side = not line.is_replay and (not isinstance(line.uuid, str) or self.run is None)
        if is_prompt and (self.input_only or stdin_side):
            self.inputs.append(Message(role="user", content=content, extra={"input_line": n}))
            return
        run = self._ensure_run(n)
        if is_prompt and line.is_replay and self.inputs:
            self.inputs.popleft()  # the same prompt, seen from both sides
        message = thread.add_user(line, content, n)
        # the run's own prompt only when nothing of the run came before it
        if is_prompt and run.compaction is not None and run.compact_summary is None and key is None:
            message.compact_summary = True  # the summary replayed after compact_boundary
            run.compact_summary = message
            self._timestamp(line.timestamp)
            return
        if is_prompt and not run.prompted and run.slot == len(self.main.messages) - 1:
            run.prompt = message
            run.prompted = True
            run.prompt_source = "replay" if line.is_replay else "output"
        if line.is_replay:
            message.origin = "replay"
        self._timestamp(line.timestamp)

    def on_result(self, line: ResultLine, n: int) -> None:
        if self.awaiting:  # the result of a run a task notification's run followed
            self._result_of(self.awaiting.popleft(), line, n)
            return
        run = self._ensure_run(n)
        self._finish_streams()
        self._result_of(run, line, n)
        self._close_run()

    def _result_of(self, run: _Run, line: ResultLine, n: int) -> None:
        text = line.result.get("text") if isinstance(line.result, dict) else line.result
        if isinstance(text, str) and text and not run.streamed_text:
            # docs/stream_json.md#what-maps-where-reader: the result text repeats streamed text;
            # add it only when nothing streamed
            message = Message(role="assistant", content=[Text(text)], extra={"from_result": True})
            self.main.messages.append(message)
            self.main.results_open = False
            run.last_assistant = message
        summary = _result_summary(line)
        run.result = summary
        if run.last_assistant is not None:
            run.last_assistant.extra["turn"] = summary
            if isinstance(line.stop_reason, str) and run.last_assistant.stop_reason is UNSET:
                run.last_assistant.stop_reason = line.stop_reason
        for denial in line.permission_denials if isinstance(line.permission_denials, list) else []:
            if isinstance(denial, dict):
                self._permission(
                    tool_use_id=denial.get("tool_use_id"),
                    tool_name=denial.get("tool_name"),
                    decision="deny",
                    input=denial.get("tool_input"),
                    source="result.permission_denials",
                    line=n,
                )
        if isinstance(line.session_id, str) and self.meta.id is UNSET:
            self.meta.id = line.session_id

    # --- partial messages ---------------------------------------------------------------
    def on_stream_event(self, line: StreamEventLine, n: int) -> None:
        event = line.event if isinstance(line.event, dict) else {}
        kind = event.get("type")
        thread, key = self._thread(line.parent_tool_use_id)
        mid = line.api_message_id if isinstance(line.api_message_id, str) else None
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self._ensure_run(n)
            body = event["message"]
            mid = body.get("id") if isinstance(body.get("id"), str) else mid
            if mid is None or mid in self.streams:
                return
            message = thread.by_id.get(mid)
            if message is None:
                message = Message(role="assistant", id=mid)
                if isinstance(body.get("model"), str):
                    message.model = body["model"]
                thread.messages.append(message)
                thread.by_id[mid] = message
                thread.results_open = False
            self.streams[mid] = _Stream(message, thread, key is None, start_usage=body.get("usage"))
            return
        stream = self.streams.get(mid) if mid else None
        if stream is None:
            # events of a message whose start we did not see: the deltas have no home
            self.loss.add("stream:orphan-event", f"{kind} without message_start", file=self.file, line=n)
            return
        index = event.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            stream.blocks[index] = dict(event.get("content_block") or {}, _json="")
        elif kind == "content_block_delta" and isinstance(index, int):
            _apply_delta(stream.blocks.setdefault(index, {"_json": ""}), event.get("delta") or {})
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if isinstance(delta.get("stop_reason"), str):
                stream.message.stop_reason = delta["stop_reason"]
            usage = dict(stream.start_usage or {})
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if isinstance(v, int)})
            final = _usage(usage)
            if final is not None:
                stream.message.usage = final
        elif kind == "message_stop":
            stream.stopped = True

    def _finish_streams(self) -> None:
        """Blocks that streamed but never arrived as an assistant line (a run cut off
        mid-message) are rebuilt from their deltas."""
        for mid, stream in list(self.streams.items()):
            missing = [stream.blocks[i] for i in sorted(stream.blocks)][stream.lines_seen :]
            for block in missing:
                rebuilt = _rebuild(block)
                if rebuilt is not None:
                    stream.message.content.append(rebuilt)
                    if stream.main and self.run is not None:
                        self.run.last_assistant = stream.message
                        # docs/stream_json.md#what-maps-where-reader: streamed text, even only as deltas,
                        # is not repeated from the result
                        self.run.streamed_text |= isinstance(rebuilt, Text) and bool(rebuilt.text)
            if missing:
                stream.message.extra["from_stream_events"] = True
            del self.streams[mid]
            if not stream.message.content:
                # a message_start and nothing after it: no message to keep
                self.loss.add("stream:empty-message", f"{mid}: nothing streamed; left out", file=self.file)
                self._drop(stream)
            elif not stream.stopped:
                stream.message.interrupted = True
                self.loss.add(
                    "stream:unfinished-message", f"{mid}: no message_stop; kept what streamed", file=self.file
                )

    def _drop(self, stream: _Stream) -> None:
        thread = stream.thread
        thread.messages = [m for m in thread.messages if m is not stream.message]
        thread.by_id.pop(stream.message.id, None)
        last = thread.messages[-1] if thread.messages else None
        thread.results_open = (
            last is not None
            and last.role == "user"
            and bool(last.content)
            and all(isinstance(b, ToolResult) for b in last.content)
        )

    # --- control plane ------------------------------------------------------------------
    def on_control_request(self, line: ControlRequestLine, n: int) -> None:
        request = line.request if isinstance(line.request, dict) else {}
        subtype = request.get("subtype")
        if subtype == "can_use_tool" and isinstance(line.request_id, str):
            entry = self._permission(
                tool_use_id=request.get("tool_use_id"),
                tool_name=request.get("tool_name"),
                decision=None,
                input=request.get("input"),
                request_id=line.request_id,
                source="control_request",
                line=n,
            )
            self.requests[line.request_id] = entry
            return
        self.loss.add(f"record:control_request/{subtype}", "control plane; no Common form", file=self.file, line=n)

    def on_control_response(self, line: ControlResponseLine, n: int) -> None:
        response = line.response if isinstance(line.response, dict) else {}
        request_id = response.get("request_id", _set(line.request_id))
        entry = self.requests.get(request_id) if isinstance(request_id, str) else None
        body = response.get("response", response.get("result"))
        if entry is not None and isinstance(body, dict):
            entry["decision"] = body.get("behavior", body.get("decision"))
            for key in ("message", "interrupt", "updatedInput", "updatedPermissions"):
                if key in body:
                    entry[key] = body[key]
            return
        self.loss.add("record:control_response", "control plane; no Common form", file=self.file, line=n)

    def on_control_cancel(self, line: ControlCancelRequestLine, n: int) -> None:
        entry = self.requests.get(line.request_id) if isinstance(line.request_id, str) else None
        if entry is not None:
            entry["decision"] = "cancelled"
        else:
            self.loss.add("record:control_cancel_request", "no matching request", file=self.file, line=n)

    def _permission(self, **fields: Any) -> dict[str, Any]:
        tool_use_id = fields.get("tool_use_id")
        for entry in self.permissions:  # one entry per tool call, however many lines told of it
            if tool_use_id and entry.get("tool_use_id") == tool_use_id:
                for k, v in fields.items():
                    if v is not None and (k not in entry or entry[k] is None):
                        entry[k] = v
                entry.setdefault("sources", []).append(fields["source"])
                return entry
        entry = {k: v for k, v in fields.items() if v is not None and k != "source"}
        entry["sources"] = [fields["source"]]
        self.permissions.append(entry)
        return entry

    def _timestamp(self, value: Any) -> None:
        if isinstance(value, str):
            if self.meta.started_at is UNSET:
                self.meta.started_at = value
            self.meta.ended_at = value

    # --- the end ------------------------------------------------------------------------
    def finish(self) -> Conversation:
        self._close_run()
        while self.inputs:  # prompts sent but never answered (or an input-only file)
            message = self.inputs.popleft()
            self.main.messages.append(message)
        unused = len(self.prompts) - len(self.runs)
        if unused > 0:
            self.loss.add("prompt:unused", f"{unused} supplied prompt(s) beyond the {len(self.runs)} run(s)")
        meta = self.meta
        if meta.id is UNSET and self.session_ids:
            meta.id = self.session_ids[0]
        if len(self.session_ids) > 1:
            meta.extra["session_ids"] = self.session_ids
        if self.init:
            meta.extra["init"] = builtins(self.init)
        if self.runs:
            meta.extra["runs"] = [r.summary() for r in self.runs]
        if self.permissions:
            meta.extra["permissions"] = self.permissions
        self._local_commands()
        epochs = self._compactions()
        conversation = Conversation(meta=meta, messages=self.main.messages, epochs=epochs)
        conversation.children = self._children()
        return conversation

    def _children(self) -> list[Child]:
        built: dict[str, Child] = {}
        for tool_id, thread in self.children.items():
            info = self.child_info.get(tool_id, {})
            link = ChildLink(via="parent_tool_use_id", tool_use_id=tool_id)
            if isinstance(info.get("task_id"), str):
                link.agent_id = info["task_id"]
            if isinstance(info.get("status"), str):
                link.status = info["status"]
            child_meta = Meta(source_harness="stream_json")
            if isinstance(info.get("summary"), str):
                child_meta.extra["summary"] = info["summary"]
            child = Child(link=link, conversation=Conversation(meta=child_meta, messages=thread.messages))
            if isinstance(info.get("subagent_type"), str):
                child.agent_type = info["subagent_type"]
            if isinstance(info.get("description"), str):
                child.description = info["description"]
            built[tool_id] = child
            # observed on 2.1.332: a subagent's tool calls, results and prompt are streamed,
            # its text blocks are not (the task_notification carries a summary)
            self.loss.add(
                "stream:subagent-text-not-streamed",
                f"subagent under {tool_id}: the CLI does not stream a subagent's text; its session file has it",
                file=self.file,
            )
        top: list[Child] = []
        for tool_id, child in built.items():
            holder = self.tool_holder.get(tool_id)
            parent = built.get(holder) if holder else None
            if parent is not None and parent is not child:
                child.spawn_depth = parent.spawn_depth + 1
                parent.conversation.children.append(child)
            else:
                top.append(child)
        return top

    HANDLERS: dict[type, Any] = {
        SystemLine: on_system,
        AssistantLine: on_assistant,
        UserLine: on_user,
        ResultLine: on_result,
        StreamEventLine: on_stream_event,
        ControlRequestLine: on_control_request,
        ControlResponseLine: on_control_response,
        ControlCancelRequestLine: on_control_cancel,
    }
    SYSTEM: dict[str, Any] = {
        "init": on_init,
        "task_started": on_task_started,
        "task_notification": on_task_notification,
        "permission_denied": on_permission_denied,
        "compact_boundary": on_compact_boundary,
        "hook_response": on_hook_response,
        "status": _quiet,
        "thinking_tokens": _quiet,
        "task_progress": _quiet,
        "task_updated": _quiet,
    }


def _additional_context(output: Any) -> str | None:
    """The ``hookSpecificOutput.additionalContext`` a hook printed (its ``output``, JSON)."""
    try:
        value = json.loads(output) if isinstance(output, str) else None
    except ValueError:
        return None
    specific = value.get("hookSpecificOutput") if isinstance(value, dict) else None
    text = specific.get("additionalContext") if isinstance(specific, dict) else None
    return text if isinstance(text, str) and text else None


def _slash(message: Message) -> tuple[str, str] | None:
    """``("/name", "args")`` when the message is one typed slash command."""
    texts = [b.text for b in message.content if isinstance(b, Text)]
    if len(texts) != 1 or len(message.content) != 1 or not re.match(r"^/[A-Za-z][\w:-]*(\s|$)", texts[0]):
        return None
    name, _, args = texts[0].strip().partition(" ")
    return name, args.strip()


def _stdout(message: Message) -> str | None:
    """The text of a ``<local-command-stdout>`` user message, else ``None``."""
    texts = [b.text for b in message.content if isinstance(b, Text)]
    if message.role != "user" or len(texts) != 1:
        return None
    found = re.fullmatch(r"<local-command-stdout>(.*)</local-command-stdout>", texts[0], re.S)
    return found.group(1) if found else None


NOTIFICATION_FIELDS = ("task_id", "tool_use_id", "output_file", "status", "summary", "usage")
# 2.1.332's note in every agent's notification (pinned by the background_subagent scenario)
NOTIFICATION_NOTE = (
    "A task-notification fires each time this agent stops with no live background children of its own. "
    "The user can send it another message and resume it, so the same task-id may notify more than once."
)


def _notification_text(fields: dict[str, Any], child_info: dict[str, dict[str, Any]]) -> str:
    """The ``<task-notification>`` user message 2.1.332 writes for a finished background
    agent, from its ``task_notification`` line (and the ``task_started`` description)."""
    value = {k: v for k, v in fields.items() if v is not UNSET and v is not None}
    info = child_info.get(value.get("tool_use_id", ""), {})
    parts = [
        f"<{tag}>{value[key]}</{tag}>"
        for tag, key in (
            ("task-id", "task_id"),
            ("tool-use-id", "tool_use_id"),
            ("output-file", "output_file"),
            ("status", "status"),
        )
        if isinstance(value.get(key), str)
    ]
    if value.get("status") == "completed" and isinstance(info.get("description"), str):
        parts.append(f'<summary>Agent "{info["description"]}" finished</summary>')
    parts.append(f"<note>{NOTIFICATION_NOTE}</note>")
    if isinstance(value.get("summary"), str):
        parts.append(f"<result>{value['summary']}</result>")
    usage = value.get("usage")
    if isinstance(usage, dict):
        tags = (("subagent_tokens", "total_tokens"), ("tool_uses", "tool_uses"), ("duration_ms", "duration_ms"))
        parts.append("<usage>" + "".join(f"<{t}>{usage[k]}</{t}>" for t, k in tags if k in usage) + "</usage>")
    return "<task-notification>\n" + "\n".join(parts) + "\n</task-notification>"


def _apply_delta(block: dict[str, Any], delta: dict[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + str(delta.get("text", ""))
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
    elif kind == "signature_delta":
        block["signature"] = block.get("signature", "") + str(delta.get("signature", ""))
    elif kind == "input_json_delta":
        block["_json"] = block.get("_json", "") + str(delta.get("partial_json", ""))


def _rebuild(block: dict[str, Any]) -> Any:
    kind = block.get("type")
    if kind == "text":
        return Text(block.get("text", ""))
    if kind == "thinking":
        signature = block.get("signature")
        return Thinking(block.get("thinking", ""), signature=signature if signature else UNSET)
    if kind == "redacted_thinking" and isinstance(block.get("data"), str):
        return RedactedThinking(block["data"])
    if kind == "tool_use":
        raw = block.get("_json", "")
        try:
            value = json.loads(raw) if raw else block.get("input", {})
        except ValueError:
            value = {"partial_json": raw}
        name = str(block.get("name", ""))
        return ToolUse(id=str(block.get("id", "")), name=name, input=value, kind=tool_kind(name))
    return None


def _result_summary(line: ResultLine) -> dict[str, Any]:
    """What the result line says about its run: usage and cost per turn."""
    out: dict[str, Any] = {}
    names = (
        "subtype",
        "is_error",
        "num_turns",
        "duration_ms",
        "duration_api_ms",
        "total_cost_usd",
        "cost_usd",
        "usage",
        "stop_reason",
        "terminal_reason",
        "errors",
        "api_error_status",
        "total_input_tokens",
        "total_output_tokens",
    )
    for name in names:
        value = getattr(line, name)
        if value is not UNSET:
            out[name] = value
    per_run = line.model_usage_since_last_result
    if isinstance(per_run, dict):
        out["model_usage"] = per_run
        costs = [v.get("costUSD") for v in per_run.values() if isinstance(v, dict)]
        if costs and all(isinstance(c, (int, float)) for c in costs):
            out["turn_cost_usd"] = sum(costs)
    elif line.model_usage_camel is not UNSET:
        out["model_usage"] = line.model_usage_camel
    elif line.model_usage is not UNSET:
        out["model_usage"] = line.model_usage
    if line.model_usage_camel is not UNSET:
        out["model_usage_total"] = line.model_usage_camel
    return builtins(out)


def read(
    session: NativeSession,
    loss: LossReport,
    *,
    prompts: list[str] | None = None,
    input_session: NativeSession | None = None,
) -> Conversation:
    """A capture as a Common conversation. ``prompts`` fill in, one per run, the
    prompts the capture lacks; ``input_session`` is the stdin side when it was kept in a
    file of its own."""
    file = str(session.path) if session.path is not None else None
    # api.convert(..., prompts=, input_side=) hands them over on the session
    if prompts is None:
        prompts = getattr(session, "prompts", None)
    if input_session is None:
        input_session = getattr(session, "input_session", None)
    reader = _Reader(loss, file, prompts)
    if input_session is not None:
        side = _Reader(loss, str(input_session.path) if input_session.path else None, None, input_only=True)
        for n, record in enumerate(input_session, 1):
            with malformed(loss, side.file, n):
                side.feed(record, n)
        reader.inputs.extend(side.inputs)
    for n, record in enumerate(session, 1):
        with malformed(loss, file, n):
            reader.feed(record, n)
    report_unknown_keys(session, loss, file, _Reader.HANDLERS)
    return reader.finish()


# --- a reader that carries on (Harness.carry_on, txcodec.live) -------------------------


class CarryOn:
    """A capture read as the CLI prints it: the reader's state is kept between feeds, so a
    feed costs what its lines cost. Its end step (:meth:`_Reader.finish`: the open run's
    prompt put at its place, a stream cut off rebuilt, local commands and compactions
    rewritten, subagents built) changes that state, so each look runs it on a copy: the
    lists and runs it changes are copied (references, not messages), and the messages it
    changes (those of streams still open) are copied alone. The messages a feed built or
    changed, and those the end step put in place, are fitted to Common again; the others
    are as last fitted. Every message is held (the end step can reach any run still
    waiting for its result): nothing is handed on (docs/live.md#show---follow)."""

    def __init__(self, path: Any = None, window: int | None = None) -> None:
        from ...kit.conform import Fitted
        from ...model.loss import UnreadLoss

        self.file = str(path) if path is not None else None
        self.loss = UnreadLoss()  # a follow shows the conversation, not what it lost
        self.reader = _Reader(self.loss, self.file, None)
        self.lines = 0
        self.dirty: dict[int, Message] = {}  # the messages the lines fed since the last look changed, by id()
        self.last: list[Message] = []  # the messages the last look gave, before fitting
        self.holding: dict[str, Message] = {}  # a subagent's call id -> the message holding it
        self.final_runs: list[Any] = []  # the summaries of the first runs, ended, as fitted
        self.fitted = Fitted()

    def feed(self, lines: list[Any]) -> None:
        reader, dirty, loss, file = self.reader, self.dirty, self.loss, self.file
        for n, line in enumerate(lines, self.lines + 1):
            record = line.record
            runs = (reader.run, *reader.awaiting)  # a result lands on one of these
            with malformed(loss, file, n):
                reader.feed(record, n)
            # what a line can change besides the messages it adds: the last message of its
            # thread (results joining it), a reply it is a fragment of, the reply its run's
            # result lands on, and the messages still streaming
            main = reader.main.messages
            if main:
                dirty[id(main[-1])] = main[-1]
            if type(record) is AssistantLine and isinstance(record.message.id, str):
                target = reader.main.by_id.get(record.message.id)
                if target is not None:
                    dirty[id(target)] = target
            for run in (*runs, reader.run):
                if run is not None and run.last_assistant is not None:
                    dirty[id(run.last_assistant)] = run.last_assistant
            for stream in reader.streams.values():
                dirty[id(stream.message)] = stream.message
            # a subagent's line grows the call that started it (a follow compares a message
            # with its subagents' sizes): the main thread's call, above nested ones
            call = getattr(record, "parent_tool_use_id", None)
            if not isinstance(call, str) and type(record) is SystemLine:
                call = record.tool_use_id
            if isinstance(call, str) and call:
                message = self._holding(call)
                if message is not None:
                    dirty[id(message)] = message
        self.lines += len(lines)

    def _holding(self, call: str) -> Message | None:
        """The main thread's message holding the call that (through nested subagents)
        started the subagent of ``call``."""
        holder, seen = self.reader.tool_holder, set()
        while isinstance(holder.get(call), str) and call not in seen:
            seen.add(call)
            call = holder[call]
        found = self.holding.get(call)
        if found is None:
            for message in reversed(self.reader.main.messages):
                if any(type(b) is ToolUse and b.id == call for b in message.content):
                    found = self.holding[call] = message
                    break
        return found

    def hand_on(self) -> list[tuple[Message, bool]]:
        return []

    def conversation(self) -> tuple[Conversation, list[int]]:
        conversation = self._ended()
        messages, last = conversation.messages, self.last
        dirty = self.dirty
        # a message put in place of another (a prompt inserted, a command made of two) moves
        # or replaces those after it: told by identity; those changed in place by the lines
        touched = {
            i
            for i, m in enumerate(messages)
            if i >= len(last) or m is not last[i] or id(m) in dirty and dirty[id(m)] is m
        }
        self.dirty, self.last = {}, list(messages)
        # the summary of each run (meta.extra["runs"]): those of the runs ended are final,
        # fitted once; the frame is fitted without them (its cost was a pass over them all)
        summaries = conversation.meta.extra.get("runs")
        if not isinstance(summaries, list):
            return self.fitted.fit(conversation, touched, self.loss)
        reader, final = self.reader, self.final_runs
        while len(final) < len(summaries) and self._ended_run(reader.runs[len(final)]):
            final.append(_plain.decode(_json.encode(summaries[len(final)])))
        conversation.meta.extra["runs"] = []
        out, changed = self.fitted.fit(conversation, touched, self.loss)
        out.meta.extra["runs"] = final + [_plain.decode(_json.encode(s)) for s in summaries[len(final) :]]
        return out, changed

    def _ended_run(self, run: _Run) -> bool:
        """Whether ``run`` will not change: it was closed (its prompt placed) and is not
        waiting for its result (which goes to the open run or the first waiting one)."""
        reader = self.reader
        return run is not reader.run and all(run is not r for r in reader.awaiting)

    def _ended(self) -> Conversation:
        """The reader's end step run on a copy of what it changes."""
        import copy

        from ...model.loss import UnreadLoss

        reader = self.reader
        clone = copy.copy(reader)
        clone.loss = UnreadLoss()
        meta = reader.meta
        clone.meta = msgspec.structs.replace(meta, extra=dict(meta.extra), models=list(meta.models))
        threads = {
            id(t): _Thread(list(t.messages), dict(t.by_id), t.results_open)
            for t in (reader.main, *reader.children.values())
        }
        clone.main = threads[id(reader.main)]
        clone.children = {k: threads[id(t)] for k, t in reader.children.items()}
        # the end step changes the open run alone, and the runs whose reply is still
        # streaming (copied below): the others are shared
        clone.runs = list(reader.runs)
        if reader.run is not None:
            clone.run = copy.copy(reader.run)
            clone.runs[-1 if clone.runs[-1] is reader.run else clone.runs.index(reader.run)] = clone.run
        clone.awaiting = deque(reader.awaiting)
        clone.inputs = deque(reader.inputs)
        clone.streams = {}
        for mid, stream in reader.streams.items():
            thread = threads[id(stream.thread)]
            message = stream.message
            mine = msgspec.structs.replace(message, content=list(message.content), extra=dict(message.extra))
            for i in range(len(thread.messages) - 1, -1, -1):
                if thread.messages[i] is message:
                    thread.messages[i] = mine
                    break
            if isinstance(message.id, str) and thread.by_id.get(message.id) is message:
                thread.by_id[message.id] = mine
            for i, run in enumerate(clone.runs):
                if run.last_assistant is message:
                    if run is not clone.run:
                        run = clone.runs[i] = copy.copy(run)
                    run.last_assistant = mine
            clone.streams[mid] = _Stream(
                mine, thread, stream.main, stream.blocks, stream.lines_seen, stream.stopped, stream.start_usage
            )
        return clone.finish()


_json = msgspec.json.Encoder()
_plain = msgspec.json.Decoder()  # a value of meta.extra fitted as the whole frame's JSON fits it


def carry_on(path: Any = None, window: int | None = None) -> CarryOn:
    return CarryOn(path, window)
