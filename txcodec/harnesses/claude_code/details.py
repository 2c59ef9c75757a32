"""What ``txcodec list`` shows of a Claude Code session (title, first prompt, message count,
models, lineage), read lean: the file's lines are decoded into the reader's own typed records
(the same codec, so the same lines are typed, lenient or opaque), and a small state machine
follows :mod:`.read`'s rules only as far as the count needs them (docs/claude_code_reader.md#reconstruction-rules):
which records make a message, which join one, and which message is a turn
(:func:`txcodec.model.summary.typed`). No Common block is built and nothing is conformed,
which is what makes the full read cost ten times more; the values the codec keeps as bytes are
decoded only to learn whether the full read would drop their record.

Where the lean read cannot be sure it gives the reader's answer (a handler the full reader would
stop in, a file with no message of its own, such as a subagent's old sidechain file read alone),
:func:`summarize` returns None and the caller reads the file whole.
``tests/features/test_list_lean.py`` compares both on every golden and
corpus file and on mutated lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from ...core.gcpause import no_cycle_collection
from ...core.zst import read_bytes
from ...kit.detect import spread_document
from ...model.native import RawLines
from ...model.native import builtins
from ...model.native import decode_batches
from ...model.summary import NOT_TYPED
from ...model.summary import PROMPT_MAX
from ...model.summary import Details
from . import envelopes
from .codec import CODEC
from .origin import FORKED_FROM
from .origin import claude_origin
from .read import SYNTHETIC_MODEL
from .read import _origin_kind
from .read import _raw
from .read import _rendered_text
from .read import _sidechain_in_main
from .read import _value
from .records import AgentNameRecord
from .records import AssistantRecord
from .records import AttachmentRecord
from .records import CustomTitleRecord
from .records import PageUserRecord
from .records import ProgressRecord
from .records import RedactedThinkingBlock
from .records import StreamedUserRecord
from .records import SummaryRecord
from .records import SystemRecord
from .records import TextBlock
from .records import ThinkingBlock
from .records import ToolReferenceBlock
from .records import ToolResultBlock
from .records import ToolUseBlock
from .records import UserRecord
from .scan import Scan
from .scan import scan_line

_decode = msgspec.json.decode


class _Unsure(Exception):
    """The lean read cannot tell what the full read gives: read the file whole."""


class _Msg:
    """A message as far as :func:`txcodec.model.summary.summarize` looks at it."""

    __slots__ = ("assistant", "meta", "synthetic", "compact", "other", "texts", "tool_use")

    def __init__(self, assistant: bool) -> None:
        self.assistant = assistant
        self.meta = False
        self.synthetic = False
        self.compact = False
        self.other = False  # a block that is not a tool result (a user message with one is a turn)
        self.texts: list[str] = []  # its Text blocks' text, in order (a user message's)
        self.tool_use = False  # an assistant message holding a ToolUse block


class _Call:
    __slots__ = ("message", "results")

    def __init__(self, message: _Msg) -> None:
        self.message = message
        self.results: _Msg | None = None


class _Command:
    __slots__ = ("has_output",)

    def __init__(self) -> None:
        self.has_output = False


_USERS = (UserRecord, StreamedUserRecord, PageUserRecord)

# The full read decodes the values the codec keeps as bytes (a tool call's input, a tool result,
# an image's source), and drops the record where one does not decode: msgspec keeps a value
# without checking that its strings are UTF-8 or its numbers in range. The lean read decodes them
# too, so that such a file is read whole. These blocks hold no value the full read decodes.
_NOTHING_TO_DECODE = frozenset((TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolReferenceBlock))


class _Lean:
    def __init__(self) -> None:
        self.messages: list[_Msg] = []
        self.calls: dict[str, _Call] = {}
        self.owner: dict[str, _Call] = {}
        self.artifacts: set[str] = set()
        self.last_call: _Call | None = None
        self.commands: dict[str, tuple[_Command, _Msg]] = {}
        self.pending = False  # attachments waiting for a call's results (read._FileReader.pending_context)
        self.models: dict[str, None] = {}
        self.titles: dict[str, str] = {}
        self.seen: set[str] = set()
        self.sidechains = False

    def feed(self, records: list[Any], first: int) -> None:
        """Read the records of the file's lines numbered from ``first`` (as the reader numbers them)."""
        seen = self.seen
        for n, rec in enumerate(records, first):
            kind = type(rec)
            if getattr(rec, "is_sidechain", None) is True and _sidechain_in_main(rec.version):
                # an old main file holds its subagents' records: set apart, read as children
                self.sidechains = True
                continue
            if kind is AssistantRecord:
                handler = self.assistant
            elif kind in _USERS:
                handler = self.user
            elif kind is SystemRecord:
                handler = self.system
            elif kind is AttachmentRecord:
                handler = self.attachment
            elif kind is SummaryRecord:
                if isinstance(rec.summary, str):
                    self.titles.setdefault("summary", rec.summary)
                continue
            elif kind is CustomTitleRecord:
                if isinstance(rec.custom_title, str):
                    self.titles["custom-title"] = rec.custom_title
                continue
            elif kind is AgentNameRecord:
                if isinstance(rec.agent_name, str):
                    self.titles["agent-name"] = rec.agent_name
                continue
            else:
                continue
            uuid = rec.uuid
            if uuid:
                if uuid in seen:
                    continue
                seen.add(uuid)
            handler(rec, n)

    def _new(self, assistant: bool) -> _Msg:
        msg = _Msg(assistant)
        self.messages.append(msg)
        return msg

    # -- assistant: read._FileReader.assistant
    def assistant(self, rec: AssistantRecord, n: int) -> None:
        m = rec.message
        key = m.id if m.id is not UNSET else f"\0line{n}"
        call = self.calls.get(key)
        if call is None:
            msg = self._new(True)
            if m.model is not UNSET:
                if m.model == SYNTHETIC_MODEL:
                    msg.synthetic = True
                else:
                    self.models[m.model] = None
            call = self.calls[key] = _Call(msg)
        msg = call.message
        self.last_call = call
        content = m.content
        if isinstance(content, str) or content is UNSET:
            return
        for block in content:
            t = type(block)
            if t is ToolUseBlock:
                self.owner[block.id] = call
                value = _raw(block.input)
                if block.name == "Artifact" and isinstance(value, dict) and isinstance(value.get("file_path"), str):
                    self.artifacts.add(block.id)
                    continue
                msg.tool_use = True
            elif t not in _NOTHING_TO_DECODE:
                builtins(block)

    # -- user: read._FileReader.user / _user / _mark_user
    def user(self, rec: Any, n: int) -> None:
        self._user(rec)
        if self.pending and self.messages and not self.messages[-1].assistant:
            self.messages[-1].other = True
            self.pending = False

    def _user(self, rec: Any) -> None:
        content = rec.message.content
        texts: list[str] = []
        other = results = False
        if isinstance(content, str):
            if self._envelope(rec, content):
                return
            texts.append(content)
            other = True
        elif content is not UNSET:
            first: str | None = None
            kept = False
            for block in content:
                t = type(block)
                if t is ToolResultBlock:
                    results = True
                    _result_decodes(block.content)
                    if block.tool_use_id in self.artifacts:
                        continue
                    if first is None:
                        first = block.tool_use_id
                    kept = True
                else:
                    kept = other = True
                    if t is TextBlock:
                        texts.append(block.text)
                    else:
                        builtins(block)
            if results:
                _value(rec.tool_use_result)  # read._FileReader._structured reads its shape
            if results and not kept:
                return
            if results:
                owner = self.owner.get(first) if first is not None else None
                if owner is not None and owner is self.last_call:
                    if owner.results is None:
                        owner.results = self._new(False)
                    msg = owner.results
                    self._mark(msg, rec)
                    msg.texts.extend(texts)
                    msg.other = msg.other or other
                    return
        msg = self._new(False)
        msg.texts, msg.other = texts, other
        self._mark(msg, rec)
        if rec.is_compact_summary is True:
            msg.compact = True

    @staticmethod
    def _mark(msg: _Msg, rec: Any) -> None:
        if rec.is_meta is True:
            msg.meta = True
        _origin_kind(rec.origin)  # the full reader decodes it: one it would stop at, this stops at too

    def _envelope(self, rec: Any, body: str) -> bool:
        env = envelopes.parse_envelope(body)
        if env is None:
            return False
        if env.is_caveat_only:
            return True
        parent = rec.parent_uuid if isinstance(rec.parent_uuid, str) else None
        if env.is_command:
            cmd = _Command()
            cmd.has_output = env.get(envelopes.STDOUT) is not None or env.get(envelopes.STDERR) is not None
            msg = self._new(False)
            msg.other = True
            if type(rec) is not SystemRecord:
                self._mark(msg, rec)
            if rec.uuid:
                self.commands[rec.uuid] = (cmd, msg)
            return True
        if env.is_output:
            found = self.commands.get(parent) if parent else None
            if found is None or found[0].has_output:
                cmd, msg = _Command(), self._new(False)
                msg.other = True
            else:
                cmd, msg = found
            if env.get(envelopes.STDOUT) is not None or env.get(envelopes.STDERR) is not None:
                cmd.has_output = True
            if rec.uuid:
                self.commands[rec.uuid] = (cmd, msg)
            return True
        return False

    # -- system: read._FileReader.system
    def system(self, rec: SystemRecord, n: int) -> None:
        if rec.subtype == "local_command":
            content = _raw(rec.content)
            if isinstance(content, str):
                self._envelope(rec, content)
        elif rec.subtype == "compact_boundary":
            _raw(rec.compact_metadata)

    # -- attachment: read._FileReader.attachment
    def attachment(self, rec: AttachmentRecord, n: int) -> None:
        body = _decode(rec.attachment) if rec.attachment is not UNSET else None
        if isinstance(body, dict) and "origin" in body:
            _origin_kind(msgspec.json.encode(body["origin"]))
        rendered = _decode(rec.rendered) if rec.rendered is not UNSET else UNSET
        _rendered_text(rendered, body)  # where the full reader would stop, this stops too
        last = self.messages[-1] if self.messages else None
        if last is not None and not last.assistant and not last.compact:
            last.other = True
        elif last is not None and last.assistant and last.tool_use:
            self.pending = True
        else:
            self._new(False).meta = True

    def details(self) -> Details:
        if self.pending:  # read._FileReader.trailing_context: a message of its own, meta
            self._new(False).meta = True
        title = None
        for key in ("custom-title", "agent-name", "summary"):
            if key in self.titles:
                title = self.titles[key].strip() or None
                break
        count = 0
        prompt = None
        for msg in self.messages:
            if msg.assistant:
                count += not msg.synthetic
                continue
            if msg.meta or msg.compact or not msg.other:
                continue
            count += 1
            if prompt is None:
                text = "\n".join(msg.texts).strip()
                if text and not text.startswith(NOT_TYPED):
                    prompt = text[:PROMPT_MAX]
        models = [m for m in self.models]
        return Details(title=title, first_prompt=prompt, messages=count, models=models)


