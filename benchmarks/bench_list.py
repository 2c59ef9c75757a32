"""Finding the sessions of a 2,000-session home (the one bench_dataset.py builds: 1,500
Claude Code sessions, 500 Codex rollouts): `txcodec list` (the table and --json) as a user
runs it, and the index in-process (sessions.discover with and without the per-row details
that `list` shows; `export --all` and `convert --all` take it without). CPU seconds, the
best of a few rounds, so other load on the machine stretches the wall time, not the figure.

    python benchmarks/bench_list.py [--sessions 2000] [--rounds 5] [--txcodec /path/to/another/checkout]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_dataset import build_home
from bench_dataset import child_cpu

ROOT = Path(__file__).resolve().parents[1]

IN_PROCESS = """
import time
from txcodec import sessions
from txcodec.kit import registry
registry.harnesses()
sessions.discover(details=False)
def cpu(details):
    start = time.process_time()
    sessions.discover(details=details)
    return time.process_time() - start
print(min(cpu(False) for _ in range({rounds})), min(cpu(True) for _ in range({rounds})))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--txcodec", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        build_home(home, args.sessions)
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "PYTHONPATH": str(args.txcodec),
        }
        print(f"{args.txcodec}: {args.sessions} sessions")
        # both checkouts start from compiled bytecode (PYTHONDONTWRITEBYTECODE would leave one compiling on each run)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(args.txcodec / "txcodec")], capture_output=True, check=False
        )
        for label, extra in (("txcodec list", []), ("txcodec list --json", ["--json"])):
            runs = [
                child_cpu(
                    lambda extra=extra: subprocess.run(
                        [sys.executable, "-m", "txcodec", "list", *extra],
                        env=env,
                        cwd=args.txcodec,
                        capture_output=True,
                        check=True,
                    )
                )
                for _ in range(args.rounds)
            ]
            print(
                f"{label}: {min(r[1] for r in runs):.2f} s CPU, "
                f"{min(r[0] for r in runs):.2f} s wall (best of {args.rounds})"
            )
        out = subprocess.run(
            [sys.executable, "-c", IN_PROCESS.format(rounds=args.rounds)],
            env=env,
            cwd=args.txcodec,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        print(f"sessions.discover in-process: {float(out[0]):.3f} s CPU without details, {float(out[1]):.3f} s with")


if __name__ == "__main__":
    main()
