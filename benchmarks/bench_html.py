"""HTML export of a ~60 MB Claude Code session: txcodec against claude-code-log, side by
side in one run, each in a process of its own (wall time and peak RSS from /usr/bin/time).

Target: txcodec at least 10x faster than claude-code-log's HTML on the same file, with
less memory. The session is built as in bench_common.py (the corpus's real spotter
sessions, repeated with ids made unique per copy). claude-code-log is installed from
PyPI into a venv inside the benchmark's temporary folder (or taken from --ccl, a
claude-code-log executable); when it cannot be installed, only txcodec is measured.

Both run with their bytecode compiled, as installed packages do: claude-code-log's is
compiled by pip; txcodec's (run from this checkout) is compiled into the temporary folder
by a first, unmeasured export. The two are measured in turns, ``--repeat`` times, and
the best of each is compared (the machine's load changes from one run to the next).
Markdown goes through markdown-it.rs when the ``fast`` extra is installed (the line
printed first says which).

    python benchmarks/bench_html.py [--mb 60] [--repeat 3] [--ccl PATH] [--keep]
    python benchmarks/bench_html.py --txcodec /path/to/main --txcodec .   # before/after, in one run

``--txcodec`` names the checkout to measure (default: this one); given more than once, each
is measured, in turns with the others.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def measure(cmd: list[str], cwd: Path, ours: Path | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one command, from GNU time. On a
    shared machine the CPU time (user + system) is the steadier figure. ``ours`` is the
    txcodec checkout the command runs; its bytecode goes to a folder of the run's own (the
    checkout stays clean)."""
    report = cwd / "time.txt"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if ours is not None:
        env.update(PYTHONPATH=str(ours), PYTHONPYCACHEPREFIX=str(cwd / "pycache"))
    run = subprocess.run(
        ["/usr/bin/time", "-v", "-o", str(report), *cmd],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if run.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({run.returncode}): {run.stderr[-2000:]}")
    text = report.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    hours, minutes, seconds = int(wall.group(1) or 0), int(wall.group(2)), float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", text).group(1)) for kind in ("User", "System"))
    return hours * 3600 + minutes * 60 + seconds, cpu, rss


def claude_code_log(tmp: Path, given: str | None) -> str | None:
    if given:
        return given
    venv = tmp / "ccl-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "claude-code-log"], capture_output=True, text=True
    )
    if pip.returncode != 0:
        print(f"claude-code-log not measured: pip install failed: {pip.stderr.strip().splitlines()[-1:]}")
        return None
    return str(venv / "bin" / "claude-code-log")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, in turns; the best of each is compared")
    ap.add_argument("--ccl", help="a claude-code-log executable to use instead of installing one")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (the pages) and print it")
    ap.add_argument(
        "--txcodec",
        type=Path,
        action="append",
        help="a checkout to measure (default: this one); more than one are measured in turns",
    )
    args = ap.parse_args()
    checkouts = [p.resolve() for p in args.txcodec] if args.txcodec else [ROOT]
    tmp = Path(tempfile.mkdtemp(prefix="bench-html-"))
    try:
        session = tmp / "project" / "0f0e0d0c-0b0a-4909-8807-060504030201.jsonl"
        session.parent.mkdir()
        session.write_bytes(build(args.mb))
        mb = session.stat().st_size / 1e6
        lines = session.read_bytes().count(b"\n")
        try:
            import markdown_it_pyrs  # noqa: F401

            markdown = "markdown-it.rs (the fast extra)"
        except ImportError:
            markdown = "markdown-it-py (the fast extra is not installed)"
        print(f"session {mb:.1f} MB, {lines} lines; txcodec's Markdown: {markdown}")
        names = [str(c) if len(checkouts) > 1 else "txcodec" for c in checkouts]
        pages = [tmp / f"txcodec-{i}.html" for i in range(len(checkouts))]
        exports = [
            [sys.executable, "-m", "txcodec", "export", str(session), "--to", "html", "-o", str(page)] for page in pages
        ]
        for checkout, export in zip(checkouts, exports):
            measure(export, tmp, ours=checkout)  # compiles its bytecode, as an install would have
        ccl = claude_code_log(tmp, args.ccl)
        theirs = tmp / "ccl.html"
        mine: list[list[tuple[float, float, float]]] = [[] for _ in checkouts]
        others = []
        for _ in range(args.repeat):
            for i, (checkout, export, page) in enumerate(zip(checkouts, exports, pages)):
                page.unlink(missing_ok=True)
                mine[i].append(measure(export, tmp, ours=checkout))
                print(f"{names[i]} export --to html: {_row(mb, *mine[i][-1])}  page {page.stat().st_size / 1e6:.1f} MB")
            if ccl is not None:
                theirs.unlink(missing_ok=True)
                others.append(measure([ccl, str(session), "-o", str(theirs)], tmp))
                size = theirs.stat().st_size / 1e6 if theirs.exists() else float("nan")
                print(f"claude-code-log (HTML):   {_row(mb, *others[-1])}  page {size:.1f} MB")
        bests = [tuple(min(x[k] for x in runs) for k in range(3)) for runs in mine]
        for name, best in zip(names, bests):
            print(f"best of {args.repeat}: {name} {_row(mb, *best)}")
        if not others:
            return
        t2, cpu2, rss2 = (min(x[i] for x in others) for i in range(3))
        print(f"best of {args.repeat}: claude-code-log {_row(mb, t2, cpu2, rss2)}")
        for name, (t, cpu, rss) in zip(names, bests):
            print(
                f"{name} is {t2 / t:.1f}x faster by wall time, {cpu2 / cpu:.1f}x by CPU time (target >= 10x), "
                f"and uses {rss2 / rss:.1f}x less memory (target > 1x)"
            )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _row(mb: float, wall: float, cpu: float, rss: float) -> str:
    return f"{wall:7.2f} s wall {cpu:7.2f} s CPU  {mb / wall:6.1f} MB/s  peak RSS {rss:6.0f} MiB"


if __name__ == "__main__":
    main()
