"""Genuine stream-json captures: the real ``claude -p --output-format stream-json
--verbose`` (2.1.332) run offline against the scripted mock Messages API.

Used by the real-client tests (each run keeps the capture, the stdin side and the
session file the CLI wrote) and to (re)generate ``golden/stream_json/<case>/``:

    python tests/support/stream_json_scenarios.py [NAME ...]   # rewrites the golden captures
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from txcodec.resume_check.claude_code import claude_binary  # noqa: E402
from txcodec.resume_check.claude_code import claude_env  # noqa: E402
from txcodec.resume_check.claude_code import munge_cwd  # noqa: E402
from txcodec.resume_check.mock.anthropic import AnthropicMock  # noqa: E402
from txcodec.resume_check.mock.anthropic import Reply  # noqa: E402
from txcodec.resume_check.mock.anthropic import error  # noqa: E402
from txcodec.resume_check.mock.anthropic import text  # noqa: E402
from txcodec.resume_check.mock.anthropic import thinking  # noqa: E402
from txcodec.resume_check.mock.anthropic import tool_use  # noqa: E402
from txcodec.resume_check.mock.anthropic import tool_uses  # noqa: E402
from txcodec.resume_check.mock.server import MockServer  # noqa: E402
from txcodec.resume_check.process import run_bytes  # noqa: E402

OUTPUT = ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
STREAM_INPUT = ["--input-format", "stream-json", "--replay-user-messages"]
TIMEOUT = 60


@dataclass
class Invocation:
    """One ``claude -p`` process: its prompts (argv when ``stdin`` is False, else one
    stream-json ``user`` line each, after the ``control`` lines) and extra flags."""

    prompts: list[str]
    flags: list[str] = field(default_factory=list)
    stdin: bool = False
    control: list[dict] = field(default_factory=list)  # stdin lines sent before the prompts
    resume: bool = False  # --resume the session of the previous invocation
    interrupt: bool = False  # send a control_request interrupt once a tool call is printed
    # an SDK host that allows every can_use_tool request (--permission-prompt-tool stdio), run
    # without --dangerously-skip-permissions (which would override --permission-mode)
    approve: bool = False


@dataclass
class Scenario:
    name: str
    script: list[Reply]
    invocations: list[Invocation]
    about: str = ""
    routes: dict[str, list[Reply]] = field(default_factory=dict)  # see AnthropicMock.routes
    project: str = "project"  # the work folder's path below the run's folder (may hold non-ASCII)

    @property
    def prompts(self) -> list[str]:
        return [p for inv in self.invocations for p in inv.prompts]


@dataclass
class Capture:
    stdout: bytes  # every invocation's stdout, concatenated
    stdin: bytes  # the stream-json input lines that were sent (empty when none)
    session: Path  # the session file the CLI wrote
    session_id: str
    cwd: Path
    exit_codes: list[int]
    stderr: str


SCENARIOS = {
    s.name: s
    for s in [
        Scenario(
            "parallel_tools",
            [
                tool_uses(
                    ("toolu_par_1", "Bash", {"command": "echo one"}),
                    ("toolu_par_2", "Bash", {"command": "echo two"}),
                    say="Running both.",
                ),
                text("Both printed."),
            ],
            [Invocation(["run two commands"], ["--include-partial-messages"])],
            "prompt as argument (not in the capture); parallel tool calls; partial messages",
        ),
        Scenario(
            "subagent",
            [
                tool_use(
                    "Agent",
                    {
                        "description": "count files",
                        "prompt": "Count the files here",
                        "subagent_type": "general-purpose",
                        "run_in_background": False,
                    },
                    "toolu_agent_1",
                    say="Delegating.",
                ),
                tool_use("Bash", {"command": "echo sub"}, "toolu_sub_1", say="sub: checking"),
                text("sub: there are 0 files"),
                text("The agent found 0 files."),
            ],
            [Invocation(["delegate the count"], STREAM_INPUT, stdin=True)],
            "a foreground subagent; prompt on stdin and replayed",
        ),
        Scenario(
            "error",
            [
                tool_use("Bash", {"command": "exit 3"}, "toolu_err_1", say="Trying."),
                # after a 400 the CLI tries again in other shapes (observed: 6 more requests)
                *[error(400, "mock says no", "invalid_request_error") for _ in range(8)],
            ],
            [Invocation(["fail please"])],
            "a failing tool, then an API error (the CLI writes a synthetic assistant message)",
        ),
        Scenario(
            "two_runs",
            [
                tool_use("Bash", {"command": "echo first"}, "toolu_run_1"),
                text("First done."),
                text("Second done."),
            ],
            [Invocation(["first prompt"]), Invocation(["second prompt"], resume=True)],
            "two claude -p processes (the second with --resume), stdout concatenated",
        ),
        Scenario(
            "sdk_host",
            [thinking("the user greets me", then="Hello back.")],
            [
                Invocation(
                    ["hello there"],
                    ["--input-format", "stream-json", "--include-partial-messages"],
                    stdin=True,
                    control=[
                        {
                            "type": "control_request",
                            "request_id": "req_init_1",
                            "request": {"subtype": "initialize", "hooks": None},
                        }
                    ],
                )
            ],
            "an SDK host: control_request initialize then the prompt on stdin, no replay; partial messages with "
            "thinking (the capture starts with a control_response, the result line does not start with type)",
        ),
    ]
}


def run(scenario: Scenario, workdir: Path) -> Capture:
    """Run the scenario in ``workdir`` (a throw-away HOME and project folder)."""
    home, cwd = workdir / "home", workdir / scenario.project
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    mock = AnthropicMock(list(scenario.script), strict=False, routes={k: list(v) for k, v in scenario.routes.items()})
    stdout, stdin, codes, stderr = b"", b"", [], ""
    session_id = None
    with MockServer(mock) as server:
        for inv in scenario.invocations:
            args = [str(claude_binary()), *OUTPUT, *inv.flags]
            if inv.approve:
                args = [a for a in args if a != "--dangerously-skip-permissions"]
                args += ["--permission-prompt-tool", "stdio"]
            if inv.resume:
                args += ["--resume", session_id]
            feed = None
            if inv.stdin:
                feed = b"".join(
                    json.dumps(line).encode() + b"\n"
                    for line in inv.control
                    + [
                        {
                            "type": "user",
                            "message": {"role": "user", "content": p},
                            "parent_tool_use_id": None,
                            "session_id": "",
                        }
                        for p in inv.prompts
                    ]
                )
                stdin += feed
            else:
                args += inv.prompts
            if inv.interrupt:
                code, out, err = _interrupted(args, cwd, claude_env(home, server), feed or b"")
                stdin += INTERRUPT
            elif inv.approve:
                code, out, err, answers = _hosted(args, cwd, claude_env(home, server), feed or b"")
                stdin += answers
            else:
                code, out, err = run_bytes(args, cwd, claude_env(home, server), TIMEOUT, "claude", input=feed)
            stdout += out
            codes.append(code)
            stderr += err.decode("utf-8", "replace")
            for line in out.splitlines():
                value = json.loads(line)
                if value.get("type") == "system" and value.get("subtype") == "init":
                    session_id = value["session_id"]
    if session_id is None:
        raise RuntimeError(f"{scenario.name}: claude printed no init line (exit {codes}): {stderr[-2000:]}")
    session = home / ".claude" / "projects" / munge_cwd(str(cwd.resolve())) / f"{session_id}.jsonl"
    return Capture(stdout, stdin, session, session_id, cwd.resolve(), codes, stderr)


INTERRUPT = (
    json.dumps(
        {"type": "control_request", "request_id": "req_interrupt_1", "request": {"subtype": "interrupt"}}
    ).encode()
    + b"\n"
)


def _interrupted(args: list[str], cwd: Path, env: dict[str, str], feed: bytes) -> tuple[int, bytes, bytes]:
    """Run claude with ``feed`` on stdin and, as soon as it prints an assistant tool call
    (the tool is then running), send an interrupt the way an SDK host does."""
    import subprocess
    import uuid

    from txcodec.resume_check.process import MARKER
    from txcodec.resume_check.process import reap
    from txcodec.resume_check.process import reaped
    from txcodec.resume_check.process import recent
    from txcodec.resume_check.process import stop

    token = uuid.uuid4().hex
    recent.append(token)
    proc = subprocess.Popen(
        reaped(args, env),
        cwd=cwd,
        env={**env, MARKER: token},
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(feed)
        proc.stdin.flush()
        out = b""
        for line in proc.stdout:
            out += line
            if b'"type":"tool_use"' in line.replace(b" ", b"") and b'"type":"assistant"' in line.replace(b" ", b""):
                proc.stdin.write(INTERRUPT)
                break
        rest, err = proc.communicate(b"", timeout=TIMEOUT)
        return proc.returncode, out + rest, err
    finally:
        if proc.poll() is None:
            stop(proc.pid)
        reap(token, proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _allow(line: bytes) -> bytes:
    """The host's answer to a ``can_use_tool`` control request: allow, input unchanged."""
    request = json.loads(line)
    response = {"behavior": "allow", "updatedInput": request["request"].get("input", {})}
    answer = {"subtype": "success", "request_id": request["request_id"], "response": response}
    return json.dumps({"type": "control_response", "response": answer}).encode() + b"\n"


