"""Codex rollout -> Common.

The conversation is what the model sees: the ``response_item`` lines, in order.
Consecutive model-side items (reasoning, assistant text, tool calls) make one assistant
message; consecutive tool outputs make one user message; calls and outputs are joined by
``call_id``. ``event_msg`` lines are the UI's mirror of the same turns, so they are not
read twice: a file with no ``response_item`` message at all (an events-only rollout) is
read from its ``user_message`` / ``agent_message`` events instead.

* Preludes Codex injects (developer / system messages, ``<environment_context>``,
  AGENTS.md ``<user_instructions>``, ...) become ``meta`` user messages whose
  ``extra["codex_prelude"]`` names the kind (:mod:`.prelude`); they are not prompts.
* Reasoning keeps both the summary text and ``encrypted_content`` in one Thinking block.
* ``function_call.arguments`` (a JSON string) is parsed into the ToolUse input;
  ``custom_tool_call`` input stays the freeform string (``apply_patch`` reads as a typed
  :class:`~txcodec.model.tools.Patch` edit); ``local_shell_call`` and ``web_search_call`` are
  ToolUses named ``local_shell`` / ``web_search``.
* Usage comes from ``token_count`` events: each counted event's ``last_token_usage`` goes
  to the assistant message(s) of that model call. A repeated event (same running total)
  and the token counts a fork replays from its parent are not counted again.
* A ``compacted`` line opens an :class:`~txcodec.model.common.Epoch` with its summary; one that
  wrote no summary (a remote compaction) gets one from its ``replacement_history``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from ...kit.read import MALFORMED
from ...kit.read import report_lone_surrogate_lines
from ...kit.read import report_lone_surrogates
from ...kit.read import report_malformed
from ...kit.read import streamed_batches
from ...model.common import Context
from ...model.common import Conversation
from ...model.common import Epoch
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import Opaque
from ...model.native import builtins
from ...model.native import decode_session
from ...model.tools import tool_kind
from . import records as R
from .codec import CODEC
from .origin import codex_meta_candidates
from .origin import codex_origin
from .prelude import prelude_kind

# UI events that repeat what a response item or the ``compacted`` line already carries:
# not read twice, and nothing is lost without them.
MIRROR_EVENTS = {
    "user_message",
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "item_completed",
    "context_compacted",
}
_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.S)
# How codex's local compaction summary starts (codex-rs/core/templates/compact/summary_prefix.md).
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process."


def read(session: NativeSession, loss: LossReport) -> Conversation:
    if session.pending is not None:
        return _read_streamed(session, loss)
    return _Reader(session, loss).run()


def _read_streamed(session: NativeSession, loss: LossReport) -> Conversation:
    """A session read as it is decoded, a batch of lines at a time, each batch dropped
    once read (``api.convert``): what :func:`read` and ``api.to_common`` give for the
    session loaded whole, lone-surrogate report and origin included.

    Whether the rollout has any message item (else it is read from its events) is only
    known at its end, so it is read as if it had one, into a loss report of its own; a
    rollout without one (an events-only rollout, small and rare) is then read again,
    loaded whole."""
    data, session.pending = session.pending, None
    final_newline = bool(data) and data[-1] == 0x0A
    file = str(session.path) if session.path is not None else None
    seen = [False]  # whether a line so far was a message item
    repaired: list[int] = []  # lines read from a copy with lone surrogates repaired
    candidates: list[Any] = []  # the lines that may name a session (origin.codex_origin)

    def records() -> Iterator[Any]:
        for _, batch in streamed_batches(data, session.codec, repaired):
            candidates.extend(codex_meta_candidates(batch))
            batch_records = [line.record for line in batch]
            if not seen[0]:
                seen[0] = any(
                    isinstance(R.payload_of(r), R.MessageItem) for r in batch_records if not isinstance(r, Opaque)
                )
            yield from batch_records

    own = LossReport() if type(loss) is LossReport else loss
    conversation = _Reader(session, own, records(), events_only=False).run()
    session.final_newline = final_newline
    if not seen[0]:  # events only: read as the whole session is
        whole = decode_session(bytes(data), session.codec, session.harness, session.path)
        conversation = _Reader(whole, loss).run()
        report_lone_surrogates(whole, loss, file)
        session.origin = codex_origin(whole.lines, Path(whole.path) if whole.path is not None else None, whole._source)
        return conversation
    if own is not loss:
        loss.extend(own)
    # its lines are gone once read: what to_common reports of a loaded session's lines
    # is reported here, in its place
    report_lone_surrogate_lines(loss, file, repaired)
    session.origin = codex_origin(candidates, Path(session.path) if session.path is not None else None)
    return conversation


class _Reader:
    def __init__(
        self, session: NativeSession, loss: LossReport, records: Any = None, events_only: bool | None = None
    ) -> None:
        self.session = session
        self.loss = loss
        self.file = str(session.path) if session.path else None
        self.conv = Conversation(meta=Meta(source_harness="codex"))
        self.model: str | None = None
        self.own_id: str | None = None
        self.replaying = False
        self.last_total: tuple | None = None
        self.pending_usage_from = 0  # messages from this index (from the start) get the next token_count
        # messages handed on before ``conv.messages[0]`` (a follow with a window: CarryOn),
        # and the human user messages among them (a compaction counts them)
        self.base = 0
        self.humans_before = 0
        # a counted model call with no assistant message after it: a local compaction's
        # own call, when a ``compacted`` line follows (which then takes its usage)
        self.unattributed: Usage | None = None
        self.records = session.records if records is None else records
        if events_only is None:
            events_only = not any(
                isinstance(R.payload_of(r), (R.MessageItem, R.TsRollout))
                for r in self.records
                if not isinstance(r, Opaque)
            )
        self.events_only = events_only
        self.calls: dict[str, ToolUse] = {}
        self.kinds: dict[str, str] = {}  # tool name -> tool_kind(name), looked up once per name
        # an apply_patch the runtime failed (``patch_apply_end`` success false): its output,
        # a plain string with no flag, is the call's error (docs/codex.md#reading-codex---common)
        self.results: dict[str, ToolResult] = {}
        self.failed_patches: set[str] = set()
        # a reader that carries on (CarryOn): the messages built earlier that a line changed,
        # and the message holding each result (a failed patch's event flags it later)
        self.touched: list[Message] | None = None
        self.result_in: dict[str, Message] = {}
        # world_state / turn_context lines waiting for the next message, in their order
        self.state_lines: list[dict[str, Any]] = []

    # --- helpers ------------------------------------------------------------------
    def lose(self, kind: str, detail: str, n: int) -> None:
        self.loss.add(kind, detail, file=self.file, line=n)

    def message(self, role: str, ts: Any, **kw: Any) -> Message:
        msg = Message(role=role, timestamp=ts if isinstance(ts, str) else UNSET, **kw)
        if self.state_lines:
            msg.extra["codex_state_lines"], self.state_lines = self.state_lines, []
        if role == "assistant" and self.model:
            msg.model = self.model
        self.conv.messages.append(msg)
        return msg

    def side(self, role: str, ts: Any) -> Message:
        """The open message of ``role`` to add a block to, or a new one."""
        msgs = self.conv.messages
        last = msgs[-1] if msgs else None
        if last is not None and last.role == role and not (last.meta or last.synthetic or last.compact_summary):
            if role == "assistant" or all(isinstance(b, ToolResult) for b in last.content):
                if self.touched is not None:
                    self.touched.append(last)
                return last
        return self.message(role, ts)

    # --- main loop ----------------------------------------------------------------
    def run(self) -> Conversation:
        self.feed(enumerate(self.records, 1))
        self.finish()
        return self.conv

    def feed(self, numbered: Any) -> None:
        """Read these records, each with its line number."""
        handlers, items = _LINE_HANDLERS, _ITEM_HANDLERS
        bare_items = _BARE_ITEMS
        for n, record in numbered:
            # what malformed() does, without a context manager per line
            try:
                kind = type(record)
                if kind is R.ResponseItemLine:  # most lines: straight to the item's handler
                    payload = record.payload
                    handler = items.get(type(payload))
                    if handler is not None:
                        handler(self, payload, record.timestamp, n)
                    else:
                        self.item(payload, record.timestamp, n)
                elif (handler := handlers.get(kind)) is not None:
                    handler(self, record, n)
                elif kind is Opaque:
                    self.lose("opaque", record.diagnostic, n)
                elif kind in bare_items:  # 2025: a bare item
                    self.item(record, None, n)
                else:
                    self.lose("record:unknown", kind.__name__, n)
            except MALFORMED as exc:
                report_malformed(self.loss, self.file, n, exc)

    def finish(self) -> None:
        msgs = self.conv.messages
        stamps = [m.timestamp for m in msgs if isinstance(m.timestamp, str)]
        if stamps:
            if self.conv.meta.started_at is UNSET:
                self.conv.meta.started_at = stamps[0]
            self.conv.meta.ended_at = stamps[-1]
        for call_id, use in self.calls.items():
            if use.name != "web_search":
                self.loss.add(
                    "tool:no-output", f"{use.name} call {call_id} has no output in the rollout", file=self.file
                )

    # --- lines ----------------------------------------------------------------------
    def session_meta(self, line: R.SessionMetaLine, n: int) -> None:
        p = line.payload
        if self.own_id is None:
            self.own_id = p.id if isinstance(p.id, str) else ""
            meta = self.conv.meta
            meta.id = p.id
            meta.cwd = p.cwd
            meta.client_version = p.cli_version
            meta.started_at = p.timestamp if isinstance(p.timestamp, str) else line.timestamp
            if isinstance(p.git, R.GitInfo) and isinstance(p.git.branch, str):
                meta.git_branch = p.git.branch
            extra = {k: v for k, v in builtins(p).items() if k not in ("id", "cwd", "cli_version", "timestamp")}
            if extra:
                meta.extra["codex_session_meta"] = extra
            return
        # A second meta is the parent's, copied by a fork ahead of the replayed history.
        if p.id != self.own_id:
            self.replaying = True
            self.conv.meta.extra.setdefault("forked_from_id", p.id)
        self.lose("record:session_meta", f"another session's meta ({p.id}): fork replay follows", n)

    def legacy_meta(self, line: R.LegacyMeta, n: int) -> None:
        if self.own_id is None:
            self.own_id = line.id
            self.conv.meta.id = line.id
            if isinstance(line.timestamp, str):
                self.conv.meta.started_at = line.timestamp
            if isinstance(line.instructions, str):
                self.conv.meta.extra["codex_session_meta"] = {"instructions": line.instructions}

    def ts_rollout(self, line: R.TsRollout, n: int) -> None:
        """0.1.x: the session, then its items, all on the document's one line
        (docs/codex.md#versions-read)."""
        session = line.session
        self.legacy_meta(R.LegacyMeta(id=session.id, timestamp=session.timestamp, instructions=session.instructions), n)
        handlers = _ITEM_HANDLERS
        for raw in line.items:
            item = CODEC.decode(bytes(raw))
            if isinstance(item, Opaque):
                self.lose("opaque", item.diagnostic, n)
            elif (handler := handlers.get(type(item))) is not None:
                handler(self, item, None, n)
            elif type(item) in _BARE_ITEMS:
                self.item(item, None, n)
            else:
                self.lose("record:unknown", f"0.1.x item {type(item).__name__}", n)

    def legacy_state(self, line: R.LegacyState, n: int) -> None:
        self.lose("record:state", "2025 bookkeeping marker", n)

    def turn_context(self, line: R.TurnContextLine, n: int) -> None:
        p = R.turn_settings(line.payload)
        if isinstance(p.model, str):
            self.model = p.model
            if p.model not in self.conv.meta.models:
                self.conv.meta.models.append(p.model)
        if self.replaying and self._after_fork(p.turn_id):
            self.replaying = False
        # the settings 0.171 diffs its context against on resume: kept for Codex -> Codex
        self.state_lines.append({"type": "turn_context", "payload": R.raw_json(line.payload)})
        self.lose("record:turn_context", "turn settings (approval, sandbox, effort): kept for Codex only", n)

    def compacted(self, line: R.CompactedLine, n: int) -> None:
        p = line.payload
        history = p.replacement_history if isinstance(p.replacement_history, list) else None
        summary = p.message
        derived = not summary.strip() and history is not None
        if derived:  # a remote compaction (compact_remote.rs) writes an empty message
            summary = summary_from_history(history)
        msg = self.message("user", line.timestamp, content=[Text(summary)], compact_summary=True, synthetic=True)
        msg.source_ids.append(f"line:{n}")
        if self.unattributed is not None:
            # the compaction's own model call (counted just before its line): its usage
            # is the summary's, so usage reports count the call (ccusage does)
            msg.usage, self.unattributed = self.unattributed, None
            if self.model is not None:
                msg.model = self.model
            extra = self.conv.meta.extra
            left = msgspec.convert(extra.pop("codex_unattributed_usage"), Usage)
            left = Usage(
                *(a - b for a, b in zip(msgspec.structs.astuple(left)[:4], msgspec.structs.astuple(msg.usage)[:4]))
            )
            if any(msgspec.structs.astuple(left)[:4]):
                extra["codex_unattributed_usage"] = msgspec.to_builtins(left)
        if history is not None:
            msg.extra["codex_replacement_history"] = history
        if derived:
            msg.extra["codex_summary_from_history"] = True
            self.lose(
                "compaction:summary-from-history",
                "the compacted line has no summary text; the summary is its "
                "replacement history as text (a remote compaction's own summary is encrypted)",
                n,
            )
            kept = 0
        elif history is not None:
            kept = sum(1 for item in history if not _is_summary_item(item, p.message))
        else:  # codex rebuilds the context from the user messages before, then the summary
            kept = self.humans_before + sum(
                1 for m in self.conv.messages[:-1] if m.role == "user" and m.origin == "human"
            )
        if kept:
            self.lose(
                "compaction:kept-history",
                f"codex resumes this compaction with {kept} earlier item(s) besides the summary; "
                "a Common epoch starts at the summary (kept in extra for Codex)",
                n,
            )
        self.conv.epochs.append(Epoch(start=self.base + len(self.conv.messages) - 1, trigger="codex"))

    def other(self, line: R.OtherLine, n: int) -> None:
        if line.type == "world_state":
            # 0.150+: the state the client diffs its context against on resume; without it
            # 0.171 resends the permissions and a skills update. Kept for Codex -> Codex on
            # the next message (docs/codex.md#versions-read); other targets do not carry it.
            self.state_lines.append({"type": "world_state", "payload": R.raw_json(line.payload)})
        self.lose(f"record:{line.type}", "line type Common does not carry", n)

    def response_item(self, line: R.ResponseItemLine, n: int) -> None:
        self.item(line.payload, line.timestamp, n)

    def event(self, line: R.EventMsgLine, n: int) -> None:
        p = line.payload
        if isinstance(p, msgspec.Raw):
            kind = R.raw_json(p).get("type") if isinstance(R.raw_json(p), dict) else None
            self.lose(f"event:{kind}", "event Common does not carry", n)
            return
        handler = _EVENT_HANDLERS.get(type(p))
        if handler is not None:
            handler(self, p, line.timestamp, n)
            return
        kind = type(p).__struct_config__.tag
        if kind not in MIRROR_EVENTS:
            self.lose(f"event:{kind}", "UI event Common does not carry", n)

    # --- response items -------------------------------------------------------------
    def item(self, p: Any, ts: Any, n: int) -> None:
        if isinstance(p, msgspec.Raw):
            value = R.raw_json(p)
            kind = value.get("type") if isinstance(value, dict) else None
            if kind in _TOOL_SEARCH:
                self.tool_search(value, ts)
                return
            self.lose(f"item:{kind}", "response item Common does not carry", n)
            return
        handler = _ITEM_HANDLERS.get(type(p))
        if handler is None:
            self.lose(f"item:{type(p).__struct_config__.tag}", "response item Common does not carry", n)
            return
        handler(self, p, ts, n)

    def message_item(self, p: R.MessageItem, ts: Any, n: int) -> None:
        blocks = [_part(part) for part in p.content]
        if p.role == "assistant":
            msg = self.side("assistant", ts)
            # an output_text's annotations (``[]`` from 0.171) have no slot in Text: kept
            # by block position, so Codex -> Codex resends the same item
            for i, part in enumerate(p.content, len(msg.content)):
                if isinstance(part, R.OutputText) and part.annotations is not UNSET:
                    msg.extra.setdefault("codex_annotations", {})[str(i)] = part.annotations
            msg.content.extend(blocks)
            if isinstance(p.id, str):
                msg.source_ids.append(p.id)
                if msg.id is UNSET:
                    msg.id = p.id
            if isinstance(p.phase, str):
                msg.extra.setdefault("codex_phase", p.phase)
            return
        texts = [b.text for b in blocks if isinstance(b, Text)]
        kinds = {prelude_kind(t) for t in texts}
        if p.role in ("developer", "system") or (texts and None not in kinds):
            kind = p.role if p.role in ("developer", "system") else next(iter(sorted(kinds)))
            msg = self.message(
                "user", ts, content=blocks, meta=True, extra={"codex_role": p.role, "codex_prelude": kind}
            )
        else:
            msg = self.message("user", ts, content=blocks, origin="human")
        if isinstance(p.id, str):
            msg.source_ids.append(p.id)

    def reasoning(self, p: R.ReasoningItem, ts: Any, n: int) -> None:
        text = "\n\n".join(s.text for s in p.summary)
        block = Thinking(text)
        if isinstance(p.encrypted_content, str):
            block.encrypted = p.encrypted_content
        if isinstance(p.content, list) and p.content:
            self.lose("field:reasoning.content", "raw reasoning text is not carried next to the summary", n)
        msg = self.side("assistant", ts)
        if len(p.summary) > 1:  # Common holds one text; the parts are kept by block position
            msg.extra.setdefault("codex_summary_parts", {})[str(len(msg.content))] = [s.text for s in p.summary]
        msg.content.append(block)
        if isinstance(p.id, str):
            msg.source_ids.append(p.id)

    def kind(self, name: Any) -> str:
        kind = self.kinds.get(name) if isinstance(name, str) else None
        if kind is None:
            kind = tool_kind(name)
            if isinstance(name, str):
                self.kinds[name] = kind
        return kind

    def tool_call(self, use: ToolUse, ts: Any, item_id: Any) -> None:
        msg = self.side("assistant", ts)
        msg.content.append(use)
        if isinstance(item_id, str):
            msg.source_ids.append(item_id)
        self.calls[use.id] = use

    def function_call(self, p: R.FunctionCallItem, ts: Any, n: int) -> None:
        args = p.arguments
        if isinstance(args, str):
            try:
                value = _arguments(args)
            except ValueError:
                value = args
                self.lose("tool:arguments-not-json", f"{p.name} arguments kept as the string they were", n)
        else:
            value = args if args is not UNSET else None
            self.lose(
                "tool:arguments-not-string", f"{p.name} arguments are {type(args).__name__}; codex drops such a call", n
            )
        name = p.name
        if isinstance(p.namespace, str) and p.namespace:
            # an MCP call: namespace "mcp__notes", name "lookup" is Claude's
            # mcp__notes__lookup (docs/codex.md#mcp-namespaces); the pair is kept for Codex
            if p.namespace.startswith("mcp__"):
                name = f"{p.namespace}__{p.name}"
        self.tool_call(ToolUse(p.call_id, name, value, self.kind(name)), ts, p.id)
        extra = self.conv.messages[-1].extra
        if isinstance(p.namespace, str) and p.namespace:
            extra.setdefault("codex_namespaces", {})[p.call_id] = [p.namespace, p.name]
        if isinstance(args, str) and value is not args and json.dumps(value, ensure_ascii=False) != args:
            # the string the model wrote, for Codex -> Codex while the value is unchanged
            extra.setdefault("codex_arguments", {})[p.call_id] = args

    def custom_tool_call(self, p: R.CustomToolCallItem, ts: Any, n: int) -> None:
        self.tool_call(ToolUse(p.call_id, p.name, p.input, self.kind(p.name)), ts, p.id)
        # which calls were freeform, so a Codex writer gives them back their item type
        self.conv.messages[-1].extra.setdefault("codex_custom_calls", []).append(p.call_id)

    def local_shell_call(self, p: R.LocalShellCallItem, ts: Any, n: int) -> None:
        call_id = p.call_id if isinstance(p.call_id, str) else p.id if isinstance(p.id, str) else f"line:{n}"
        action = builtins(p.action) if p.action is not UNSET else None
        self.tool_call(ToolUse(call_id, "local_shell", action, "shell_exec"), ts, p.id)

    def web_search_call(self, p: R.WebSearchCallItem, ts: Any, n: int) -> None:
        call_id = p.id if isinstance(p.id, str) else f"ws_line{n}"
        action = builtins(p.action) if isinstance(p.action, R.WebSearchAction) else None
        self.tool_call(ToolUse(call_id, "web_search", action, "http_request"), ts, p.id)
        # The search runs on the provider's side: the rollout has no output item. A
        # synthetic empty result keeps the call paired for targets that require it.
        result = self.message("user", ts, content=[ToolResult(call_id, "")], synthetic=True)
        result.extra["codex_web_search"] = True
        self.calls.pop(call_id, None)

    def call_output(self, p: Any, ts: Any, n: int) -> None:
        if not p.call_id and isinstance(getattr(p, "name", UNSET), str):
            self.goal_output(p, ts)
            return
        output = p.output
        is_error = None
        if isinstance(output, str):
            content: Any = output
        elif isinstance(output, list):
            content = [
                _part(msgspec.convert(part, R.ContentPart)) if _is_part(part) else RawBlock("codex_output_part", part)
                for part in output
            ]
        else:
            content = json.dumps(output) if output is not UNSET else ""
            self.lose("tool:output-shape", "output neither string nor list: codex reads it as 'aborted'", n)
        if isinstance(output, dict) and output.get("success") is False or p.call_id in self.failed_patches:
            is_error = True
        msg = self.side("user", ts)
        if isinstance(output, list):
            # an image part's ``detail`` (``"high"`` from view_image) has no slot in Image:
            # the parts are kept as they were, for Codex -> Codex
            details = {
                str(i): part["detail"]
                for i, part in enumerate(output)
                if isinstance(part, dict) and part.get("type") == "input_image" and "detail" in part
            }
            if details:
                msg.extra.setdefault("codex_image_detail", {})[p.call_id] = details
        result = ToolResult(p.call_id, content, is_error)
        msg.content.append(result)
        self.results[p.call_id] = result
        if self.touched is not None:
            self.result_in[p.call_id] = msg
        if isinstance(p.id, str):
            msg.source_ids.append(p.id)
        if self.calls.pop(p.call_id, None) is None:
            self.lose("tool:orphan-output", f"output for {p.call_id} has no call before it (codex drops it)", n)

    def goal_output(self, p: R.FunctionCallOutputItem, ts: Any) -> None:
        """A goal tool's output, sent with no call (docs/codex.md#goals): context the model
        sees, kept whole for Codex and as its text for others."""
        text = p.output if isinstance(p.output, str) else _parts_text(p.output)
        kind = f"{p.namespace}.{p.name}" if isinstance(p.namespace, str) and p.namespace else str(p.name)
        block = Context(kind, source="codex", value=builtins(p), role="user")
        if text:
            block.text = text
        msg = self.side("user", ts)
        if not msg.content or all(type(b) is Context for b in msg.content):
            msg.meta = True
        msg.content.append(block)
        if isinstance(p.id, str):
            msg.source_ids.append(p.id)

    def tool_search(self, value: dict, ts: Any) -> None:
        """0.171's client-side tool search (MCP tools deferred behind ``tool_search``): the
        model's ``tool_search_call`` and the client's ``tool_search_output`` (the tools it
        loaded) are context with no text of their own: kept whole for Codex, left out and
        named (``write:context``) elsewhere (docs/codex.md#mcp-namespaces)."""
        block = Context(value["type"], source="codex", value=value, role=_TOOL_SEARCH[value["type"]])
        msg = self.side(_TOOL_SEARCH[value["type"]], ts)
        if msg.role == "user" and (not msg.content or all(type(b) is Context for b in msg.content)):
            msg.meta = True
        msg.content.append(block)
        if isinstance(value.get("id"), str):
            msg.source_ids.append(value["id"])

    def compaction(self, p: Any, ts: Any, n: int) -> None:
        self.message("assistant", ts, content=[RawBlock("codex_compaction", builtins(p))], compact_summary=True)
        self.conv.epochs.append(Epoch(start=self.base + len(self.conv.messages) - 1, trigger="codex-remote"))

    # --- events ---------------------------------------------------------------------
    def token_count(self, p: R.TokenCountEvent, ts: Any, n: int) -> None:
        info = p.info
        if not isinstance(info, R.TokenInfo) or not isinstance(info.total_token_usage, R.TokenUsage):
            return
        total = msgspec.structs.astuple(info.total_token_usage)
        if total == self.last_total:
            return  # a repeat: the same running total again
        self.last_total = total
        if self.replaying:
            return  # the parent's usage, replayed by a fork: counted in the parent
        last = info.last_token_usage if isinstance(info.last_token_usage, R.TokenUsage) else None
        usage = _usage(last) if last is not None else _usage(info.total_token_usage)
        targets = [
            m
            for m in self.conv.messages[max(0, self.pending_usage_from - self.base) :]
            if m.role == "assistant" and not m.synthetic
        ]
        self.pending_usage_from = self.base + len(self.conv.messages)
        if not targets:
            extra = self.conv.meta.extra
            extra["codex_unattributed_usage"] = builtins(_usage_add(extra.get("codex_unattributed_usage"), usage))
            self.unattributed = usage
            return
        self.unattributed = None
        target = targets[-1]
        target.usage = usage if target.usage is UNSET else _usage_sum(target.usage, usage)
        if self.touched is not None:
            self.touched.append(target)

    def turn_aborted(self, p: R.TurnAbortedEvent, ts: Any, n: int) -> None:
        for msg in reversed(self.conv.messages):
            if msg.role == "assistant":
                msg.interrupted = True
                if self.touched is not None:
                    self.touched.append(msg)
                if isinstance(p.reason, str):
                    msg.extra["codex_abort_reason"] = p.reason
                return

    def error(self, p: R.ErrorEvent, ts: Any, n: int) -> None:
        self.message("assistant", ts, content=[Text(p.message)], api_error=True, synthetic=True)

    def patch_apply_end(self, p: R.PatchApplyEndEvent, ts: Any, n: int) -> None:
        self.lose("event:patch_apply_end", "UI event Common does not carry", n)
        if p.success is False and isinstance(p.call_id, str):
            result = self.results.get(p.call_id)
            if result is not None:
                result.is_error = True
                if self.touched is not None:
                    self.touched.append(self.result_in[p.call_id])
            else:  # the event before the output
                self.failed_patches.add(p.call_id)

    def task_started(self, p: R.TaskStartedEvent, ts: Any, n: int) -> None:
        if self.replaying and self._after_fork(p.turn_id):
            self.replaying = False

    def mirror_user(self, p: R.UserMessageEvent, ts: Any, n: int) -> None:
        if self.events_only:
            self.message("user", ts, content=[Text(p.message)], origin="human", source_ids=[f"line:{n}"])

    def mirror_agent(self, p: R.AgentMessageEvent, ts: Any, n: int) -> None:
        if self.events_only:
            self.side("assistant", ts).content.append(Text(p.message))

    def mirror_reasoning(self, p: R.AgentReasoningEvent, ts: Any, n: int) -> None:
        if self.events_only:
            self.side("assistant", ts).content.append(Thinking(p.text))

    def _after_fork(self, turn_id: Any) -> bool:
        """Whether a turn began after the fork: turn ids and the fork's own id are
        UUIDv7, whose first 48 bits are a millisecond clock."""
        own, turn = _uuid7_ms(self.own_id), _uuid7_ms(turn_id)
        return own is not None and turn is not None and turn >= own


_json_value = msgspec.json.Decoder().decode
_BARE_ITEMS = frozenset(R.RESPONSE_ITEM_TYPES.values())


def _parts_text(output: Any) -> str:
    if not isinstance(output, list):
        return ""
    return "\n".join(p["text"] for p in output if isinstance(p, dict) and isinstance(p.get("text"), str))


def _arguments(text: str) -> Any:
    """``json.loads(text)``: msgspec's decode where it takes the text (the same value,
    the test pins it), ``json.loads`` for what msgspec refuses (``NaN``, ``1e400``, a
    lone surrogate escape) and to raise its ``ValueError`` for what is no JSON."""
    try:
        return _json_value(text)
    except Exception:  # noqa: BLE001 - json.loads decides
        return json.loads(text)


def _uuid7_ms(value: Any) -> int | None:
    if not isinstance(value, str) or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


def summary_from_history(history: list[Any]) -> str:
    """The summary of a compaction that wrote none, from its replacement history: the
    summary message a local compaction puts there (it starts with codex's
    ``SUMMARY_PREFIX``), else the conversation it keeps, as text. A remote compaction
    keeps the recent messages and an encrypted ``compaction`` item that only the
    provider can read; the messages are what is left to read."""
    for item in reversed(history):
        text = _item_text(item)
        if _role(item) == "user" and text.startswith(SUMMARY_PREFIX):
            return text
    lines = ["[Codex compaction: the conversation continued from the history below]"]
    for item in history:
        kind = item.get("type", "message") if isinstance(item, dict) else None
        role = _role(item)
        if kind == "message" and role in ("user", "assistant"):
            text = _item_text(item)
            if text and prelude_kind(text) is None:
                lines.append(f"{role}: {text}")
        elif kind in ("compaction", "compaction_summary"):
            lines.append("[the summary of the earlier conversation is encrypted]")
    return "\n\n".join(lines)


def _role(item: Any) -> Any:
    return item.get("role") if isinstance(item, dict) else None


def _item_text(item: Any) -> str:
    """The text parts of a message item joined by newlines (images as ``[image]``)."""
    if not isinstance(item, dict) or not isinstance(item.get("content"), list):
        return ""
    texts = []
    for part in item["content"]:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "input_image":
            texts.append("[image]")
    return "\n".join(texts)


def _is_summary_item(item: Any, summary: str) -> bool:
    """Whether a replacement-history item is the compaction summary itself."""
    if not isinstance(item, dict) or item.get("type", "message") != "message" or item.get("role") != "user":
        return False
    texts = [p.get("text") for p in item.get("content") or [] if isinstance(p, dict)]
    return bool(summary) and texts == [summary]


def _is_part(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in ("input_text", "output_text", "input_image")


def _part(part: Any) -> Any:
    if isinstance(part, (R.InputText, R.OutputText)):
        return Text(part.text)
    if isinstance(part, R.InputImage):
        url = part.image_url if isinstance(part.image_url, str) else ""
        m = _DATA_URL.match(url)
        if m:
            return Image(media_type=m.group(1), data=m.group(2))
        return Image(url=url)
    return RawBlock("codex_part", builtins(part))


def _usage(u: R.TokenUsage) -> Usage:
    """OpenAI counts cached tokens inside ``input_tokens`` and reasoning inside
    ``output_tokens``; Common follows Anthropic, where input excludes cache reads."""
    cached = min(u.cached_input_tokens, u.input_tokens)
    return Usage(
        input_tokens=u.input_tokens - cached,
        output_tokens=u.output_tokens,
        cache_creation_input_tokens=u.cache_write_input_tokens if isinstance(u.cache_write_input_tokens, int) else 0,
        cache_read_input_tokens=cached,
        reasoning_output_tokens=u.reasoning_output_tokens,
    )


def _usage_sum(a: Usage, b: Usage) -> Usage:
    total = a + b
    ra, rb = a.reasoning_output_tokens, b.reasoning_output_tokens
    if isinstance(ra, int) or isinstance(rb, int):
        total.reasoning_output_tokens = (ra if isinstance(ra, int) else 0) + (rb if isinstance(rb, int) else 0)
    return total


def _usage_add(a: Any, b: Usage) -> Usage:
    return b if not isinstance(a, dict) else _usage_sum(msgspec.convert(a, Usage), b)


_BARE_ITEMS = set(R.RESPONSE_ITEM_TYPES.values())
# the tool search items, by the side of the conversation each is on
_TOOL_SEARCH = {"tool_search_call": "assistant", "tool_search_output": "user"}

_LINE_HANDLERS = {
    R.SessionMetaLine: _Reader.session_meta,
    R.TsRollout: _Reader.ts_rollout,
    R.LegacyMeta: _Reader.legacy_meta,
    R.LegacyState: _Reader.legacy_state,
    R.TurnContextLine: _Reader.turn_context,
    R.CompactedLine: _Reader.compacted,
    R.OtherLine: _Reader.other,
    R.ResponseItemLine: _Reader.response_item,
    R.EventMsgLine: _Reader.event,
}

_ITEM_HANDLERS = {
    R.MessageItem: _Reader.message_item,
    R.ReasoningItem: _Reader.reasoning,
    R.FunctionCallItem: _Reader.function_call,
    R.CustomToolCallItem: _Reader.custom_tool_call,
    R.LocalShellCallItem: _Reader.local_shell_call,
    R.WebSearchCallItem: _Reader.web_search_call,
    R.FunctionCallOutputItem: _Reader.call_output,
    R.CustomToolCallOutputItem: _Reader.call_output,
    R.CompactionItem: _Reader.compaction,
    R.CompactionSummaryItem: _Reader.compaction,
}

_EVENT_HANDLERS = {
    R.TokenCountEvent: _Reader.token_count,
    R.TurnAbortedEvent: _Reader.turn_aborted,
    R.ErrorEvent: _Reader.error,
    R.TaskStartedEvent: _Reader.task_started,
    R.PatchApplyEndEvent: _Reader.patch_apply_end,
    R.UserMessageEvent: _Reader.mirror_user,
    R.AgentMessageEvent: _Reader.mirror_agent,
    R.AgentReasoningEvent: _Reader.mirror_reasoning,
}


# --- a reader that carries on (Harness.carry_on, txcodec.live) -------------------------


class CarryOn:
    """A rollout read as codex appends to it: the reader's state (the calls waiting for
    their output, the messages a token count or an abort lands on, a fork's replay) is kept
    between feeds, so a feed costs what its lines cost. Whether a rollout has any message
    item is known only once one comes: until then it is read from its events, whole (as
    :func:`read` reads it), from the lines held so far.

    With a ``window``, the messages before the last ``window`` are handed on (:meth:`hand_on`),
    except those the next token count may still land on and the last reply (an abort marks
    it), held up to four windows."""

    def __init__(self, path: str | Path | None = None, window: int | None = None) -> None:
        from ...kit.conform import Fitted
        from ...model.loss import UnreadLoss
        from .codec import CODEC

        self.path = Path(path) if path is not None else None
        self.codec = CODEC
        self.loss = UnreadLoss()  # a follow shows the conversation, not what it lost
        session = NativeSession("codex", CODEC, [], True, self.path)
        self.reader = _Reader(session, self.loss, [], events_only=False)
        self.reader.touched = []
        self.held: list[Any] | None = []  # the lines, until a message item says they need not be
        self.lines = 0
        self.window = None if window is None else max(1, window)
        self.index: dict[int, int] = {}  # id(message) -> its index from the start
        self.indexed = 0
        self.new_from = 0
        self.first_ts: str | None = None  # the first message's time (it may have been handed on)
        self.last_ts: str | None = None
        self.fitted = Fitted(checked=True)  # read_unshared

    def feed(self, lines: list[Any]) -> None:
        first = self.lines + 1
        self.lines += len(lines)
        records = [line.record for line in lines]
        self.reader.feed(enumerate(records, first))
        if self.held is not None:
            if any(isinstance(R.payload_of(r), R.MessageItem) for r in records if not isinstance(r, Opaque)):
                self.held = None
            else:
                self.held.extend(lines)

    def hand_on(self) -> list[tuple[Message, bool]]:
        reader, window = self.reader, self.window
        messages = reader.conv.messages
        if window is None or self.held is not None or len(messages) <= window:
            return []
        count = len(messages) - window
        last_reply = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), count)
        waiting = reader.pending_usage_from - reader.base  # the next token count lands on these
        count = max(min(count, last_reply, waiting), len(messages) - 4 * window)
        if count <= 0:
            return []
        self._stamps(messages[:count])
        gone = messages[:count]
        del messages[:count]
        starts = {e.start for e in reader.conv.epochs}
        out = []
        for j, m in enumerate(gone):
            self.index.pop(id(m), None)
            if m.role == "user" and m.origin == "human":
                reader.humans_before += 1
            for block in m.content:  # its results are let go (a failed patch's late event then flags nothing)
                if type(block) is ToolResult:
                    reader.results.pop(block.tool_use_id, None)
                    reader.result_in.pop(block.tool_use_id, None)
            fitted = self.fitted.fit_one(m, self.loss)
            if fitted is not None:
                out.append((fitted, reader.base + j in starts))
        reader.base += count
        self.fitted.forget(count)
        return out

    def _stamps(self, messages: list[Message]) -> None:
        for m in messages:
            if isinstance(m.timestamp, str):
                if self.first_ts is None:
                    self.first_ts = m.timestamp
                self.last_ts = m.timestamp

    def conversation(self) -> tuple[Conversation, list[int]]:
        if self.held is not None:  # events only so far
            from ...kit.conform import conform

            session = NativeSession("codex", self.codec, list(self.held), True, self.path)
            conv = _Reader(session, self.loss).run()
            fitted = conform(conv, self.loss, checked=True)
            return fitted, list(range(len(fitted.messages)))
        reader = self.reader
        messages = reader.conv.messages
        base = reader.base
        index = self.index
        for i in range(max(self.indexed, base), base + len(messages)):
            index[id(messages[i - base])] = i
        self.indexed = base + len(messages)
        touched = {index[id(m)] - base for m in reader.touched or () if index.get(id(m), -1) >= base}
        touched.update(range(max(self.new_from, base) - base, len(messages)))
        # (the first conversation from this reader names every message: new_from was 0)
        reader.touched, self.new_from = [], base + len(messages)
        conv = reader.conv
        meta = msgspec.structs.replace(conv.meta)
        first = self.first_ts or next((m.timestamp for m in messages if isinstance(m.timestamp, str)), None)
        if first is not None:  # as finish() sets them
            if meta.started_at is UNSET:
                meta.started_at = first
            meta.ended_at = next(
                (m.timestamp for m in reversed(messages) if isinstance(m.timestamp, str)), self.last_ts
            )
        frame = Conversation(meta=meta, messages=messages, epochs=list(conv.epochs))
        return self.fitted.fit(frame, touched, self.loss)


def carry_on(path: str | Path | None = None, window: int | None = None) -> CarryOn:
    return CarryOn(path, window)
