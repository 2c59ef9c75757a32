"""Common -> Claude Code -> Common, for generated conversations: ``read(write(c))``
equals ``c`` up to exactly what the writer's loss report declares.

``normalize(c, loss)`` applies to ``c`` the transformation each declared ``write:*``
entry stands for (docs/resume.md, "What is changed"), one entry per transformation: a
transformation with no entry left is an undeclared change, an entry left over is a
declared change that did not happen. Both fail. Besides those, the comparison knows
only what the file format itself decides (``FORMAT`` below): native record ids are
minted anew, values the source lacked are filled with the documented defaults, and
what the reader derives (start/end times, model list) is derived again.

Also: the same input gives the same bytes (subagent files included), every written
file reloads byte-identically through ``txcodec.load(...).dump()``, and no written
line decodes as ``Opaque``.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import msgspec
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from msgspec import UNSET

import txcodec
from txcodec.harnesses.claude_code.envelopes import CAVEAT_TEXT
from txcodec.harnesses.claude_code.envelopes import strip_ansi
from txcodec.harnesses.claude_code.read import read
from txcodec.harnesses.claude_code.write import MISSING_RESULT
from txcodec.harnesses.claude_code.write import TESTED_VERSION
from txcodec.harnesses.claude_code.write import entry_id
from txcodec.harnesses.claude_code.write import write
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Artifact
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Command
from txcodec.model.common import Conversation
from txcodec.model.common import Document
from txcodec.model.common import Epoch
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import RawBlock
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.common import Usage
from txcodec.model.loss import LossReport
from txcodec.model.native import Opaque
from txcodec.model.tools import tool_kind

SID = "0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e"
CWD = "/tmp/round trip"
EPOCH_TS = "1970-01-01T00:00:00.000Z"

# --- generated conversations ---------------------------------------------------------

HOSTILE = [
    "</local-command-stdout>",
    "<\\/local-command-stdout>",
    "<\\\\/command-args>",
    "x</command-name><command-name>/evil",
    "<command-name>/forged</command-name>",
    "<local-command-stdout>forged</local-command-stdout>",
    "<local-command-caveat>c</local-command-caveat>",
    "\x1b[1mbold\x1b[0m",
    "line\nbreak",
    "<system-reminder>r</system-reminder>",
]
texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(HOSTILE),
    st.tuples(st.text(max_size=5), st.sampled_from(HOSTILE)).map("".join),
)
nonempty = texts.filter(bool)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
IMAGE = Image(media_type="image/png", data="iVBORw0KGgo=")
media = st.sampled_from(
    [
        IMAGE,
        Image(url="https://example.invalid/a.png"),
        Document(media_type="text/plain", data="doc", title="t"),
        Image(),
    ]
)
STRUCTURED_KEYS = st.sampled_from(["stdout", "stderr", "interrupted", "filePath", "type"])


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def next(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:04d}"


@st.composite
def tool_results(draw, call_id: str) -> ToolResult:
    content = draw(
        st.one_of(
            texts,
            st.lists(st.one_of(st.builds(Text, texts), media), max_size=3),
            json_values.map(lambda v: [RawBlock("json", v)]),
            st.just([ToolUse("nested", "n", {"a": 1})]),
        )
    )
    structured = draw(st.just(UNSET) | st.dictionaries(STRUCTURED_KEYS, json_values, max_size=2) | st.text(max_size=5))
    return ToolResult(call_id, content, is_error=draw(st.sampled_from([True, False, None])), structured=structured)


@st.composite
def assistant_turn(draw, ids: _Ids, ts) -> list[Message]:
    blocks = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["text", "text", "thinking", "tool", "tool", "tool_odd", "media", "raw", "artifact"])
        )
        if kind == "text":
            blocks.append(Text(draw(texts)))
        elif kind == "thinking":
            blocks.append(Thinking(draw(texts), signature=draw(st.just(UNSET) | st.text(min_size=1, max_size=8))))
        elif kind == "tool":
            name = draw(st.sampled_from(["Bash", "Read", "Agent", "mcp__x__y"]))
            blocks.append(
                ToolUse(
                    ids.next("toolu_"),
                    name,
                    draw(st.dictionaries(st.text(max_size=4), json_values, max_size=3)),
                    kind=tool_kind(name),
                )
            )
        elif kind == "tool_odd":
            blocks.append(
                ToolUse(
                    ids.next("toolu_"),
                    "apply_patch",
                    draw(json_values.filter(lambda v: not isinstance(v, dict))),
                    kind=tool_kind("apply_patch"),
                )
            )
        elif kind == "media":
            blocks.append(draw(media))
        elif kind == "raw":
            blocks.append(
                RawBlock("server_tool_use", {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}})
            )
        else:
            blocks.append(
                Artifact(
                    draw(st.sampled_from(["out/report.md", "../../etc/passwd", "a b.txt"])),
                    description=draw(st.just(UNSET) | texts),
                    data=draw(st.just(UNSET) | st.sampled_from(["aGk=", "not base64!"])),
                )
            )
    model = draw(st.sampled_from([UNSET, "claude-opus-4-1", "claude-sonnet-4-5", "<synthetic>"]))
    stop = draw(st.sampled_from([UNSET, None, "end_turn", "tool_use"]))
    usage = (
        draw(
            st.just(UNSET)
            | st.builds(Usage, st.integers(0, 9), st.integers(0, 9), st.integers(0, 9), st.integers(0, 9))
        )
        if isinstance(stop, str)
        else UNSET
    )
    msg = Message(
        "assistant",
        blocks,
        id=draw(st.just(UNSET) | st.just(ids.next("msg_"))),
        timestamp=ts(),
        model=model,
        stop_reason=stop,
        usage=usage,
        synthetic=model == "<synthetic>",
        api_error=draw(st.booleans()),
    )
    out = [msg]
    calls = [b.id for b in blocks if isinstance(b, ToolUse)]
    if calls and draw(st.integers(0, 4)):
        answered = draw(st.lists(st.sampled_from(calls), unique=True, max_size=len(calls)))
        if draw(st.booleans()):
            answered = [c for c in calls if c in answered]  # the usual case: call order
        content: list = [draw(tool_results(c)) for c in answered]
        if draw(st.integers(0, 3)) == 0:
            content.append(draw(tool_results(ids.next("toolu_orphan"))))
        extra = draw(st.lists(st.one_of(st.builds(Text, texts), media), max_size=2))
        at = draw(st.integers(0, len(content)))
        content[at:at] = extra if draw(st.integers(0, 3)) == 0 else []
        content.extend(extra if not content or content[-1] not in extra else [])
        out.append(Message("user", content, timestamp=ts(), **draw(user_flags())))
    return out


@st.composite
def user_flags(draw) -> dict:
    return {"meta": draw(st.booleans()), "origin": draw(st.sampled_from([UNSET, "human", "task-notification"]))}


@st.composite
def command(draw) -> Command:
    return Command(
        "/" + draw(texts),
        args=draw(st.just(UNSET) | texts),
        message=draw(st.just(UNSET) | texts),
        # Common's output holds no terminal escapes (common.py): a reader removes them
        output=draw(st.just(UNSET) | texts.map(strip_ansi)),
        stderr=draw(st.just(UNSET) | texts.map(strip_ansi)),
        contents=draw(st.just(UNSET) | st.just(UNSET) | texts),
    )


@st.composite
def conversations(draw, depth: int = 0, ids: _Ids | None = None) -> Conversation:
    ids = ids or _Ids()  # one counter for the whole tree: tool ids are unique across files
    clock = iter(range(1, 10_000))
    has_ts = draw(st.booleans())

    def ts():
        if has_ts and draw(st.integers(0, 5)):
            return f"2025-01-01T00:{next(clock) // 60:02d}:{next(clock) % 60:02d}.000Z"
        return UNSET

    messages: list[Message] = [Message("user", [Text(draw(nonempty))], timestamp=ts())]
    epochs: list[Epoch] = []
    for _ in range(draw(st.integers(0, 5 if depth == 0 else 2))):
        kind = draw(st.sampled_from(["assistant", "assistant", "user", "command", "mixed", "compact"]))
        if kind == "assistant":
            messages.extend(draw(assistant_turn(ids, ts)))
        elif kind == "user":
            blocks = draw(
                st.lists(
                    st.one_of(
                        st.builds(Text, texts), media, st.builds(ToolUse, st.just("u1"), st.just("X"), json_values)
                    ),
                    min_size=1,
                    max_size=3,
                )
            )
            messages.append(Message("user", blocks, timestamp=ts(), **draw(user_flags())))
        elif kind == "command":
            messages.append(Message("user", [draw(command())], timestamp=ts()))
        elif kind == "mixed":
            blocks = draw(st.lists(st.one_of(st.builds(Text, nonempty), command()), min_size=2, max_size=3))
            messages.append(Message("user", blocks, timestamp=ts()))
        elif depth == 0:
            earlier = list(range(len(messages)))
            keep = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
            preserved = [f"src-{i}" for i in sorted(keep)] + draw(st.lists(st.just("never-written"), max_size=1))
            epochs.append(
                Epoch(
                    start=len(messages),
                    trigger=draw(st.sampled_from([UNSET, "auto", "manual"])),
                    pre_tokens=draw(st.just(UNSET) | st.integers(0, 10**6)),
                    preserved_ids=preserved,
                )
            )
            messages.append(Message("user", [Text("Summary: " + draw(texts))], timestamp=ts(), compact_summary=True))
    for i, m in enumerate(messages):
        m.source_ids = [f"src-{i}"]
    native = draw(st.booleans())
    meta = Meta(
        id=SID,
        title=draw(st.just(UNSET) | nonempty) if depth == 0 else UNSET,
        cwd=CWD,
        git_branch=draw(st.just(UNSET) | st.sampled_from(["main", "feature/x"])),
        client_version="2.1.300" if native else UNSET,
        source_harness="claude_code" if native else UNSET,
    )
    conversation = Conversation(meta=meta, messages=messages, epochs=epochs)
    if depth < 2:
        calls = [b.id for m in messages for b in m.content if isinstance(b, ToolUse) and m.role == "assistant"]
        for _ in range(draw(st.integers(0, 2 if depth == 0 else 1))):
            child = draw(conversations(depth + 1, ids))
            agent_id = "a" + draw(st.text("0123456789abcdef", min_size=16, max_size=16))
            link = ChildLink(
                "meta.toolUseId", tool_use_id=draw(st.sampled_from(calls)) if calls else UNSET, agent_id=agent_id
            )
            conversation.children.append(
                Child(
                    link,
                    child,
                    agent_type=draw(st.just(UNSET) | st.sampled_from(["Explore", "general-purpose"])),
                    description=draw(st.just(UNSET) | texts),
                    spawn_depth=depth + 1,
                )
            )
    return conversation


# --- what the writer declares, applied to the input ------------------------------------


class Declared:
    """The loss report's ``write:*`` entries, consumed one per transformation."""

    def __init__(self, loss: LossReport):
        self.left = Counter(e.kind for e in loss.entries if e.kind.startswith("write:"))
        self.artifacts = 0  # materialized artifacts are numbered across the whole session

    def take(self, kind: str) -> None:
        assert self.left[f"write:{kind}"] > 0, f"undeclared change: write:{kind}"
        self.left[f"write:{kind}"] -= 1

    def done(self) -> None:
        rest = +self.left
        assert not rest, f"declared but not done: {dict(rest)}"


