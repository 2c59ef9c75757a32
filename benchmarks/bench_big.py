"""One big session (issue 37): convert Claude Code -> Codex, ``show`` and ``usage`` on 100 and
300 MB, time and peak RSS, each size as a ratio to the smallest.

The session is generated from the corpus's genuine sessions: the Claude Code 2.1.332 ones
written by the real CLI (``claude_code/generated``), each followed by a compaction (the
boundary and summary records of the spotter session 258c7280, Claude Code 2.1.39), repeated
with their ids made unique per copy, as ``bench_common.py`` builds them: about one
compaction per 160 KB. Each compact boundary also names the records the compaction kept, as
Claude Code 2.1.332 writes them (``compactMetadata.preservedMessages``; shape: the corpus's
``agent-sessions/stage0/claude/small.jsonl``): that is what sends the Codex writer back to
the messages before the compaction. ``--surrogates N`` puts N lines holding a
lone surrogate (``\\ud83d`` alone, as a cut emoji is written) into the file, for ``usage``.

Targets: convert time grows at most linearly (300 MB <= 3.3x the 100 MB time; the issue's
1 GB <= 10x), peak RSS <= 2.5x the file; ``show`` prints its first message within 1 s;
``usage`` with lone-surrogate lines stays within 1.5x the time of the file without them.

    nice python benchmarks/bench_big.py [--sizes 100,300] [--jobs convert,show,usage]
    nice python benchmarks/bench_big.py --write 300 /tmp/big.jsonl   # only generate
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import SOURCES  # noqa: E402
from bench_common import SOURCES_DIR  # noqa: E402
from bench_speed import unique  # noqa: E402

_TIME = Path("/usr/bin/time") if Path("/usr/bin/time").exists() else None
_UUID = re.compile(r'"uuid":"([0-9a-f-]{36})"')
_KEEP = 4  # records a compaction keeps: the last few before the boundary


def _compaction(session: bytes, spotter: bytes) -> bytes:
    """``session`` followed by a compaction that keeps its last few records: the spotter
    session's own boundary and summary lines, linked to ``session``."""
    lines = [json.loads(x) for x in session.splitlines() if x.strip()]
    chain = [r["uuid"] for r in lines if r.get("type") in ("user", "assistant") and isinstance(r.get("uuid"), str)]
    sid = next((r["sessionId"] for r in lines if isinstance(r.get("sessionId"), str)), None)
    stamp = next((r["timestamp"] for r in reversed(lines) if isinstance(r.get("timestamp"), str)), None)
    found = spotter.split(b"\n")
    at = next(i for i, x in enumerate(found) if b'"subtype":"compact_boundary"' in x)
    boundary, summary = json.loads(found[at]), json.loads(found[at + 1])
    kept = chain[-_KEEP:]
    boundary.update(sessionId=sid, timestamp=stamp, logicalParentUuid=chain[-1], uuid=str(uuid.uuid4()))
    boundary["compactMetadata"]["preservedMessages"] = {"uuids": kept, "allUuids": kept}
    summary.update(sessionId=sid, timestamp=stamp, parentUuid=boundary["uuid"], uuid=str(uuid.uuid4()))
    tail = b"\n".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False).encode() for r in (boundary, summary))
    return session.rstrip(b"\n") + b"\n" + tail + b"\n"


_SURROGATE = b'"text":"cut emoji \\ud83d here'


