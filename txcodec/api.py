"""The library API that the CLI calls. No click here."""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import msgspec

from .core.errors import InputError
from .core.errors import guarded
from .core.gcpause import no_cycle_collection
from .core.zst import read_bytes as read_bytes  # re-exported: part of the API
from .kit import registry
from .kit.detect import detect as detect  # re-exported: part of the API
from .kit.detect import detect_lines as detect_lines  # re-exported: part of the API
from .kit.detect import is_document as is_document  # re-exported: part of the API
from .kit.load import load as load  # re-exported: part of the API
from .kit.load import load_once as load_once  # re-exported: part of the API
from .kit.load import split_database as split_database  # re-exported: part of the API
from .model.common import Child
from .model.common import Conversation
from .model.common import Message
from .model.common import ToolResult
from .model.common import ToolUse
from .model.loss import LossReport
from .model.native import NativeSession

if TYPE_CHECKING:
    from .kit.read import StreamedConversation


def samples() -> list[str]:
    """The harnesses a sample session is bundled for: the folders of ``txcodec/samples``."""
    from importlib import resources

    return sorted(entry.name for entry in (resources.files("txcodec") / "samples").iterdir() if entry.is_dir())


def sample(harness: str = "claude_code") -> Path:
    """The path of the small synthetic session bundled for ``harness`` (every harness's
    is the Claude Code one, converted)."""
    from importlib import resources

    folder = resources.files("txcodec") / "samples" / harness
    found = (
        sorted(p for p in folder.iterdir() if p.name.endswith((".jsonl", ".json", ".md")) or p.is_dir())
        if folder.is_dir()
        else []
    )
    if not found:
        raise InputError(f"no sample session for {harness!r}")
    return Path(str(found[0]))


class NotSupported(InputError):
    """The harness cannot do that (no reader, no writer, no store)."""


@guarded
def to_common(session: NativeSession, loss: LossReport | None = None) -> Conversation:
    """The session as a Common conversation (with subagents, when side files exist).

    What Common cannot carry is added to ``loss`` when one is given.
    """
    harness = registry.get(session.harness)
    if harness.read is None:
        where = f"{session.path}: " if session.path is not None else ""
        if session.harness == "jsonl":  # the fallback: nothing recognised the lines
            raise NotSupported(f"{where}not a session of any known harness (name one with --from)")
        raise NotSupported(f"{where}reading {harness.title} into Common is not supported yet")
    from .kit.conform import conform
    from .kit.read import report_lone_surrogates

    loss = loss if loss is not None else LossReport()
    # a reader builds objects by the hundred thousand, and conform decodes them all again:
    # no cycle among them yet, so the collector would only scan them over and over
    with no_cycle_collection():
        conversation = harness.read(session, loss)
        report_lone_surrogates(session, loss, str(session.path) if session.path is not None else None)
        # a reader that builds every message of objects of its own (``read_unshared``) may
        # have the messages that already fit kept as they are
        conversation = conform(conversation, loss, checked=harness.read_unshared)
    if not conversation.messages and not conversation.children:
        _not_another_harness(session, harness.title)
    _add_origin(conversation, session)
    return conversation


def to_common_streamed(session: NativeSession, loss: LossReport | None = None) -> Conversation | StreamedConversation:
    """:func:`to_common` a message at a time, where the session's harness reads it that way
    (``Harness.read_messages``: the session loaded by :func:`load_once`); else the whole
    conversation. Each message is held to the Common schema as it comes; errors while
    reading are the library's own, as :func:`to_common` raises them."""
    harness = registry.get(session.harness)
    loss = loss if loss is not None else LossReport()
    stream = guarded(harness.read_messages)(session, loss) if harness.read_messages is not None else None
    if stream is None:
        return to_common(session, loss)
    from .kit.read import StreamedConversation

    return StreamedConversation(stream.meta, _conformed(stream, session, harness.title, loss), stream.tail)


def _conformed(
    stream: StreamedConversation, session: NativeSession, title: str, loss: LossReport
) -> Iterator[tuple[Message, bool]]:
    from .kit.conform import conform
    from .model.common import Meta

    step = guarded(next)
    checked = registry.get(session.harness).read_unshared
    any_message = False
    with no_cycle_collection():  # as to_common: nothing read is in a cycle (the collector resumes when closed)
        while (item := step(stream.messages, None)) is not None:
            message, compacted = item
            any_message = True
            for fitted in conform(Conversation(meta=Meta(), messages=[message]), loss, checked=checked).messages:
                yield fitted, compacted
    if not any_message:
        guarded(_not_another_harness)(session, title)