def _flatten(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _plain(block) -> object:
    return block.value if isinstance(block, RawBlock) else msgspec.to_builtins(block)


def _tag(block) -> str:
    return block.source_type if isinstance(block, RawBlock) else block.__struct_config__.tag


def _has_media(block) -> bool:
    return (
        (isinstance(block, Image) and block.file_id is not UNSET) or block.data is not UNSET or block.url is not UNSET
    )


def _as_text(block, d: Declared):
    """``block-as-text``: a block the API has no place for becomes ``[tag] json``."""
    if isinstance(block, (Image, Document)) and _has_media(block):
        return block
    d.take("block-as-text")
    return Text(f"[{_tag(block)}] {_flatten(_plain(block))}")


def _api_part(block) -> dict:
    """A result part as the Messages API spells it."""
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Image) and block.file_id is not UNSET:
        return {"type": "image", "source": {"type": "file", "file_id": block.file_id}}
    kind = _tag(block)
    if block.data is not UNSET:
        media = (
            block.media_type if block.media_type is not UNSET else ("text/plain" if kind == "document" else "image/png")
        )
        out = {
            "type": kind,
            "source": {"type": "text" if media == "text/plain" else "base64", "media_type": media, "data": block.data},
        }
    else:
        out = {"type": kind, "source": {"type": "url", "url": block.url}}
    if isinstance(block, Document) and block.title is not UNSET:
        out["title"] = block.title
    return out


