"""Start-up of the ``txcodec`` command against a bare ``python -c pass`` (issue 12:
within 2x, with lazy imports), side by side in one run.

For each command it prints the best wall and CPU time of ``--repeat`` runs and their ratio
to ``python -c pass``, and with ``--instructions`` the instructions counted by valgrind's
callgrind, which no other load on the machine changes:

  python -m txcodec --help           the module entry point
  txcodec --help                     pip's console script (what it runs: ``main()``)
  python -m txcodec usage FILE       a small Claude Code session from the corpus
  python -m txcodec usage FILE       a small Codex rollout

    python benchmarks/bench_startup.py [--repeat 20] [--instructions]
    python benchmarks/bench_startup.py --txcodec /path/to/another/checkout   # before/after
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CLAUDE = CORPUS / "claude_code" / "generated" / "claude_write_edit_2turns.jsonl"
CODEX = CORPUS / "codex" / "agent-history" / "real_sessions" / "codex" / "session-01.jsonl"
# what pip's console script runs (an older checkout's entry point is main)
SCRIPT = "import sys\nfrom txcodec import cli\nsys.exit(getattr(cli, 'run', cli.main)())"


def best(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Best wall and CPU (user + system) seconds of ``cmd``."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=tempfile.gettempdir()
        )
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def instructions(cmd: list[str], env: dict[str, str]) -> int | None:
    """Instructions executed by ``cmd`` under callgrind (None without valgrind)."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg", *cmd],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    return int(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--instructions", action="store_true", help="also count instructions with valgrind (slow)")
    parser.add_argument("--txcodec", type=Path, default=ROOT, help="the checkout to measure")
    args = parser.parse_args()

    py = sys.executable
    # the checkout measured comes first on the path; bytecode is cached as in normal use
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(args.txcodec.resolve()), PYTHONHASHSEED="0")
    commands = [
        ("python -m txcodec --help", [py, "-m", "txcodec", "--help"]),
        ("txcodec --help (console script)", [py, "-c", SCRIPT, "--help"]),
    ]
    for label, path in (("usage FILE (small Claude Code)", CLAUDE), ("usage FILE (small Codex)", CODEX)):
        if path.exists():
            commands.append((label, [py, "-m", "txcodec", "usage", str(path)]))
        else:
            print(f"  (no corpus: {label} skipped)")
    bare = [py, "-c", "pass"]
    for _, cmd in [("", bare), *commands]:  # writes the bytecode cache once
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())

    bare_wall, bare_cpu = best(bare, env, args.repeat)
    bare_ins = instructions(bare, env) if args.instructions else None
    print(f"start-up of {args.txcodec} (best of {args.repeat}; target <= 2x python -c pass)")
    print(
        f"  {'python -c pass':34} {bare_wall * 1000:6.1f} ms wall {bare_cpu * 1000:6.1f} ms cpu"
        + (f"  {bare_ins / 1e6:7.1f} M instructions" if bare_ins else "")
    )
    for label, cmd in commands:
        wall, cpu = best(cmd, env, args.repeat)
        line = (
            f"  {label:34} {wall * 1000:6.1f} ms wall {cpu * 1000:6.1f} ms cpu = "
            f"{wall / bare_wall:4.2f}x wall {cpu / bare_cpu:4.2f}x cpu"
        )
        if args.instructions and bare_ins:
            ins = instructions(cmd, env)
            line += f"  {ins / 1e6:7.1f} M instructions = {ins / bare_ins:4.2f}x" if ins else ""
        print(line)


if __name__ == "__main__":
    main()
