"""Attach subagent conversations to the parent call that spawned them (docs/claude_code_reader.md#subagents).

Joins, strongest first:

- ``meta.toolUseId``: the sidecar names the parent's ``Agent`` tool_use;
- ``toolUseResult.agentId``: the parent's result names the child (status
  ``async_launched`` is a launch acknowledgement, ``forked`` a skill fork, ``completed``
  a synchronous return that is the result);
- ``journal``: a Workflow result's ``runId`` names a run folder whose ``journal.jsonl``
  ``started`` lines name its children;
- ``parentAgentId``: a nested child's sidecar names its parent agent (depth 2);
- ``sidechain.prompt``: Claude Code before 2.0.28 wrote a subagent's records into the main
  file (``isSidechain: true``), its chain starting at a user record with no parent that holds
  the Task call's ``prompt`` (:func:`attach_sidechains`).

The tool use may live in any file of the session (a nested child's call is in an agent
file), so every join searches the whole file set. Dangling ids, journal entries without
a transcript and children with no parent at all are states to record, not to assert:
each goes to the loss report, and a parentless child is kept with ``via="none"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from msgspec import UNSET

from ...model.common import Child
from ...model.common import ChildLink
from ...model.common import Conversation
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import Line
from ...model.native import decode_session
from .codec import CODEC
from .records import AgentMeta
from .records import JournalStarted
from .records import TextBlock
from .records import UserRecord
from .sidefiles import AgentFile
from .sidefiles import SessionFiles


@dataclass
class _Agent:
    file: AgentFile
    meta: AgentMeta | None
    conversation: Conversation
    reader: Any
    link: ChildLink | None = None
    parent: str | None = None  # agent id of the parent agent; None = the main conversation


def _journal_children(path: Path) -> list[str]:
    session = decode_session(path.read_bytes(), CODEC, "claude_code", path)
    return [r.agent_id for r in session if isinstance(r, JournalStarted) and isinstance(r.agent_id, str)]


def attach_children(
    main: Conversation,
    main_reader: Any,
    files: SessionFiles,
    loss: LossReport,
    read_file: Callable[..., tuple[Conversation, Any]],
) -> None:
    """``read_file`` is the reader's own (:func:`.read.read_file`), passed in so this module
    does not import the reader that imports it."""
    tool_results = main_reader.tool_results
    agents: dict[str, _Agent] = {}
    for f in files.agents:
        try:
            data = f.transcript.read_bytes()
        except OSError as exc:
            loss.add("subagent:unreadable", str(exc), file=str(f.transcript))
            continue
        session = decode_session(data, CODEC, "claude_code", f.transcript)
        conversation, reader = read_file(session, loss, file=str(f.transcript), tool_results=tool_results)
        agents[f.agent_id] = _Agent(f, f.meta(), conversation, reader)

    readers: list[tuple[str | None, Any]] = [(None, main_reader)] + [(a, x.reader) for a, x in agents.items()]

    def call_owner(tool_use_id: str) -> tuple[bool, str | None]:
        for agent_id, reader in readers:
            if tool_use_id in reader.owner:
                return True, agent_id
        return False, None

    # toolUseResult.agentId and Workflow runIds, from every file
    spawned: dict[str, tuple[str | None, Any]] = {}
    runs: dict[str, tuple[str | None, Any]] = {}
    for owner, reader in readers:
        for agent_id, spawn in reader.spawns.items():
            spawned.setdefault(agent_id, (owner, spawn))
            if agent_id not in agents:
                loss.add(
                    "subagent:dangling-agent-id",
                    f"toolUseResult.agentId {agent_id} has no transcript",
                    file=reader.file,
                    line=spawn.line,
                )
        for run_id, spawn in reader.runs.items():
            runs.setdefault(run_id, (owner, spawn))

    journal_of: dict[str, str] = {}  # agent id -> workflow folder
    for folder, path in files.journals.items():
        try:
            children = _journal_children(path)
        except OSError as exc:
            loss.add("subagent:unreadable", str(exc), file=str(path))
            continue
        for agent_id in children:
            journal_of.setdefault(agent_id, folder)
            if agent_id not in agents:
                # the journal leads the filesystem (docs/claude_code_reader.md#subagents): a live run, or a lost file
                loss.add(
                    "subagent:journal-without-transcript",
                    f"journal names {agent_id}, whose transcript is absent",
                    file=str(path),
                )

    for agent_id, agent in agents.items():
        meta = agent.meta
        parent_agent = meta.parent_agent_id if meta is not None and isinstance(meta.parent_agent_id, str) else None
        link: ChildLink | None = None
        parent: str | None = None
        if meta is not None and isinstance(meta.tool_use_id, str):
            found, owner = call_owner(meta.tool_use_id)
            link = ChildLink(via="meta.toolUseId", tool_use_id=meta.tool_use_id, agent_id=agent_id)
            parent = owner if found else parent_agent
            if not found:
                loss.add(
                    "subagent:dangling-tool-use-id",
                    f"meta.toolUseId {meta.tool_use_id} matches no tool call",
                    file=str(agent.file.meta_path),
                )
        if agent_id in spawned:
            owner, spawn = spawned[agent_id]
            if link is None:
                link = ChildLink(via="toolUseResult.agentId", tool_use_id=spawn.tool_use_id, agent_id=agent_id)
                parent = owner
            link.status = spawn.status if isinstance(spawn.status, str) else UNSET
        wf = agent.file.workflow or journal_of.get(agent_id)
        if link is None and wf is not None:
            run = runs.get(wf)
            link = ChildLink(via="journal" if agent_id in journal_of else "folder", agent_id=agent_id, workflow_run=wf)
            if run is not None:
                parent = run[0]
                link.tool_use_id = run[1].tool_use_id
                link.status = run[1].status if isinstance(run[1].status, str) else UNSET
            else:
                loss.add(
                    "subagent:workflow-run-unlaunched",
                    f"no Workflow result names run {wf}",
                    file=str(agent.file.transcript),
                )
        elif link is not None and wf is not None:
            link.workflow_run = wf
        if link is None and parent_agent is not None:
            link = ChildLink(via="parentAgentId", agent_id=agent_id)
            parent = parent_agent
        if link is None:
            link = ChildLink(via="none", agent_id=agent_id)
            loss.add("subagent:parentless", f"agent {agent_id} has no recorded parent", file=str(agent.file.transcript))
        if parent_agent is not None:
            link.parent_agent_id = parent_agent
            if parent is None:
                parent = parent_agent
        if parent is not None and parent not in agents:
            loss.add(
                "subagent:dangling-parent-agent",
                f"parentAgentId {parent} has no transcript; attached to the main conversation",
                file=str(agent.file.transcript),
            )
            parent = None
        agent.link = link
        agent.parent = parent

    # break any cycle in parent links: such a child attaches to the main conversation
    for agent_id, agent in agents.items():
        seen = {agent_id}
        p = agent.parent
        while p is not None:
            if p in seen:
                loss.add(
                    "subagent:parent-cycle", f"agent {agent_id}'s parent chain loops", file=str(agent.file.transcript)
                )
                agent.parent = None
                break
            seen.add(p)
            p = agents[p].parent

    for agent in agents.values():
        meta = agent.meta
        child = Child(
            link=agent.link,
            conversation=agent.conversation,
            agent_type=meta.agent_type if meta is not None and isinstance(meta.agent_type, str) else UNSET,
            description=meta.description if meta is not None and isinstance(meta.description, str) else UNSET,
            spawn_depth=meta.depth if meta is not None else 1,
        )
        target = main if agent.parent is None else agents[agent.parent].conversation
        target.children.append(child)

    for path in files.orphan_metas:
        loss.add("subagent:meta-without-transcript", "agent sidecar whose transcript is absent", file=str(path))


def _prompt(record: Any) -> str | None:
    """The text of a sidechain's first user record: the prompt its Task call sent."""
    content = record.message.content if isinstance(record, UserRecord) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.text for b in content if isinstance(b, TextBlock)]
        return "".join(texts) if texts else None
    return None


