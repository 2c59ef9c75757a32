"""``txcodec serve`` under many readers of a growing session (issue 36, docs/live.md#cost):
a server process serves a Claude Code store of one session that grows by a turn every
``--every`` seconds; ``--clients`` readers hold its events open the whole time, and the
index is asked for now and then. Printed: the server's RSS (MiB) as the session grows,
its CPU seconds, the updates each reader got, and how long the index took to answer.

    python benchmarks/bench_serve.py [--clients 50] [--seconds 60] [--every 0.5] [--start 1]

The session starts at ``--start`` MB (turns of a golden session with fresh ids, as
bench_live.py makes them). Run it for the tree it sits in (PYTHONPATH is set to it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_live import SOURCE  # noqa: E402
from bench_live import _session  # noqa: E402
from bench_live import _turn  # noqa: E402


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _reader(url: str, got: list[int], i: int, stop: asyncio.Event) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("GET", url) as response:
            async for line in response.aiter_lines():
                if line == "event: update":
                    got[i] += 1
                if stop.is_set():
                    return


async def _run(args: argparse.Namespace, url: str, path: Path, pid: int, turns: list[dict]) -> None:
    import httpx

    sid = path.stem
    got = [0] * args.clients
    stop = asyncio.Event()
    async with httpx.AsyncClient(timeout=60) as client:
        page = await client.get(f"{url}/s/claude_code/{sid}")
        assert page.status_code == 200, page.status_code
        since = page.text.split("?since=", 1)[1].split('"', 1)[0]
    events = f"{url}/events/claude_code/{sid}?since={since}"
    readers = [asyncio.create_task(_reader(events, got, i, stop)) for i in range(args.clients)]
    await asyncio.sleep(2)
    cpu0, start = _cpu(pid), time.monotonic()
    samples = [(0.0, path.stat().st_size / 1e6, _rss(pid))]
    index_times = []
    n = 0
    next_sample = 5.0
    async with httpx.AsyncClient(timeout=60) as client:
        while time.monotonic() - start < args.seconds:
            n += 1
            with path.open("ab") as file:
                file.write(_turn(turns, 10**6 + n))
            await asyncio.sleep(args.every)
            elapsed = time.monotonic() - start
            if elapsed >= next_sample:
                t = time.monotonic()
                answer = await client.get(f"{url}/")
                index_times.append(time.monotonic() - t)
                assert answer.status_code == 200
                samples.append((elapsed, path.stat().st_size / 1e6, _rss(pid)))
                next_sample += 5.0
    await asyncio.sleep(3)  # the last updates
    stop.set()
    cpu = _cpu(pid) - cpu0
    for task in readers:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    print(f"{args.clients} readers, a turn every {args.every} s for {args.seconds:.0f} s ({n} turns)")
    print("  seconds  session MB  server RSS MiB")
    for elapsed, mb, rss in samples:
        print(f"  {elapsed:7.0f}  {mb:10.2f}  {rss:14.0f}")
    print(
        f"server CPU {cpu:.1f} s; updates a reader got: min {min(got)}, max {max(got)}; "
        f"the index answered in {min(index_times) * 1e3:.0f} to {max(index_times) * 1e3:.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--start", type=float, default=1.0, help="MB the session starts at")
    args = ap.parse_args()
    lines = [json.loads(raw) for raw in SOURCE.read_bytes().splitlines()]
    turns = [line for line in lines if line.get("type") in ("user", "assistant")]
    head = [line for line in lines if line not in turns]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        (root / "-home-dev-shop").mkdir(parents=True)
        path = root / "-home-dev-shop" / SOURCE.name
        _session(path, turns, head, args.start)
        port = _port()
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        command = [sys.executable, "-m", "txcodec", "serve", "--from", "claude_code", "--root", str(root)]
        log = open(Path(tmp) / "server.log", "w+")  # noqa: SIM115
        server = subprocess.Popen([*command, "--port", str(port)], env=env, stderr=log, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            asyncio.run(_run(args, url, path, server.pid, turns))
        finally:
            server.terminate()
            server.wait(timeout=10)
            log.seek(0)
            said = [line for line in log.read().splitlines() if not line.startswith("serving on")]
            if said:
                print("the server said:", *said[-20:], sep="\n  ")


if __name__ == "__main__":
    main()
