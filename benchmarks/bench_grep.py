"""``list --grep`` and its text index (``txcodec index --fts``, issue 37) on a whole home: the
index's size and first build, then ``list --grep WORD --json`` cold (no index at all), warm
without the text index, warm with it (also while another run holds its write lock),
``--no-index``, and ``grep -rliF`` in the same run; the rows of every ``list --grep`` are
checked to be the same files. ``--baseline`` measures another checkout's text index (size and
first build, warm search) in its own cache folder too.

The home is bench_home.py's (``--build``); it is only read: the indexes go to ``--cache``.

    nice python benchmarks/bench_grep.py --home DIR [--cache DIR] [--word migration] [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dataset import child_cpu  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True, help="a home built by bench_home.py --build (read only)")
    ap.add_argument("--cache", type=Path, help="where the indexes go (default: a temporary folder, removed)")
    ap.add_argument("--word", default="migration", help="what --grep and grep -rliF look for")
    ap.add_argument("--baseline", type=Path, help="another checkout whose text index is measured too (e.g. main)")
    ap.add_argument(
        "--skip-cold", action="store_true", help="keep the session index --cache holds; only the text index made again"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-grep-") as tmp:
        cache_root = args.cache or Path(tmp)
        home = args.home

        def env(name: str, checkout: Path | None) -> dict[str, str]:
            return {
                **os.environ,
                "HOME": str(home),
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                "CODEX_HOME": str(home / ".codex"),
                "XDG_CACHE_HOME": str(cache_root / name),
                "COLUMNS": "160",
                **({"PYTHONPATH": str(checkout)} if checkout is not None else {}),
            }

        def run(label: str, cmd: list[str], name: str = "", checkout: Path | None = None) -> bytes:
            out: list[bytes] = []

            def one() -> None:
                out.append(subprocess.run(cmd, env=env(name, checkout), capture_output=True, cwd=tmp).stdout)

            wall, cpu, _ = child_cpu(one)
            print(f"{label:48} {cpu:7.2f} ({wall:7.2f})", flush=True)
            return out[0]

        def rows(output: bytes) -> list[str]:
            return sorted(r["path"] for r in json.loads(output))

        tx = [sys.executable, "-m", "txcodec"]
        grep = [*tx, "list", "--grep", args.word, "--json"]
        print(f"{home}: CPU s (wall s), niced; --grep {args.word!r}", flush=True)
        checkouts = [("this", ROOT), *([("baseline", args.baseline)] if args.baseline else [])]
        answers = {}
        for name, checkout in checkouts:
            if args.skip_cold:
                for old in (cache_root / name / "txcodec").glob("grep.sqlite3*"):
                    old.unlink()
            else:
                shutil.rmtree(cache_root / name, ignore_errors=True)
                answers["cold, no index"] = rows(run(f"[{name}] list --grep, cold (no index)", grep, name, checkout))
                run(f"[{name}] list, cold (the session index made)", [*tx, "list", "--json"], name, checkout)
            run(f"[{name}] list --json, warm", [*tx, "list", "--json"], name, checkout)
            answers["warm, no --fts"] = rows(run(f"[{name}] list --grep, warm, no --fts", grep, name, checkout))
            run(f"[{name}] index --fts, first", [*tx, "index", "--fts"], name, checkout)
            size = sum(p.stat().st_size for p in (cache_root / name / "txcodec").glob("grep.sqlite3*"))
            print(f"{'[' + name + '] the text index on disk':48} {size / 2**20:7.1f} MiB", flush=True)
            run(f"[{name}] index --fts, nothing changed", [*tx, "index", "--fts"], name, checkout)
            for n in (1, 2):
                answers[f"{name} fts {n}"] = rows(run(f"[{name}] list --grep, warm, --fts ({n})", grep, name, checkout))
            writer = sqlite3.connect(cache_root / name / "txcodec" / "grep.sqlite3", isolation_level=None)
            writer.execute("BEGIN IMMEDIATE")  # as another run adding to the text index holds it
            try:
                label = f"[{name}] list --grep, warm, --fts, beside a writer"
                answers[f"{name} fts beside a writer"] = rows(run(label, grep, name, checkout))
            finally:
                writer.execute("ROLLBACK")
                writer.close()
            answers["--no-index"] = rows(run(f"[{name}] list --grep --no-index", [*grep, "--no-index"], name, checkout))
        found = run("grep -rliF", ["grep", "-rliF", args.word, str(home / ".claude"), str(home / ".codex")])
        print(f"rows: {len(answers['--no-index'])}; grep -rliF files: {len(found.splitlines())}", flush=True)
        differ = [k for k, v in answers.items() if v != answers["--no-index"]]
        print("every list --grep the same files" if not differ else f"DIFFERENT: {differ}", flush=True)


if __name__ == "__main__":
    main()
