"""``txcodec metrics --follow``: a session written call by call over several minutes, pushed
to a loopback OTLP receiver that is stopped and started again, and txcodec itself stopped
and started again from its state file: every point arrives exactly once, and the points are
those ``metrics`` derives from the finished session (docs/live.md#metrics---follow)."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN

pb = pytest.importorskip("opentelemetry.proto.collector.metrics.v1.metrics_service_pb2")

from txcodec import api  # noqa: E402
from txcodec.cli import main  # noqa: E402
from txcodec.metrics import token_points  # noqa: E402
from txcodec.metrics_follow import MetricsFollower  # noqa: E402

SESSION = next((GOLDEN / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))
BASE = datetime(2026, 12, 1, 9, 0, 10, tzinfo=timezone.utc)


class Receiver:
    """An OTLP/HTTP receiver on a fixed loopback port that can be stopped and started."""

    def __init__(self) -> None:
        self.points: list[tuple] = []
        self.port = 0
        self.server: ThreadingHTTPServer | None = None

    def start(self) -> None:
        points = self.points

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                request = pb.ExportMetricsServiceRequest()
                request.ParseFromString(body)
                for metric in request.resource_metrics[0].scope_metrics[0].metrics:
                    for dp in metric.sum.data_points:
                        attrs = {a.key: a.value.string_value for a in dp.attributes}
                        points.append(
                            (metric.name, dp.start_time_unix_nano, dp.time_unix_nano, tuple(sorted(attrs.items())))
                            + (dp.as_double,)
                        )
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()
        self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _expected(path: Path) -> list[tuple]:
    out = []
    for p in token_points([api.to_common(api.load(path))]):
        out.append((p.metric, p.start_ns, p.end_ns, tuple(sorted(p.attributes.items())), p.value))
    return sorted(out)


def _spread(source: Path) -> list[tuple[bytes, datetime]]:
    """The session's lines, each 25 s after the one before (calls in several minutes)."""
    out = []
    for i, raw in enumerate(source.read_bytes().splitlines()):
        when = BASE + timedelta(seconds=25 * i)
        value = json.loads(raw)
        if "timestamp" in value:
            value["timestamp"] = when.isoformat().replace("+00:00", "Z")
        out.append((json.dumps(value).encode() + b"\n", when))
    return out


def test_receiver_and_txcodec_restarted_every_point_once(tmp_path: Path) -> None:
    lines = _spread(SESSION)
    path, state = tmp_path / "s.jsonl", tmp_path / "state.json"
    path.write_bytes(b"")
    clock = {"now": BASE}
    receiver = Receiver()
    receiver.start()
    said: list[str] = []

    def follower() -> MetricsFollower:
        return MetricsFollower(
            [tmp_path],
            receiver.url,
            state,
            now=lambda: int(clock["now"].timestamp() * 1e9),
            sleep=lambda s: None,
            retries=2,
            say=said.append,
        )

    f = follower()
    down_at, restart_at, up_at = len(lines) // 3, len(lines) // 2, 2 * len(lines) // 3
    held = 0
    for i, (raw, when) in enumerate(lines):
        if i == down_at:
            receiver.stop()
        if i == restart_at:
            f = follower()  # txcodec stopped and started: from its state file
        if i == up_at:
            held = len(f.state.outbox)
            receiver.start()
        with path.open("ab") as file:
            file.write(raw)
        clock["now"] = when + timedelta(seconds=1)
        f.tick()
    clock["now"] += timedelta(minutes=5)  # every window closed
    f.tick()
    receiver.stop()

    expected = _expected(path)
    assert len(expected) > 8 and len({p[1] for p in expected}) >= 3  # several windows
    assert held > 0  # points waited in the state file while the receiver was down
    assert any("not sent" in line for line in said)
    assert len(receiver.points) == len(set(receiver.points))  # none twice
    assert sorted(receiver.points) == expected


def test_a_call_after_its_window_was_sent_goes_in_the_next_open_one(tmp_path: Path) -> None:
    lines = _spread(SESSION)
    path, sent = tmp_path / "s.jsonl", []
    half = 2 * len(lines) // 3  # a call or two finished
    path.write_bytes(b"".join(raw for raw, _ in lines[:half]))
    clock = {"now": lines[half - 1][1]}
    f = MetricsFollower(
        [path],
        "http://127.0.0.1:9",
        tmp_path / "state.json",
        now=lambda: int(clock["now"].timestamp() * 1e9),
        sender=lambda points, url: sent.extend(points),
    )
    f.tick()
    clock["now"] += timedelta(minutes=10)  # everything so far closed and sent
    f.tick()
    before = len(sent)
    assert before
    # the rest of the session arrives late, with its old timestamps
    with path.open("ab") as file:
        file.write(b"".join(raw for raw, _ in lines[half:]))
    f.tick()
    clock["now"] += timedelta(minutes=2)
    f.tick()
    windows = [(p.start_ns, p.end_ns) for p in sent]
    late = sent[before:]
    assert late and min(p.start_ns for p in late) >= max(p.end_ns for p in sent[:before])
    keys = [(p.start_ns, p.session_id, p.model, p.query_source, p.type) for p in sent]
    assert len(keys) == len(set(keys)) and len(windows) == len(sent)
    total = sum(p.value for p in sent)
    assert total == sum(p[4] for p in _expected(path))


