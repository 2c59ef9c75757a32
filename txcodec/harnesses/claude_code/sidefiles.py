"""The side files of one Claude Code session, found from its main transcript's path.

Layout (docs/claude_code.md#side-files)::

    <project>/<sid>.jsonl                                     main transcript
    <project>/<sid>/subagents/agent-<id>.jsonl (+ .meta.json)   subagents
    <project>/<sid>/subagents/workflows/<wf>/agent-<id>.jsonl  workflow children
    <project>/<sid>/subagents/workflows/<wf>/journal.jsonl     which children a run has
    <project>/<sid>/workflows/wf_<run>.json                    workflow runs
    <project>/<sid>/workflows/scripts/<label>-wf_<run>.js      scripts (may live elsewhere)
    <project>/<sid>/tool-results/<id>.txt                      persisted tool output
    <project>/agent-<id>.jsonl                                 subagents of CC 2.0.30-2.0.77

Directories behind symlinks are not followed; a side file that is a symlink is followed
only when it leads to a file inside the session folder (else it is listed in
``SessionFiles.refused`` and never read: a transcript must not make us read, print or
convert any file it names). A folder that cannot be listed is noted in
``SessionFiles.errors`` and the rest is still found.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from dataclasses import field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from .records import AgentMeta


@functools.cache
def _meta_decoder() -> msgspec.json.Decoder:
    from .records import AgentMeta  # the record structs: only once a subagent's meta is read

    return msgspec.json.Decoder(AgentMeta)


@dataclass
class AgentFile:
    agent_id: str  # the part after "agent-"
    transcript: Path
    meta_path: Path | None = None
    workflow: str | None = None  # the workflow folder name for workflow children

    def meta(self) -> AgentMeta | None:
        """The ``.meta.json`` sidecar, or ``None`` when absent or unreadable."""
        if self.meta_path is None:
            return None
        try:
            return _meta_decoder().decode(self.meta_path.read_bytes())
        except (OSError, msgspec.MsgspecError):
            return None


@dataclass
class SessionFiles:
    session_id: str
    main: Path | None  # None when the main transcript was pruned
    folder: Path | None  # <project>/<sid>/ when it exists
    agents: list[AgentFile] = field(default_factory=list)
    journals: dict[str, Path] = field(default_factory=dict)  # workflow folder -> journal.jsonl
    workflow_runs: list[Path] = field(default_factory=list)
    workflow_scripts: list[Path] = field(default_factory=list)
    tool_results: list[Path] = field(default_factory=list)
    orphan_metas: list[Path] = field(default_factory=list)  # .meta.json without a transcript
    errors: list[str] = field(default_factory=list)  # folders that could not be listed
    refused: list[Path] = field(default_factory=list)  # symlinks leading out of the session folder


def _dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _entries(folder: Path, out: SessionFiles) -> list[Path]:
    """A folder's entries, sorted; ``[]`` when it is absent, a symlink, or cannot be listed
    (noted: ``glob()`` would hide that, and ``iterdir()`` would end the whole listing)."""
    if not _dir(folder):
        return []
    try:
        return sorted(folder.iterdir())
    except OSError as exc:
        out.errors.append(f"{folder}: {exc.strerror or exc}")
        return []


def _matching(entries: list[Path], pattern: str) -> list[Path]:
    """Regular files (or symlinks to one) whose name matches ``pattern``; dotfiles are
    left out, as ``glob()`` would."""
    return [p for p in entries if not p.name.startswith(".") and fnmatchcase(p.name, pattern) and p.is_file()]


def _files(folder: Path, pattern: str, out: SessionFiles) -> list[Path]:
    return _matching(_entries(folder, out), pattern)


def _agents(folder: Path, workflow: str | None, out: SessionFiles) -> None:
    entries = _files(folder, "agent-*", out)
    transcripts = {p.name[len("agent-") : -len(".jsonl")]: p for p in entries if p.name.endswith(".jsonl")}
    metas = {p.name[len("agent-") : -len(".meta.json")]: p for p in entries if p.name.endswith(".meta.json")}
    for agent_id, path in transcripts.items():
        out.agents.append(AgentFile(agent_id, path, metas.get(agent_id), workflow))
    out.orphan_metas.extend(p for a, p in metas.items() if a not in transcripts)


def session_files(main: Path, session_id: str | None = None) -> SessionFiles:
    """Everything that belongs to the session whose main transcript is (or was) ``main``."""
    sid = session_id or main.name.removesuffix(".jsonl")
    folder = main.parent / sid
    out = SessionFiles(sid, main if main.is_file() else None, folder if _dir(folder) else None)
    if out.folder is None:
        return out
    subagents = folder / "subagents"
    _agents(subagents, None, out)
    for wf in (p for p in _entries(subagents / "workflows", out) if _dir(p)):
        _agents(wf, wf.name, out)
        journal = wf / "journal.jsonl"
        if journal.is_file():
            out.journals[wf.name] = journal
    out.workflow_runs = _files(folder / "workflows", "wf_*.json", out)
    out.workflow_scripts = _files(folder / "workflows" / "scripts", "*.js", out)
    results = _entries(folder / "tool-results", out)
    subdirs = [d for d in results if _dir(d)]  # pdf-<uuid>/<n>.jpg
    out.tool_results = _matching(results, "*") + [p for d in subdirs for p in _files(d, "*", out)]
    _refuse_outside(out)
    return out


def add_flat_agents(main: Path, agent_ids: list[str], out: SessionFiles) -> list[Path]:
    """Claude Code 2.0.30-2.0.77 wrote a subagent to ``agent-<id>.jsonl`` beside the main
    file, named by the Task result's ``agentId`` (docs/claude_code.md#side-files): each such
    id without a transcript of its own is looked for there. An id that cannot name a file is
    not looked for; the symlinks out of the project folder found are returned, not read."""
    from ...core.ids import inside
    from ...core.ids import is_safe_id

    known = {a.agent_id for a in out.agents}
    refused = []
    for agent_id in agent_ids:
        if agent_id in known or not is_safe_id(agent_id):
            continue
        path = main.parent / f"agent-{agent_id}.jsonl"
        if not path.is_file():
            continue
        if path.is_symlink() and not inside(main.parent, path):
            refused.append(path)
            continue
        out.agents.append(AgentFile(agent_id, path))
        known.add(agent_id)
    return refused


def _refuse_outside(out: SessionFiles) -> None:
    """Drop every side file that is a symlink out of the session folder (into ``refused``)."""
    from ...core.ids import inside  # here: ids imports hashlib, no cost a usage run should pay

    assert out.folder is not None
    kept = lambda path: not path.is_symlink() or inside(out.folder, path)  # noqa: E731

    def keep(paths: list[Path]) -> list[Path]:
        out.refused.extend(p for p in paths if not kept(p))
        return [p for p in paths if kept(p)]

    agents = []
    for agent in out.agents:
        if not kept(agent.transcript):
            out.refused.append(agent.transcript)
            if agent.meta_path is not None:
                out.orphan_metas.append(agent.meta_path)
            continue
        if agent.meta_path is not None and not kept(agent.meta_path):
            out.refused.append(agent.meta_path)
            agent.meta_path = None
        agents.append(agent)
    out.agents = agents
    for wf, journal in list(out.journals.items()):
        if not kept(journal):
            out.refused.append(journal)
            del out.journals[wf]
    out.workflow_runs = keep(out.workflow_runs)
    out.workflow_scripts = keep(out.workflow_scripts)
    out.tool_results = keep(out.tool_results)
    out.orphan_metas = keep(out.orphan_metas)


def script_run_id(name: str) -> str | None:
    """``<label>-wf_<run-id>.js`` -> ``wf_<run-id>``, split on the *last* ``-wf_``: a run
    id itself contains hyphens (docs/claude_code.md#side-files)."""
    stem = name.removesuffix(".js")
    label, sep, run = stem.rpartition("-wf_")
    return f"wf_{run}" if sep and label else None
