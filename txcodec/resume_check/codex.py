"""Run the real ``codex`` CLI offline against the mock Responses API.

Everything happens in a throw-away ``CODEX_HOME`` and ``HOME`` (docs/codex.md#how-the-real-client-is-driven): a
``config.toml`` names a loopback ``model_provider`` and turns off the features that would
reach the internet; stdin is ``/dev/null`` so ``codex exec`` does not wait for input.

:func:`check_resume` installs a rollout into such a home, runs ``codex exec resume <id>``
and reports the history the first model request carried. Codex exits 0 and quietly starts
a *new* session when it cannot use the file (a non-UUID id, ``--last`` from another cwd),
so "resumed" here means the request's ``input`` really holds the file's conversation.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import termios
import time
import uuid
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ..core.ids import check_id
from ..core.jsonl import split_lines
from ..core.zst import read_bytes
from .mock.responses import Item
from .mock.responses import handler
from .mock.responses import input_to_common
from .mock.responses import model_requests
from .mock.server import MockServer
from .mock.server import Request
from .process import MARKER
from .process import client_env
from .process import reap
from .process import reaped
from .process import recent
from .process import run_client
from .process import stop
from .process import version_of
from .report import ClientMissing as ClientMissing
from .report import ResumeReport
from .report import require_client
from .sandbox import TempFolders
from .sandbox import temp_root

MODEL = "gpt-5.1-codex"

CONFIG = """\
model = "{model}"
model_provider = "{provider}"
approval_policy = "never"
sandbox_mode = "danger-full-access"
{provider_table}[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
tool_suggest = false
skill_mcp_dependency_install = false
"""

# A custom provider on the mock. A rollout names its provider and 0.171 refuses to resume
# it under another one; the built-in ``openai`` cannot be redefined, so it is pointed at
# the mock with ``openai_base_url`` instead.
PROVIDER = """\
[model_providers.{provider}]
name = "{provider}"
base_url = "{url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


def codex_binary() -> Path:
    return require_client("codex")


def client_version(binary: Path | None = None) -> str:
    _, out, _ = version_of(binary or codex_binary(), timeout=30)
    return out.strip().replace("codex-cli ", "codex ") or "codex (unknown version)"


@dataclass
class Run:
    """One ``codex`` invocation: its exit code, output, the model requests it made, and
    the folders it ran in (still on disk until the :class:`Sandbox` is closed)."""

    exit_code: int
    stdout: str
    stderr: str
    requests: list[Request]
    home: Path
    cwd: Path

    def rollouts(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("rollout-*.jsonl"))

    @property
    def inputs(self) -> list[list[Any]]:
        return [r.json().get("input", []) for r in self.requests]


@dataclass
class Sandbox(TempFolders):
    """A throw-away CODEX_HOME + HOME + project folder; ``with Sandbox() as box: ...``."""

    root: Path = field(default_factory=lambda: temp_root("codex"))
    model: str = MODEL
    provider: str = "mock"  # a rollout names its provider; resume refuses another one
    config: str = ""  # more top-level config.toml lines (e.g. model_auto_compact_token_limit)
    features: str = ""  # more [features] lines (e.g. tool_search = true)
    tables: str = ""  # more config.toml tables, after the others (e.g. [mcp_servers.notes])

    @property
    def home(self) -> Path:  # CODEX_HOME; the HOME the client runs with is root/home
        return self.root / "codex_home"

    def folders(self) -> list[Path]:
        return [self.home, self.cwd, self.root / "home"]

    def run(self, args: list[str], script: list[list[Item]] | None = None, timeout: float = 60) -> Run:
        binary = codex_binary()
        with MockServer(handler(script or [])) as server:
            if self.provider == "openai":
                table = f'openai_base_url = "{server.url}/v1"\n'
            else:
                table = PROVIDER.format(provider=self.provider, url=server.url)
            (self.home / "config.toml").write_text(
                self.config
                + CONFIG.format(model=self.model, provider=self.provider, provider_table=table)
                + self.features
                + self.tables
            )
            env = client_env(
                self.root / "home",
                {
                    "CODEX_HOME": str(self.home),
                    "MOCK_API_KEY": "dummy",
                    "OPENAI_API_KEY": "dummy",
                    "RUST_LOG": "error",
                },
            )
            argv = [str(binary), "exec", "--skip-git-repo-check", "--json", *args]
            code, out, err = run_client(argv, self.cwd, env, timeout, "codex")
            return Run(code, out, err, model_requests(server), self.home, self.cwd)


_ANSI = re.compile(rb"\x1b\[[0-9;?>=$]*[A-Za-z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b[=>()][0-9A-Za-z]?")
_PICKER_DRAWN = re.compile(r"↑/↓ browse .*\d+ / \d+")  # the key help, then the first list drawn


def picker_screen(box: Sandbox, args: tuple[str, ...] = (), until: str | None = None, timeout: float = 20) -> str:
    """Everything ``codex resume`` (the interactive picker) drew in ``box``, as plain text
    (escape sequences dropped): until ``until`` shows up, or the screen has been quiet for
    two seconds after the list was drawn, or ``timeout``. The TUI needs a terminal: it
    runs on a pseudo-terminal and is killed afterwards. The TUI redraws only the cells
    that change, so look for words, not for whole lines."""
    binary = codex_binary()
    with MockServer(handler([])) as server:
        table = PROVIDER.format(provider=box.provider, url=server.url)
        (box.home / "config.toml").write_text(
            CONFIG.format(model=box.model, provider=box.provider, provider_table=table)
        )
        token = uuid.uuid4().hex  # marks every process the TUI starts, to reap them all
        recent.append(token)
        env = client_env(
            box.root / "home",
            {"CODEX_HOME": str(box.home), "MOCK_API_KEY": "dummy", "TERM": "xterm-256color", MARKER: token},
        )
        leader, follower = os.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        proc = subprocess.Popen(
            reaped([str(binary), "resume", *args], env),
            cwd=box.cwd,
            env=env,
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
        )
        os.close(follower)
        out, text = b"", ""
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                ready, _, _ = select.select([leader], [], [], 0.2)
                if not ready:
                    if _PICKER_DRAWN.search(text) and time.monotonic() - last > 2:
                        break
                    continue
                last = time.monotonic()
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if b"\x1b[6n" in chunk:  # the TUI asks where the cursor is before it draws
                    os.write(leader, b"\x1b[1;1R")
                out += chunk
                text = re.sub(r"\s+", " ", _ANSI.sub(b" ", out).decode("utf-8", "replace"))
                if until is not None and until in text:
                    break
        finally:
            if proc.poll() is None:
                stop(proc.pid)  # the subreaper ends the TUI and everything it started
            reap(token, proc.pid)  # the group and any daemon (codex app-server) that left it
            proc.kill()
            proc.wait()
            os.close(leader)
        return text


def install(home: Path, data: bytes, relpath: str) -> Path:
    from ..core.atomic import write_atomic

    return write_atomic(home / relpath, data)


def canonical_relpath(data: bytes) -> tuple[str, str]:
    """``(session id, path under CODEX_HOME)`` for a rollout: 0.171 resumes a file with
    ``ordinal`` lines only under its canonical ``rollout-<ts>-<id>.jsonl`` name."""
    from ..harnesses.codex.store import rollout_relpath
    from ..harnesses.codex.store import session_id_of
    from ..harnesses.codex.write import normalize_ts

    session_id = session_id_of(data) or ""
    if session_id:
        check_id(session_id, "session id")  # it names the rollout file installed
    first = split_lines(data[: 1 << 22])[0][:1]
    try:
        stamp = json.loads(first[0]).get("timestamp") if first else None
    except (ValueError, AttributeError):
        stamp = None
    return session_id, rollout_relpath(normalize_ts(stamp) or "2026-01-01T00:00:00.000Z", session_id or "unknown")


def resume(box: "Sandbox", data: bytes, prompt: str = "continue", timeout: float = 60) -> tuple[str, Run]:
    """Install ``data`` in ``box`` and run ``codex exec resume <id> <prompt>``."""
    session_id, relpath = canonical_relpath(data)
    box.provider = _provider_of(data) or box.provider
    install(box.home, data, relpath)
    return session_id, box.run(["resume", session_id, prompt], timeout=timeout)


def _provider_of(data: bytes) -> str | None:
    first = split_lines(data[: 1 << 22])[0][:1]
    try:
        payload = json.loads(first[0]).get("payload") if first else None
    except (ValueError, AttributeError):
        return None
    provider = payload.get("model_provider") if isinstance(payload, dict) else None
    return provider if isinstance(provider, str) and provider.replace("-", "").replace("_", "").isalnum() else None


def check_resume(path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 60, **_: Any) -> ResumeReport:
    """Install the rollout at ``path`` in a throw-away CODEX_HOME, run
    ``codex exec resume <id> <prompt>`` and report the history Codex sent."""

    data = read_bytes(Path(path))
    with Sandbox() as box:
        session_id, run = resume(box, data, prompt, timeout)  # refuses an unsafe id before it looks for codex
        binary = codex_binary()
        first = run.inputs[0] if run.inputs else []
        sent = input_to_common(history_items(first, prompt))
        rejected = []
        if run.exit_code == 0 and run.requests and not _carries_history(first, prompt):
            rejected.append("codex started a new session: the request input holds no history from the file")
        return ResumeReport(
            harness="codex",
            client=client_version(binary),
            session_id=session_id,
            exit_code=run.exit_code,
            requests=len(run.requests),
            sent=sent,
            rejected=rejected,
            stderr=run.stderr[-4000:],
        )


def _carries_history(items: list[Any], prompt: str) -> bool:
    """Whether ``input`` holds anything besides what a brand-new session sends: the
    preludes (developer / environment context) and the new prompt itself."""
    from ..harnesses.codex.prelude import prelude_kind

    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type", "message") != "message":
            return True
        texts = [p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict)]
        if item.get("role") in ("developer", "system"):
            continue
        if item.get("role") == "user" and all(prelude_kind(t) or t == prompt for t in texts):
            continue
        return True
    return False