def _result_decodes(content: Any) -> None:
    """Decodes what the full read decodes of a tool result's content: raises where it raises."""
    if type(content) is list:
        for part in content:
            if type(part) is not TextBlock:
                builtins(part)
    else:
        _value(content)


def summarize(path: str | Path) -> Details | None:
    """The session's row details read lean, or None when only the full read can tell."""
    # records by the thousand and no cycle among them: the collector would only scan them
    with no_cycle_collection():
        return _summarize(Path(path), None, None)[0]


def summarize_scanning(path: Path, data: bytes, found: Scan) -> tuple[Details | None, bool]:
    """:func:`summarize` of the file's bytes, adding each line to ``found`` as
    :func:`.scan.scan` would; and whether every line was (else the caller scans the file)."""
    with no_cycle_collection():
        return _summarize(path, data, found)


def _summarize(path: Path, data: bytes | None, found: Scan | None) -> tuple[Details | None, bool]:
    scanned = False
    try:
        if data is None:
            data = read_bytes(path)
        if path.suffix == ".json" or spread_document(data):
            return None, False
        lean = _Lean()
        first = 1
        may_fork = False  # with ``found``: whether a line can name a fork, told as the lines go by
        for batch, _, whole in decode_batches(data, CODEC, runs=True):
            if found is not None:
                may_fork = _scan(found, batch, whole) or may_fork
            lean.feed([line._record for line in batch], first)
            first += len(batch)
        if found is not None:
            found.bytes = len(data)
        scanned = True
        if not lean.messages:
            # only sidechains (a subagent's file read alone: read whole), or no message at
            # all (the full read may say it is another client's file)
            return None, scanned
        result = lean.details()
        if found is None:
            may_fork = FORKED_FROM in data  # a fast substring search
        origin = claude_origin(RawLines(data), path, None, may_fork)
    except (_Unsure, RecursionError, msgspec.MsgspecError, TypeError, AttributeError, KeyError, IndexError, ValueError):
        return None, scanned
    except OSError:
        return None, scanned
    result.started_by = origin.started_by
    result.forked_from = origin.forked_from.session_id if origin.forked_from is not None else None
    return result, scanned