def _result_part(block, d: Declared):
    if isinstance(block, Text):
        return block
    if isinstance(block, (Image, Document)):
        if _has_media(block):
            return block
        d.take("empty-media")
        return Text(f"[{_tag(block)} without data]")
    d.take("result-part-as-text")
    return Text(_flatten(_plain(block)))


class _Normalizer:
    def __init__(self, d: Declared, sid: str):
        self.d = d
        self.sid = sid

    def assistant(self, m: Message) -> Message | None:
        out = []
        for b in m.content:
            if isinstance(b, Text):
                if not b.text:
                    self.d.take("empty-text")
                    continue
                out.append(b)
            elif isinstance(b, Thinking):
                if b.signature is UNSET:
                    self.d.take("thinking-without-signature")
                    continue
                out.append(b)
            elif isinstance(b, ToolUse):
                if not isinstance(b.input, dict):
                    self.d.take("wrapped-input")
                    b = ToolUse(b.id, b.name, {"input": b.input}, b.kind)
                out.append(b)
            elif isinstance(b, Artifact):
                path = b.path
                if b.data is not UNSET:
                    try:
                        import base64

                        base64.b64decode(b.data, validate=True)
                    except ValueError:
                        self.d.take("artifact-bad-data")
                    else:
                        self.d.artifacts += 1
                        from txcodec.harnesses.claude_code.write import _safe_name

                        path = f"{self.sid}/artifacts/{self.d.artifacts:03d}-{_safe_name(b.path)}"
                out.append(Artifact(path, description=b.description))
            else:
                out.append(_as_text(b, self.d))
        if not out:
            self.d.take("empty-message")
            return None
        m.content = out
        return m

    def run(self, blocks: list, d: Declared) -> list:
        if len(blocks) == 1 and isinstance(blocks[0], Text):
            if not blocks[0].text:
                d.take("empty-text")
            return blocks if blocks[0].text else []
        out = []
        for b in blocks:
            if isinstance(b, Text):
                if b.text:
                    out.append(b)
                else:
                    d.take("empty-text")
            elif isinstance(b, ToolUse):
                d.take("block-as-text")
                out.append(Text(f"[tool_use {b.name}] {_flatten(b.input)}"))
            else:
                out.append(_as_text(b, d))
        return out


