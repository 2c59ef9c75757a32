"""A whole home at scale (issue 37): ``list`` cold and warm, ``list --limit 10``, ``usage --by
day`` and ``list --grep``, this checkout against another (--baseline, e.g. main) and the peers
(``ccusage daily --offline``, ``grep -rliF``) in the same run, one after the other.

The home is bench_speed.py's: genuine Claude Code and Codex sessions of the corpus, copied with
their ids made unique per copy (three Claude Code sessions to one rollout), each file dated at
its last record, as a client leaves it. The copies keep their sources' times, so each time is
shared by every copy of one source (about N / 30 files).

    nice python benchmarks/bench_home.py [--sessions 50000] [--home DIR] [--baseline /work/main]
        [--cache DIR] [--warm-only] [--rounds N] [--only 'list, cold']

Each checkout keeps its session index in a cache folder of its own (``--cache DIR``: kept
between runs, ``DIR/this`` and ``DIR/baseline``), so that two index formats do not rebuild
each other's; ``--warm-only`` leaves out the cold jobs (an index not there yet is made first).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dataset import child_cpu  # noqa: E402
from bench_speed import claude_store  # noqa: E402
from bench_speed import codex_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_STAMP = re.compile(rb'"timestamp"\s*:\s*"(\d{4}-[^"]+)"')


def date_files(home: Path) -> None:
    """Each session file's modification time set to its last record's time."""
    for path in [*home.glob(".claude/projects/*/*.jsonl"), *home.glob(".codex/sessions/**/*.jsonl")]:
        data = path.read_bytes()
        found = [m.group(1) for m in _STAMP.finditer(data[-20000:])] or [m.group(1) for m in _STAMP.finditer(data)]
        if not found:
            continue
        when = datetime.fromisoformat(max(found).decode().replace("Z", "+00:00")).timestamp()
        os.utime(path, (when, when))


def build(home: Path, sessions: int) -> None:
    claude_store(home / ".claude", sessions * 3 // 4)
    codex_store(home / ".codex", sessions - sessions * 3 // 4)
    date_files(home)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=50000)
    ap.add_argument("--home", type=Path, help="an existing home (built by --build) instead of a new one")
    ap.add_argument("--build", type=Path, help="only build a home in this folder")
    ap.add_argument("--baseline", type=Path, help="another checkout measured in the same run (e.g. main)")
    ap.add_argument("--word", default="migration", help="what --grep and grep -rliF look for")
    ap.add_argument("--cache", type=Path, help="the checkouts' cache folders, kept (default: a temporary one)")
    ap.add_argument("--warm-only", action="store_true", help="no cold job")
    ap.add_argument("--rounds", type=int, default=1, help="each job this many times, the checkouts in turns")
    ap.add_argument("--only", help="only the jobs whose label starts with this (e.g. 'list, cold'), and the peers")
    ap.add_argument(
        "--ccusage", type=Path, default=ROOT.parent / "main" / "clients" / "node_modules" / ".bin" / "ccusage"
    )
    args = ap.parse_args()
    if args.build:
        build(args.build, args.sessions)
        return
    with tempfile.TemporaryDirectory(prefix="bench-home-") as tmp:
        home = args.home
        if home is None:
            home = Path(tmp) / "home"
            build(home, args.sessions)
        caches = args.cache or Path(tmp) / "cache"
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "COLUMNS": "160",
        }

        def clear(name: str) -> None:
            shutil.rmtree(caches / name / "txcodec", ignore_errors=True)

        first: list[float] = []

        def run(cmd: list[str], checkout: Path | None = None, name: str = "this") -> tuple[float, float]:
            """Wall and CPU seconds; the seconds to the first byte on stdout go to ``first``."""
            extra = {"XDG_CACHE_HOME": str(caches / name)}
            if checkout is not None:
                extra["PYTHONPATH"] = str(checkout)

            def one() -> None:
                start = time.perf_counter()
                proc = subprocess.Popen(
                    cmd, env={**env, **extra}, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp
                )
                assert proc.stdout is not None
                proc.stdout.read(1)
                first.append(time.perf_counter() - start)
                while proc.stdout.read(1 << 20):
                    pass
                proc.wait()

            wall, cpu, _ = child_cpu(one)
            return wall, cpu

        checkouts = [("this", ROOT), *([("baseline", args.baseline)] if args.baseline else [])]
        tx = [sys.executable, "-m", "txcodec"]
        jobs = [
            ("list, cold", ["list"], True),
            ("list, warm", ["list"], False),
            ("list --json, warm", ["list", "--json"], False),
            ("list --limit 10, cold", ["list", "--limit", "10"], True),
            ("list --limit 10, warm", ["list", "--limit", "10"], False),
            ("usage --by day", ["usage", "--by", "day"], False),
            ("list --grep, cold", ["list", "--grep", args.word], True),
            ("list --grep, warm", ["list", "--grep", args.word], False),
        ]
        jobs = [job for job in jobs if args.only is None or job[0].startswith(args.only)]
        files = sum(1 for _ in home.glob(".claude/projects/*/*.jsonl")) + sum(
            1 for _ in home.glob(".codex/sessions/**/*.jsonl")
        )
        print(f"{home}: {files} session files; wall s (CPU s with children, s to the first line)", flush=True)
        for _ in range(args.rounds):
            for label, cmd, cold in jobs:
                if cold and args.warm_only:
                    continue
                line = f"{label:24}"
                for name, checkout in checkouts:
                    if cold:
                        clear(name)
                    else:
                        run([*tx, "list"], checkout, name)  # the index as this checkout keeps it
                    wall, cpu = run([*tx, *cmd], checkout, name)
                    line += f"  {name} {wall:7.2f} ({cpu:6.2f}, first line {first[-1]:6.2f})"
                print(line, flush=True)
            if args.ccusage.exists() and not args.warm_only:
                wall, cpu = run([str(args.ccusage), "daily", "--offline", "--json"])
                print(f"{'ccusage daily --offline':24}  {wall:7.2f} ({cpu:6.2f})", flush=True)
            wall, cpu = run(["grep", "-rliF", args.word, str(home / ".claude"), str(home / ".codex")])
            print(f"{'grep -rliF':24}  {wall:7.2f} ({cpu:6.2f})", flush=True)


if __name__ == "__main__":
    main()