def _not_another_harness(session: NativeSession, title: str) -> None:
    """A file its named harness reads nothing from, but another recognises, was named
    with the wrong ``--from``: say which harness it is rather than give an empty session."""
    from itertools import islice

    from .kit.detect import detect_lines

    head = [raw for line in islice(session.lines, 64) if isinstance(raw := line.raw, bytes)]
    if not head and session.path is not None and Path(session.path).is_file():  # streamed: its lines are gone
        try:
            with open(session.path, "rb") as f:
                data = f.read(1 << 20)
        except OSError:
            return
        found = detect(read_bytes(session.path) if str(session.path).endswith(".zst") else data)
    else:
        found = detect_lines(head) if head else "jsonl"
    if found in ("jsonl", session.harness):
        return
    where = f"{session.path}: " if session.path is not None else ""
    raise InputError(
        f"{where}read as {title} it holds no message, and it looks like a {registry.get(found).title} "
        f"session: use --from {found}, or leave --from out"
    )


def _add_origin(conversation: Conversation, session: NativeSession) -> None:
    """``meta.started_by`` / ``meta.forked_from`` from what the file records (docs/lineage.md)."""
    from .lineage import session_origin

    if conversation.meta.started_by is not msgspec.UNSET:
        return
    found = session.origin if session.origin is not None else session_origin(session)
    if found.started_by is not None:
        conversation.meta.started_by = found.started_by
    if found.forked_from is not None:
        conversation.meta.forked_from = found.forked_from


@guarded
def convert(
    source: bytes | str | os.PathLike[str] | Conversation,
    to: str,
    *,
    from_: str | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
    prompts: list[str] | None = None,
    input_side: bytes | str | os.PathLike[str] | None = None,
    stdin_side: bool = False,
    default_cwd: str | None = None,
) -> tuple[registry.Written, LossReport]:
    """Read ``source`` (a native session: path or bytes, harness detected unless
    ``from_`` names it; ``from_="common"`` for Common JSON; or a :class:`Conversation`)
    and write it as harness ``to``. Returns the files and everything that was not carried.

    ``prompts`` and ``input_side`` are for sources that do not record what the user
    typed (stream-json output: a harness that ``reads_prompts``): the prompts one per run,
    or the stdin side kept in a file of its own. They are handed to the reader as
    ``session.prompts`` and ``session.input_session``; a source of another harness
    refuses them. ``stdin_side`` (a target that ``writes_stdin_side``: stream_json)
    writes the lines a host sends on stdin.

    The project folder the session is filed under is ``cwd``, else the one the session
    records (an absolute path), else ``default_cwd`` (else the writer's own default); it
    comes back as ``written.cwd``, the folder to resume it from.
    """
    # Millions of objects (the typed records, the conversation, the written lines) are
    # made and freed in here, none in a cycle: with the cycle collector paused for the
    # whole of it, it never scans them (between reading and writing it would, in full).
    with no_cycle_collection():
        return _convert(
            source,
            to,
            from_=from_,
            session_id=session_id,
            cwd=cwd,
            prompts=prompts,
            input_side=input_side,
            stdin_side=stdin_side,
            default_cwd=default_cwd,
        )


def _convert(
    source: bytes | str | os.PathLike[str] | Conversation,
    to: str,
    *,
    from_: str | None,
    session_id: str | None,
    cwd: str | None,
    prompts: list[str] | None,
    input_side: bytes | str | os.PathLike[str] | None,
    stdin_side: bool,
    default_cwd: str | None,
) -> tuple[registry.Written, LossReport]:
    to = registry.canonical(to)  # claude, Codex, gemini-cli: the ids they mean
    from_ = registry.canonical(from_) if from_ else from_
    wanted = registry.find(to)  # an unknown name is reported once the source is read, as before
    if stdin_side and not (wanted is not None and wanted.writes_stdin_side):
        name = _declaring(lambda h: h.writes_stdin_side)
        raise NotSupported(f"the stdin side is a {name} output only (--to {name})")
    from .model.common_json import from_json

    loss = LossReport()
    if isinstance(source, Conversation):
        conversation = source
    elif from_ == "common":
        given = isinstance(source, (bytes, bytearray, memoryview))
        data = bytes(source) if given else read_bytes(source)
        conversation = from_json(data, None if given else source)
    else:
        session = load_once(source, from_)
        fast = wanted.fast_paths.get(session.harness) if wanted is not None else None
        if fast is not None and session_id is None and prompts is None and input_side is None and not stdin_side:
            done = fast(session, cwd, default_cwd)
            if done is not None:
                return done
        if (prompts is not None or input_side is not None) and not registry.get(session.harness).reads_prompts:
            name = _declaring(lambda h: h.reads_prompts)
            raise NotSupported(
                f"{_name(source)} is {session.harness}, not a {name} capture: prompts and "
                f"an input side only complete {name} captures"
            )
        if prompts is not None:
            session.prompts = list(prompts)  # type: ignore[attr-defined]
        if input_side is not None:
            session.input_session = load(input_side, session.harness)  # type: ignore[attr-defined]
        conversation = to_common(session, loss)
        del session  # the typed records are no longer needed: the writer's memory is theirs
    target = registry.get(to)
    if target.write is None:
        raise NotSupported(f"writing {target.title} is not supported yet")
    recorded = _recorded_cwd(conversation)
    if cwd is None and recorded is None:
        cwd = default_cwd
    options = registry.WriteOptions(session_id=session_id, cwd=cwd, stdin_side=stdin_side)
    from .kit.write import carry_context

    empty = not conversation.messages and not conversation.children
    # the source's own records of another client's context (a Claude Code session's attachments:
    # a third of its bytes) are freed before the writer runs, not held beside its output
    conversation = carry_context(conversation, target.name, loss)
    written = target.write(conversation, loss, options)
    if not target.writes_persisted_output:
        from .kit.write import name_persisted_outputs

        name_persisted_outputs(conversation, target.title, loss)
    written.cwd = cwd or recorded
    if conversation.meta.forked_from is not msgspec.UNSET and target.fork_slot is None:
        loss.add(
            "lineage:forked-from",
            f"forked from {conversation.meta.forked_from.session_id}: "
            f"{target.title} has no slot for a session's parent",
        )
    from .core.ids import safe_relpath  # here, not at start-up: its regexes and SHA-1 serve only a run that writes

    for rel in written.files:  # a writer's names are checked once more: a caller may write them out as they are
        safe_relpath(rel)
    if empty and "write:no-conversation" not in loss.counts():
        loss.add(
            "write:no-conversation", f"{_name(source)} holds no message: {target.title} will find nothing to resume"
        )
    return written, loss