def attach_sidechains(
    main: Conversation, main_reader: Any, loss: LossReport, read_file: Callable[..., tuple[Conversation, Any]]
) -> None:
    """The sidechains the main reader set apart (``main_reader.sidechains``), each read as a
    child and joined to the Task (or Agent) call whose ``prompt`` its first record holds;
    calls with the same prompt are matched in order (docs/claude_code_reader.md#subagents)."""
    chains: list[list[tuple[int, Line]]] = []
    chain_of: dict[str, int] = {}  # record uuid -> its chain
    for n, line in main_reader.sidechains:
        rec = line.record
        parent = getattr(rec, "parent_uuid", None)
        index = chain_of.get(parent) if isinstance(parent, str) else None
        if index is None:
            index = len(chains)
            chains.append([])
        chains[index].append((n, line))
        uuid = getattr(rec, "uuid", None)
        if isinstance(uuid, str):
            chain_of[uuid] = index
    calls: dict[str, list[ToolUse]] = {}  # prompt -> the calls that sent it, in order
    for message in main.messages:
        for block in message.content:
            if type(block) is ToolUse and block.name in ("Task", "Agent") and isinstance(block.input, dict):
                prompt = block.input.get("prompt")
                if isinstance(prompt, str):
                    calls.setdefault(prompt, []).append(block)
    for chain in chains:
        first_line, first = chain[0]
        conversation, _ = read_file(
            main_reader.session,
            loss,
            file=main_reader.file,
            tool_results=main_reader.tool_results,
            numbered=chain,
        )
        agent_id = getattr(first.record, "agent_id", UNSET)
        link = ChildLink(via="sidechain.prompt", agent_id=agent_id if isinstance(agent_id, str) else UNSET)
        prompt = _prompt(first.record)
        matches = calls.get(prompt) if prompt is not None else None
        call = matches.pop(0) if matches else None
        if call is None:
            link.via = "none"
            loss.add(
                "subagent:parentless",
                "sidechain whose first record holds no Task call's prompt",
                file=main_reader.file,
                line=first_line,
            )
        else:
            link.tool_use_id = call.id
        task = call.input if call is not None else {}
        kind, description = task.get("subagent_type"), task.get("description")
        main.children.append(
            Child(
                link=link,
                conversation=conversation,
                agent_type=kind if isinstance(kind, str) else UNSET,
                description=description if isinstance(description, str) else UNSET,
            )
        )
