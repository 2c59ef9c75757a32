"""Where users wait: txcodec against ccusage, conversion against the decode floor, memory,
start-up and scaling, side by side in one run (issue "Speed where users wait").

Inputs are built in a temp dir from the corpus's real lines, ids made unique per copy:

  * Claude Code sessions of 6, 60 and 240 MB (the spotter sessions repeated, as
    ``bench_common.py`` builds them), and a Codex rollout of each size converted from them;
  * a Claude Code store of 5,000 sessions and a Codex store of 2,000 rollouts, copies of
    the corpus's session files.

It prints, each with its ratio:

  usage FILE (60, 240 MB), usage over each store, and the daily report over both stores,
      txcodec against ``ccusage`` 20.0.24 (``clients/``; pass --ccusage to name another);
  convert Claude Code -> Codex and Codex -> Claude Code on 60 MB, in-process and as a CLI,
      as a ratio to R (msgspec's untyped ``decode_lines`` of the same bytes);
  peak RSS of convert (both directions), usage and verify as a ratio to the file's size;
  start-up of ``txcodec --help`` and ``txcodec usage`` against ``python -c pass``;
  time and memory per MB of usage and convert at 6, 60 and 240 MB.

Targets (issue 12): usage <= ccusage's time; convert >= 0.6 R in-process, >= 0.35 R as a
CLI; RSS convert <= 2.5x, usage <= 1.5x, verify flat; start-up <= 2x; per-MB figures flat.
Wall times on a shared machine drift: the ratios measured in one run are the figures.

    python benchmarks/bench_speed.py [--sizes 6,60,240] [--sessions 5000] [--rollouts 2000] [--repeat 3]
    python benchmarks/bench_speed.py --txcodec /path/to/another/checkout   # before/after
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import build  # noqa: E402
from bench_startup import best as startup_best  # noqa: E402

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MSG = re.compile(rb'"(msg_|toolu_|call_|resp_|rs_|fc_)([0-9A-Za-z]{6,})')


def unique(data: bytes, k: int) -> bytes:
    """The session with every UUID and provider id made unique to copy ``k``; the time
    and layout of the lines stay as they were."""
    tag = f"{k:08x}".encode()
    data = _UUID.sub(lambda m: tag + m.group(0)[8:], data)
    return _MSG.sub(lambda m: b'"' + m.group(1) + tag + m.group(2), data)


def claude_sources() -> list[Path]:
    found = []
    for p in sorted((CORPUS / "claude_code").rglob("*.jsonl")):
        if "subagents" in p.parts or p.name == "journal.jsonl" or p.stat().st_size > 1_000_000:
            continue
        if b'"type":"assistant"' in p.read_bytes()[:2_000_000]:
            found.append(p)
    return found


def codex_sources() -> list[Path]:
    found = sorted((CORPUS / "codex").rglob("rollout-*.jsonl"))
    return [p for p in found if p.stat().st_size <= 400_000 and b'"token_count"' in p.read_bytes()]


def claude_store(root: Path, sessions: int) -> int:
    sources = [p.read_bytes() for p in claude_sources()]
    size = 0
    for k in range(sessions):
        data = unique(sources[k % len(sources)], k)
        folder = root / "projects" / f"-home-user-project-{k % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        sid = _UUID.search(data)
        name = (sid.group(0).decode() if sid else f"{k:08x}-0000-4000-8000-000000000000") + ".jsonl"
        (folder / name).write_bytes(data)
        size += len(data)
    return size


def codex_store(root: Path, rollouts: int) -> int:
    sources = [p.read_bytes() for p in codex_sources()]
    size = 0
    for k in range(rollouts):
        data = unique(sources[k % len(sources)], k)
        day = root / "sessions" / "2026" / "02" / f"{1 + k % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        sid = _UUID.search(data)
        (day / f"rollout-2026-02-{1 + k % 28:02d}T12-00-00-{sid.group(0).decode() if sid else k}.jsonl").write_bytes(
            data
        )
        size += len(data)
    return size


CPU: dict[str, float] = {}  # command line -> best CPU seconds (user + system), for the loaded-machine column


_TIME = Path("/usr/bin/time") if Path("/usr/bin/time").exists() else None  # Debian's ``time`` package


def run(cmd: list[str], env: dict[str, str], repeat: int = 1) -> tuple[float, float]:
    """Best wall time (s) and peak RSS (MiB) of a command; its best CPU time goes to CPU.

    RSS is read by GNU time when installed: a child forked from this (large) process
    would report this process's peak as its own (Linux keeps the larger on exec)."""
    best_t, best_rss, best_cpu = float("inf"), 0.0, float("inf")
    for _ in range(repeat):
        report = tempfile.NamedTemporaryFile(prefix="bench-time-", delete=False)
        report.close()
        full = [str(_TIME), "-f", "%M %U %S", "-o", report.name, *cmd] if _TIME else cmd
        start = time.perf_counter()
        # from the temp dir: ``python -m`` puts the working folder first on sys.path, and
        # from a checkout that would import it instead of the one measured
        proc = subprocess.Popen(
            full, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tempfile.gettempdir()
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace")[-300:] if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        measured = Path(report.name).read_text().split()
        os.unlink(report.name)
        if proc.returncode != 0:  # e.g. an older checkout without this command: n/a
            print(f"  ! exit {proc.returncode}: {' '.join(cmd[-4:])}: {err.strip().splitlines()[-1:] or ''}")
            return float("nan"), float("nan")
        if _TIME and len(measured) >= 3:
            rss, used = int(measured[-3]) / 1024, float(measured[-2]) + float(measured[-1])
        else:
            rss, used = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
        best_t = min(best_t, elapsed)
        best_rss = max(best_rss, rss)
        best_cpu = min(best_cpu, used)
    CPU[" ".join(cmd)] = best_cpu
    return best_t, best_rss


def cpu(cmd: list[str]) -> float:
    return CPU.get(" ".join(cmd), float("nan"))


def best(fn, repeat: int) -> float:
    """Best CPU time of ``fn`` in this process (CPU, not wall: the machine may be shared)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def row(
    label: str, ours: list[str], theirs: list[str] | None, env: dict[str, str], repeat: int, note: str = ""
) -> None:
    """Wall time of both commands, the ratio, and their CPU times (ccusage's runtime may
    use more than one core; on a loaded machine CPU time is the steadier figure)."""
    if theirs is None:
        t, _ = run(ours, env, repeat)
        print(f"  {label:46} {t:7.2f} s (cpu {cpu(ours):.2f})  {note}")
        return
    # in turns, ours then theirs, each its best: a load that comes and goes on a shared
    # machine then weighs on both, not on the one that happened to run during it
    t = u = float("inf")
    t_cpu = u_cpu = float("inf")
    for _ in range(repeat):
        t = min(t, run(ours, env)[0])
        t_cpu = min(t_cpu, cpu(ours))
        u = min(u, run(theirs, env)[0])
        u_cpu = min(u_cpu, cpu(theirs))
    CPU[" ".join(ours)], CPU[" ".join(theirs)] = t_cpu, u_cpu
    print(
        f"  {label:46} {t:7.2f} s vs {u:7.2f} s = {u / t:5.2f}x ccusage's speed  "
        f"(cpu {cpu(ours):.2f} vs {cpu(theirs):.2f}) {note}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="6,60,240")
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--rollouts", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--txcodec", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    ap.add_argument("--ccusage", default=str(ROOT.parent / "main" / "clients" / "node_modules" / ".bin" / "ccusage"))
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    ccusage = args.ccusage if Path(args.ccusage).exists() else shutil.which("ccusage")
    if ccusage is None:
        ccusage = str(ROOT / "clients" / "node_modules" / ".bin" / "ccusage")
    have_cc = Path(ccusage).exists()
    sys.path.insert(0, str(args.txcodec))
    from txcodec import api

    py = sys.executable
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    base_env["PYTHONPATH"] = str(args.txcodec)
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their bytecode cache
    tx = [py, "-m", "txcodec"]
    tiny = CORPUS / "claude_code" / "generated" / "claude_write_edit_2turns.jsonl"
    for warm in ([*tx, "--help"], [*tx, "usage", str(tiny)]):  # writes the bytecode cache once
        subprocess.run(
            warm, env=base_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir()
        )
    print(f"txcodec from {args.txcodec}; ccusage: {ccusage if have_cc else 'not installed (peer columns left out)'}")

    with tempfile.TemporaryDirectory(prefix="txcodec-bench-") as tmp:
        tmp = Path(tmp)
        home = tmp / "home"
        home.mkdir()
        env = {**base_env, "HOME": str(home), "TZ": "UTC"}

        # --- inputs --------------------------------------------------------------------
        t = time.perf_counter()
        files: dict[float, Path] = {}
        codex_files: dict[float, Path] = {}
        for mb in sizes:
            data = build(mb)
            sid = "5d0c3a9e-7b1f-4c2a-9e3d-%012d" % int(mb)
            folder = tmp / f"claude-{mb:g}" / "projects" / "-home-user-big"
            folder.mkdir(parents=True)
            files[mb] = folder / f"{sid}.jsonl"
            files[mb].write_bytes(data)
            if mb == 60:  # a Codex rollout of about 60 MB: converted from a Claude session 4x as large
                written, _ = api.convert(build(mb * 4), "codex", from_="claude_code")
                codex_files[mb] = tmp / f"rollout-{mb:g}.jsonl"
                codex_files[mb].write_bytes(written.files[written.main])
                del written
            del data
        cstore, xstore = tmp / "claude-store", tmp / "codex-store"
        csize = claude_store(cstore, args.sessions)
        xsize = codex_store(xstore, args.rollouts)
        print(
            f"inputs built in {time.perf_counter() - t:.0f} s: "
            f"Claude store {args.sessions} sessions {csize / 1e6:.0f} MB, "
            f"Codex store {args.rollouts} rollouts {xsize / 1e6:.0f} MB"
        )

        # --- usage against ccusage -----------------------------------------------------
        print("\nusage (wall time, best of %d; ratio > 1 means txcodec is faster)" % args.repeat)
        for mb in sizes:
            if mb < 60:
                continue
            path = files[mb]
            one = {**env, "CLAUDE_CONFIG_DIR": str(path.parents[2])}
            row(
                f"usage FILE, {path.stat().st_size / 1e6:.0f} MB Claude Code",
                [*tx, "usage", str(path)],
                [ccusage, "claude", "session", "--offline", "--json"] if have_cc else None,
                one,
                args.repeat,
            )
        stores = {**env, "CLAUDE_CONFIG_DIR": str(cstore), "CODEX_HOME": str(xstore)}
        row(
            f"usage over a {args.sessions}-session Claude store",
            [*tx, "usage", "--harness", "claude_code"],
            [ccusage, "claude", "session", "--offline", "--json"] if have_cc else None,
            stores,
            args.repeat,
        )
        row(
            f"usage over a {args.rollouts}-rollout Codex store",
            [*tx, "usage", "--harness", "codex"],
            [ccusage, "codex", "session", "--offline", "--json"] if have_cc else None,
            stores,
            args.repeat,
        )
        row(
            "daily report, both stores (--by day,model)",
            [*tx, "usage", "--by", "day,model"],
            [ccusage, "daily", "--offline", "--json"] if have_cc else None,
            stores,
            args.repeat,
            "(ccusage daily)",
        )

        # --- conversion against R --------------------------------------------------------
        decoder = msgspec.json.Decoder()
        print("\nconvert, 60 MB (R = msgspec untyped decode_lines of the same bytes)")
        mb = 60
        for label, src, from_, to in (
            ("Claude Code -> Codex", files[mb], "claude_code", "codex"),
            ("Codex -> Claude Code", codex_files[mb], "codex", "claude_code"),
        ):
            data = src.read_bytes()
            r = best(lambda data=data: decoder.decode_lines(data), args.repeat)
            inproc = best(lambda data=data, to=to, from_=from_: api.convert(data, to, from_=from_), args.repeat)
            out = tmp / f"out-{to}"
            shutil.rmtree(out, ignore_errors=True)
            command = [*tx, "convert", str(src), "--to", to, "-o", str(out / "x")]
            run(command, env, 1)
            cli = cpu(command)
            print(
                f"  {label:24} {len(data) / 1e6:5.0f} MB  R {len(data) / 1e6 / r:6.0f} MB/s   "
                f"in-process {r / inproc:5.2f} R "
                f"(target 0.6)   CLI {r / cli:5.2f} R (target 0.35)   (CPU times)"
            )
            del data

        # --- memory and scaling ----------------------------------------------------------
        print("\npeak RSS / file size, and time and memory per MB (linear scaling: flat columns)")
        print(
            f"  {'MB':>5}  {'usage cpu s/MB':>10} {'RSS/size':>8}   "
            f"{'convert cpu s/MB':>12} {'RSS/size':>8}   {'verify RSS MiB':>14}"
        )
        for mb in sizes:
            path = files[mb]
            size = path.stat().st_size / 2**20
            command = [*tx, "usage", "--no-cost", str(path)]
            _, urss = run(command, env, 1)
            ut = cpu(command)
            out = tmp / "rss-out"
            shutil.rmtree(out, ignore_errors=True)
            command = [*tx, "convert", str(path), "--to", "codex", "-o", str(out / "x")]
            _, crss = run(command, env, 1)
            ct = cpu(command)
            _, vrss = run([*tx, "verify", str(path)], env, 1)
            print(
                f"  {path.stat().st_size / 1e6:5.0f}  {ut / size:10.4f} {urss / size:8.2f}   "
                f"{ct / size:12.4f} {crss / size:8.2f}   {vrss:14.0f}"
            )
        for path in codex_files.values():  # the other direction: Codex -> Claude Code
            out = tmp / "rss-out"
            shutil.rmtree(out, ignore_errors=True)
            command = [*tx, "convert", str(path), "--to", "claude_code", "-o", str(out / "x")]
            _, crss = run(command, env, 1)
            ct = cpu(command)
            size = path.stat().st_size / 2**20
            print(
                f"  {path.stat().st_size / 1e6:5.0f}  {'Codex rollout -> Claude Code:':>19}   "
                f"{ct / size:12.4f} {crss / size:8.2f}"
            )

        # --- start-up --------------------------------------------------------------------
        # timed as bench_startup.py times them: the process alone, not under GNU time, whose
        # CPU figures come in hundredths of a second (a 30 ms start-up would read 0.03 or 0.04)
        print("\nstart-up (best of 20)")
        bare, bare_cpu = startup_best([py, "-c", "pass"], env, 20)
        for label, cmd in (
            ("txcodec --help", [*tx, "--help"]),
            ("txcodec usage FILE (tiny)", [*tx, "usage", str(tiny)]),
        ):
            t, used = startup_best(cmd, env, 20)
            print(
                f"  {label:30} {t * 1000:6.1f} ms = {t / bare:4.2f}x python -c pass "
                f"({bare * 1000:.1f} ms; target <= 2x); "
                f"cpu {used / bare_cpu:4.2f}x"
            )


if __name__ == "__main__":
    main()