def history_items(items: list[Any], prompt: str) -> list[Any]:
    """``input`` without what the resumed turn itself appended at the end: its developer
    and environment preludes and the new prompt."""
    from ..harnesses.codex.prelude import prelude_kind

    end = len(items)
    while end > 0:
        item = items[end - 1]
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            break
        texts = [p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict)]
        if item.get("role") == "developer" and end < len(items):
            end -= 1
            continue
        if item.get("role") == "user" and texts and all(prelude_kind(t) or t == prompt for t in texts):
            end -= 1
            continue
        break
    return items[:end]


_KEEP = {
    "message": ("role", "content"),
    "reasoning": ("summary", "encrypted_content"),
    "function_call": ("name", "arguments", "call_id"),
    "function_call_output": ("call_id", "output"),
    "custom_tool_call": ("name", "input", "call_id"),
    "custom_tool_call_output": ("call_id", "output"),
    "local_shell_call": ("call_id", "action"),
    "web_search_call": ("action",),
}


def normalize(items: list[Any]) -> list[Any]:
    """Request items reduced to what the model reads: ids, statuses, phases and
    annotations dropped; arguments parsed; consecutive text parts of a role kept."""
    out = []
    for item in items:
        if not isinstance(item, dict):
            out.append(item)
            continue
        kind = item.get("type", "message")
        keep = _KEEP.get(kind)
        if keep is None:
            out.append(item)
            continue
        value = {"type": kind, **{k: item.get(k) for k in keep}}
        if kind == "message":
            value["content"] = [
                {k: v for k, v in part.items() if k in ("type", "text", "image_url")}
                for part in item.get("content") or []
            ]
        if kind == "function_call" and isinstance(value["arguments"], str):
            try:
                value["arguments"] = json.loads(value["arguments"])
            except ValueError:
                pass
        out.append(value)
    return out


