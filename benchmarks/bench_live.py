"""What one look of ``show --follow`` costs (docs/live.md#cost): on a Claude Code session of
SIZE MB (a golden session's turns repeated with fresh ids), the look that opens it, a look
that finds nothing new, and a look after one turn (a few KB) was appended: its decoding
alone, and the whole look (decoding, the conversation read again, the messages compared).
CPU seconds, the best of a few rounds.

    python benchmarks/bench_live.py [--sizes 1 10 50] [--rounds 5] [--rate 1 --seconds 20]
        [--open 500] [--files 1000]

``--rate MB`` also grows a session by that many MB a second for ``--seconds`` while
``txcodec.live.follow`` follows it (the way ``show --follow`` does, pacing included), and
prints how far behind the follow was at the end and at worst, and the CPU it took.

``--open MB`` opens a session of that size with a follower in a process of its own and
prints the CPU and the peak memory (RSS) of that first look, and of a look after one turn.
With ``--view`` the lines ``show --follow`` prints are made too (and thrown away), and
``--window N`` follows as ``show --follow`` does, holding N messages (0: all of them).
``--codex MB`` makes a Codex rollout of that size (the ``three_turns`` golden's turns
repeated), opens it with a follower and prints a look after one more turn is appended.
``--files N`` follows N sessions at once (1 MB each), appends a turn to every one, and
prints the CPU of the round of looks that reads them all (a ``watch`` tick).
``--capture MB`` makes a stream-json capture of that size (the ``two_runs`` golden's runs
repeated), opens it with a follower and prints a look after one more run is appended,
and the same with the capture coming on a pipe (``show -f -``).
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
    ap.add_argument("--open", type=float, default=0.0, help="MB of a session opened in a process of its own")
    ap.add_argument("--files", type=int, default=0, help="sessions followed at once")
    ap.add_argument("--codex", type=float, default=0.0, help="MB of a Codex rollout followed")
    ap.add_argument("--capture", type=float, nargs="+", default=[], help="MB of stream-json captures followed")
    ap.add_argument("--view", action="store_true", help="with --open: make the lines show --follow prints")
    ap.add_argument("--window", type=int, default=None, help="with --open: messages held (0: all)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        open_child(Path(args.child), args.view, args.window)
        return
    lines = [json.loads(raw) for raw in SOURCE.read_bytes().splitlines()]
    conversation = [line for line in lines if line.get("type") in ("user", "assistant")]
    head = [line for line in lines if line not in conversation]
    one = _turn(conversation, 10**9)
    if args.open:
        big(conversation, head, args.open, args.view, args.window)
    if args.files:
        many(conversation, head, args.files, args.window)
    if args.codex:
        codex(args.codex, args.rounds, args.window)
    for size in args.capture:
        capture(size, args.rounds)
    if args.open or args.files or args.codex or args.capture:
        return
    print(f"one appended turn: {len(one)} bytes, {len(one.splitlines())} lines")
    print(f"{'size':>8} {'open':>8} {'idle look':>10} {'decode':>8} {'look':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"s{size}.jsonl"
            _session(path, conversation, head, size)
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
                f"{mb:7.1f}M {min(opened):8.3f} {min(idle) * 1e6:8.0f}µs {min(decoded) * 1e3:6.2f}ms "
                f"{min(looked) * 1e3:6.1f}ms"
            )
    if args.rate:
        growing(conversation, head, args.rate, args.seconds, args.view, args.window)


def _session(path: Path, conversation: list[dict], head: list[dict], size: float) -> None:
    """A session of ``size`` MB: the head, then turns with fresh ids."""
    with path.open("wb") as file:
        file.write(_turn(head, 0))
        n, written = 0, 0
        while written < size * 1e6:
            n += 1
            chunk = _turn(conversation, n)
            file.write(chunk)
            written += len(chunk)


def open_child(path: Path, view: bool, window: int | None) -> None:
    """The child of ``--open``: one follower's first look, and a look after a turn."""
    import resource

    if window is None:
        window = getattr(live, "WINDOW", 0)  # as show --follow follows (main before windows: 0)
    follower = Follower(path, window=window) if window else Follower(path)
    printer = None
    printed = [0]
    if view:
        from txcodec.export import terminal

        printer = terminal.FollowView()

    def look() -> None:
        for event in follower.looks() if hasattr(follower, "looks") else follower.poll():
            if printer is not None:
                printed[0] += len(printer.lines(event))

    first = _cpu(look)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [json.loads(r) for r in SOURCE.read_bytes().splitlines()]
    with path.open("ab") as file:
        file.write(_turn([line for line in lines if line.get("type") in ("user", "assistant")], 10**8))
    after = _cpu(look)
    held = len(printer.shown) if printer is not None else "-"
    print(
        f"{path.stat().st_size / 1e6:.0f} MB opened (window {window or 'none'}, view {'yes' if view else 'no'}): "
        f"first look {first:.2f} CPU s, peak RSS {peak:.0f} MiB; a look after one turn {after * 1e3:.1f} ms; "
        f"lines held {len(follower.lines)}; lines printed {printed[0]}, messages the view holds {held}"
    )


def big(conversation: list[dict], head: list[dict], size: float, view: bool, window: int | None) -> None:
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        _session(path, conversation, head, size)
        options = ["--view"] if view else []
        if window is not None:
            options += ["--window", str(window)]
        subprocess.run([sys.executable, __file__, "--child", str(path), *options], check=True)