def normalize(c: Conversation, loss: LossReport, sid: str = SID) -> Conversation:
    """``c`` as the Claude Code format carries it, per the declared losses."""
    c = copy.deepcopy(c)
    d = Declared(loss)
    _normalize(c, d, sid, set(), None)
    d.done()
    return c


def _answered(messages: list[Message], i: int) -> set[str]:
    nxt = messages[i + 1] if i + 1 < len(messages) else None
    return (
        {b.tool_use_id for b in nxt.content if isinstance(b, ToolResult)}
        if nxt is not None and nxt.role == "user"
        else set()
    )


def _normalize(c: Conversation, d: Declared, sid: str, used: set[str], parent_agent: str | None) -> None:
    n = _Normalizer(d, sid)
    out: list[Message] = []
    starts = {e.start: e for e in c.epochs}
    new_start: dict[int, int] = {}
    open_calls: list[str] = []
    missing: list[str] = []
    for i, m in enumerate(c.messages):
        if i in starts:
            new_start[i] = len(out)
        if m.role == "assistant":
            kept = n.assistant(m)
            if kept is not None:
                out.append(kept)
            calls = [b.id for b in m.content if isinstance(b, ToolUse)]
            answered = _answered(c.messages, i)
            missing = [x for x in calls if x not in answered]
            open_calls = [x for x in calls if x in answered]
            for _ in missing:
                d.take("missing-tool-result")
            nxt = c.messages[i + 1] if i + 1 < len(c.messages) else None
            if missing and (nxt is None or nxt.role != "user" or i + 1 in starts):
                # no user message follows to carry them: a message of their own
                out.append(
                    Message(
                        "user",
                        [ToolResult(x, MISSING_RESULT, is_error=True) for x in missing],
                        timestamp=m.timestamp,
                        source_ids=list(m.source_ids),
                    )
                )
                missing = []
            continue
        results = [b for b in m.content if isinstance(b, ToolResult)]
        others = [b for b in m.content if not isinstance(b, ToolResult)]
        if results and others and any(not isinstance(b, ToolResult) for b in m.content[: len(results)]):
            d.take("reordered-results")
        real, orphans = [], []
        for r in results:
            if r.tool_use_id in open_calls:
                open_calls.remove(r.tool_use_id)
                r.content = r.content if isinstance(r.content, str) else [_result_part(p, d) for p in r.content]
                real.append(r)
            else:
                d.take("orphan-result")
                text = (
                    r.content
                    if isinstance(r.content, str)
                    else _flatten([_api_part(_result_part(p, d)) for p in r.content])
                )
                orphans.append(Text(f"[tool result {r.tool_use_id}] {text}"))
        real = _merge_missing(
            real,
            missing,
            [b.id for b in (out[-1].content if out and out[-1].role == "assistant" else []) if isinstance(b, ToolUse)],
        )
        missing, open_calls = [], []
        pieces = _pieces(real, orphans + others, n, d)
        if not pieces:
            d.take("empty-message")
        if len(pieces) > 1:
            d.take("split-message")
        for piece in pieces:
            is_command = len(piece) == 1 and isinstance(piece[0], Command)
            extra = {"subtype": "local_command"} if is_command else dict(m.extra)
            flags = {} if is_command else {"meta": m.meta, "origin": m.origin, "compact_summary": m.compact_summary}
            if is_command and piece[0].contents is not UNSET:
                d.take("command-contents")
                piece = [msgspec.structs.replace(piece[0], contents=UNSET)]
            out.append(
                Message("user", piece, timestamp=m.timestamp, source_ids=list(m.source_ids), extra=extra, **flags)
            )
    c.messages = out
    for e in c.epochs:
        e.start = new_start[e.start]
        written = {x for m in out[: e.start] for x in m.source_ids}
        if set(e.preserved_ids) - written:
            d.take("preserved-unresolved")
            e.preserved_ids = [x for x in e.preserved_ids if x in written]
    for k, child in enumerate(c.children):
        agent = child.link.agent_id
        if not isinstance(agent, str) or not re.fullmatch("a[0-9a-f]{16}", agent) or agent in used:
            d.take("agent-id")  # re-minted: "a" + 16 hex digits of uuid5(sid, agent/<parent>/<n>)
            child.link.agent_id = "a" + entry_id(sid, f"agent/{parent_agent}/{k}").replace("-", "")[:16]
        used.add(child.link.agent_id)
    for child in c.children:
        _normalize(child.conversation, d, sid, used, child.link.agent_id)