# the records that carry every field the store's scan reads (timestamp, sessionId, cwd, gitBranch,
# version), and whether their type is a conversation one (docs/claude_code.md#what-is-typed)
_SCANNED = {
    UserRecord: True,
    AssistantRecord: True,
    SystemRecord: False,
    AttachmentRecord: False,
    ProgressRecord: False,
}


def _scan(found: Scan, lines: list[Any], whole: bool) -> bool:
    """The lines of a batch added to ``found`` as :func:`.scan.scan` adds them, and whether one
    of them can name a fork (:func:`.origin.claude_origin`'s ``maybe_fork``). Only a batch
    decoded whole holds nothing but plain objects, decoded by msgspec as the scan's own
    decoder decodes them (no BOM stripped, no lone surrogate repaired): there a record of
    :data:`_SCANNED` gives its fields, typed str or absent, and names a fork only with its
    own ``forkedFrom`` key. Any other line is scanned, and searched for the key."""
    may_fork = False
    for line in lines:
        rec = line._record
        conversation = _SCANNED.get(type(rec)) if whole else None
        if conversation is None:
            scan_line(found, line._raw)
            may_fork = may_fork or _FORK_KEY(line._raw) is not None
            continue
        if rec.forked_from is not UNSET:
            may_fork = True
        found.lines += 1
        if conversation:
            found.messages += 1
        else:
            found.metadata += 1
        if found.session_id is None or found.cwd is None or found.git_branch is None or found.version is None:
            if found.session_id is None and rec.session_id is not UNSET:
                found.session_id = rec.session_id
            if found.cwd is None and rec.cwd is not UNSET:
                found.cwd = rec.cwd
            if found.git_branch is None and rec.git_branch is not UNSET:
                found.git_branch = rec.git_branch
            if found.version is None and rec.version is not UNSET:
                found.version = rec.version
        if rec.timestamp:
            found.stamped(rec.timestamp)
    return may_fork


_FORK_KEY = re.compile(re.escape(FORKED_FROM)).search