def _hosted(args: list[str], cwd: Path, env: dict[str, str], feed: bytes) -> tuple[int, bytes, bytes, bytes]:
    """Run claude as an SDK host does: ``feed`` on stdin, each ``can_use_tool`` control
    request answered with an allow, stdin closed once the turn's ``result`` is printed.
    Returns the exit code, stdout, stderr and the answers sent."""
    import subprocess
    import uuid

    from txcodec.resume_check.process import MARKER
    from txcodec.resume_check.process import reap
    from txcodec.resume_check.process import reaped
    from txcodec.resume_check.process import recent
    from txcodec.resume_check.process import stop

    token = uuid.uuid4().hex
    recent.append(token)
    proc = subprocess.Popen(
        reaped(args, env),
        cwd=cwd,
        env={**env, MARKER: token},
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    answers = b""
    try:
        proc.stdin.write(feed)
        proc.stdin.flush()
        out = b""
        for line in proc.stdout:
            out += line
            kind = json.loads(line).get("type") if line.strip() else None
            if kind == "control_request" and b'"can_use_tool"' in line:
                answers += _allow(line)
                proc.stdin.write(_allow(line))
                proc.stdin.flush()
            elif kind == "result":
                break
        rest, err = proc.communicate(b"", timeout=TIMEOUT)  # closes stdin: the host is done
        return proc.returncode, out + rest, err, answers
    finally:
        if proc.poll() is None:
            stop(proc.pid)
        reap(token, proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def regenerate(root: Path = ROOT / "golden" / "stream_json", names: list[str] | None = None) -> None:
    """Rewrite the golden captures (``capture.jsonl``, ``input.jsonl``, ``prompts.json``)
    of the named scenarios (all by default) from fresh runs; the expected Common files
    are rewritten by the golden test with ``TXCODEC_UPDATE_GOLDEN=1``."""
    import tempfile

    for scenario in (SCENARIOS[n] for n in names) if names else SCENARIOS.values():
        with tempfile.TemporaryDirectory(prefix="sj-golden-") as tmp:
            capture = run(scenario, Path(tmp))
        folder = root / scenario.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "capture.jsonl").write_bytes(capture.stdout)
        if capture.stdin:
            (folder / "input.jsonl").write_bytes(capture.stdin)
        (folder / "prompts.json").write_text(json.dumps(scenario.prompts, indent=1) + "\n")
        print(f"{scenario.name}: {len(capture.stdout.splitlines())} lines, exit {capture.exit_codes}")


if __name__ == "__main__":
    regenerate(names=sys.argv[1:] or None)
