"""to_common speed on a ~60 MB Claude Code session, as a ratio to R.

R = msgspec's untyped ``decode`` of every line of the same bytes, measured in the same
run. Target: to_common (load + read) >= 0.3 R; peak RSS <= 250 MiB.

The corpus has no 60 MB session, so one is built from the real spotter sessions,
repeated with their ids made unique per copy (so rule 1 drops nothing) until ~60 MB.

    python benchmarks/bench_common.py [--mb 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
SOURCES_DIR = ROOT.parent / "shared" / "corpus" / "claude_code" / "spotter"
SOURCES = sorted(SOURCES_DIR.glob("*-*-*-*-*.jsonl"))
_ID_FIELDS = (
    b'"uuid":"',
    b'"parentUuid":"',
    b'"id":"msg_',
    b'"id":"toolu_',
    b'"tool_use_id":"toolu_',
    b'"sourceToolAssistantUUID":"',
)


def build(mb: float) -> bytes:
    if not SOURCES:  # else the loop below would never end
        raise SystemExit(f"no spotter sessions in {SOURCES_DIR}: the benchmarks need the corpus beside the checkout")
    parts, size, k = [], 0, 0
    bases = [p.read_bytes() for p in SOURCES]
    while size < mb * 1e6:
        for data in bases:
            tag = f"c{k}-".encode()
            for f in _ID_FIELDS:
                data = data.replace(f, f + tag)
            parts.append(data)
            size += len(data)
            k += 1
    return b"".join(parts)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rss-only", action="store_true", help="one to_common run, then print peak RSS (run alone)")
    args = ap.parse_args()
    from txcodec import api

    data = build(args.mb)
    mb = len(data) / 1e6
    if args.rss_only:
        api.to_common(api.load(data, "claude_code"))
        del data
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS {peak:.0f} MiB for {mb:.1f} MB (limit 250)")
        return
    decoder = msgspec.json.Decoder()

    def baseline():  # R, as the issue defines it: untyped decode_lines of the same bytes
        decoder.decode_lines(data)

    def common():
        api.to_common(api.load(data, "claude_code"))

    r = best(baseline, args.repeat)
    c = best(common, args.repeat)
    lines = data.count(b"\n")
    print(f"session {mb:.1f} MB, {lines} lines")
    print(f"R (msgspec untyped decode_lines):         {mb / r:8.1f} MB/s")
    print(f"to_common (load + read):                  {mb / c:8.1f} MB/s = {r / c:.2f} R (target >= 0.30 R)")


if __name__ == "__main__":
    sys.exit(main())
