"""``txcodec serve``: the stores as a local web site that updates itself (docs/live.md#serve).

The index is the one ``export --all --to html`` writes (full-text search over each
session's words, filters), made from the sessions the stores list now; a session's page
is the page ``export --to html`` makes, and while the session is written the page is
brought up to date in place over server-sent events (the reader's scroll is kept).

It is read-only and made for one person's machine: only GET and HEAD are answered; it
binds 127.0.0.1 unless told otherwise; a request whose ``Host`` is not the address served
is refused (against DNS rebinding); sessions are addressed by harness and id, looked up
in the stores' listings, never by a path taken from the URL; every page carries the pages'
CSP (plus ``connect-src 'self'`` for its events). Bound to any other address, every
request must carry a token (``?token=``, then a cookie) printed at start.

Needs the ``serve`` extra (Starlette and uvicorn).
"""

from __future__ import annotations

import asyncio
import hmac
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from .core.errors import InputError
from .core.errors import TxcodecError

SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")
HARNESS = re.compile(r"[a-z][a-z0-9_]{0,39}")
COOKIE = "txcodec_token"
HEARTBEAT = 15.0  # seconds between comments on a quiet event stream (proxies close silent ones)
# the sessions without readers kept followed (each holds its conversation): the others, the
# least lately looked at, are let go, and followed anew if asked for again
IDLE_KEPT = 8


class MissingExtra(TxcodecError, ImportError):
    """The ``serve`` extra (Starlette, uvicorn) is not installed."""


def _need_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtra("txcodec serve needs the serve extra: pip install 'txcodec[serve]'") from exc


class _Session:
    """One session being served: its file, followed once for all its readers."""

    def __init__(self, harness: str, path: Path, notify: bool | None = None) -> None:
        from .live import Follower

        self.harness, self.path = harness, path
        self.follower = Follower(path, harness)
        # watchfiles (when installed, or as ``notify`` says): one watch of the session's
        # folder for all its readers, ringing ``bell`` at each change; else readers poll
        self.notify = notify
        self.bell: Any = None
        self.watching: Any = None  # the watch's task, while the session has readers
        self.readers = 0
        self.lock = threading.Lock()
        self.version = 0
        self.conversation: Any = None
        self.looked = 0.0
        # the event that brings a version to the pages, made once for all the readers
        # (each made its own: 50 readers held 50 copies of the conversation's HTML)
        self.sent: tuple[int, bytes] | None = None
        self.rendering = threading.Lock()

    def look(self, interval: float) -> tuple[int, Any]:
        """The conversation and its version, looking at the file at most once per ``interval``."""
        from .live import Update

        with self.lock:
            if time.monotonic() - self.looked >= interval:
                self.looked = time.monotonic()
                for event in self.follower.poll():
                    if type(event) is Update:
                        self.conversation, self.version = event.conversation, self.version + 1
            return self.version, self.conversation

    def event(self, version: int, conv: Any) -> tuple[int, bytes]:
        """The server-sent event that brings ``version`` (``conv``) to a page, made once
        (the readers woken together wait for the first to make it), or a later one's."""
        from .export import html

        with self.rendering:
            sent = self.sent
            if sent is None or sent[0] < version:
                body = html.conversation_html(conv)
                data = "event: update\n" + "".join(f"data: {line}\n" for line in body.split("\n")) + "\n"
                sent = self.sent = (version, data.encode())
            return sent

    async def changed(self, interval: float) -> bool:
        """Until the session's folder changes (True; waiting at most about a second), or
        ``interval`` seconds when there is nothing to be notified by (False)."""
        from .live import WAKE

        if self.watching is None and self.notify is not False:
            self._watch()
        if self.bell is None:
            await asyncio.sleep(interval)
            return False
        try:
            await asyncio.wait_for(self.bell.wait(), WAKE)
        except asyncio.TimeoutError:
            return False
        return True

    def _watch(self) -> None:
        try:
            import watchfiles
        except ImportError:
            if self.notify:
                raise
            self.notify = False
            return
        from .live import watched_folder

        folder, stop = watched_folder(self.follower.watched), asyncio.Event()
        self.bell = asyncio.Event()

        async def ring() -> None:
            async for _ in watchfiles.awatch(folder, watch_filter=None, debounce=100, step=20, stop_event=stop):
                bell, self.bell = self.bell, asyncio.Event()
                bell.set()

        self.watching = (asyncio.get_running_loop().create_task(ring()), stop)

    def joined(self) -> None:
        self.readers += 1

    def left(self) -> None:
        """A reader is gone: the last one stops the watch."""
        self.readers -= 1
        if not self.readers and self.watching is not None:
            task, stop = self.watching
            stop.set()
            self.watching, self.bell = None, None


