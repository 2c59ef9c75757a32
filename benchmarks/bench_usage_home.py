"""``txcodec usage --by day`` over a whole home (issue 37) against ``ccusage daily --offline``,
in the same run: cold (no index: the index is written), warm, ``--no-index``, and a run after
one file's row is gone from the index (as after one file changed: the home stays read-only),
for this checkout and another (--baseline, e.g. main), in turns, ``--rounds`` times.

Prints wall and CPU seconds (the process and its workers) and peak RSS of each run, and
checks that every txcodec run of a checkout prints the same ``--json`` bytes.

    nice python benchmarks/bench_usage_home.py --home /work/bench/home50k [--baseline /work/main] [--rounds 2]

The home is bench_home.py's (``--build DIR``); it is only read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed_run(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int, bytes]:
    """Wall s, CPU s (user + system of the child and its workers), peak RSS (KiB) and stdout."""
    start = time.perf_counter()
    # cwd: not a checkout (``python -m`` would import the txcodec of the current folder first)
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own figures (with the workers it waited for)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


def drop_one_row(cache: Path) -> None:
    """Forget one file's usage row (and the last report), as if that file had changed."""
    db = sqlite3.connect(cache / "txcodec" / "sessions.sqlite3")
    try:
        db.execute(
            "DELETE FROM usage_files WHERE path = (SELECT path FROM usage_files ORDER BY path LIMIT 1 OFFSET 777)"
        )
        db.execute("DELETE FROM usage_last")
        db.commit()
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True, help="a home built by bench_home.py --build")
    ap.add_argument("--baseline", type=Path, help="another checkout measured in the same run (e.g. main)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--ccusage", type=Path, default=ROOT.parent / "main" / "clients" / "node_modules" / ".bin" / "ccusage"
    )
    args = ap.parse_args()
    home = args.home.resolve()
    checkouts = [("this", ROOT), *([("baseline", args.baseline.resolve())] if args.baseline else [])]
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "TZ": "UTC",
        }
        tx = [sys.executable, "-m", "txcodec", "usage", "--by", "day", "--json"]
        print("run                        wall s    CPU s   peak RSS MiB", flush=True)
        seen: dict[str, set[bytes]] = {}
        for _ in range(args.rounds):
            for name, checkout in checkouts:
                cache = Path(tmp) / name
                shutil.rmtree(cache, ignore_errors=True)
                mine = {**env, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": str(cache)}
                outputs = set()
                for label, extra in (("cold", []), ("warm", []), ("--no-index", ["--no-index"]), ("one row gone", [])):
                    if label == "one row gone":
                        drop_one_row(cache)
                    wall, cpu, rss, out = timed_run([*tx, *extra], mine, tmp)
                    outputs.add(out)
                    print(f"{name:9} {label:14} {wall:8.2f} {cpu:8.2f} {rss / 1024:10.0f}", flush=True)
                print(f"{name:9} --json outputs {'all the same' if len(outputs) == 1 else 'DIFFER'}", flush=True)
                seen.setdefault(name, set()).update(outputs)
            if len(seen) > 1:
                same = len(set().union(*seen.values())) == 1
                print(f"this and baseline print {'the same' if same else 'DIFFERENT'} --json", flush=True)
            if args.ccusage.exists():
                wall, cpu, rss, _ = timed_run([str(args.ccusage), "daily", "--offline", "--json"], env, tmp)
                print(f"{'ccusage daily --offline':24} {wall:8.2f} {cpu:8.2f} {rss / 1024:10.0f}", flush=True)


if __name__ == "__main__":
    main()
