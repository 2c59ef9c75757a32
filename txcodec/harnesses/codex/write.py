"""Common -> Codex rollout.

The file is what ``codex exec resume <id>`` rebuilds the model's ``input`` from
(observed on 0.171.0, docs/codex.md#how-the-real-client-is-driven): a ``session_meta`` first line with the five
fields the client requires, then ``response_item`` lines (what the model sees) next to
the ``event_msg`` lines the UI shows (``user_message``, ``agent_message``,
``token_count``, ``turn_aborted``, ``error``). Every line has a top-level ``timestamp``.

* The thread id is the source's own when it came from Codex, else a UUIDv7 whose clock is
  the conversation's start and whose other bits are a hash of the source id, so the same
  source always gives the same file name: ``sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``.
* ``function_call.arguments`` is always a JSON string and outputs are strings or content
  lists: Codex drops a call whose arguments are an object, and reads an object output as
  "aborted".
* Codex tools keep their native names and shapes (``exec_command`` as a function call,
  ``apply_patch`` as a custom tool call with its patch text). Tools from other harnesses
  are mapped by :data:`TOOL_MAP` (Claude Code's Bash / Read / Write / Edit / MultiEdit /
  Glob / Grep / TodoWrite); every mapped or kept-as-is call is in the loss report.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import types
import uuid
from datetime import datetime
from datetime import timezone
from typing import Any
from typing import Callable

import msgspec
from msgspec import UNSET

from ...core.errors import MALFORMED
from ...core.errors import UnsafeId
from ...core.ids import is_safe_id
from ...core.ids import safe_relpath
from ...core.ids import shown
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...kit.write import block_kind
from ...model.common import Command
from ...model.common import Context
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Image
from ...model.common import Message
from ...model.common import RawBlock
from ...model.common import RedactedThinking
from ...model.common import ServerToolUse
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.common import WebSearchToolResult
from ...model.loss import LossReport
from ...model.native import builtins
from . import records as R
from .codec import CODEC
from .prelude import DEVELOPER_KINDS
from .prelude import prelude_kind
from .store import rollout_relpath

CLI_VERSION = "0.171.0"  # the Codex version the written files are tested against
ORIGINATOR = "txcodec"
CUSTOM_TOOLS = {"apply_patch"}  # freeform tools: input is a string, not JSON
# Tools Codex itself offers: the function tools of a 0.171 request (observed), and
# apply_patch / update_plan / shell from other models and builds. A call by one of these
# names that reaches us through another harness (Codex -> Claude Code -> Codex) is no
# approximation. (web_search and local_shell are item types, not function tools.)
CODEX_TOOLS = {
    "exec_command",
    "write_stdin",
    "request_user_input",
    "view_image",
    "multi_agent_v1",
    "get_goal",
    "create_goal",
    "update_goal",
    "apply_patch",
    "update_plan",
    "shell",
}


# --- the records as written -------------------------------------------------------------


def _eager(cls: type) -> type:
    """``cls`` that encodes every field that is set, defaults included: what the codec's
    ``plain()`` pass makes of ``cls`` (the records omit defaults for re-encoding an edited
    line), from one ``msgspec`` encode with no Python per field."""
    return types.new_class(cls.__name__, (cls,), {"omit_defaults": False})


# The records the writer builds for nearly every line. A line whose payload is one of
# them holds only these (or plain values) and is encoded directly; any other line (the
# session meta, a payload made by ``msgspec.convert``) goes through ``plain()``.
E = types.SimpleNamespace(
    **{
        name: _eager(getattr(R, name))
        for name in (
            "ResponseItemLine",
            "EventMsgLine",
            "MessageItem",
            "ReasoningItem",
            "FunctionCallItem",
            "FunctionCallOutputItem",
            "CustomToolCallItem",
            "CustomToolCallOutputItem",
            "InputText",
            "InputImage",
            "OutputText",
            "SummaryText",
            "UserMessageEvent",
            "AgentMessageEvent",
            "AgentReasoningEvent",
            "TokenCountEvent",
            "TokenInfo",
            "TokenUsage",
            "ErrorEvent",
            "TurnAbortedEvent",
            "ContextCompactedEvent",
        )
    }
)
_EAGER_PAYLOADS = frozenset(vars(E).values())
_encode = msgspec.json.Encoder().encode


def _carried_context(block: Any) -> bool:
    """Another client's context with the text its model saw (kit.write.carry_context leaves
    it to this writer: Harness.writes_context)."""
    return type(block) is Context and block.source != "codex" and isinstance(block.text, str) and bool(block.text)


# --- tool mapping (other harnesses -> Codex) ----------------------------------------------

Mapped = tuple[str, str, Any, str]  # (item kind: function|custom, name, input, what was approximated)


def _bash(i: dict) -> Mapped:
    dropped = sorted(k for k in i if k not in ("command",))
    return "function", "exec_command", {"cmd": i.get("command", "")}, f"dropped {dropped}" if dropped else ""


def _read(i: dict) -> Mapped:
    path = shlex.quote(str(i.get("file_path", "")))
    offset, limit = i.get("offset"), i.get("limit")
    if isinstance(offset, int) or isinstance(limit, int):
        start = offset if isinstance(offset, int) and offset > 0 else 1
        end = f"{start + limit - 1}" if isinstance(limit, int) else "$"
        return "function", "exec_command", {"cmd": f"sed -n '{start},{end}p' {path}"}, "Read as sed"
    return "function", "exec_command", {"cmd": f"cat {path}"}, "Read as cat"


def _patch_lines(prefix: str, text: str) -> list[str]:
    """``text`` with ``prefix`` before each of its lines, as one string of the patch's
    lines (they are joined with LF: one replace, not a string per line)."""
    return [prefix + text.replace("\n", "\n" + prefix)] if text else []


def _write(i: dict) -> Mapped:
    body = [
        "*** Begin Patch",
        f"*** Add File: {i.get('file_path', '')}",
        *_patch_lines("+", str(i.get("content", ""))),
        "*** End Patch",
    ]
    return "custom", "apply_patch", "\n".join(body), "Write as apply_patch Add File (overwrites become adds)"


def _edits(path: str, edits: list[dict]) -> str:
    body = ["*** Begin Patch", f"*** Update File: {path}"]
    for e in edits:
        body.append("@@")
        body += _patch_lines("-", str(e.get("old_string", "")))
        body += _patch_lines("+", str(e.get("new_string", "")))
    body.append("*** End Patch")
    return "\n".join(body)


def _edit(i: dict) -> Mapped:
    note = "Edit as apply_patch Update File" + (" (replace_all not expressible)" if i.get("replace_all") else "")
    return "custom", "apply_patch", _edits(str(i.get("file_path", "")), [i]), note


def _multi_edit(i: dict) -> Mapped:
    edits = [e for e in i.get("edits") or [] if isinstance(e, dict)]
    return "custom", "apply_patch", _edits(str(i.get("file_path", "")), edits), "MultiEdit as one apply_patch"


def _glob(i: dict) -> Mapped:
    cmd = f"rg --files -g {shlex.quote(str(i.get('pattern', '')))}"
    if i.get("path"):
        cmd += f" {shlex.quote(str(i['path']))}"
    return "function", "exec_command", {"cmd": cmd}, "Glob as rg --files"


def _grep(i: dict) -> Mapped:
    cmd = f"rg -n {shlex.quote(str(i.get('pattern', '')))}"
    if i.get("glob"):
        cmd += f" -g {shlex.quote(str(i['glob']))}"
    if i.get("path"):
        cmd += f" {shlex.quote(str(i['path']))}"
    return "function", "exec_command", {"cmd": cmd}, "Grep as rg (output_mode and flags dropped)"


def _todos(i: dict) -> Mapped:
    plan = [
        {"step": t.get("content", ""), "status": t.get("status", "pending")}
        for t in i.get("todos") or []
        if isinstance(t, dict)
    ]
    return "function", "update_plan", {"plan": plan}, "TodoWrite as update_plan"


TOOL_MAP: dict[str, Callable[[dict], Mapped]] = {
    "Bash": _bash,
    "Read": _read,
    "Write": _write,
    "Edit": _edit,
    "MultiEdit": _multi_edit,
    "Glob": _glob,
    "Grep": _grep,
    "TodoWrite": _todos,
}
"""Claude Code tool -> Codex tool. Everything else keeps its name as a function call."""


# Claude Code's name of an MCP tool: mcp__<server>__<tool> (a server name holds no "__")
_MCP_NAME = re.compile(r"mcp__([^_](?:[^_]|_(?!_))*)__(.+)", re.S)


def codex_tool(name: str, value: Any) -> tuple[str, str, Any, str | None]:
    """``(item kind, name, input, note)`` for a call from another harness: mapped by
    :data:`TOOL_MAP` (``note`` says what was approximated, ``""`` for nothing), else kept
    by name (``note`` is ``None``)."""
    if (
        name in CUSTOM_TOOLS
        and isinstance(value, dict)
        and list(value) == ["input"]
        and isinstance(value["input"], str)
    ):
        value = value["input"]  # a freeform input another harness had to wrap in an object
    mapper = TOOL_MAP.get(name)
    if mapper is not None and isinstance(value, dict):
        try:
            return mapper(value)
        except MALFORMED:  # a field of another shape than the tool's ({"todos": true}): kept as it is, by name
            pass
    kind = "custom" if name in CUSTOM_TOOLS and isinstance(value, str) else "function"
    return kind, name, value, None


# --- ids and times --------------------------------------------------------------------------


def _now() -> str:
    return _iso(datetime.now(timezone.utc))


def _iso(dt: datetime) -> str:
    if dt.tzinfo is None:  # a time without an offset is taken as UTC, not as this machine's zone
        dt = dt.replace(tzinfo=timezone.utc)
    d = dt.astimezone(timezone.utc)
    if d.year < 1000:  # strftime's %Y does not pad such years: keep its output
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
    # the same text as strftime, without its per-call cost (one call per written line)
    return (
        f"{d.year}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{dt.microsecond // 1000:03d}Z"
    )


# a time already as _iso() writes it (Claude Code's own): when it parses, it is its own
# normal form, and the formatting is skipped (one call per message)
_ISO_MS_UTC = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def normalize_ts(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        if _ISO_MS_UTC.fullmatch(value) is not None:
            datetime.fromisoformat(value[:-1])  # the range check (month 13, hour 25, Feb 30 ...)
            return value
        return _iso(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def uuid7(ts: str, seed: str) -> str:
    """A UUIDv7 (RFC 9562) with ``ts``'s millisecond clock and 74 bits from a hash of
    ``seed``: ids sort by time like the ones codex makes, and one source gives one id."""
    ms = int(datetime.fromisoformat(normalize_ts(ts) or ts).timestamp() * 1000)
    rand = int.from_bytes(hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest()[:10], "big")
    value = (
        (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))


def _is_uuid(value: Any) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


# --- the writer -----------------------------------------------------------------------------


def write(conversation: Conversation, loss: LossReport, options: WriteOptions | None = None) -> Written:
    return _Writer(conversation, loss, options or WriteOptions()).run()


class _Writer:
    def __init__(self, conv: Conversation, loss: LossReport, options: WriteOptions) -> None:
        self.conv, self.loss, self.options = conv, loss, options
        meta = conv.meta
        self.from_codex = meta.source_harness == "codex"
        self.stamps = [normalize_ts(m.timestamp) for m in conv.messages]
        self.start = normalize_ts(meta.started_at) or next((s for s in self.stamps if s), None) or _now()
        if options.session_id:
            if not _is_uuid(options.session_id.lower()):
                # codex exec resume <non-uuid> silently starts a new session
                # (docs/codex.md#how-the-real-client-is-driven)
                raise UnsafeId(
                    f"session id {shown(options.session_id)} is not a UUID (Codex only resumes a thread by its UUID)"
                )
            self.id = options.session_id.lower()
        elif self.from_codex and _is_uuid(meta.id):
            self.id = str(meta.id)
        else:
            seed = meta.id if isinstance(meta.id, str) else hashlib.sha256(msgspec.json.encode(conv)).hexdigest()
            self.id = uuid7(self.start, f"{meta.source_harness}:{seed}")
            if isinstance(meta.id, str) and not is_safe_id(meta.id):
                loss.add("write:session-id", f"source id {shown(meta.id)} cannot name a file; written as {self.id}")
        self.lines: list[bytes] = []
        self.ts = self.start
        self.searches: set[str] = set()  # server-side web searches written as web_search_call items
        self.call_kinds: dict[str, str] = {}  # call_id -> "function" | "custom" | "local_shell" | "web_search"
        self.total = E.TokenUsage()
        self.model: str | None = None
        self.messages_of: dict[str, list[int]] | None = None  # source id -> its messages' indexes
        self.epoch_at: dict[int, Any] | None = None  # epoch start -> the epoch

    def emit(self, record: Any) -> None:
        # 0.171 numbers every line; a file it reads as paginated must be numbered to
        # the end ("final paginated rollout record ... is missing an ordinal").
        record.ordinal = len(self.lines)
        eager = type(getattr(record, "payload", None)) in _EAGER_PAYLOADS
        self.lines.append(_encode(record) if eager else CODEC.encode(record, None))

    def item(self, payload: Any) -> None:
        self.emit(E.ResponseItemLine(timestamp=self.ts, payload=payload))

    def event(self, payload: Any) -> None:
        self.emit(E.EventMsgLine(timestamp=self.ts, payload=payload))

    def run(self) -> Written:
        self.session_meta()
        for n, msg in enumerate(self.conv.messages):
            self.ts = self.stamps[n] or self.ts
            if self.from_codex:
                self.state_lines(msg.extra.get("codex_state_lines"))
            if msg.compact_summary and msg.role == "user":
                self.compacted(msg, n)
            elif msg.role == "user":
                self.user(msg, n)
            else:
                self.assistant(msg, n)
        if self.conv.children:
            self.loss.children_not_written(
                self.conv.children, "write:children", "not written (Codex keeps subagents as separate threads)"
            )
        self.lines.append(b"")  # the final LF, without a second copy of the file
        data = b"\n".join(self.lines)
        self.lines.clear()
        return Written(self.id, {safe_relpath(rollout_relpath(self.start, self.id)): data})

    # --- lines --------------------------------------------------------------------------
    def session_meta(self) -> None:
        meta = self.conv.meta
        saved = meta.extra.get("codex_session_meta") if self.from_codex else None
        kept = dict(saved) if isinstance(saved, dict) else {}  # Common JSON may hold anything in extra
        payload = {
            "id": self.id,
            "timestamp": self.start,
            "cwd": self.options.cwd or (meta.cwd if isinstance(meta.cwd, str) else "/"),
            "originator": kept.pop("originator", ORIGINATOR),
            "cli_version": meta.client_version
            if self.from_codex and isinstance(meta.client_version, str)
            else CLI_VERSION,
            "source": kept.pop("source", "cli"),
        }
        # They name the source thread, not this one; and a file that names a provider
        # resumes only under that provider (0.171), so the user's own provider is used.
        for key in ("session_id", "forked_from_id", "parent_thread_id", "thread_source", "model_provider"):
            kept.pop(key, None)
        payload.update(kept)
        if meta.forked_from is not UNSET and meta.forked_from.session_id != self.id:
            payload["forked_from_id"] = meta.forked_from.session_id  # the fork link (docs/lineage.md)
        if isinstance(meta.git_branch, str) and "git" not in payload:
            payload["git"] = {"branch": meta.git_branch}
        self.emit(R.SessionMetaLine(timestamp=self.start, payload=msgspec.convert(payload, R.SessionMeta)))
        extra = {k: v for k, v in payload.items() if k not in _META_FIELDS}
        if extra:  # fields the typed meta does not name: merge them back in
            line = json.loads(self.lines[-1])
            line["payload"].update(extra)
            self.lines[-1] = msgspec.json.encode(line)

    def state_lines(self, kept: Any) -> None:
        """The source's ``world_state`` and ``turn_context`` lines before this message, as they
        were (Codex -> Codex): 0.171 diffs the context it sends on resume against them."""
        for line in kept if isinstance(kept, list) else ():
            if not isinstance(line, dict) or line.get("type") not in ("world_state", "turn_context"):
                continue  # Common JSON may hold anything in extra
            payload = line.get("payload")
            if line["type"] == "world_state":
                self.emit(R.OtherLine(type="world_state", timestamp=self.ts, payload=msgspec.Raw(_encode(payload))))
                continue
            if not isinstance(payload, dict):
                continue
            if self.options.cwd:
                payload = {**payload, "cwd": self.options.cwd}
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]  # the writer's own turn_context is not needed after it
            self.emit(R.TurnContextLine(timestamp=self.ts, payload=msgspec.Raw(_encode(payload))))

    def turn_context(self, model: str) -> None:
        if model == self.model:
            return
        self.model = model
        cwd = self.options.cwd or (self.conv.meta.cwd if isinstance(self.conv.meta.cwd, str) else "/")
        settings = R.TurnContext(
            cwd=cwd, model=model, approval_policy="never", sandbox_policy={"type": "read-only"}, summary="auto"
        )
        self.emit(R.TurnContextLine(timestamp=self.ts, payload=msgspec.Raw(_encode(settings))))

    def compacted(self, msg: Message, n: int) -> None:
        text = "\n".join(b.text for b in msg.content if isinstance(b, Text))
        history = msg.extra.get("codex_replacement_history")
        if not isinstance(history, list) and not self.from_codex:
            # Without a replacement history, codex resumes with the user messages before
            # the compaction plus the summary; other harnesses resume with the summary
            # plus the messages the compaction preserved (Claude Code 2.1.332:
            # compactMetadata.preservedSegment). Saying so keeps the model's context what
            # the source meant.
            history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}]
            history += self.preserved_items(n)
        if isinstance(history, list) and msg.extra.get("codex_summary_from_history"):
            text = ""  # the reader made the text up from the history; codex wrote none
        self.emit(
            R.CompactedLine(
                timestamp=self.ts,
                payload=R.Compacted(message=text, replacement_history=history if isinstance(history, list) else UNSET),
            )
        )
        self.event(E.ContextCompactedEvent())

    def preserved_items(self, n: int) -> list[Any]:
        """The response items of the messages the compaction at message ``n`` preserved
        (already written before it, as items of their own), for its replacement history."""
        if self.epoch_at is None:
            self.epoch_at = {e.start: e for e in reversed(self.conv.epochs)}  # the first epoch starting at n
        epoch = self.epoch_at.get(n)
        if epoch is None or not epoch.preserved_ids:
            return []
        if self.messages_of is None:  # each source id mapped to its messages once, not per compaction
            self.messages_of = {}
            for i, m in enumerate(self.conv.messages):
                for sid in m.source_ids:
                    self.messages_of.setdefault(sid, []).append(i)
        found = {i for sid in epoch.preserved_ids for i in self.messages_of.get(sid, ()) if i < n}
        preserved = [(i, self.conv.messages[i]) for i in sorted(found)]
        if not preserved:
            return []
        # written once more into a scratch list: the items, not the lines or the losses
        lines, loss, model = self.lines, self.loss, self.model
        self.lines, self.loss = [], LossReport()
        try:
            for i, m in preserved:
                (self.user if m.role == "user" else self.assistant)(m, i)
            written = [json.loads(line) for line in self.lines]
        finally:
            self.lines, self.loss, self.model = lines, loss, model
        return [line["payload"] for line in written if line.get("type") == "response_item"]

    def user(self, msg: Message, n: int) -> None:
        parts: list[Any] = []
        for block in msg.content:
            if isinstance(block, ToolResult):
                self.flush_user(msg, parts)
                parts = []
                self.tool_result(block, msg, n)
            elif type(block) is Context and block.source == "codex" and isinstance(block.value, dict):
                self.flush_user(msg, parts)  # a goal or tool search output, back as the item it was
                parts = []
                self.item(block.value)
            elif _carried_context(block):
                self.flush_user(msg, parts)
                parts = []
                self.context_item(block)
            else:
                parts.extend(self.user_part(block, n))
        self.flush_user(msg, parts)

    def context_item(self, block: Context) -> None:
        """Another client's context as codex gives its own: a message item of its own (developer
        for what was sent as system, else user), apart from what the user typed: no
        ``user_message`` event, so Codex's history and prompt list do not show it."""
        role = "developer" if block.role == "system" else "user"
        self.item(E.MessageItem(role=role, content=[E.InputText(block.text)]))

    def flush_user(self, msg: Message, parts: list[Any]) -> None:
        if not parts:
            return
        role = msg.extra.get("codex_role") if msg.meta else "user"
        if not isinstance(role, str):  # a Codex prelude that came through another harness
            kinds = {prelude_kind(p.text) for p in parts if isinstance(p, E.InputText)}
            role = "developer" if kinds and kinds <= DEVELOPER_KINDS else "user"
        self.item(E.MessageItem(role=role, content=parts))
        if not msg.meta and not msg.synthetic:
            text = "\n".join(p.text for p in parts if isinstance(p, E.InputText))
            images = [p.image_url for p in parts if isinstance(p, E.InputImage) and isinstance(p.image_url, str)]
            self.event(E.UserMessageEvent(message=text, images=images))

    def user_part(self, block: Any, n: int) -> list[Any]:
        if isinstance(block, Text):
            return [E.InputText(block.text)]
        if isinstance(block, Image):
            return [E.InputImage(image_url=_image_url(block))]
        return [E.InputText(self.as_text(block, n))]

    def as_text(self, block: Any, n: int) -> str:
        """A block Codex has no item for, as the text the model would have read."""
        if isinstance(block, Command):
            self.loss.add("write:command-as-text", f"message {n}: {block.name}")
            return command_text(block)
        if isinstance(block, Document) and isinstance(block.data, str) and block.media_type == "text/plain":
            self.loss.add("write:document-as-text", f"message {n}")
            return block.data
        self.loss.add(f"write:block:{block_kind(block)}", f"message {n}: kept as JSON text")
        return json.dumps(builtins(block), ensure_ascii=False)

    def tool_result(self, block: ToolResult, msg: Message, n: int) -> None:
        kind = self.call_kinds.get(block.tool_use_id)
        if kind == "web_search" or msg.extra.get("codex_web_search"):
            if block.content:  # the reader's stand-in is empty; anything else is dropped here
                self.loss.add(
                    "write:web-search-result", f"message {n}: a provider-side search has no output item in Codex"
                )
            return
        if kind is None:
            self.loss.add(
                "write:orphan-result",
                f"message {n}: result for {block.tool_use_id} has no call before it; codex drops it",
            )
            return
        output = self.output(block, n)
        saved = msg.extra.get("codex_image_detail") if self.from_codex else None
        details = saved.get(block.tool_use_id) if isinstance(saved, dict) else None
        if isinstance(output, list) and isinstance(details, dict):
            for i, part in enumerate(output):
                if str(i) in details and isinstance(part, dict) and part.get("type") == "input_image":
                    part["detail"] = details[str(i)]
        if block.is_error:
            self.loss.add(
                "write:is_error", f"message {n}: {block.tool_use_id} failed; Codex outputs carry no error flag"
            )
        cls = E.CustomToolCallOutputItem if kind == "custom" else E.FunctionCallOutputItem
        self.item(cls(call_id=block.tool_use_id, output=output))

    def output(self, block: ToolResult, n: int) -> Any:
        content = block.content
        if isinstance(content, str):
            return content
        parts = []
        for b in content:
            if isinstance(b, Text):
                parts.append({"type": "input_text", "text": b.text})
            elif isinstance(b, Image):
                parts.append({"type": "input_image", "image_url": _image_url(b)})
            elif isinstance(b, RawBlock) and b.source_type == "codex_output_part":
                parts.append(b.value)
            else:
                parts.append({"type": "input_text", "text": self.as_text(b, n)})
        if all(isinstance(p, dict) and p.get("type") == "input_text" for p in parts) and not self.from_codex:
            return "\n".join(p["text"] for p in parts)
        return parts

    def assistant(self, msg: Message, n: int) -> None:
        if isinstance(msg.model, str):
            self.turn_context(msg.model)
        if msg.api_error and msg.synthetic:
            self.event(E.ErrorEvent(message="\n".join(b.text for b in msg.content if isinstance(b, Text))))
            return
        texts: list[Any] = []
        annotations = msg.extra.get("codex_annotations") if self.from_codex else None
        summaries = msg.extra.get("codex_summary_parts") if self.from_codex else None
        for i, block in enumerate(msg.content):
            if isinstance(block, Text):
                kept = annotations.get(str(i), UNSET) if isinstance(annotations, dict) else UNSET
                texts.append(E.OutputText(block.text, annotations=kept))
                continue
            self.flush_text(msg, texts)
            texts = []
            if isinstance(block, Thinking):
                parts = summaries.get(str(i)) if isinstance(summaries, dict) else None
                self.thinking(
                    block,
                    n,
                    parts if isinstance(parts, list) and "\n\n".join(map(str, parts)) == block.thinking else None,
                )
            elif isinstance(block, RedactedThinking):  # Codex's slot for opaque reasoning
                self.item(E.ReasoningItem(summary=[], content=None, encrypted_content=block.data))
            elif isinstance(block, ToolUse):
                custom = msg.extra.get("codex_custom_calls")
                self.tool_use(block, n, isinstance(custom, list) and block.id in custom, msg.extra)
            elif isinstance(block, RawBlock) and block.source_type == "codex_compaction":
                self.item(msgspec.convert(block.value, R.CompactionItem))
            elif (action := _search_action(block)) is not None:  # Claude's server-side web search
                self.searches.add(block.id)
                self.loss.add(
                    "write:tool-mapped",
                    f"message {n}: server-side web_search {block.id} -> web_search_call (which keeps no id)",
                )
                self.item(R.WebSearchCallItem(status="completed", action=action))
            elif _carried_context(block):
                self.context_item(block)
            elif type(block) is Context and block.source == "codex" and isinstance(block.value, dict):
                self.item(block.value)  # a tool_search_call, back as the item it was
            elif isinstance(block, WebSearchToolResult) and block.tool_use_id in self.searches:
                self.loss.add(
                    "write:web-search-result",
                    f"message {n}: the results of web search {block.tool_use_id} have no item in Codex "
                    "(a web_search_call holds the query only)",
                )
            else:
                texts.append(E.OutputText(self.as_text(block, n)))
        self.flush_text(msg, texts)
        if msg.usage is not UNSET:
            self.token_count(msg.usage)
        if msg.interrupted:
            self.event(E.TurnAbortedEvent(reason=msg.extra.get("codex_abort_reason", "interrupted")))

    def flush_text(self, msg: Message, parts: list[Any]) -> None:
        if not parts:
            return
        phase = msg.extra.get("codex_phase")
        self.item(E.MessageItem(role="assistant", content=parts, phase=phase if isinstance(phase, str) else UNSET))
        self.event(E.AgentMessageEvent(message="\n".join(p.text for p in parts)))

    def thinking(self, block: Thinking, n: int, parts: list[str] | None = None) -> None:
        encrypted = block.encrypted if isinstance(block.encrypted, str) else None
        if not block.thinking and encrypted is None:
            self.loss.add(
                "write:thinking-without-text",
                f"message {n}: a signature-only thinking block has nothing Codex can hold",
            )
            return
        if block.signature is not UNSET:
            self.loss.add(
                "write:thinking-signature",
                f"message {n}: the provider signature is not carried; the text becomes a reasoning summary",
            )
        # a Codex source's several summary parts come back as they were
        summary = (
            [E.SummaryText(t) for t in parts] if parts else [E.SummaryText(block.thinking)] if block.thinking else []
        )
        self.item(E.ReasoningItem(summary=summary, content=None, encrypted_content=encrypted))
        if block.thinking:
            self.event(E.AgentReasoningEvent(text=block.thinking))

    def tool_use(self, use: ToolUse, n: int, custom: bool = False, extra: dict | None = None) -> None:
        name, value = use.name, use.input
        native = self.from_codex or _item_shaped(name, value)  # back from another harness
        if name == "local_shell" and native:
            self.call_kinds[use.id] = "local_shell"
            self.item(
                R.LocalShellCallItem(
                    call_id=use.id, status="completed", action=msgspec.convert(value or {}, R.LocalShellAction)
                )
            )
            return
        if name == "web_search" and native:
            self.call_kinds[use.id] = "web_search"
            action = msgspec.convert(value, R.WebSearchAction) if isinstance(value, dict) else UNSET
            self.item(
                R.WebSearchCallItem(
                    id=use.id if not use.id.startswith("ws_line") else UNSET, status="completed", action=action
                )
            )
            return
        mcp_namespace: Any = UNSET
        if self.from_codex:
            kind = "custom" if custom or (name in CUSTOM_TOOLS and isinstance(value, str)) else "function"
        else:
            kind, name, value, note = codex_tool(name, value)
            if note is not None:
                self.loss.add(
                    "write:tool-mapped", f"message {n}: {use.name} -> {name}" + (f" ({note})" if note else "")
                )
            elif (mcp := _MCP_NAME.fullmatch(name)) is not None and isinstance(value, dict):
                # Claude Code's mcp__<server>__<tool>: the namespace + name codex records
                # an MCP call with (docs/codex.md#mcp-namespaces)
                mcp_namespace, name = f"mcp__{mcp[1]}", mcp[2]
            elif name not in CODEX_TOOLS:
                self.loss.add("write:tool-unmapped", f"message {n}: {name} kept by name; Codex offers no such tool")
        self.call_kinds[use.id] = kind
        if kind == "custom":
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            self.item(E.CustomToolCallItem(call_id=use.id, name=name, input=text, status="completed"))
        else:
            args = (
                value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)
            )
            namespace: Any = mcp_namespace
            if self.from_codex and extra:
                args = _source_arguments(extra, use.id, value, args)
                spaces = extra.get("codex_namespaces")
                pair = spaces.get(use.id) if isinstance(spaces, dict) else None
                if isinstance(pair, list) and len(pair) == 2 and name in (pair[1], f"{pair[0]}__{pair[1]}"):
                    namespace, name = pair  # docs/codex.md#mcp-namespaces
            self.item(E.FunctionCallItem(name=name, arguments=args, call_id=use.id, namespace=namespace))

    def token_count(self, usage: Usage) -> None:
        reasoning = usage.reasoning_output_tokens if isinstance(usage.reasoning_output_tokens, int) else 0
        last = E.TokenUsage(
            input_tokens=usage.input_tokens + usage.cache_read_input_tokens,
            cached_input_tokens=usage.cache_read_input_tokens,
            output_tokens=usage.output_tokens,
            reasoning_output_tokens=reasoning,
            total_tokens=usage.input_tokens + usage.cache_read_input_tokens + usage.output_tokens,
        )
        if usage.cache_creation_input_tokens:
            last.cache_write_input_tokens = usage.cache_creation_input_tokens
        total = self.total
        self.total = E.TokenUsage(
            *(a + b for a, b in zip(msgspec.structs.astuple(total)[:5], msgspec.structs.astuple(last)[:5]))
        )
        self.event(
            E.TokenCountEvent(info=E.TokenInfo(total_token_usage=self.total, last_token_usage=last), rate_limits=None)
        )


