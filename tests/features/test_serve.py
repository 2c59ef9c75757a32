"""``txcodec serve`` (docs/live.md#serve): the index and the pages of a store, read-only,
guarded (Host header, token when bound elsewhere, sessions by id only), and a page that
gains the new messages of a session being written, in a real browser, without a reload."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.browser import chromium
from support.paths import GOLDEN
from support.paths import ROOT

pytest.importorskip("starlette", reason="the serve extra is not installed: pip install 'txcodec[serve]'")

from starlette.testclient import TestClient  # noqa: E402

from txcodec.serve import Site  # noqa: E402
from txcodec.serve import make_app  # noqa: E402

SOURCE = next((GOLDEN / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))
SID = SOURCE.stem
LOCAL = ["127.0.0.1", "localhost"]


def _store(tmp_path: Path, lines: int | None = None) -> tuple[Path, Path]:
    root = tmp_path / "store"
    (root / "-home-dev-shop").mkdir(parents=True)
    path = root / "-home-dev-shop" / SOURCE.name
    data = SOURCE.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(data[:lines]))
    return root, path


def _client(tmp_path: Path, token: str | None = None) -> TestClient:
    root, _ = _store(tmp_path)
    return TestClient(make_app(Site("claude_code", root), hosts=LOCAL, token=token), base_url="http://127.0.0.1")


def test_index_and_page_with_the_pages_csp(tmp_path: Path) -> None:
    client = _client(tmp_path)
    index = client.get("/")
    assert index.status_code == 200
    assert f'href="/s/claude_code/{SID}"' in index.text and "data-words=" in index.text
    assert "default-src 'none'" in index.headers["content-security-policy"]
    page = client.get(f"/s/claude_code/{SID}")
    assert page.status_code == 200
    assert '<a href="/" data-role="index-link">' in page.text
    assert f'data-live="/events/claude_code/{SID}?since=1"' in page.text
    assert "connect-src &#39;self&#39;" in page.text  # the meta CSP lets the page hear its events, nothing more


@pytest.mark.parametrize(
    "url",
    [
        "/s/claude_code/..%2F..%2F..%2Fetc%2Fpasswd",
        "/s/claude_code/../../etc/passwd",
        "/s/..%2Fclaude_code/" + SID,
        "/s/claude_code/%2Fetc%2Fpasswd",
        "/s/claude_code/" + SID[:8],  # an id prefix is no id
        "/s/codex/" + SID,  # the id under another harness
        "/events/claude_code/..%2Fx",
        "/static/../../etc/passwd",
    ],
)
def test_sessions_are_found_by_id_only(tmp_path: Path, url: str) -> None:
    response = _client(tmp_path).get(url)
    assert response.status_code == 404
    assert "root:" not in response.text


def test_read_only_and_foreign_host_refused(tmp_path: Path) -> None:
    client = _client(tmp_path)
    assert client.post("/").status_code == 405
    assert client.delete(f"/s/claude_code/{SID}").status_code == 405
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_a_token_is_needed_when_bound_elsewhere(tmp_path: Path) -> None:
    client = _client(tmp_path, token="s3cret-token")
    assert client.get("/").status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    first = client.get("/?token=s3cret-token")
    assert first.status_code == 200 and "HttpOnly" in first.headers["set-cookie"]
    assert client.get(f"/s/claude_code/{SID}").status_code == 200  # the cookie carries it on
    assert TestClient(client.app, base_url="http://127.0.0.1").get(f"/s/claude_code/{SID}").status_code == 403


def test_without_the_extra_one_line_names_it() -> None:
    code = (
        "import sys; sys.modules['starlette'] = None; from txcodec.cli import run; "
        "sys.argv = ['txcodec', 'serve']; run()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: txcodec serve needs the serve extra: pip install 'txcodec[serve]'"
    ]


class _Server:
    """uvicorn in a thread, on a free loopback port."""

    def __init__(self, app) -> None:
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def test_a_page_gains_new_messages_without_a_reload_keeping_its_scroll(tmp_path: Path) -> None:
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    root, path = _store(tmp_path, lines=len(lines) // 2)
    site = Site("claude_code", root, interval=0.1)
    app = make_app(site, hosts=LOCAL)
    last_text = "now says alpha and gamma"  # written only by the session's last lines
    assert last_text.encode() not in b"".join(lines[: len(lines) // 2])
    assert last_text.encode() in b"".join(lines)
    with _Server(app) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 800, "height": 300})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{url}/s/claude_code/{SID}")
        assert last_text not in page.inner_text("main")
        page.evaluate("window.__same_page = true")
        page.evaluate("window.scrollTo(0, 120)")
        before = page.evaluate("window.scrollY")
        assert before > 0
        with path.open("ab") as file:
            file.write(b"".join(lines[len(lines) // 2 :]))
        page.locator("main", has_text=last_text).wait_for(timeout=10000)  # the page's CSP forbids eval
        assert page.evaluate("window.__same_page") is True  # no reload
        assert page.evaluate("window.scrollY") == before
        assert page.evaluate("document.querySelector('main').dataset.version") == "1"
        # the index: its search finds a word that only a tool result holds
        page.goto(f"{url}/")
        page.fill("#search", "successfully")
        assert page.inner_text("#count") == "1"
        assert not errors


@pytest.mark.parametrize("notify", [True, False], ids=["watchfiles", "polling"])
def test_fifty_readers_of_a_growing_session_all_get_the_update_and_the_index_answers(
    tmp_path: Path, notify: bool, monkeypatch
) -> None:
    """With watchfiles (one watch of the session's folder rings for all its readers) and
    without it (each reader looks every interval). The update is made once for all of
    them (benchmarks/bench_serve.py: 50 readers each making their own held 50 copies)."""
    import httpx

    from txcodec.export import html

    made: list[int] = []
    real = html.conversation_html
    monkeypatch.setattr(html, "conversation_html", lambda conv: made.append(len(conv.messages)) or real(conv))

    lines = SOURCE.read_bytes().splitlines(keepends=True)
    root, path = _store(tmp_path, lines=len(lines) // 2)
    # notified, a look follows each change: an interval no poll would ever reach
    site = Site("claude_code", root, interval=0.1 if not notify else 3600.0, notify=notify)
    got: list[str] = []
    ready = threading.Barrier(51)

    version, _ = site.find("claude_code", SID).look(0.0)  # what a page opened now shows

    def reader(url: str) -> None:
        with httpx.Client(timeout=30) as client:
            with client.stream("GET", f"{url}/events/claude_code/{SID}?since={version}") as response:
                assert response.status_code == 200
                ready.wait()
                for line in response.iter_lines():
                    if line == "event: update":
                        got.append(line)
                        return

    with _Server(make_app(site, hosts=LOCAL)) as url:
        threads = [threading.Thread(target=reader, args=(url,), daemon=True) for _ in range(50)]
        for t in threads:
            t.start()
        ready.wait(timeout=60)
        with path.open("ab") as file:
            file.write(b"".join(lines[len(lines) // 2 :]))
        started = time.monotonic()
        assert httpx.get(f"{url}/", timeout=30).status_code == 200  # still answering
        for t in threads:
            t.join(timeout=30)
        assert len(got) == 50, f"{len(got)} of 50 readers got the update"
        assert len(made) == 1  # one event made, the same bytes sent to every reader
        assert time.monotonic() - started < 30
        assert len(site.sessions) == 1  # one follower for all of them
        found = site.sessions["claude_code", SID]
        assert (found.bell is not None or found.readers == 0) if notify else found.watching is None
        assert found.notify is not False if notify else found.notify is False


def test_binding_elsewhere_prints_the_token_every_request_needs(tmp_path: Path, monkeypatch) -> None:
    import uvicorn

    from txcodec import serve as server

    root, _ = _store(tmp_path)
    ran: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(app=app, **kw))
    said: list[str] = []
    server.serve("0.0.0.0", 9999, harness="claude_code", root=root, say=said.append)
    [line] = said
    token = line.split("?token=")[1].split()[0]
    assert len(token) >= 24 and ran["host"] == "0.0.0.0" and ran["port"] == 9999
    client = TestClient(ran["app"], base_url="http://192.0.2.7:9999")
    assert client.get("/").status_code == 403
    assert client.get(f"/?token={token}").status_code == 200
    said.clear()
    server.serve("127.0.0.1", 9999, harness="claude_code", root=root, say=said.append)
    assert "token" not in said[0]  # loopback: no token
    assert TestClient(ran["app"], base_url="http://127.0.0.1:9999").get("/").status_code == 200


def test_sessions_without_readers_are_let_go_beyond_a_few(tmp_path: Path) -> None:
    """Each session served is followed whole (its page shows it all): those without readers
    are kept up to ``IDLE_KEPT``, the least lately looked at let go (and followed anew when
    asked for again), so browsing many sessions does not keep them all."""
    import uuid

    from txcodec import serve as server

    root, _ = _store(tmp_path)
    data = SOURCE.read_bytes()
    ids = [str(uuid.UUID(int=n + 1, version=4)) for n in range(server.IDLE_KEPT + 4)]
    for sid in ids:
        (root / "-home-dev-shop" / f"{sid}.jsonl").write_bytes(data.replace(SID.encode(), sid.encode()))
    site = Site("claude_code", root)
    client = TestClient(make_app(site, hosts=LOCAL), base_url="http://127.0.0.1")
    for sid in ids:
        assert client.get(f"/s/claude_code/{sid}").status_code == 200
    assert len(site.sessions) == server.IDLE_KEPT + 1  # the one asked for last, and the kept
    assert ("claude_code", ids[-1]) in site.sessions and ("claude_code", ids[0]) not in site.sessions
    assert client.get(f"/s/claude_code/{ids[0]}").status_code == 200  # followed anew
