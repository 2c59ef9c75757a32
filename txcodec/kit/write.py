"""What the writers share: a block that has no place in the target, written as text and
reported; the session id a writer keeps or derives; what a writer of flat sessions drops."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any
from typing import TypeVar

import msgspec
from msgspec import UNSET

from ..core.errors import UnsafeId
from ..core.ids import is_safe_id
from ..core.ids import shown
from ..model.common import Command
from ..model.common import Context
from ..model.common import Conversation
from ..model.common import Message
from ..model.common import RawBlock
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.loss import LossReport
from ..model.native import builtins

W = TypeVar("W")


def render(block: Any) -> str:
    """A block as text: a command as typed, a text as it is, anything else as its JSON."""
    if isinstance(block, Command):
        return block.as_text()
    if isinstance(block, Text):
        return block.text
    return json.dumps(builtins(block), ensure_ascii=False)


def result_text(block: ToolResult, loss: LossReport, render: Callable[[Any], str] = render) -> str:
    """A tool result's content as one text; a non-text block inside it is reported and
    written by ``render`` (a client may spell a command its own way)."""
    if isinstance(block.content, str):
        return block.content
    pieces = []
    for inner in block.content:
        if isinstance(inner, Text):
            pieces.append(inner.text)
        else:
            loss.add("write:result-block", f"a {type(inner).__name__} inside a tool result became text")
            pieces.append(render(inner))
    return "\n".join(pieces)


def block_kind(block: Any) -> str:
    """The name a write-side loss gives a block written as text: its Common tag
    (``server_tool_use``, ``command``), or a kept block's own type; every writer reports
    ``write:block:<this>`` (docs/loss.md)."""
    if isinstance(block, RawBlock):
        return block.source_type
    config = getattr(type(block), "__struct_config__", None)
    tag = config.tag if config is not None else None
    return tag if isinstance(tag, str) else type(block).__name__


def as_text(block: Any, loss: LossReport, holder: str) -> str:
    """A block the target has no place for, as text, reported as ``write:block:<type>``;
    ``holder`` names what has no place for it (``a Continue history item``)."""
    loss.add(f"write:block:{block_kind(block)}", f"{holder} has no place for this block; written as text")
    return render(block)


def kept_or_derived_id(
    conversation: Conversation,
    loss: LossReport | None,
    keep: Callable[[str], str | None],
    derive: uuid.UUID | Callable[[str], str],
    why: str,
    *,
    plain_is_usual: bool = False,
) -> str:
    """The session id to write: the source's own, in the form ``keep`` gives it, where it fits
    the client; else one derived from it (a UUID namespace: its uuid5), or from the first
    messages when the source has none, so writing the same conversation again gives the same
    id. A replaced source id is reported (``why`` says what it is not), unless it is a plain
    name and ``plain_is_usual``: another harness's ordinary id is no loss worth a line."""
    source = conversation.meta.id if isinstance(conversation.meta.id, str) else ""
    kept = keep(source)
    if kept is not None:
        return kept
    seed = source or json.dumps(builtins(conversation.messages[:3]))
    derived = str(uuid.uuid5(derive, seed)) if isinstance(derive, uuid.UUID) else derive(seed)
    if source and not (plain_is_usual and is_safe_id(source)) and loss is not None:
        loss.add("write:session-id", f"source id {shown(source)} {why}; written as {derived}")
    return derived


def asked_or_kept_id(
    asked: str | None,
    conversation: Conversation,
    loss: LossReport | None,
    fit: Callable[[str], str | None],
    derive: uuid.UUID | Callable[[str], str],
    why: str,
    rule: str,
    *,
    plain_is_usual: bool = False,
) -> str:
    """The session id to write: ``asked`` (the caller's) in the form ``fit`` gives it, an
    UnsafeId saying ``rule`` when it does not fit; without one, :func:`kept_or_derived_id`'s,
    ``fit`` keeping the source's."""
    if asked:
        if (sid := fit(asked)) is None:
            raise UnsafeId(f"{rule}; got {asked!r}")
        return sid
    return kept_or_derived_id(conversation, loss, fit, derive, why, plain_is_usual=plain_is_usual)


def flattened(conversation: Conversation, loss: LossReport) -> None:
    """Report what a client with one flat list of messages keeps of neither: compaction
    epochs (their summaries stay as text) and subagent conversations."""
    if conversation.epochs:
        loss.add(
            "write:compaction", f"{len(conversation.epochs)} compaction epoch(s) flattened: summaries kept as text"
        )
    if conversation.children:
        loss.children_not_written(conversation.children, "write:subagents", "not written")


def fed(writer: W, conversation: Conversation, loss: LossReport) -> W:
    """``writer`` (its ``message`` takes one Message) given every message of a conversation
    its client keeps as one flat list, what it keeps of none reported first (:func:`flattened`)."""
    flattened(conversation, loss)
    for message in conversation.messages:
        writer.message(message)
    return writer


def cwd_or_default(cwd: str | None, loss: LossReport, default: str, why: str) -> str:
    """The folder a session is written for, ``default`` when the caller and the source name
    none (reported, ``why`` saying what that means for the client)."""
    if not cwd:
        cwd = default
        loss.add("write:cwd", f"the conversation has no cwd; recorded {cwd} ({why})")
    return cwd