_META_FIELDS = frozenset(f.name for f in msgspec.structs.fields(R.SessionMeta))

# What the Codex reader makes of the two call items that are no function tools: a ToolUse
# named after the item with the item's action as input.
_ITEM_ACTIONS = {"local_shell": {"exec"}, "web_search": {"search", "open_page", "find_in_page"}}


def _source_arguments(extra: dict, call_id: str, value: Any, args: str) -> str:
    """The arguments string the source held, where the value read from it is unchanged
    (``\\uXXXX`` escapes and spacing are the model's own); else ``args``."""
    kept = extra.get("codex_arguments")
    source = kept.get(call_id) if isinstance(kept, dict) else None
    if not isinstance(source, str):
        return args
    try:
        same = json.loads(source) == value
    except ValueError:
        return args
    return source if same else args


def _search_action(block: Any) -> R.WebSearchAction | None:
    """A server-side ``web_search`` call as the action of Codex's own ``web_search_call``
    item, where it has the one query that item holds (docs/mapping.md#server-tools)."""
    if type(block) is not ServerToolUse or block.name != "web_search" or not isinstance(block.input, dict):
        return None
    query = block.input.get("query")
    return R.WebSearchAction(type="search", query=query) if isinstance(query, str) and len(block.input) == 1 else None


def _item_shaped(name: str, value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _ITEM_ACTIONS.get(name, ())


def command_text(block: Command) -> str:
    """A slash command as the text Codex gets: ``/name args``, then what it printed."""
    return block.as_text()


def _image_url(block: Image) -> str:
    if isinstance(block.data, str):
        media = block.media_type if isinstance(block.media_type, str) else "image/png"
        return f"data:{media};base64,{block.data}"
    return block.url if isinstance(block.url, str) else ""