def _merge_missing(real: list[ToolResult], missing: list[str], calls: list[str]) -> list[ToolResult]:
    """Each added result goes before the first real result of a later call (call order)."""
    out = list(real)
    for x in missing:
        rank = calls.index(x)
        at = next(
            (k for k, r in enumerate(out) if r.tool_use_id in calls and calls.index(r.tool_use_id) > rank), len(out)
        )
        out.insert(at, ToolResult(x, MISSING_RESULT, is_error=True))
    return out


def _pieces(results: list, others: list, n: _Normalizer, d: Declared) -> list[list]:
    """A user message as written: results with the first run of other blocks, then one
    message per command and per later run."""
    runs: list[list] = [[]]
    for b in others:
        if isinstance(b, Command):
            runs.append([b])
            runs.append([])
        else:
            runs[-1].append(b)
    pieces = []
    for k, run in enumerate(runs):
        if len(run) == 1 and isinstance(run[0], Command):
            pieces.append(run)
            continue
        content = n.run(run, d) if run else []
        if k == 0:
            content = results + content
        if content:
            pieces.append(content)
    return pieces


# --- what the format itself decides ---------------------------------------------------


def _fill_timestamps(c: Conversation) -> None:
    """FORMAT: a message without a timestamp is written with the last known one (the
    conversation's start, else 1970-01-01)."""
    last = c.meta.started_at if c.meta.started_at is not UNSET else EPOCH_TS
    for msg in c.messages:
        if msg.timestamp is UNSET:
            msg.timestamp = last
        last = msg.timestamp
    for child in c.children:
        _fill_timestamps(child.conversation)