# --- comparing conversations ----------------------------------------------------------


def comparable(messages: list) -> list[tuple[str, list[tuple]]]:
    """Common messages reduced to what a Responses ``input`` carries, for comparing what
    codex sent on resume (``ResumeReport.sent``) with what a conversation meant.

    Harness context is left out: developer / system messages and the preludes codex
    injects (``<environment_context>``, AGENTS.md, ...), as the client adds its own on
    every turn; so are the synthetic results of provider-side web searches. Consecutive
    messages of one role are merged (the request has no message boundaries between
    items). Thinking is its summary text and encrypted content (a signature-only block
    has nothing Codex can hold); a tool result is its content without the error flag
    (Responses outputs have none), a text-only block list read as its texts joined by
    newlines, the way the writer joins them."""
    import msgspec

    from ..harnesses.codex.prelude import prelude_kind
    from ..harnesses.codex.write import command_text
    from ..model.common import Command
    from ..model.common import Image
    from ..model.common import RedactedThinking
    from ..model.common import Text
    from ..model.common import Thinking
    from ..model.common import ToolResult
    from ..model.common import ToolUse

    def image(block) -> tuple:
        if isinstance(block.data, str):
            return ("image", block.media_type if isinstance(block.media_type, str) else "image/png", block.data)
        return ("image_url", block.url if isinstance(block.url, str) else "")

    def block_view(block) -> list[tuple]:
        if isinstance(block, Text):
            return [("text", block.text)]
        if isinstance(block, Thinking):
            encrypted = block.encrypted if isinstance(block.encrypted, str) else None
            return [("reasoning", block.thinking, encrypted)] if block.thinking or encrypted else []
        if isinstance(block, RedactedThinking):  # written as encrypted reasoning
            return [("reasoning", "", block.data)]
        if isinstance(block, Image):
            return [image(block)]
        if isinstance(block, Command):
            return [("text", command_text(block))]
        if isinstance(block, ToolUse):
            return [("call", block.id, block.name, block.input)]
        if isinstance(block, ToolResult):
            content = block.content
            if not isinstance(content, str):
                if all(isinstance(b, Text) for b in content):
                    content = "\n".join(b.text for b in content)
                else:
                    content = [v for b in content for v in block_view(b)]
            return [("output", block.tool_use_id, content)]
        return [(block.__struct_config__.tag, msgspec.to_builtins(block))]

    def context(message) -> bool:
        if message.extra.get("codex_web_search"):
            return True
        return message.meta and message.extra.get("codex_role", message.extra.get("role")) in ("developer", "system")

    def prelude(message, block) -> bool:
        return message.role == "user" and isinstance(block, Text) and prelude_kind(block.text) is not None

    merged: list[tuple[str, list[tuple]]] = []
    for message in messages:
        if context(message):
            continue
        blocks = [v for b in message.content if not prelude(message, b) for v in block_view(b)]
        if not blocks:
            continue
        if merged and merged[-1][0] == message.role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((message.role, blocks))
    return merged