def write_big(path: Path, mb: float, surrogates: int = 0) -> int:
    """Writes a session of about ``mb`` MB to ``path``; returns its size in bytes."""
    if not SOURCES:
        raise SystemExit("no spotter sessions: the benchmarks need the corpus beside the checkout")
    spotter = (SOURCES_DIR / "258c7280-ae70-4798-800f-63464d01a85d.jsonl").read_bytes()
    bases = [_compaction(p.read_bytes(), spotter) for p in sorted((SOURCES_DIR.parent / "generated").glob("*.jsonl"))]
    size, k, marked = 0, 0, 0
    with path.open("wb") as f:
        while size < mb * 1e6:
            data = unique(bases[k % len(bases)], k)
            if marked < surrogates and k % 3 == 1:  # one text per copy, spread over the file
                at = data.find(b'"type":"assistant"')  # in an assistant record: a line usage reads
                i = data.find(b'"text":"', at) if at >= 0 else -1
                if i >= 0:
                    data = data[:i] + _SURROGATE + data[i + len(b'"text":"') :]
                    marked += 1
            if not data.endswith(b"\n"):
                data += b"\n"
            f.write(data)
            size += len(data)
            k += 1
    return size


def measure(cmd: list[str], first_byte: bool = False) -> tuple[float, float, float]:
    """Wall seconds, seconds to the first byte on stdout (nan unless asked), peak RSS MiB."""
    report = tempfile.NamedTemporaryFile(prefix="bench-time-", delete=False)
    report.close()
    full = [str(_TIME), "-f", "%M", "-o", report.name, *cmd] if _TIME else cmd
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    start = time.perf_counter()
    proc = subprocess.Popen(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    ttfb = float("nan")
    assert proc.stdout is not None
    if first_byte:
        proc.stdout.read(1)
        ttfb = time.perf_counter() - start
    while proc.stdout.read(1 << 20):
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    text = Path(report.name).read_text().split()
    os.unlink(report.name)
    rss = int(text[-1]) / 1024 if _TIME and text else usage.ru_maxrss / 1024
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"  ! exit {os.waitstatus_to_exitcode(status)}: {' '.join(cmd[-4:])}")
    return wall, ttfb, rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,300")
    ap.add_argument("--jobs", default="convert,show,usage")
    ap.add_argument("--write", nargs=2, metavar=("MB", "PATH"), help="only generate a session of MB into PATH")
    ap.add_argument("--surrogates", type=int, default=0, help="with --write: lines holding a lone surrogate")
    args = ap.parse_args()
    if args.write:
        size = write_big(Path(args.write[1]), float(args.write[0]), args.surrogates)
        print(f"{args.write[1]}: {size / 1e6:.1f} MB")
        return
    jobs = set(args.jobs.split(","))
    py = [sys.executable, "-m", "txcodec"]
    with tempfile.TemporaryDirectory(prefix="bench-big-") as tmp:
        base = None
        for mb in [float(s) for s in args.sizes.split(",")]:
            src = Path(tmp) / f"{int(mb)}mb.jsonl"
            size = write_big(src, mb) / 1e6
            print(f"session {size:.0f} MB")
            if "convert" in jobs:
                out = Path(tmp) / "out.jsonl"
                wall, _, rss = measure([*py, "convert", str(src), "--to", "codex", "-o", str(out)])
                base = base or (wall, size)
                grow = (wall / base[0]) / (size / base[1])
                print(
                    f"  convert -> codex   {wall:7.2f} s  {rss:6.0f} MiB = {rss / size:.2f}x file  time/MB x{grow:.2f}"
                )
                out.unlink(missing_ok=True)
            if "show" in jobs:
                wall, ttfb, rss = measure([*py, "show", str(src)], first_byte=True)
                print(f"  show               {wall:7.2f} s  first byte {ttfb:5.2f} s  {rss:6.0f} MiB")
            if "usage" in jobs:
                wall, _, rss = measure([*py, "usage", str(src)])
                marked = Path(tmp) / "marked.jsonl"
                write_big(marked, mb, surrogates=5)
                wall2, _, rss2 = measure([*py, "usage", str(marked)])
                marked.unlink()
                print(
                    f"  usage              {wall:7.2f} s  {rss:6.0f} MiB;  with 5 lone-surrogate lines "
                    f"{wall2:6.2f} s {rss2:6.0f} MiB = {wall2 / wall:.2f}x"
                )
            src.unlink()


if __name__ == "__main__":
    sys.exit(main())