def _fill(c: Conversation, got: Conversation, sid: str, cwd: str, agent_id: str | None = None) -> None:
    """FORMAT: the defaults the writer supplies and what the reader derives."""
    m = c.meta
    stamps = [msg.timestamp for msg in c.messages]
    for i, msg in enumerate(c.messages):
        if msg.role == "assistant" and msg.id is UNSET and i < len(got.messages):
            msg.id = got.messages[i].id  # minted: msg_<uuid5>
        if msg.model is UNSET and msg.synthetic:
            msg.model = "<synthetic>"
        for b in msg.content:
            if isinstance(b, Command):  # the CLI's layout: every element written
                b.args = b.args if b.args is not UNSET else ""
                b.message = b.message if b.message is not UNSET else b.name.lstrip("/")
        # a command that printed gets a caveat before it, made up in 2.1.332's wording
        # when the message had none; it reads back as the message's caveat
        first = next((b for b in msg.content if isinstance(b, Command)), None)
        if first is not None and "caveat" not in msg.extra and (first.output is not UNSET or first.stderr is not UNSET):
            got_msg = got.messages[i] if i < len(got.messages) else None
            if got_msg is not None and got_msg.extra.get("caveat") == CAVEAT_TEXT:
                msg.extra["caveat"] = CAVEAT_TEXT
    for e in c.epochs:
        if e.trigger is UNSET:
            e.trigger = "manual"
    native = m.source_harness == "claude_code"
    m.client_version = m.client_version if native and m.client_version is not UNSET else TESTED_VERSION
    m.id, m.cwd, m.source_harness = sid, cwd, "claude_code"
    m.git_branch = m.git_branch if m.git_branch is not UNSET else "HEAD"
    m.models = list(
        dict.fromkeys(
            x.model
            for x in c.messages
            if x.role == "assistant" and isinstance(x.model, str) and x.model != "<synthetic>"
        )
    )
    if stamps:
        m.started_at, m.ended_at = min(stamps), max(stamps)
    for child, got_child in zip(
        sorted(c.children, key=lambda x: x.link.agent_id), sorted(got.children, key=lambda x: x.link.agent_id)
    ):
        if child.agent_type is UNSET:
            child.agent_type = "general-purpose"
        link = child.link
        link.via = "meta.toolUseId" if link.tool_use_id is not UNSET else ("parentAgentId" if agent_id else "none")
        if agent_id:
            link.parent_agent_id = agent_id
        _fill(child.conversation, got_child.conversation, sid, cwd, link.agent_id)


def comparable(c: Conversation) -> dict:
    """Native record ids are the writer's own: preserved ids compare as the message
    indexes they name, boundary ids not at all; children compare as a set."""
    c = copy.deepcopy(c)
    for e in c.epochs:
        e.preserved_ids = sorted(i for i, m in enumerate(c.messages) if set(m.source_ids) & set(e.preserved_ids))
        e.boundary_id = e.logical_parent_id = UNSET
    for m in c.messages:
        m.source_ids = []
    out = msgspec.to_builtins(c)
    out["children"] = sorted(
        ({**msgspec.to_builtins(ch), "conversation": comparable(ch.conversation)} for ch in c.children),
        key=lambda x: x["link"]["agent_id"],
    )
    return out


# --- the properties --------------------------------------------------------------------


def _save(files: dict[str, bytes], root: Path) -> None:
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(c=conversations())
def test_read_write_is_identity_up_to_declared_losses(c, tmp_path_factory):
    loss = LossReport()
    written = write(c, loss, WriteOptions())
    again = write(c, LossReport(), WriteOptions())
    assert written.files == again.files  # same input, same bytes (subagents included)
    root = tmp_path_factory.mktemp("rt")
    _save(written.files, root)
    for rel, data in written.files.items():
        if rel.endswith((".jsonl", ".meta.json")):
            session = txcodec.load(root / rel, "claude_code")
            assert session.dump() == data, rel
            assert not [r for r in session.records if isinstance(r, Opaque)], rel
    got = read(txcodec.load(root / written.main, "claude_code"), LossReport())
    expected = copy.deepcopy(c)
    _fill_timestamps(expected)
    expected = normalize(expected, loss, written.session_id)
    _fill(expected, got, written.session_id, CWD)
    mine, want = comparable(got), comparable(expected)
    assert mine == want, _first_difference(mine, want)


def _first_difference(a, b, path: str = "") -> str:
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k, "<absent>") != b.get(k, "<absent>"):
                return _first_difference(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
        return f"{path}: length {len(a)} != {len(b)}: {a[len(b) :]!r} / {b[len(a) :]!r}"
    return f"{path}: read {a!r} != expected {b!r}"


def test_every_declared_kind_is_documented():
    """Each ``write:*`` kind the writer can declare has its row in docs/resume.md."""
    root = Path(__file__).resolve().parents[3]
    source = (root / "txcodec/harnesses/claude_code/write.py").read_text()
    doc = (root / "docs/resume.md").read_text()
    kinds = set(re.findall(r'"write:([a-z-]+)"', source))
    assert kinds and not [k for k in sorted(kinds) if f"`{k}`" not in doc]