class Site:
    """What the app serves: the stores' sessions (one harness's, and one root, when given)."""

    def __init__(
        self,
        harness: str | None = None,
        root: str | os.PathLike[str] | None = None,
        interval: float = 0.5,
        notify: bool | None = None,
    ):
        self.harness, self.root, self.interval, self.notify = harness, root, interval, notify
        self.sessions: dict[tuple[str, str], _Session] = {}
        self.rows: dict[str, tuple[tuple[float, int], dict[str, Any]]] = {}  # path -> ((mtime, size), index row)
        self.lock = threading.Lock()

    def listing(self) -> list[Any]:
        from . import sessions

        return [r for r in sessions.discover(self.harness, root=self.root, details=False) if r.path]

    def find(self, harness: str, session_id: str) -> _Session:
        """The session with this harness and id, as the stores list it (never a path from
        the request)."""
        if not HARNESS.fullmatch(harness) or not SAFE_ID.fullmatch(session_id):
            raise KeyError(session_id)
        key = (harness, session_id)
        with self.lock:
            found = self.sessions.get(key)
        if found is not None:
            return found
        rows = [r for r in self.listing() if r.harness == harness and r.session_id == session_id]
        if not rows:
            raise KeyError(session_id)
        path = Path(rows[0].path)
        if path.suffix == ".db":  # one session of a database (opencode, Kilo), read-only
            path = Path(f"{path}#{session_id}")
        with self.lock:
            found = self.sessions.setdefault(key, _Session(harness, path, self.notify))
            idle = [k for k, s in self.sessions.items() if k != key and not s.readers and s.watching is None]
            for gone in sorted(idle, key=lambda k: self.sessions[k].looked)[: max(0, len(idle) - IDLE_KEPT)]:
                del self.sessions[gone]
            return found

    def index_rows(self) -> list[dict[str, Any]]:
        """A row per session for the index, with its words for the search; a session's row
        is made again only when its file changed."""
        from . import api
        from .export import html
        from .export import search
        from .model.loss import PageLoss
        from .sessions import load_row

        out = []
        for r in self.listing():
            try:
                st = os.stat(r.path)
            except OSError:
                continue
            stamp = (st.st_mtime, st.st_size)
            kept = self.rows.get(r.path)
            row = kept[1] if kept is not None and kept[0] == stamp else None
            if row is None:
                try:
                    conv = api.to_common(load_row(r.harness, r.session_id, r.path), PageLoss())
                except (TxcodecError, OSError, ValueError):
                    continue
                row = {
                    "href": f"/s/{r.harness}/{r.session_id}",
                    "harness": r.harness,
                    "title": html.title_of(conv),
                    "prompt": html.first_prompt(conv),
                    "project": conv.meta.cwd if isinstance(conv.meta.cwd, str) else (r.cwd or r.project or ""),
                    "updated": r.updated or "",
                    "messages": len(conv.messages),
                    "words": search.words(conv),
                }
                self.rows[r.path] = (stamp, row)  # one row a session: the last made
            out.append(row)
        return out


