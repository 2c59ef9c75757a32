"""Everyday figures, measured side by side in one run on one synthetic home:

  list          ``txcodec list --json`` over every store (and ``--grep`` content search)
  batch         ``txcodec convert --all --to codex -o DIR`` (parallel, one process)
  shell loop    ``for f in ...; do txcodec convert "$f" --to codex -o ...; done``, the
                same sessions one conversion per process, as people did before batches

The home holds N sessions (default 200; the issue's home had ~2,000) made from the bundled
samples of every harness with distinct ids, under a temporary HOME. Absolute times drift on
shared machines; the ratio batch / shell loop is the figure.

    python benchmarks/bench_everyday.py [--sessions 200] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import txcodec

STORE_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "PI_CODING_AGENT_DIR",
)
SOURCES = ("claude_code", "gemini_cli", "qwen_code", "pi")


def build_home(home: Path, sessions: int) -> None:
    """``sessions`` sessions spread over the harnesses' stores, each with its own id."""
    os.environ["HOME"] = str(home)
    for name in STORE_ENV:
        os.environ.pop(name, None)
    sample = txcodec.sample("claude_code")
    for i in range(sessions):
        harness = SOURCES[i % len(SOURCES)]
        written, _ = txcodec.convert(sample, harness, cwd=f"/home/dev/project{i % 7}", session_id=str(uuid.uuid4()))
        txcodec.install(written, harness)


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "txcodec"]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        build_home(home, args.sessions)
        env = {**os.environ, "HOME": str(home)}
        rows = txcodec.discover(details=False)
        files = [row.path for row in rows if row.parent is None]
        print(f"home: {len(files)} sessions in {len({r.harness for r in rows})} stores")

        t_list = timed([*cli, "list", "--json"], env)
        t_grep = timed([*cli, "list", "--grep", "empty cart", "--json"], env)
        print(f"list --json          {t_list:7.2f} s")
        print(f"list --grep          {t_grep:7.2f} s")

        jobs = ["--jobs", str(args.jobs)] if args.jobs else []
        t_batch = timed([*cli, "convert", "--all", "--to", "codex", "-o", str(Path(tmp) / "batch"), "-q", *jobs], env)
        loop = (
            f'i=0; for f in "$@"; do i=$((i+1)); "{sys.executable}" -m txcodec convert "$f" --to codex '
            f'-o "{tmp}/loop/$i.jsonl" -q || exit 1; done'
        )
        (Path(tmp) / "loop").mkdir()
        t_loop = timed(["bash", "-c", loop, "loop", *files], env)
        print(f"convert --all        {t_batch:7.2f} s  ({len(files) / t_batch:6.1f} sessions/s)")
        print(f"shell loop           {t_loop:7.2f} s  ({len(files) / t_loop:6.1f} sessions/s)")
        print(f"batch / loop         {t_batch / t_loop:7.2f}")


if __name__ == "__main__":
    main()
