"""Dataset export speed on a 2,000-session home: the local Parquet export (processes) and
the Ray Data path (a local runtime), in rows per second and MB per second; then
`txcodec export --all --to parquet` as a user runs it (a fresh process that finds the
sessions itself) side by side with `ccusage daily` on the same home, a few rounds.

The home is built in a temporary folder from the golden sessions, each written anew
under many session ids by txcodec's own writers (1,500 Claude Code sessions, 500 Codex
rollouts). Nothing is kept.

    python benchmarks/bench_dataset.py [--sessions 2000] [--jobs 2] [--no-ray] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_home(home: Path, count: int) -> list[str]:
    import txcodec
    from txcodec import api

    conversations = []
    for path in sorted((ROOT / "golden").rglob("*.jsonl")):
        if "subagents" in path.parts or path.name.startswith(("written", "expected")):
            continue
        try:
            conversation = txcodec.to_common(txcodec.load(path))
        except ValueError:
            continue
        if conversation.messages:
            conversations.append(conversation)
    sources = []
    claude = home / ".claude" / "projects"
    codex = home / ".codex" / "sessions"
    for n in range(count):
        conversation = conversations[n % len(conversations)]
        to, root = ("codex", codex) if n % 4 == 3 else ("claude_code", claude)
        sid = _uuid7(n) if to == "codex" else str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench#{n}"))
        written, _ = api.convert(conversation, to, session_id=sid, cwd=f"/work/project{n % 20}")
        when = _epoch_seconds(conversation.meta.started_at)
        for name, data in written.files.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if when is not None:  # as in a real home: a file was last written about when its session ran
                os.utime(target, (when, when))
        sources.append(str(root / written.main))
    return sources


def _epoch_seconds(timestamp: object) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(timestamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _uuid7(n: int) -> str:
    """A time-ordered id, as Codex names its threads."""
    value = (1_764_547_200_000 + n) << 80 | 0x7 << 76 | (n & 0xFFF) << 64 | 0x8 << 60 | n
    return str(uuid.UUID(int=value))


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def child_cpu(fn) -> tuple[float, float, object]:
    """Wall and CPU seconds (user + system, the process and its children) of a subprocess
    run: the CPU figure says what the work costs when other load stretches the wall."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, result = timed(fn)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="side-by-side runs of the CLI and ccusage")
    args = ap.parse_args()
    from txcodec import dataset

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        sources = build_home(home, args.sessions)
        mb = sum(os.path.getsize(p) for p in sources) / 1e6
        print(f"home: {len(sources)} sessions, {mb:.1f} MB")

        seconds, result = timed(lambda: dataset.export_parquet(sources, Path(tmp) / "ds", jobs=args.jobs))
        rows = sum(result.rows.values())
        print(f"local export (--jobs {args.jobs}): {seconds:.2f} s, {rows} rows, {rows / seconds:,.0f} rows/s, "
              f"{mb / seconds:.1f} MB/s, {len(result.failed)} failed")
        again, _ = timed(lambda: dataset.export_parquet(sources, Path(tmp) / "ds", jobs=args.jobs))
        print(f"local export again (nothing changed): {again:.2f} s")

        # what a user runs, side by side: a fresh process each, both finding the sessions
        # in the home themselves
        env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
               "CODEX_HOME": str(home / ".codex"), "PYTHONPATH": str(ROOT)}
        cli = [sys.executable, "-m", "txcodec", "export", "--all", "--to", "parquet", "-o", str(Path(tmp) / "cli"),
               "--jobs", str(args.jobs)]
        ccusage = Path(os.environ.get("TXCODEC_CLIENTS", ROOT / "clients")) / "node_modules" / ".bin" / "ccusage"
        for _ in range(args.rounds):
            shutil.rmtree(Path(tmp) / "cli", ignore_errors=True)
            exported, cpu, done = child_cpu(lambda: subprocess.run(cli, env=env, capture_output=True, check=False))
            line = f"txcodec export --all --to parquet: {exported:.2f} s ({cpu:.2f} s CPU, exit {done.returncode})"
            if ccusage.exists():
                cc, cc_cpu, _ = child_cpu(lambda: subprocess.run([str(ccusage), "daily", "--offline", "--json"], env=env,
                                                                 capture_output=True, check=False))
                line += f" | ccusage daily: {cc:.2f} s ({cc_cpu:.2f} s CPU) | export / ccusage = {exported / cc:.2f}"
            print(line, f"(load {os.getloadavg()[0]:.1f})")

        if not args.no_ray:
            import ray

            from txcodec import ray as txray

            ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
            try:
                out = Path(tmp) / "ray"
                seconds, _ = timed(lambda: txray.write_parquet(txray.sources(sources), str(out)))
                print(f"ray write_parquet ({args.jobs} CPUs, local runtime): {seconds:.2f} s, "
                      f"{rows / seconds:,.0f} rows/s, {mb / seconds:.1f} MB/s")
            finally:
                ray.shutdown()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