def many(conversation: list[dict], head: list[dict], count: int, window: int | None = None) -> None:
    """``count`` sessions followed at once, a turn appended to each, then one round of looks
    (``window``: each holding that many messages; none by default, as ``watch`` follows)."""
    import gc
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"s{i}.jsonl" for i in range(count)]
        for path in paths[:1]:
            _session(path, conversation, head, 1)
        for path in paths[1:]:
            path.write_bytes(paths[0].read_bytes())
        followers = [
            Follower(path, "claude_code", window=window) if window else Follower(path, "claude_code") for path in paths
        ]
        opened = _cpu(lambda: [f.poll() for f in followers])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        full = _cpu(gc.collect)  # what a full collection of what the followers hold costs
        idle = _cpu(lambda: [f.poll() for f in followers])
        turn = _turn(conversation, 10**7)
        for path in paths:
            with path.open("ab") as file:
                file.write(turn)
        tick = _cpu(lambda: [f.poll() for f in followers])
        print(
            f"{count} sessions of 1 MB (window {window or 'none'}): opening them {opened:.2f} CPU s, peak RSS "
            f"{peak:.0f} MiB, a full garbage collection {full:.2f} s, a round of looks with nothing new "
            f"{idle * 1e3:.0f} ms, after a turn appended to each {tick:.2f} CPU s ({tick / count * 1e3:.2f} ms a file)"
        )


def codex(size: float, rounds: int, window: int | None = None) -> None:
    import resource

    src = (ROOT / "golden" / "codex" / "scenarios" / "three_turns" / "rollout.jsonl").read_bytes()
    lines = src.splitlines(keepends=True)
    head, turn = b"".join(lines[:2]), b"".join(lines[2:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollout-2026-12-01T00-00-00-01a22f31-57e7-79e3-ac81-23bece3717f4.jsonl"
        with path.open("wb") as file:
            file.write(head)
            for _ in range(int(size * 1e6 / len(turn)) + 1):
                file.write(turn)
        if window is None:
            window = getattr(live, "WINDOW", 0)  # as show --follow follows (main before windows: 0)
        follower = Follower(path, "codex", window=window) if window else Follower(path, "codex")
        opened = _cpu(follower.poll)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        looks = []
        for _ in range(rounds):
            with path.open("ab") as file:
                file.write(turn)
            looks.append(_cpu(follower.poll))
        print(
            f"codex {path.stat().st_size / 1e6:.0f} MB (window {window or 'none'}): open {opened:.2f} s, "
            f"peak RSS {peak:.0f} MiB, "
            f"a look after one turn ({len(turn)} bytes) {min(looks) * 1e3:.1f} ms"
        )


def capture(size: float, rounds: int) -> None:
    """A stream-json capture of ``size`` MB followed from a file and from a pipe: the look
    after one run (a few lines) is appended, best of ``rounds``."""
    import os

    run = (ROOT / "golden" / "stream_json" / "two_runs" / "capture.jsonl").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "capture.jsonl"
        path.write_bytes(run * (int(size * 1e6 / len(run)) + 1))
        follower = Follower(path, "stream_json")
        opened = _cpu(follower.poll)
        looks = []
        for _ in range(rounds):
            with path.open("ab") as file:
                file.write(run)
            looks.append(_cpu(follower.poll))
        read, write = os.pipe()
        with open(read, "rb", buffering=0) as out, open(write, "wb", buffering=0) as into:
            piped = Follower("-", "stream_json", stream=out)
            data = path.read_bytes()
            for at in range(0, len(data), 1 << 16):  # the pipe holds 64 KB: read as it is written
                into.write(data[at : at + (1 << 16)])
                piped.poll()
            pipe_looks = []
            for _ in range(rounds):
                into.write(run)
                pipe_looks.append(_cpu(piped.poll))
        print(
            f"stream-json capture {path.stat().st_size / 1e6:.1f} MB ({len(run)} bytes a run): open {opened:.2f} s, "
            f"a look after one run {min(looks) * 1e3:.1f} ms; on a pipe {min(pipe_looks) * 1e3:.1f} ms"
        )


def growing(
    conversation: list[dict],
    head: list[dict],
    rate: float,
    seconds: float,
    view: bool = False,
    window: int | None = None,
) -> None:
    """A session growing by ``rate`` MB a second, followed as it grows (``view``: the lines
    ``show --follow`` prints made too; ``window``: as it holds messages)."""
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
        if window is None:
            window = getattr(live, "WINDOW", 0)  # as show --follow follows (main before windows: 0)
        follower = Follower(path, window=window) if window else Follower(path)
        printer = None
        if view:
            from txcodec.export import terminal

            printer = terminal.FollowView()
        while not done.is_set():
            started = time.process_time()
            for event in follower.poll():
                if printer is not None:
                    printer.lines(event)
            spent = time.process_time() - started
            worst = max(worst, path.stat().st_size - follower.offset)
            time.sleep(max(0.2, 2 * spent))
        follower_offset = follower.offset
        behind = path.stat().st_size - follower_offset
        writer.join()
        print(
            f"growing {rate} MB/s for {seconds:.0f} s to {path.stat().st_size / 1e6:.1f} MB "
            f"(window {window or 'none'}, view {'yes' if view else 'no'}): behind at the end "
            f"{behind / 1e6:.1f} MB, at worst {worst / 1e6:.1f} MB; "
            f"{time.process_time() - cpu:.1f} CPU s (writer included)"
        )


if __name__ == "__main__":
    main()
