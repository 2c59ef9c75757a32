"""Dataset export speed on a 2,000-session home: the local Parquet export (processes) and
the Ray Data path (a local runtime), in rows per second and MB per second; then
`txcodec export --all --to parquet` as a user runs it (a fresh process that finds the
sessions itself) side by side with `ccusage daily` on the same home, a few rounds.

The daily case comes next: an export folder that is up to date but for ~1% of the
sessions, which grew by a line since (a session goes on), exported again by the CLI.

The home is built in a temporary folder from the golden sessions, each written anew
under many session ids by txcodec's own writers (1,500 Claude Code sessions, 500 Codex
rollouts). Nothing is kept. ``--home DIR`` measures an existing home instead (its
``.claude/projects`` and ``.codex/sessions``, e.g. the 5,000-session store of real corpus
lines that ``bench_speed.py`` builds, made with ``--build-corpus-home N DIR``); its
files end with the bytes they had (the daily case cuts ~1% by a line and puts it back).

    python benchmarks/bench_dataset.py [--sessions 2000] [--jobs 2] [--no-ray] [--rounds 3]
                                       [--home DIR | --build-corpus-home N DIR] [--baseline CHECKOUT]
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
        # as in a real home: a file was last written when its session's last record was
        when = _epoch_seconds(conversation.meta.ended_at) or _epoch_seconds(conversation.meta.started_at)
        for name, data in written.files.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if when is not None:
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


def found_sources(home: Path) -> list[str]:
    """The main session files of an existing home (subagent transcripts ride with theirs)."""
    claude = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    codex = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    return [str(p) for p in claude + codex]


def build_corpus_home(home: Path, count: int) -> None:
    """``count`` Claude Code sessions of real corpus lines, as bench_speed.py builds its store."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_speed

    bench_speed.claude_store(home / ".claude", count)


def cpu_now() -> float:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime


def grown(sources: list[str], share: float = 0.01) -> dict[str, bytes]:
    """~``share`` of the sources, spread over the home, with their bytes as they are now.

    Taken in path order (session ids, so in no order of their content): in the order a
    built home is made, every hundredth would be a copy of one conversation, all in one
    partition of one harness, which flatters the export (one file rewritten per table)."""
    step = max(1, round(1 / share))
    return {path: Path(path).read_bytes() for path in sorted(sources)[::step]}


def partitions(out: Path, sources: list[str]) -> int:
    """How many (harness, date) partitions hold ``sources`` in the export ``out``."""
    from txcodec.export import dataset

    manifest = dataset._load_manifest(out)
    return len({tuple(rel.split("/")[1:3]) for source in sources for rel in manifest[source].files})