def report_unstamped(conversation: Conversation, loss: LossReport, holder: str) -> None:
    """Report the messages that had a time, model or usage, for a client whose ``holder``
    (its line, its file) keeps none of them."""
    messages = conversation.messages
    dropped = sum(1 for m in messages if m.timestamp is not UNSET or m.usage is not UNSET or m.model is not UNSET)
    if dropped:
        loss.add("write:timestamps-usage", f"{dropped} message(s) had a time, model or usage; {holder} holds none")


def object_input(block: ToolUse, loss: LossReport) -> dict:
    """A call's input for a client whose arguments are always an object: any other value
    is wrapped as ``{"input": value}``, and reported."""
    args = block.input
    if not isinstance(args, dict):
        loss.add("write:wrapped-input", f"tool {block.name} input is not an object; wrapped as {{'input': ...}}")
        args = {"input": args}
    return args


def thinking_text(
    block: Thinking, loss: LossReport, signature: str = "a thinking signature is bound to its provider session: dropped"
) -> str | None:
    """A thinking block's text for a client that keeps reasoning as plain text, or ``None``
    for a block with no text (signature or encrypted only): that block is dropped, and a
    signature is reported in the words ``signature`` gives, since the client cannot keep it."""
    if not block.thinking:
        loss.add("write:thinking", "a thinking block without text (signature/encrypted only) dropped")
        return None
    if isinstance(block.signature, str) or isinstance(block.encrypted, str):
        loss.add("write:thinking-signature", signature)
    return block.thinking


def name_persisted_outputs(conversation: Conversation, title: str, loss: LossReport) -> None:
    """A tool output the source client saved whole beside the session (Claude Code's
    ``<persisted-output>``; its model saw a preview and the file's path) has no place in a
    target that does not write such files back (``Harness.writes_persisted_output``): the
    preview stays, the rest is named ``write:persisted-output``."""
    for i, message in enumerate(conversation.messages):
        for block in message.content:
            if type(block) is ToolResult and isinstance(block.persisted_output, str):
                loss.add(
                    "write:persisted-output",
                    f"message {i}: the whole output of {shown(block.tool_use_id)} "
                    f"({len(block.persisted_output)} characters) is not written: {title} gets the preview",
                )
    for child in conversation.children:
        name_persisted_outputs(child.conversation, title, loss)


def carry_context(conversation: Conversation, target: str, loss: LossReport) -> Conversation:
    """The conversation as ``target`` gets it: a :class:`Context` block of another client
    becomes the text its model saw, in place (reported ``write:context-as-text``, since the
    target sends it as the user's text), unless the target's writer gives such context as
    its client does (``Harness.writes_context``: the block passes as it is); one whose text
    the source did not record is left out (``write:context``). The target's own context
    passes as it is (docs/mapping.md#context). The conversation is returned unchanged when
    it holds none."""
    from .registry import get

    messages = _carried(conversation.messages, target, loss, get(target).writes_context)
    children = []
    for child in conversation.children:
        inner = carry_context(child.conversation, target, loss)
        children.append(child if inner is child.conversation else msgspec.structs.replace(child, conversation=inner))
    if messages is None and all(a is b for a, b in zip(children, conversation.children)):
        return conversation
    changed = msgspec.structs.replace(conversation, children=children)
    if messages is not None:
        changed.messages, changed.epochs = _reindexed(conversation, messages)
    return changed


def _carried(
    messages: list[Message], target: str, loss: LossReport, as_context: bool = False
) -> list[tuple[int, Message]] | None:
    """The messages with other clients' context turned to text, each with its index in the
    source; ``None`` when no message holds any."""
    if not any(type(b) is Context and b.source != target for m in messages for b in m.content):
        return None
    out: list[tuple[int, Message]] = []
    for index, message in enumerate(messages):
        if not any(type(b) is Context for b in message.content):
            out.append((index, message))
            continue
        blocks: list[Any] = []
        for block in message.content:
            if type(block) is not Context or block.source == target:
                blocks.append(block)
            elif isinstance(block.text, str) and block.text and as_context:
                blocks.append(block)  # the writer gives it as its client gives context
            elif isinstance(block.text, str) and block.text:
                loss.add(
                    "write:context-as-text",
                    f"message {index}: {block.source} context {block.kind!r} "
                    f"(sent as {block.role if isinstance(block.role, str) else 'context'}) written as user text",
                )
                blocks.append(Text(block.text))
            else:
                loss.add(
                    "write:context",
                    f"message {index}: {block.source} context {block.kind!r} records no text the model saw; left out",
                )
        if blocks:
            out.append((index, msgspec.structs.replace(message, content=blocks)))
    return out


def _reindexed(conversation: Conversation, kept: list[tuple[int, Message]]) -> tuple[list[Message], list[Any]]:
    """The kept messages, and the epochs with their starts moved to the same message (or
    the next kept one) when a message holding only context was left out."""
    position = {index: n for n, (index, _) in enumerate(kept)}
    epochs = []
    for epoch in conversation.epochs:
        start = next((position[i] for i in range(epoch.start, len(conversation.messages)) if i in position), len(kept))
        epochs.append(epoch if start == epoch.start else msgspec.structs.replace(epoch, start=start))
    return [m for _, m in kept], epochs