def test_cli_follow_sends_then_a_second_run_sends_nothing_again(tmp_path: Path) -> None:
    receiver = Receiver()
    receiver.start()
    try:
        args = ["metrics", "--follow", "--endpoint", receiver.url, "--state", str(tmp_path / "state.json")]
        args += ["--lookback", "100000d", "--grace", "0", "--interval", "0.1", "--idle", "0.5", str(SESSION)]
        first = CliRunner().invoke(main, args)
        assert first.exit_code == 0, first.output
        assert sorted(receiver.points) == _expected(SESSION)
        second = CliRunner().invoke(main, args)
        assert second.exit_code == 0, second.output
        assert sorted(receiver.points) == _expected(SESSION)
    finally:
        receiver.stop()
    refused = CliRunner().invoke(main, ["metrics", "--follow", str(SESSION)])
    assert refused.exit_code == 2 and "--endpoint" in refused.output


@pytest.mark.real_client
def test_real_claude_writing_while_followed_every_point_once(tmp_path: Path) -> None:
    """The real ``claude -p`` writes its session in the background while metrics --follow
    ticks; txcodec is restarted from its state file mid-session and the receiver is down
    when the windows close: when it is back, every point arrives once, and they are the
    points ``metrics`` derives from the finished session."""
    import time
    import uuid

    from txcodec.resume_check.claude_code import munge_cwd
    from txcodec.resume_check.claude_code import run_claude
    from txcodec.resume_check.mock.anthropic import AnthropicMock
    from txcodec.resume_check.mock.anthropic import text
    from txcodec.resume_check.mock.anthropic import tool_use
    from txcodec.resume_check.mock.server import MockServer
    from txcodec.resume_check.report import find_client

    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    session_id = str(uuid.uuid4())
    folder = home / ".claude" / "projects" / munge_cwd(str(cwd.resolve()))
    script = [
        tool_use("Bash", {"command": "sleep 1; echo one"}, "toolu_m1", say="First."),
        tool_use("Bash", {"command": "sleep 1; echo two"}, "toolu_m2", say="Second."),
        text("Done."),
    ]
    receiver = Receiver()
    receiver.start()
    skew = {"ns": 0}  # added to the clock at the end: every window closed
    state = tmp_path / "state.json"
    said: list[str] = []

    def follower() -> MetricsFollower:
        return MetricsFollower(
            [home / ".claude" / "projects"],
            receiver.url,
            state,
            now=lambda: time.time_ns() + skew["ns"],
            sleep=lambda s: None,
            retries=1,
            say=said.append,
        )

    f = follower()
    ran: list = []
    with MockServer(AnthropicMock(script, strict=False)) as server:
        client = threading.Thread(
            target=lambda: ran.append(
                run_claude(["-p", "two steps", "--session-id", session_id], cwd, home, server, timeout=90)
            )
        )
        client.start()
        ticks = 0
        while client.is_alive():
            f.tick()
            ticks += 1
            if ticks == 10:
                f = follower()  # txcodec restarted mid-session
            time.sleep(0.2)
        client.join()
    assert ran and ran[0].exit_code == 0, ran and ran[0].stderr[-2000:]
    f.tick()
    receiver.stop()  # down when the windows close
    skew["ns"] = 5 * 60 * 10**9
    f.tick()
    assert f.state.outbox and any("not sent" in line for line in said)
    receiver.start()
    f = follower()
    f.tick()
    receiver.stop()
    path = folder / f"{session_id}.jsonl"
    expected = _expected(path)
    assert len({p[3] for p in expected}) >= 4  # input, output, cache types (and models) of real calls
    assert len(receiver.points) == len(set(receiver.points))
    assert sorted(receiver.points) == expected


def test_the_state_forgets_calls_older_than_the_lookback_and_never_sends_them_again(tmp_path: Path) -> None:
    lines = _spread(SESSION)
    path, state, sent = tmp_path / "s.jsonl", tmp_path / "state.json", []
    path.write_bytes(b"".join(raw for raw, _ in lines))
    clock = {"now": lines[-1][1] + timedelta(minutes=5)}

    def follower() -> MetricsFollower:
        return MetricsFollower(
            [path],
            "http://127.0.0.1:9",
            state,
            lookback_ns=3600 * 10**9,
            now=lambda: int(clock["now"].timestamp() * 1e9),
            sender=lambda points, url: sent.extend(points),
        )

    follower().tick()
    assert sent and json.loads(state.read_bytes())["sources"][str(path)]
    first = len(sent)
    clock["now"] += timedelta(hours=3)  # older than the lookback now
    f = follower()
    f.tick()
    f.tick()
    assert json.loads(state.read_bytes())["sources"][str(path)] == {}  # forgotten
    follower().tick()  # met again after a restart: older than the lookback, not sent
    assert len(sent) == first