def make_app(site: Site, *, hosts: list[str], token: str | None = None) -> Any:
    """The Starlette application: ``hosts`` are the ``Host`` names accepted; ``token``, when
    given, is asked of every request."""
    _need_extra()
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.responses import PlainTextResponse
    from starlette.responses import Response
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from .export import html

    csp = html.environment().globals["csp"]
    headers = {
        "Content-Security-Policy": csp + "; connect-src 'self'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
    }

    def page(body: str, status: int = 200) -> Response:
        return HTMLResponse(body, status, headers=headers)

    async def index(request: Request) -> Response:
        rows = await asyncio.to_thread(site.index_rows)
        return page(html.render_index(rows, "Sessions"))

    def session_of(request: Request) -> _Session | None:
        try:
            return site.find(request.path_params["harness"], request.path_params["session_id"])
        except KeyError:
            return None

    async def session_page(request: Request) -> Response:
        found = await asyncio.to_thread(session_of, request)
        if found is None:
            return PlainTextResponse("no such session", 404, headers=headers)
        version, conv = await asyncio.to_thread(found.look, 0.0)
        if conv is None:
            return PlainTextResponse("the session cannot be read now", 503, headers=headers)
        # the events say what changed since the version this page shows
        events = f"/events/{found.harness}/{request.path_params['session_id']}?since={version}"
        return page(await asyncio.to_thread(html.render, conv, index="/", live=events))

    async def events(request: Request) -> Response:
        found = await asyncio.to_thread(session_of, request)
        if found is None:
            return PlainTextResponse("no such session", 404, headers=headers)

        since = request.query_params.get("since", "")
        start = int(since) if since.isdigit() else None

        async def stream() -> Any:
            seen = start if start is not None else (await asyncio.to_thread(found.look, 0.0))[0]
            quiet = time.monotonic()
            found.joined()
            rung = False
            try:
                while not await request.is_disconnected():
                    # woken by a change: look now (one reader looks, the others find it looked at)
                    version, conv = await asyncio.to_thread(found.look, 0.0 if rung else site.interval)
                    if version != seen and conv is not None:
                        seen, data = await asyncio.to_thread(found.event, version, conv)
                        yield data  # the same bytes for every reader
                        quiet = time.monotonic()
                    elif time.monotonic() - quiet >= HEARTBEAT:
                        yield b": still here\n\n"
                        quiet = time.monotonic()
                    rung = await found.changed(site.interval)  # a change in its folder, or the interval when polling
            finally:
                found.left()

        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    routes = [
        Route("/", index, methods=["GET", "HEAD"]),
        Route("/s/{harness}/{session_id}", session_page, methods=["GET", "HEAD"]),
        Route("/events/{harness}/{session_id}", events, methods=["GET"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])
    if token is None:
        return app

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        """Every request carries the token: ``?token=`` (then kept in a cookie) or the cookie."""
        if scope["type"] != "http":
            return await app(scope, receive, send)
        request = Request(scope)
        given = request.query_params.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            return await PlainTextResponse("a token is needed (see what txcodec serve printed)", 403)(
                scope, receive, send
            )

        async def with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start" and request.query_params.get("token"):
                cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict".encode()
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        return await app(scope, receive, with_cookie)

    return guarded


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def serve(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    harness: str | None = None,
    root: str | os.PathLike[str] | None = None,
    say: Any = print,
) -> None:
    """Serve until interrupted. Bound to an address other than loopback, a token is made
    and printed: every request must carry it."""
    _need_extra()
    import uvicorn

    if not host:
        raise InputError("--host: an address is needed")
    token = None if host in LOOPBACK else secrets.token_urlsafe(24)
    if token is None:
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
    elif host in ("0.0.0.0", "::"):  # any address of the machine: the token is what guards it
        hosts = ["*"]
    else:
        hosts = [host, f"[{host}]"]
    app = make_app(Site(harness, root), hosts=hosts, token=token)
    shown = f"[{host}]" if ":" in host else host
    say(f"serving on http://{shown}:{port}/" + (f"?token={token}" if token else "") + "  (Ctrl-C stops)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
