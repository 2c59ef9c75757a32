"""``txcodec metrics --follow``: token usage pushed as sessions are written (docs/live.md).

The points are the ones :mod:`txcodec.metrics` derives (same metric, attributes and
one-minute delta windows); what this adds is time:

* every source (a session file, or each session file under a folder, found again at every
  look) is followed with :class:`txcodec.live.Follower`, and each finished call is counted
  once, by its session and message id, however many files or looks reach it;
* a call is summed into the window of its timestamp while that window is open; a window is
  closed ``grace`` seconds after it ends and its points are sent then, once. A call that
  arrives after its window was closed is summed into the oldest window still open, so
  windows never overlap and no call is counted twice;
* calls older than ``lookback`` (24 hours) when first seen are left out;
* the state file keeps, per source, the calls counted from it (its cursor), the open
  windows' sums and the points not yet sent, written atomically after every change: a
  restart neither drops nor counts again a point;
* a receiver that is down is tried again with growing pauses (``retries`` times per round);
  the points stay in the state file until it answers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from .core.atomic import write_atomic
from .core.errors import InputError
from .live import Follower
from .live import Update
from .metrics import TYPES
from .metrics import WINDOW_NS
from .metrics import Point
from .metrics import _calls
from .metrics import _metric_of
from .metrics import _ns
from .metrics import send

GRACE = 10.0  # seconds after a window ends before it is closed and sent
VERSION = 2


class State(msgspec.Struct):
    """What a restart needs: per source the calls counted from it, the open windows'
    sums (``[metric, start, session, model, source, type, value]``), the points made but
    not yet sent, and the end of the last window closed (ns)."""

    version: int = VERSION
    # per source: each call counted from it, with its time (ns; 0 when it has none)
    sources: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)
    open: list[list[Any]] = msgspec.field(default_factory=list)
    outbox: list[list[Any]] = msgspec.field(default_factory=list)
    closed_until: int = 0
    started: bool = False


def _point(row: list[Any]) -> Point:
    metric, start, session, model, source, kind, value = row
    return Point(metric, start, start + WINDOW_NS, session, model, source, kind, value)


def _row(p: Point) -> list[Any]:
    return [p.metric, p.start_ns, p.session_id, p.model, p.query_source, p.type, p.value]


class MetricsFollower:
    """Follows ``paths`` and sends their token usage to ``endpoint``; :meth:`tick` looks
    once, closes the windows that ended and sends what is waiting."""

    def __init__(
        self,
        paths: list[Path],
        endpoint: str,
        state_file: Path,
        *,
        lookback_ns: int = 24 * 3600 * 10**9,
        grace: float = GRACE,
        retries: int = 4,
        backoff: float = 1.0,
        now: Callable[[], int] = time.time_ns,
        sender: Callable[[list[Point], str], Any] = send,
        sleep: Callable[[float], None] = time.sleep,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.paths, self.endpoint, self.state_file = [Path(p) for p in paths], endpoint, Path(state_file)
        self.lookback_ns, self.grace_ns = lookback_ns, int(grace * 1e9)
        self.retries, self.backoff = retries, backoff
        self.now, self.sender, self.sleep, self.say = now, sender, sleep, say
        self.state = self._load()
        self.counted = {call for calls in self.state.sources.values() for call in calls}
        self.sums: dict[tuple, float] = {tuple(r[:6]): r[6] for r in self.state.open}
        self.followers: dict[Path, Follower] = {}

    # --- state -----------------------------------------------------------------------
    def _load(self) -> State:
        try:
            data = self.state_file.read_bytes()
        except FileNotFoundError:
            return State()
        try:
            state = msgspec.json.decode(data, type=State)
        except msgspec.DecodeError as exc:
            raise InputError(f"{self.state_file}: not a metrics state file ({exc})") from exc
        if state.version != VERSION:
            raise InputError(f"{self.state_file}: state version {state.version}, this txcodec writes {VERSION}")
        return state

    def _save(self) -> None:
        # a call older than the lookback would not be sent if met again: no need to keep it
        oldest = self.now() - self.lookback_ns - WINDOW_NS
        for calls in self.state.sources.values():
            old = [call for call, ns in calls.items() if 0 < ns < oldest]
            for call in old:
                del calls[call]
                self.counted.discard(call)
        self.state.open = [[*key, value] for key, value in sorted(self.sums.items())]
        write_atomic(self.state_file, msgspec.json.encode(self.state), overwrite=True)

    # --- one look ----------------------------------------------------------------------
    def _files(self) -> list[Path]:
        from .usage import folder_files

        out: list[Path] = []
        for path in self.paths:
            out.extend(folder_files(path) if path.is_dir() else [path])
        return out

    def tick(self) -> int:
        """Look once; returns how many points were sent."""
        changed = False
        for path in self._files():
            follower = self.followers.get(path)
            if follower is None:
                follower = self.followers[path] = Follower(path)
            for event in follower.poll():
                if type(event) is Update:
                    changed |= self._count(str(path), event.conversation)
                else:
                    self.say(event.text)
        changed |= self._close()
        self.state.started = True
        if changed or not self.state_file.exists():
            self._save()
        return self._flush()

    def _count(self, source: str, conv: Any) -> bool:
        harness = conv.meta.source_harness
        metric = _metric_of(harness)
        session = conv.meta.id if isinstance(conv.meta.id, str) else "unknown"
        mine = self.state.sources.setdefault(source, {})
        oldest_open = self.state.closed_until
        horizon = self.now() - self.lookback_ns  # older when first seen: never sent
        changed = False
        for n, (query_source, m) in enumerate(_calls(conv, "main", set())):
            call = f"{session}\0{m.id if isinstance(m.id, str) else f'{source}#{n}'}"
            if call in self.counted:
                continue
            self.counted.add(call)
            ns = _ns(m.timestamp)
            mine[call] = ns or 0
            changed = True
            if ns is None or ns < horizon:
                continue  # no time, or before the lookback: counted as seen, never sent
            start = max(ns - ns % WINDOW_NS, oldest_open)
            model = m.model if isinstance(m.model, str) else "unknown"
            for label, field in TYPES:
                key = (metric, start, session, model, query_source, label)
                self.sums[key] = self.sums.get(key, 0.0) + float(getattr(m.usage, field))
        return changed

    def _close(self) -> bool:
        """Move the windows that ended ``grace`` ago into the outbox."""
        now = self.now()
        limit = now - self.grace_ns  # a window ending at or before this is closed
        upto = limit - limit % WINDOW_NS
        if upto <= self.state.closed_until:
            return False
        done = [key for key in self.sums if key[1] + WINDOW_NS <= upto]
        for key in sorted(done, key=lambda k: (k[1], k)):
            self.state.outbox.append([*key, self.sums.pop(key)])
        self.state.closed_until = upto
        return True

    def _flush(self) -> int:
        if not self.state.outbox:
            return 0
        points = [_point(r) for r in self.state.outbox]
        pause = self.backoff
        for attempt in range(self.retries + 1):
            try:
                self.sender(points, self.endpoint)
            except (InputError, OSError) as exc:
                self.say(f"{self.endpoint}: {len(points)} points not sent ({exc}); attempt {attempt + 1}")
                if attempt < self.retries:
                    self.sleep(pause)
                    pause = min(pause * 2, 60.0)
                continue
            self.state.outbox = []
            self._save()
            return len(points)
        return 0  # kept in the state file for the next round

    def run(self, interval: float = 5.0, idle: float | None = None) -> None:
        """Tick every ``interval`` seconds (until ``idle`` seconds pass with nothing sent
        and nothing waiting, when given)."""
        last = time.monotonic()
        while True:
            if self.tick() or self.sums or self.state.outbox:
                last = time.monotonic()
            if idle is not None and time.monotonic() - last >= idle:
                return
            self.sleep(interval)


def default_state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "txcodec" / "metrics-follow.json"
