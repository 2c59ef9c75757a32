"""`txcodec list` over a generated home (bench_dataset.py builds it: Claude Code sessions and
Codex rollouts replayed from the goldens), cold and warm, side by side with another
checkout (--baseline, e.g. main) in the same rounds, with the ratios.

Cold: no session index (txcodec index --clear before each run), so every session is read;
warm: the index made by the run before. --no-index reads every session without touching
the index. --limit 10 and --json as a user runs them. CPU seconds (user + system, the best
of --rounds), so other load on the machine stretches the wall time, not the figure.

    python benchmarks/bench_list.py [--sessions 5000] [--home DIR] [--rounds 3] [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_dataset import build_home
from bench_dataset import child_cpu

ROOT = Path(__file__).resolve().parents[1]


def _run(checkout: Path, env: dict[str, str], args: list[str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "txcodec", *args],
        env={**env, "PYTHONPATH": str(checkout)},
        cwd=checkout,
        capture_output=True,
        check=True,
    )


def _best(checkout: Path, env: dict[str, str], args: list[str], rounds: int, before=None) -> tuple[float, float]:
    runs = []
    for _ in range(rounds):
        if before is not None:
            before()
        runs.append(child_cpu(lambda: _run(checkout, env, args)))
    return min(r[1] for r in runs), min(r[0] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--home", type=Path, help="an existing home to measure instead of a built one")
    ap.add_argument("--txcodec", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    ap.add_argument("--baseline", type=Path, help="another checkout measured in the same rounds (e.g. main)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home
        if home is None:
            home = Path(tmp) / "home"
            build_home(home, args.sessions)
        cache = Path(tmp) / "cache"
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "XDG_CACHE_HOME": str(cache),
            "COLUMNS": "160",
        }
        checkouts = [args.txcodec, *([args.baseline] if args.baseline else [])]
        for checkout in checkouts:  # both start from compiled bytecode
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "txcodec")], capture_output=True)

        def clear() -> None:
            shutil.rmtree(cache / "txcodec", ignore_errors=True)

        jobs = [
            ("list, cold (no index)", ["list"], clear, True),
            ("list, warm (index)", ["list"], None, True),
            ("list --limit 10, cold", ["list", "--limit", "10"], clear, True),
            ("list --limit 10, warm", ["list", "--limit", "10"], None, True),
            ("list --json, warm", ["list", "--json"], None, True),
            ("list --no-index", ["list", "--no-index"], None, False),
        ]
        print(f"{home}: {sum(1 for _ in home.rglob('*.jsonl'))} session files; CPU s (wall s), best of {args.rounds}")
        for label, extra, before, baseline_too in jobs:
            if before is None:  # warm: the index made first
                _run(args.txcodec, env, ["list"])
            cpu, wall = _best(args.txcodec, env, extra, args.rounds, before)
            line = f"{label:26} {cpu:6.2f} ({wall:.2f})"
            if args.baseline is not None and baseline_too:
                base = [a for a in extra if a != "--no-index"]
                base_cpu, base_wall = _best(args.baseline, env, base, args.rounds, before)
                line += f"   baseline {base_cpu:6.2f} ({base_wall:.2f})   baseline/this {base_cpu / cpu:.2f}x"
            print(line, flush=True)


if __name__ == "__main__":
    main()