def cut_last_line(data: bytes) -> bytes:
    """The session as it was one line earlier."""
    return data[: data.rstrip(b"\n").rfind(b"\n") + 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="side-by-side runs of the CLI and ccusage")
    ap.add_argument("--baseline", type=Path, help="another checkout whose CLI runs in the same rounds (e.g. main)")
    ap.add_argument("--home", type=Path, help="an existing home to measure instead of a built one")
    ap.add_argument(
        "--build-corpus-home",
        nargs=2,
        metavar=("N", "DIR"),
        help="build a home of N Claude Code sessions of real corpus lines in DIR, then stop",
    )
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.build_corpus_home:
        build_corpus_home(Path(args.build_corpus_home[1]), int(args.build_corpus_home[0]))
        return
    from txcodec.export import dataset

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.home:
            home = args.home.resolve()
            sources = found_sources(home)
        else:
            home = tmp / "home"
            sources = build_home(home, args.sessions)
        mb = sum(os.path.getsize(p) for p in sources) / 1e6
        print(f"home: {len(sources)} sessions, {mb:.1f} MB")

        before = cpu_now()
        seconds, result = timed(lambda: dataset.export_parquet(sources, tmp / "ds", jobs=args.jobs))
        cpu = cpu_now() - before  # this process only: the workers' share is not in it
        rows = sum(result.rows.values())
        print(
            f"local export (--jobs {args.jobs}): {seconds:.2f} s ({cpu:.2f} s CPU in the parent), {rows} rows, "
            f"{rows / seconds:,.0f} rows/s, {mb / seconds:.1f} MB/s, {len(result.failed)} failed"
        )
        again, _ = timed(lambda: dataset.export_parquet(sources, tmp / "ds", jobs=args.jobs))
        print(f"local export again (nothing changed): {again:.2f} s")

        # what a user runs, side by side: a fresh process each, both finding the sessions
        # in the home themselves (with --baseline, that checkout's CLI too, in the same rounds)
        checkouts = {"txcodec": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their bytecode cache

        def cli(checkout: Path, out: Path) -> subprocess.CompletedProcess:
            # run from the scratch folder: ``-m`` puts the working folder first on the path, and
            # a bench started inside a checkout would otherwise run that checkout's txcodec;
            # each checkout has a cache folder of its own, as an installation used alone has (an
            # older checkout's plugin cache, in another shape, would be undone by the other's)
            cache = tmp / f"cache-{checkout.name}-{abs(hash(str(checkout)))}"
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "txcodec",
                    "export",
                    "--all",
                    "--to",
                    "parquet",
                    "-o",
                    str(out),
                    "--jobs",
                    str(args.jobs),
                ],
                env={**env, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": str(cache)},
                cwd=tmp,
                capture_output=True,
                check=False,
            )

        for checkout in checkouts.values():  # writes the bytecode cache once
            cli(checkout, tmp / "warm")
            shutil.rmtree(tmp / "warm")
        ccusage = Path(os.environ.get("TXCODEC_CLIENTS", ROOT / "clients")) / "node_modules" / ".bin" / "ccusage"

        def side_by_side(label: str, before_each) -> None:
            for _ in range(args.rounds):
                line, seconds = [], {}
                for name, checkout in checkouts.items():
                    out = before_each(name)
                    seconds[name], cpu, done = child_cpu(lambda checkout=checkout, out=out: cli(checkout, out))
                    line.append(f"{name} {seconds[name]:.2f} s ({cpu:.2f} s CPU, exit {done.returncode})")
                if ccusage.exists():
                    cc, cc_cpu, _ = child_cpu(
                        lambda: subprocess.run(
                            [str(ccusage), "daily", "--offline", "--json"], env=env, capture_output=True, check=False
                        )
                    )
                    line.append(
                        f"ccusage daily {cc:.2f} s ({cc_cpu:.2f} s CPU) | "
                        f"export / ccusage = {seconds['txcodec'] / cc:.2f}"
                    )
                    # the floor under any Python command: the interpreter's own start, site included
                    bare, _, _ = child_cpu(lambda: subprocess.run([sys.executable, "-c", "pass"], env=env, check=False))
                    line.append(f"python -c pass {bare:.3f} s = {bare / cc:.2f} of ccusage's")
                print(f"{label}: " + " | ".join(line), f"(load {os.getloadavg()[0]:.1f})")

        def fresh(name: str) -> Path:
            shutil.rmtree(tmp / "cli", ignore_errors=True)
            return tmp / "cli"

        side_by_side("export --all --to parquet, fresh", fresh)

        # the daily case: yesterday's export, and ~1% of the sessions went on by a line since
        changed = grown(sources)
        for path, data in changed.items():
            Path(path).write_bytes(cut_last_line(data))
        for name, checkout in checkouts.items():
            cli(checkout, tmp / f"yesterday-{name}")
        for path, data in changed.items():
            Path(path).write_bytes(data)

        def yesterday(name: str) -> Path:
            shutil.rmtree(tmp / "daily", ignore_errors=True)
            shutil.copytree(tmp / f"yesterday-{name}", tmp / "daily")
            return tmp / "daily"

        touched = partitions(tmp / "yesterday-txcodec", list(changed))
        side_by_side(
            f"export --all --to parquet, {len(changed)} of {len(sources)} sessions changed (in {touched} partitions)",
            yesterday,
        )

        if not args.no_ray:
            import ray

            from txcodec.export import ray as txray

            ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
            try:
                for when in ("first run, workers starting", "again, workers warm"):
                    out = tmp / "ray"
                    shutil.rmtree(out, ignore_errors=True)
                    seconds, summary = timed(lambda out=out: txray.write_parquet(txray.sources(sources), str(out)))
                    written = sum(summary["rows"].values())
                    print(
                        f"ray write_parquet ({args.jobs} CPUs, local runtime, {when}): {seconds:.2f} s, "
                        f"{written} rows, {written / seconds:,.0f} rows/s, {mb / seconds:.1f} MB/s, "
                        f"{len(summary['errors'])} failed"
                    )
            finally:
                ray.shutdown()
        if not args.home:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
