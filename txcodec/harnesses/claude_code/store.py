"""Finding Claude Code sessions in a store (docs/claude_code.md#discovery).

The root is ``$CLAUDE_CONFIG_DIR/projects`` when that variable is set and non-empty,
else ``~/.claude/projects``. Under it, one folder per project working directory (the cwd
with every UTF-16 unit outside ``[A-Za-z0-9]`` replaced by ``-``, a long one cut and hashed:
:func:`munge_cwd`).

Discovery is *session-first*: every project folder is scanned for entries whose name has
the shape of a session id (``<uuid>.jsonl`` files and ``<uuid>/`` folders), and the
entries are grouped by session id across folders, because Claude Code files a workflow's
script under whatever cwd the agent had at the time (docs/claude_code.md#discovery). Everything else
(``memory/``, stray files) is not a session. Ids are compared byte-exactly, never
case-folded (docs/claude_code.md#discovery). Directories behind symlinks are not
followed; a file that cannot be read is reported on its session, never fatal.

Listing needs only a few fields per session: :mod:`.scan` reads them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import msgspec

from ...core.zst import read_bytes
from ...kit.registry import Store
from .scan import Scan
from .scan import scan
from .scan import scan_data
from .sidefiles import AgentFile
from .sidefiles import SessionFiles
from .sidefiles import script_run_id
from .sidefiles import session_files

HARNESS = "claude_code"

# A session id is a UUID (the CLI finds a file only when it is named
# <uuid>.jsonl: docs/claude_code.md#discovery).
# Upper-case hex is allowed: ids are not reliably lower-case (docs/claude_code.md#discovery).
SESSION_ID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_MUNGE = re.compile(r"[^A-Za-z0-9]")


def default_root() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured) if configured else Path.home() / ".claude"
    return base / "projects"


# a name longer than this is cut and given the path's hash (docs/claude_code.md#discovery)
_MUNGED_MAX = 200
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def munge_cwd(cwd: str) -> str:
    """The project folder name for a working directory, as Claude Code 2.1.332 makes it
    (docs/claude_code.md#discovery): every UTF-16 unit outside ``[A-Za-z0-9]`` becomes ``-``
    (a character beyond U+FFFF gives two), and a name over 200 units is cut to 200 and
    given ``-`` and the path's string hash in base 36. Not reversible: distinct paths can
    collide, and the real cwd is known only from the records."""
    name = _MUNGE.sub(lambda m: "--" if ord(m.group()) > 0xFFFF else "-", cwd)
    if len(name) <= _MUNGED_MAX:
        return name
    return f"{name[:_MUNGED_MAX]}-{_base36(abs(_string_hash(cwd)))}"


def _string_hash(text: str) -> int:
    """JavaScript's ``h = (h << 5) - h + charCodeAt(i) | 0`` over the UTF-16 units: a signed 32-bit value."""
    units = text.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (h * 31 + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    digits = ""
    while True:
        n, r = divmod(n, 36)
        digits = _BASE36[r] + digits
        if not n:
            return digits


def is_session_id(name: str) -> bool:
    return SESSION_ID.fullmatch(name) is not None


# --- discovery -------------------------------------------------------------------------


@dataclass
class SessionInfo:
    """One session, gathered from every project folder that holds a piece of it.

    ``status``: ``ok``; ``metadata-only`` (the main file holds no user/assistant record);
    ``empty`` (a zero-line main file); ``unparsed`` (lines, but not one JSON record: a
    damaged file, still listed so that it can be found); ``pruned`` (the main transcript
    is gone, children survive: a normal state, docs/claude_code.md#discovery); ``unreadable`` (the main file
    could not be read).
    """

    session_id: str
    status: str
    path: Path | None  # the main transcript
    files: SessionFiles
    project_dirs: list[Path] = field(default_factory=list)  # the primary one first
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    title: str | None = None
    title_source: str | None = None
    started: str | None = None
    updated: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    workflow_scripts: dict[str, list[Path]] = field(default_factory=dict)  # run id -> scripts
    legacy_agents: list[Path] = field(default_factory=list)  # CC 2.0.x flat agent-*.jsonl
    copies: list[Path] = field(default_factory=list)  # the same id's main file elsewhere
    errors: list[str] = field(default_factory=list)

    harness: str = HARNESS

    @property
    def primary_dir(self) -> Path | None:
        return self.project_dirs[0] if self.project_dirs else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (paths as strings), for ``txcodec list --json``."""
        files = self.files
        text = lambda paths: [str(p) for p in paths]  # noqa: E731
        return {
            "harness": self.harness,
            "session_id": self.session_id,
            "status": self.status,
            "path": str(self.path) if self.path else None,
            "project_dirs": text(self.project_dirs),
            "cwd": self.cwd,
            "git_branch": self.git_branch,
            "version": self.version,
            "title": self.title,
            "title_source": self.title_source,
            "started": self.started,
            "updated": self.updated,
            "counts": self.counts,
            "subagents": [
                {
                    "agent_id": a.agent_id,
                    "path": str(a.transcript),
                    "meta": str(a.meta_path) if a.meta_path else None,
                    "workflow": a.workflow,
                }
                for a in files.agents
            ]
            + [
                {"agent_id": p.name[len("agent-") : -len(".jsonl")], "path": str(p), "meta": None, "workflow": None}
                for p in self.legacy_agents
            ],
            "journals": {wf: str(p) for wf, p in files.journals.items()},
            "workflow_runs": text(files.workflow_runs),
            "workflow_scripts": {run: text(paths) for run, paths in self.workflow_scripts.items()},
            "tool_results": text(files.tool_results),
            "orphan_meta": text(files.orphan_metas),
            "copies": text(self.copies),
            "errors": self.errors,
        }


class Sessions(list):
    """The sessions found, newest first, plus what could not be read at all (each a
    :class:`SessionInfo`; for :func:`discover_mains`, a :class:`MainFile`)."""

    def __init__(
        self, root: Path, items: list[SessionInfo] | list[MainFile] | None = None, errors: list[str] | None = None
    ):
        super().__init__(items or [])
        self.root = root
        self.errors: list[str] = errors or []


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def discover(root: str | os.PathLike[str] | None = None, describe: bool = True) -> Sessions:
    """Every session under ``root``; ``describe=False`` leaves out what reading each main
    file tells (status, cwd, title, times, counts) for a caller that wants only the files."""
    root = Path(root) if root is not None else default_root()
    mains: dict[str, list[Path]] = {}
    folders: dict[str, list[Path]] = {}
    flat_agents: list[Path] = []
    errors: list[str] = []
    failed = _list_projects(root, mains, folders, flat_agents, errors)
    if failed is not None:
        return Sessions(root, errors=[failed])
    sids = sorted(set(mains) | set(folders))
    sessions = [_gather(sid, mains.get(sid, []), folders.get(sid, []), describe) for sid in sids]
    found = {s.session_id: s for s in sessions if s is not None}
    if describe:  # a legacy agent file only adds to its parent's description
        _attach_flat_agents(flat_agents, found, errors)
    items = sorted(found.values(), key=lambda s: (s.updated or "", s.session_id), reverse=True)
    return Sessions(root, items, errors)


def _list_projects(root: Path, mains: dict, folders: dict, flat_agents: list, errors: list) -> str | None:
    """Sort the entries of every project folder under ``root`` into ``mains`` and
    ``folders`` (session id -> the project folders holding its file, its folder),
    ``flat_agents`` and ``errors``; the line saying why, when the root cannot be listed."""
    try:
        # the root itself may be a symlink (a store moved to another disk): it was named
        projects = sorted(root.iterdir()) if root.is_dir() else []
    except OSError as exc:
        return f"{root}: {exc.strerror or exc}"
    for project in projects:
        if not _real_dir(project):
            continue  # a stray file, or a symlinked folder (not followed)
        try:  # one scandir: an entry knows whether it is a file or a folder without a stat
            with os.scandir(project) as listing:
                entries = sorted(listing, key=_name)
        except OSError as exc:
            errors.append(f"{project}: {exc.strerror or exc}")
            continue
        for entry in entries:
            _sort_entry(project, entry, mains, folders, flat_agents, errors)
    return None


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _sort_entry(project: Path, entry: os.DirEntry, mains: dict, folders: dict, flat_agents: list, errors: list) -> None:
    name = entry.name
    if name.endswith(".jsonl"):
        stem = name[: -len(".jsonl")]
        if entry.is_file():  # a symlinked *file* still lists (docs/claude_code.md#discovery)
            if is_session_id(stem):
                mains.setdefault(stem, []).append(project)
            elif name.startswith("agent-"):
                flat_agents.append(project / name)
        elif is_session_id(stem):  # a dangling symlink, a FIFO, a folder: say so, read nothing
            what = (
                "a dangling symlink" if entry.is_symlink() and not os.path.exists(entry.path) else "not a regular file"
            )
            errors.append(f"{project / name}: {what}")
    elif is_session_id(name) and entry.is_dir(follow_symlinks=False):
        folders.setdefault(name, []).append(project)
    # anything else (memory/, notes, a folder not named like a session) is not a session


def _collected(files: SessionFiles) -> bool:
    return bool(
        files.main
        or files.agents
        or files.journals
        or files.workflow_runs
        or files.workflow_scripts
        or files.tool_results
        or files.orphan_metas
    )


def discover_files(root: str | os.PathLike[str] | None = None) -> Sessions:
    """The sessions :func:`discover` finds, without reading each main file."""
    return discover(root, describe=False)


class MainFile(msgspec.Struct):
    """A session's main transcript as :func:`discover_mains` lists it."""

    session_id: str
    path: str


def discover_mains(root: str | os.PathLike[str] | None = None) -> Sessions:
    """The sessions with a main transcript, in :func:`discover`'s order, each only its id
    and its file (in the first project folder that holds one, as :func:`discover` picks
    it), for the Parquet export: no file is read, no session folder listed (the export
    stamps those itself), so none of their errors is reported either. The paths are
    written as pathlib writes them, without a Path made for each (a store of thousands)."""
    root = Path(root) if root is not None else default_root()
    mains: dict[str, list[Path]] = {}
    errors: list[str] = []
    failed = _list_projects(root, mains, {}, [], errors)
    if failed is not None:
        return Sessions(root, errors=[failed])
    # with nothing read, discover orders the sessions by id alone, the largest first; a
    # project folder's path is already as pathlib writes it, and a name joined to it stays so
    items = [MainFile(sid, f"{dirs[0]}/{sid}.jsonl") for sid, dirs in sorted(mains.items(), reverse=True)]
    return Sessions(root, items, errors)


_NO_SIDES = {"subagents": 0, "workflow_agents": 0, "workflows": 0, "tool_results": 0}


def _gather(sid: str, main_dirs: list[Path], folder_dirs: list[Path], describe: bool = True) -> SessionInfo | None:
    if len(main_dirs) == 1 and not folder_dirs:  # most sessions: a main file alone, in one folder
        project = main_dirs[0]
        files = SessionFiles(sid, project / f"{sid}.jsonl", None)
        info = SessionInfo(sid, "ok", files.main, files, [project])
        info.counts = dict(_NO_SIDES)
        if describe:
            _describe(info)
        return info
    merged: SessionFiles | None = None
    dirs: list[Path] = []
    copies: list[Path] = []
    # the folder holding the main transcript is primary; then the others in name order
    ordered = main_dirs + [d for d in folder_dirs if d not in main_dirs]
    for project in ordered:
        if project in folder_dirs:
            part = session_files(project / f"{sid}.jsonl", sid)
        else:  # the listing found the transcript a file and no folder of side files beside it
            part = SessionFiles(sid, project / f"{sid}.jsonl", None)
        if not _collected(part):
            continue  # a folder counts only once it yields something we collect
        dirs.append(project)
        if merged is None:
            merged = part
            continue
        if part.main is not None:
            if merged.main is None:
                merged.main = part.main
            else:
                copies.append(part.main)
        merged.folder = merged.folder or part.folder
        merged.agents += part.agents
        for wf, journal in part.journals.items():
            merged.journals.setdefault(wf, journal)
        merged.workflow_runs += part.workflow_runs
        merged.workflow_scripts += part.workflow_scripts
        merged.tool_results += part.tool_results
        merged.orphan_metas += part.orphan_metas
        merged.errors += part.errors
    if merged is None:
        return None
    if merged.main is None:  # pruned: conversation data decides the primary folder
        dirs.sort(key=lambda d: not (d / sid / "subagents").is_dir())
    info = SessionInfo(sid, "ok", merged.main, merged, dirs, copies=copies, errors=list(merged.errors))
    for script in merged.workflow_scripts:
        run = script_run_id(script.name)
        if run is not None:
            info.workflow_scripts.setdefault(run, []).append(script)
    # the side files' counts come from their names: a listing that reads no file has them too
    # (a kept row of the session index takes its subagent count from them, sessions._cached_item)
    info.counts = _side_counts(merged)
    if describe:
        _describe(info)
    return info


def _side_counts(files: SessionFiles) -> dict[str, int]:
    return {
        "subagents": sum(1 for a in files.agents if a.workflow is None),
        "workflow_agents": sum(1 for a in files.agents if a.workflow is not None),
        "workflows": len({a.workflow for a in files.agents if a.workflow} | set(files.journals)),
        "tool_results": len(files.tool_results),
    }


def _describe(info: SessionInfo) -> None:
    files = info.files
    if files.main is not None:
        try:
            found = scan(files.main)
        except OSError as exc:
            unreadable(info, exc)
            return
    else:
        found = None
    described(info, found)


def unreadable(info: SessionInfo, exc: OSError) -> None:
    """``info`` said unreadable: its main file could not be read."""
    info.counts = _side_counts(info.files)
    info.status = "unreadable"
    info.errors.append(f"{info.files.main}: {exc.strerror or exc}")


def described(info: SessionInfo, found: Scan | None) -> None:
    """``info`` described from its main file's :class:`Scan` (None: it has none, pruned)."""
    info.counts = _side_counts(info.files)
    if found is not None:
        info.status = _status(found)
        info.counts.update(lines=found.lines, messages=found.messages, metadata=found.metadata, unparsed=found.unparsed)
    else:
        info.status = "pruned"
        found = _scan_first_child(info)
    if found is None:
        return
    info.cwd, info.git_branch, info.version = found.cwd, found.git_branch, found.version
    info.title, info.title_source = found.title
    info.started, info.updated = found.first_timestamp, found.last_timestamp


def describe_item(info: SessionInfo) -> SessionInfo:
    """A session :func:`discover_files` listed, described as :func:`discover` describes it
    (``list --limit`` reads only the files that can be among the newest)."""
    _describe(info)
    return info


def _status(found: Scan) -> str:
    if found.messages:
        return "ok"
    if found.metadata:
        return "metadata-only"
    return "unparsed" if found.lines else "empty"


def _scan_first_child(info: SessionInfo) -> Scan | None:
    """A pruned session's context (cwd, version, ...) from its first readable child."""
    for agent in info.files.agents:
        try:
            return scan(agent.transcript)
        except OSError as exc:
            info.errors.append(f"{agent.transcript}: {exc.strerror or exc}")
    return None


def _attach_flat_agents(paths: list[Path], found: dict[str, SessionInfo], errors: list[str]) -> None:
    """CC 2.0.x wrote ``agent-<id>.jsonl`` beside the sessions; the parent is named only
    by the records' ``sessionId``."""
    for path in paths:
        try:
            parent = scan(path).session_id
        except OSError as exc:
            errors.append(f"{path}: {exc.strerror or exc}")
            continue
        if parent is not None and parent in found:
            found[parent].legacy_agents.append(path)
            found[parent].counts["subagents"] += 1


def side_files(path: Path) -> dict[str, list[Path]]:
    """The side files that belong to the transcript at ``path``, for ``txcodec inspect``:
    for a main transcript its whole session folder, for a subagent its ``.meta.json``."""
    path = Path(path)
    name = path.name
    if name.startswith("agent-") and name.endswith(".jsonl"):
        meta = path.with_name(name[: -len(".jsonl")] + ".meta.json")
        out: dict[str, list[Path]] = {"meta": [meta] if meta.is_file() else []}
        journal = path.with_name("journal.jsonl")
        if path.parent.parent.name == "workflows" and journal.is_file():
            out["journal"] = [journal]
        return {k: v for k, v in out.items() if v}
    if not name.endswith(".jsonl"):
        return {}
    files = session_files(path)
    out = {
        "subagents": [a.transcript for a in files.agents if a.workflow is None],
        "subagent_meta": [a.meta_path for a in files.agents if a.meta_path is not None],
        "workflow_agents": [a.transcript for a in files.agents if a.workflow is not None],
        "journals": list(files.journals.values()),
        "workflow_runs": files.workflow_runs,
        "workflow_scripts": files.workflow_scripts,
        "tool_results": files.tool_results,
        "orphan_meta": files.orphan_metas,
    }
    return {k: v for k, v in out.items() if v}


__all__ = [
    "AgentFile",
    "Scan",
    "SessionInfo",
    "Sessions",
    "default_root",
    "discover",
    "is_session_id",
    "munge_cwd",
    "scan",
    "side_files",
]


def main_files(root: Path) -> list[Path]:
    """The main transcripts under ``root`` (``<project>/<session>.jsonl``), not reading any,
    in path order. Listed with ``os.scandir`` (the folder entries' types, no stat of each
    file) and sorted by (project, name), the order paths compare in, before they are made
    paths: 37,500 files in a few hundredths of a second."""
    found: list[tuple[str, str]] = []
    try:
        projects = [d for d in os.scandir(root) if d.is_dir()]
    except OSError:
        return []
    for project in projects:
        try:
            with os.scandir(project.path) as entries:
                found.extend((project.name, f.name) for f in entries if f.name.endswith(".jsonl") and f.is_file())
        except OSError:
            continue
    found.sort()
    folders = {project: root / project for project in {project for project, _ in found}}
    return [folders[project] / name for project, name in found]  # one join a file: pathlib's parse is the cost


def not_a_session(path: Path, folder: Path) -> bool:
    """A side file (a subagent's ``.meta.json``, a workflow's ``journal.jsonl``), or a
    subagent transcript (``<sid>/subagents/...``) whose main session is there to read it with."""
    if path.name.endswith(".meta.json") or path.name == "journal.jsonl":
        return True
    if "subagents" not in path.relative_to(folder).parts:
        return False
    i = len(path.parts) - 1 - path.parts[::-1].index("subagents")
    return (Path(*path.parts[: i - 1]) / (path.parts[i - 1] + ".jsonl")).exists()


def summarize(path: str | os.PathLike[str]) -> Any:
    """``list``'s details of the session at ``path`` read lean (:mod:`.details`), or None
    where only the full read can tell. The reader's modules are imported on first use."""
    from .details import summarize as lean

    return lean(path)


def describe_lean(info: SessionInfo) -> tuple[SessionInfo, Any]:
    """:func:`describe_item` and :func:`summarize` from one read of the main file, each line
    decoded once: the scan is taken from the records the details are read from
    (:func:`.details.summarize_scanning`). A session with no main file is described as before."""
    from .details import summarize_scanning

    main = info.files.main
    if main is None or main.suffix != ".jsonl":
        return describe_item(info), None
    try:
        data = read_bytes(main)
    except OSError as exc:
        unreadable(info, exc)
        return info, None
    found = Scan()
    details, whole = summarize_scanning(main, data, found)
    if not whole:
        found = scan_data(data)
    described(info, found)
    return info, details


STORE = Store(
    default_root=default_root,
    discover=discover,
    discover_files=discover_files,
    discover_mains=discover_mains,
    describe_item=describe_item,
    main_files=main_files,
    side_files=side_files,
    not_a_session=not_a_session,
    summarize=summarize,
    describe_lean=describe_lean,
)
