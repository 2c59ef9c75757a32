"""What one look of ``show --follow`` costs (docs/live.md#cost): on a Claude Code session of
SIZE MB (a golden session's turns repeated with fresh ids), the look that opens it, a look
that finds nothing new, and a look after one turn (a few KB) was appended: its decoding
alone, and the whole look (decoding, the conversation read again, the messages compared).
CPU seconds, the best of a few rounds.

    python benchmarks/bench_live.py [--sizes 1 10 50] [--rounds 5] [--rate 1 --seconds 20]

``--rate MB`` also grows a session by that many MB a second for ``--seconds`` while
``txcodec.live.follow`` follows it (the way ``show --follow`` does, pacing included), and
prints how far behind the follow was at the end and at worst, and the CPU it took.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from txcodec import live  # noqa: E402
from txcodec.live import Follower  # noqa: E402

SOURCE = next((ROOT / "golden" / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))


def _turn(lines: list[dict], n: int) -> bytes:
    """The session's lines with fresh uuids and message ids (one turn of the big session)."""
    ids: dict[str, str] = {}

    def fresh(value: str) -> str:
        return ids.setdefault(value, str(uuid.uuid5(uuid.NAMESPACE_URL, f"{n}/{value}")))

    out = []
    for line in lines:
        line = json.loads(json.dumps(line))
        for key in ("uuid", "parentUuid"):
            if isinstance(line.get(key), str):
                line[key] = fresh(line[key])
        message = line.get("message")
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            message["id"] = f"msg_{n}_{message['id']}"
        out.append(json.dumps(line, separators=(",", ":")))
    return ("\n".join(out) + "\n").encode()


def _cpu(work) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 50])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rate", type=float, default=0.0, help="MB a second appended while followed")
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    lines = [json.loads(raw) for raw in SOURCE.read_bytes().splitlines()]
    conversation = [line for line in lines if line.get("type") in ("user", "assistant")]
    head = [line for line in lines if line not in conversation]
    one = _turn(conversation, 10**9)
    print(f"one appended turn: {len(one)} bytes, {len(one.splitlines())} lines")
    print(f"{'size':>8} {'open':>8} {'idle look':>10} {'decode':>8} {'look':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"s{size}.jsonl"
            with path.open("wb") as file:
                file.write(_turn(head, 0))
                n, written = 0, 0
                while written < size * 1e6:
                    n += 1
                    chunk = _turn(conversation, n)
                    file.write(chunk)
                    written += len(chunk)
            opened, idle, decoded, looked = [], [], [], []
            for r in range(args.rounds):
                follower = Follower(path)
                opened.append(_cpu(follower.poll))
                idle.append(_cpu(follower.poll))
                with path.open("ab") as file:
                    file.write(_turn(conversation, 10**6 + r))
                spent: list[float] = []
                real = live.decode_session

                def timed(data, *rest, real=real, spent=spent):
                    start = time.process_time()
                    result = real(data, *rest)
                    spent.append(time.process_time() - start)
                    return result

                live.decode_session = timed
                try:
                    looked.append(_cpu(follower.poll))
                finally:
                    live.decode_session = real
                decoded.append(sum(spent))
            mb = path.stat().st_size / 1e6
            print(
                f"{mb:7.1f}M {min(opened):8.3f} {min(idle) * 1e6:8.0f}µs {min(decoded) * 1e3:6.2f}ms {min(looked):8.3f}"
            )
    if args.rate:
        growing(conversation, head, args.rate, args.seconds)


def growing(conversation: list[dict], head: list[dict], rate: float, seconds: float) -> None:
    """A session growing by ``rate`` MB a second, followed as it grows."""
    import threading

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "growing.jsonl"
        path.write_bytes(_turn(head, 0))
        done = threading.Event()

        def write() -> None:
            n, start, written = 0, time.monotonic(), 0
            with path.open("ab") as file:
                while time.monotonic() - start < seconds:
                    n += 1
                    chunk = _turn(conversation, n)
                    file.write(chunk)
                    file.flush()
                    written += len(chunk)
                    ahead = written / (rate * 1e6) - (time.monotonic() - start)
                    if ahead > 0:
                        time.sleep(ahead)
            done.set()

        writer = threading.Thread(target=write)
        cpu = time.process_time()
        writer.start()
        worst, follower_offset = 0, 0
        follower = Follower(path)
        while not done.is_set():
            started = time.process_time()
            follower.poll()
            spent = time.process_time() - started
            worst = max(worst, path.stat().st_size - follower.offset)
            time.sleep(max(0.2, 2 * spent))
        follower_offset = follower.offset
        behind = path.stat().st_size - follower_offset
        writer.join()
        print(
            f"growing {rate} MB/s for {seconds:.0f} s to {path.stat().st_size / 1e6:.1f} MB: behind at the end "
            f"{behind / 1e6:.1f} MB, at worst {worst / 1e6:.1f} MB; "
            f"{time.process_time() - cpu:.1f} CPU s (writer included)"
        )


if __name__ == "__main__":
    main()