def _declaring(flag: Callable[[registry.Harness], bool]) -> str:
    """The built-in harness for which ``flag`` holds, to name in a message refusing an
    option that only it takes."""
    return next(name for name, harness in registry.builtins().items() if flag(harness))


def _recorded_cwd(conversation: Conversation) -> str | None:
    """The session's own project folder, when it can name one here (writers fall back to
    their default for anything else, and report an unusable one)."""
    from .core.ids import is_safe_cwd

    cwd = conversation.meta.cwd
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) and is_safe_cwd(cwd) else None


def _name(source: Any) -> str:
    if isinstance(source, Conversation):
        return "the conversation"
    return "the input" if isinstance(source, (bytes, bytearray, memoryview)) else str(source)


@guarded
def install(written: registry.Written, harness: str, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Put ``written`` into the harness's store (its default root unless ``root``),
    atomically, refusing before writing anything when a file already exists.

    A store may have an ``install(files, root)`` hook for what plain file copying cannot
    do (Gemini CLI: merge ``projects.json``, reuse a project's existing folder), and a
    ``root_for(cwd)`` hook when it lives in the project folder (aider)."""
    from .core.atomic import install_files

    target = registry.get(harness)
    store = target.store
    root_for = store.root_for if store is not None else None
    if root is None and root_for is not None and written.cwd is not None:
        # a store inside the project itself (aider's history): never make up that folder
        if not os.path.isdir(written.cwd):
            raise InputError(
                f"{written.cwd}: the session's project folder does not exist here "
                "(create it, or choose another with --cwd)"
            )
        root = root_for(written.cwd)
    if store is not None and store.install is not None:
        return store.install(written.files, root)
    if root is None:
        if store is None:
            raise NotSupported(f"{target.title} has no store to install into")
        root = store.default_root()
    return install_files(root, written.files)


# -- walking a conversation ----------------------------------------------------------------------


def messages(conversation: Conversation, *, subagents: bool = True) -> Iterator[tuple[int, Message]]:
    """Every message with its depth (0 = the main conversation), each subagent's messages
    right after the message holding the tool call that started it (or at the end when the
    call is not found), depth first."""
    by_call: dict[str, list[Child]] = {}
    unplaced: list[Child] = []
    for child in conversation.children if subagents else []:
        tool_use_id = child.link.tool_use_id
        (by_call.setdefault(tool_use_id, []) if isinstance(tool_use_id, str) else unplaced).append(child)
    for message in conversation.messages:
        yield 0, message
        for block in message.content:
            for child in by_call.pop(getattr(block, "id", None), []) if isinstance(block, ToolUse) else []:
                yield from ((d + 1, m) for d, m in messages(child.conversation))
    for child in [*unplaced, *(c for cs in by_call.values() for c in cs)]:
        yield from ((d + 1, m) for d, m in messages(child.conversation))


class ToolCall(msgspec.Struct):
    """A tool call and its result (``None`` when the conversation holds none), with the
    messages they are in and the subagent depth (0 = main conversation)."""

    use: ToolUse
    result: ToolResult | None
    call_message: Message
    result_message: Message | None = None
    depth: int = 0


def tool_calls(conversation: Conversation, *, subagents: bool = True) -> list[ToolCall]:
    """Every tool call paired with its result, in conversation order."""
    calls: list[ToolCall] = []
    pending: dict[str, ToolCall] = {}
    for depth, message in messages(conversation, subagents=subagents):
        for block in message.content:
            if isinstance(block, ToolUse):
                call = ToolCall(block, None, message, depth=depth)
                calls.append(call)
                pending[block.id] = call
            elif isinstance(block, ToolResult) and block.tool_use_id in pending:
                call = pending.pop(block.tool_use_id)
                call.result, call.result_message = block, message
    return calls
