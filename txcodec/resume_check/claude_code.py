"""Run the real ``claude`` CLI offline against the mock Anthropic API, and check that a
session file resumes.

The environment follows docs/claude_code.md#how-the-real-client-is-driven: a throw-away ``HOME`` (the store is
``$HOME/.claude/projects``; ``CLAUDE_CONFIG_DIR`` is never inherited from the caller, so a
user's setting cannot send the run to their real store), ``ANTHROPIC_BASE_URL`` at the
loopback mock, a dummy key, the ``DISABLE_*`` switches, and ``IS_SANDBOX=1`` so
``--dangerously-skip-permissions`` works as root. ``CLAUDE_CODE_MAX_RETRIES=0`` keeps a
rejected request from being retried (each retry backs off for seconds).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.ids import inside
from ..core.ids import is_uuid
from ..core.zst import read_bytes
from ..harnesses.claude_code.store import munge_cwd as munge_cwd
from .mock.anthropic import AnthropicMock
from .mock.anthropic import request_messages
from .mock.server import MockServer
from .process import client_env
from .process import run_client
from .process import version_of
from .report import ClientMissing as ClientMissing
from .report import ResumeReport
from .report import find_client
from .report import require_client

RESUME_PROMPT = "continue"


def claude_binary() -> Path:
    # this module's find_client, looked up per call: tests replace it to play "not installed"
    return require_client("claude", None, find_client)


@functools.lru_cache(maxsize=4)
def client_version(binary: Path | None = None) -> str:
    code, out, _ = version_of(binary or claude_binary(), timeout=30)
    return out.strip().split(" ")[0] if code == 0 and out.strip() else "unknown"


def claude_env(home: Path, server: MockServer) -> dict[str, str]:
    return client_env(
        home,
        {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "dummy",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "IS_SANDBOX": "1",
        },
    )


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str


def run_claude(
    args: list[str], cwd: Path, home: Path, server: MockServer, timeout: float = 60, env: dict[str, str] | None = None
) -> Run:
    """``claude ARGS`` in ``cwd`` with a throw-away ``home``; a timeout is exit code 124.
    ``env`` is laid over :func:`claude_env` (a ``None`` value removes a variable)."""
    cmd = [str(claude_binary()), *args, "--dangerously-skip-permissions"]
    full_env = claude_env(home, server)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    code, out, err = run_client(cmd, cwd, full_env, timeout, "claude")
    return Run(124 if code == -9 else code, out, err)


def place_session(path: Path, home: Path, cwd: Path, session_id: str) -> Path:
    """Copy a session file (and its ``<id>/`` side folder) into ``home``'s store, under
    the project folder of ``cwd``, named ``<session_id>.jsonl``."""
    project = home / ".claude" / "projects" / munge_cwd(str(cwd))
    project.mkdir(parents=True, exist_ok=True)
    target = project / f"{session_id}.jsonl"
    target.write_bytes(read_bytes(path))
    side = path.parent / (path.name.removesuffix(".zst").removesuffix(".jsonl"))
    if side.is_dir() and not side.is_symlink():
        # a symlink out of the side folder is not copied: the client would read its target
        def outside(folder: str, names: list[str]) -> list[str]:
            return [
                n
                for n in names
                if os.path.islink(os.path.join(folder, n)) and not inside(side, os.path.join(folder, n))
            ]

        shutil.copytree(side, project / session_id, symlinks=False, ignore=outside, dirs_exist_ok=True)
    return target


def session_id_for(path: Path) -> str:
    """The id Claude Code will look the file up by: its stem when that is a UUID, else
    the first ``sessionId`` inside."""
    stem = path.name.removesuffix(".zst").removesuffix(".jsonl")
    if is_uuid(stem):
        return stem
    import json

    for line in read_bytes(path).splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("sessionId"), str) and is_uuid(value["sessionId"]):
            return value["sessionId"]
    raise InputError(f"{path}: no session id (neither the file name nor a sessionId is a UUID)")


def check_resume(
    path: str | os.PathLike[str],
    cwd: str | None = None,
    *,
    strict: bool = True,
    timeout: float = 60,
    prompt: str = RESUME_PROMPT,
    keep: Path | None = None,
) -> ResumeReport:
    """Resume ``path`` with the real ``claude -p --resume <id> PROMPT`` against a strict
    mock and report the conversation it sent (first request, in Common, the trailing
    prompt included), the exit code and what the mock rejected.

    The file (and its side folder) is copied into a throw-away store; the original is
    never touched. The project folder is made from ``cwd`` (default: a throw-away
    folder), since Claude Code only finds a session under its cwd's project folder.
    """
    path = Path(path)
    binary = claude_binary()
    session_id = session_id_for(path)
    with tempfile.TemporaryDirectory(prefix="txcodec-claude-") as tmp:
        root = Path(keep) if keep else Path(tmp)
        home = root / "home"
        home.mkdir(parents=True, exist_ok=True)
        work = Path(cwd) if cwd else root / "work"
        work.mkdir(parents=True, exist_ok=True)
        place_session(path, home, work.resolve(), session_id)
        mock = AnthropicMock(strict=strict)
        with MockServer(mock) as server:
            run = run_claude(["-p", "--resume", session_id, prompt], work, home, server, timeout)
            bodies = [
                r.json() for r in server.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"
            ]
    sent = request_messages(bodies[0]) if bodies else []
    return ResumeReport(
        harness="claude_code",
        client=f"claude {client_version(binary)}",
        session_id=session_id,
        exit_code=run.exit_code,
        requests=len(bodies),
        sent=sent,
        rejected=list(mock.rejected),
        # a client crash is reported on stdout (the -p result's "errors"), not stderr
        stderr=(run.stderr if run.stderr.strip() or run.exit_code == 0 else run.stdout)[-4000:],
    )


# --- comparing conversations ----------------------------------------------------------

_NO_RESPONSE = "No response requested."


def comparable(
    messages: list, prompt: str | None = RESUME_PROMPT, *, caveats: bool = False
) -> list[tuple[str, list[tuple]]]:
    """A conversation reduced to what the request carries, for comparing what Claude
    Code sent with what a file meant: consecutive same-role messages merged (the API and
    the client both merge them), the client's own ``<system-reminder>`` texts (and the
    recorded Context blocks it renders into them or into ``system`` entries) and
    thinking blocks left out (2.1.332 sends no thinking from earlier turns), the trailing
    resume ``prompt`` and the "No response requested." filler the client puts before it
    removed, and one trailing newline of a text ignored (the client adds one when it
    merges consecutive user turns); command envelopes compare by their elements, without
    layout or terminal colours; the local-command caveat is left out unless ``caveats``
    (its wording changed between versions: the client sends what the file holds). Blocks
    become plain tuples (role, [(type, ...)])."""
    import msgspec

    from ..harnesses.claude_code.envelopes import parse_envelope
    from ..harnesses.claude_code.envelopes import render_command
    from ..harnesses.claude_code.envelopes import render_output
    from ..harnesses.claude_code.envelopes import strip_ansi
    from ..model.common import Command
    from ..model.common import Context
    from ..model.common import Text
    from ..model.common import Thinking
    from ..model.common import ToolResult
    from ..model.common import ToolUse

    def block_view(block) -> list[tuple]:
        if isinstance(block, Thinking):
            return []
        if isinstance(block, Text):
            if block.text.startswith("<system-reminder>"):
                return []
            envelope = parse_envelope(block.text)
            if (
                envelope is not None and envelope.is_caveat_only
            ):  # fixed boilerplate (docs/claude_code.md#slash-commands)
                return [("caveat", block.text.strip())] if caveats else []
            if envelope is not None:  # layout and terminal colours are not content
                elements = {k: strip_ansi(v) for k, v in envelope.elements.items()}
                if elements.get("command-args") == "":  # written empty or left out
                    del elements["command-args"]
                return [("envelope", elements)]
            # merging consecutive user turns, the client ends each but the last text
            # with a newline: one trailing newline is not a difference
            return [("text", block.text.removesuffix("\n"))]
        if isinstance(block, ToolUse):
            value = block.input if isinstance(block.input, dict) else {"input": block.input}
            return [("tool_use", block.id, block.name, value)]
        if isinstance(block, ToolResult):
            content = block.content
            if not isinstance(content, str):
                content = [v for part in content for v in block_view(part)]
            return [("tool_result", block.tool_use_id, content, bool(block.is_error))]
        if isinstance(block, Context):
            if block.source != "claude_code" and isinstance(block.text, str) and block.text:
                # another client's context reaches Claude Code as user text in place
                # (docs/mapping.md#context)
                return block_view(Text(block.text))
            # an attachment record: the client renders it itself, in its own words, as a
            # reminder or a system entry; compared by the same-context check, not here
            return []
        if isinstance(block, Command):
            texts = [render_command(block.name, message=block.message or None, args=block.args or None)]
            if isinstance(block.output, str):
                texts.append(render_output(block.output))
            return [v for t in texts for v in block_view(Text(t))]
        return [(block.__struct_config__.tag, msgspec.to_builtins(block))]

    merged: list[tuple[str, list[tuple]]] = []
    for message in messages:
        blocks = [v for b in message.content for v in block_view(b)]
        if merged and merged[-1][0] == message.role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((message.role, blocks))
    if prompt is not None and merged and merged[-1][0] == "user" and merged[-1][1][-1:] == [("text", prompt)]:
        merged[-1][1].pop()
        if not merged[-1][1]:
            merged.pop()
            if merged and merged[-1] == ("assistant", [("text", _NO_RESPONSE)]):
                merged.pop()
    return [m for m in merged if m[1]]
