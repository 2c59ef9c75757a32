"""Run the real Factory ``droid`` CLI offline against the mock Chat Completions API.

docs/droid.md#how-the-real-client-is-driven (0.225.2; the npm ``@factory/cli`` 0.225.1 wrapper points at a binary the
registry lacks, so ``@factory/cli-linux-x64`` 0.225.2 is installed and its
``bin/droid`` run directly): a BYOK custom model in ``~/.factory/settings.json``
(``customModels[{model, baseUrl, apiKey, provider: "generic-chat-completion-api"}]``),
``droid exec -m custom:mock-model --auto high -o json PROMPT``; Factory's own API, app,
relay, WorkOS, downloads and telemetry URLs are pointed at a dead loopback port (one DNS
lookup of an OpenTelemetry collector is left; it does not block). Offline, only ``exec
--fork <id>`` resumes: it continues the session under a new id and sends its history
(``-s <id>`` fetches the session from Factory's API and fails).

:func:`check_resume` installs a session under the sandbox project's folder, runs
``droid exec --fork <id> continue`` and reports the history of the first model request. A
request that carries nothing but the new prompt counts as not resumed (what the fork does,
exit 0, when ``session_start`` has no ``owner``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.ids import check_id
from ..core.zst import read_bytes
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .chat_cli import resume_report
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .process import version_of
from .report import ResumeReport
from .report import find_client
from .report import require_client

__all__ = ["ClientMissing", "Droid", "check_resume", "client_version", "droid_binary"]

DEAD = "http://127.0.0.1:9"
_URLS = (
    "FACTORY_API_BASE_URL",
    "FACTORY_APP_BASE_URL",
    "FACTORY_RELAY_BASE_URL",
    "FACTORY_WORKOS_BASE_URL",
    "FACTORY_PUBLIC_DOWNLOADS_BASE_URL",
    "FACTORY_TELEMETRY_INGEST_BASE_URL",
)


def _find(name: str) -> Path | None:
    """``droid`` on the usual paths, else the platform package's own binary in a clients folder."""
    found = find_client(name)
    if found is not None:
        return found
    folders = [Path(os.environ["TXCODEC_CLIENTS"])] if os.environ.get("TXCODEC_CLIENTS") else []
    folders.append(Path(__file__).resolve().parents[2] / "clients")
    for folder in folders:
        candidate = folder / "node_modules" / "@factory" / "cli-linux-x64" / "bin" / "droid"
        if candidate.exists():
            return candidate
    return None


def droid_binary() -> Path:
    return require_client(
        "droid",
        ": npm install --prefix clients @factory/cli-linux-x64 (the binary is "
        "node_modules/@factory/cli-linux-x64/bin/droid), or put droid on PATH",
        _find,
    )


def client_version(path: Path | None = None) -> str:
    code, out, err = version_of(path or droid_binary())
    return f"droid {(out.strip().splitlines() or ['(unknown version)'])[-1]}"


def environment() -> dict[str, str]:
    env = {name: DEAD for name in _URLS}
    env.update(
        FACTORY_DISABLE_DYNAMIC_CONFIG="1", FACTORY_DROID_AUTO_UPDATE_ENABLED="false", FACTORY_DISABLE_KEYRING="1"
    )
    return env


class Droid(Sandbox):
    NAME, STORE = "droid", ".factory"

    def exec(
        self, prompt: str, script: list[Reply] | None = None, *, fork: str | None = None, timeout: float = 120
    ) -> Run:
        argv = [str(droid_binary()), "exec", "-m", f"custom:{MODEL}", "--auto", "high", "-o", "json"]
        if fork:
            argv += ["--fork", fork]
        argv.append(prompt)

        def prepare(url: str) -> None:
            settings = {
                "customModels": [
                    {
                        "model": MODEL,
                        "displayName": "Mock",
                        "baseUrl": f"{url}/v1",
                        "apiKey": "dummy",
                        "provider": "generic-chat-completion-api",
                        "maxOutputTokens": 8192,
                    }
                ]
            }
            write_atomic(self.store / "settings.json", json.dumps(settings).encode(), overwrite=True)

        return self.run(argv, script, lambda url: environment(), prepare, timeout)

    def sessions(self) -> list[Path]:
        from ..harnesses.droid.store import session_files

        return session_files(self.store)


def with_cwd(data: bytes, cwd: str) -> bytes:
    """The session with its ``session_start`` pointed at ``cwd`` (droid finds sessions by
    their project folder); other lines keep their bytes."""
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        try:
            value = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") == "session_start":
            value["cwd"] = cwd
            lines[i] = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
            break
    return b"\n".join(lines)


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 120, **_: Any
) -> ResumeReport:
    from ..harnesses.droid.store import session_relpath

    path = Path(path)
    data = read_bytes(path)
    # the file name names the file installed and is the --fork argument
    session_id = check_id(path.name.removesuffix(".zst").removesuffix(".jsonl"), f"{path}: session id")
    exe = droid_binary()
    with Droid() as box:
        write_atomic(box.store / session_relpath(session_id, str(box.cwd)), with_cwd(data, str(box.cwd)))
        run = box.exec(prompt, fork=session_id, timeout=timeout)
        # the <system-reminder> context is made afresh by every run: not history from the file
        sent = run.history(prompt, lambda t: t.text.startswith("<system-reminder>"))
        return resume_report("droid", client_version(exe), session_id, run, sent, "droid")
