"""A whole store as HTML: one page per session plus ``index.html``, made incrementally.

The sessions come in as the rows ``txcodec list`` shows (dicts with ``harness``,
``path`` and the store's own keys), so any filter that narrows the list narrows the
export. A manifest in the output folder (``.txcodec-export.json``) remembers, for
each page, the files it was made from (path, size, modification time, and a SHA-256 of
their bytes) and the renderer that made it: a session whose files are unchanged is not
read again, and one whose files were touched but hold the same bytes is not
re-rendered. A session's files are its main file and, when there is one, the folder
of side files named after it (Claude Code's subagents and saved tool outputs).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from ..core.atomic import atomic_stream
from ..core.atomic import write_atomic
from ..core.errors import InputError
from ..core.errors import describe
from ..model import summary as session_summary
from ..model.loss import PageLoss
from . import html
from . import search

MANIFEST = ".txcodec-export.json"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Report(msgspec.Struct):
    rendered: list[str] = msgspec.field(default_factory=list)  # page paths, relative to the folder
    unchanged: list[str] = msgspec.field(default_factory=list)
    errors: list[str] = msgspec.field(default_factory=list)  # one line each, naming the file


def renderer_version() -> str:
    """Changes whenever the templates or the renderer do, so old pages are made again."""
    digest = hashlib.sha256()
    digest.update(resources.files(__package__).joinpath("html.py").read_bytes())
    for name in sorted(p.name for p in resources.files(__package__).joinpath("templates").iterdir()):
        digest.update(name.encode() + b"\0" + resources.files(__package__).joinpath("templates", name).read_bytes())
    return digest.hexdigest()[:16]


def session_files(path: Path) -> list[Path]:
    if path.is_dir():  # a session kept as a folder (OpenHands): every file in it
        return sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    files = [path]
    side = path.with_suffix("")
    if side != path and side.is_dir():
        files += sorted(p for p in side.rglob("*") if p.is_file() and not p.is_symlink())
    return files


def _stats(files: list[Path]) -> list[list[Any]]:
    out = []
    for f in files:
        st = f.stat()
        # a name that is not UTF-8 as \xNN escapes: the manifest is JSON, which holds no lone surrogate
        out.append(
            [str(f).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), st.st_size, st.st_mtime_ns]
        )
    return out


def _digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(str(f).encode("utf-8", "surrogateescape") + b"\0")
        with open(f, "rb") as stream:
            while chunk := stream.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def page_name(item: dict[str, Any], taken: set[str]) -> str:
    """``harness/<session id>.html``; an id that cannot name a file (it is data from the
    session) is replaced by a hash of the session's path."""
    harness = item.get("harness") or "session"
    sid = str(item.get("session_id") or item.get("id") or "")
    if not _SAFE_NAME.fullmatch(sid) or sid.endswith("."):
        sid = hashlib.sha256(str(item.get("path")).encode("utf-8", "surrogateescape")).hexdigest()[:20]
    name = f"{harness}/{sid}.html"
    if name in taken:  # one id in two places: the second page takes its path's hash too
        name = (
            f"{harness}/{sid}-"
            f"{hashlib.sha256(str(item.get('path')).encode('utf-8', 'surrogateescape')).hexdigest()[:8]}.html"
        )
    taken.add(name)
    return name


def _load_manifest(out: Path) -> dict[str, Any]:
    try:
        data = msgspec.json.decode((out / MANIFEST).read_bytes())
    except (OSError, msgspec.DecodeError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("pages"), dict) else {}


def _first(item: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if item.get(k):
            return item[k]
    return None


def _one_line(exc: BaseException, path: Path) -> str:
    """Why a page was not made, in one line naming the session's file: an error of the
    input as it says it, any other (a bug) with its type, to be reported."""
    if isinstance(exc, RecursionError):
        text = "nested too deeply to read"
    elif isinstance(exc, (OSError, ValueError, msgspec.MsgspecError)):
        text = " ".join(str(exc).split()) or type(exc).__name__
    else:
        text = f"internal error, please report: {describe(exc)}"
    return text if text.startswith(str(path)) else f"{path}: {text}"


def _shown(text: str, redactor: Any) -> str:
    """A listing's text as the index shows it (redacted with the site's table)."""
    if redactor is None or not text:
        return text
    from ..redact.rewrite import rewrite_text

    return rewrite_text(text, redactor.find, redactor.placeholder)[0]


def export_store(
    items: Iterable[dict[str, Any]],
    out: str | Path,
    *,
    price: html.PriceFn | None = None,
    title: str = "Sessions",
    redactor: Any = None,
    redacted: Any = None,
) -> Report:
    """Write a page for each session in ``items`` (rows as ``txcodec list --json`` gives
    them) and ``index.html`` into the folder ``out``.

    With ``redactor`` (a :class:`txcodec.redact.Redactor`; its findings go to ``redacted``, a
    :class:`txcodec.redact.Report`), every session is learned first and each page and index
    row is made from the redacted conversation, with one placeholder table for the whole
    site. Every page is made anew (a table is one run's), and the manifest keeps no source
    path: the folder is made to be shared."""
    from .. import api
    from ..kit.load import streamed
    from ..sessions import load_row

    out = Path(out)
    items = list(items)
    version = renderer_version() + ("-redacted" if redactor is not None else "")
    old = _load_manifest(out)
    if redactor is not None and old.get("pages") and not str(old.get("renderer", "")).endswith("-redacted"):
        raise InputError(f"{out}: holds pages made without --redact; write the redacted site to another folder")
    out.mkdir(parents=True, exist_ok=True)
    old_pages: dict[str, Any] = old.get("pages", {}) if old.get("renderer") == version and redactor is None else {}
    pages: dict[str, Any] = {}
    report = Report()
    taken: set[str] = set()
    if redactor is not None:
        redactor.learn_sessions(Path(item["path"]) for item in items if item.get("path"))
    for item in items:
        path = item.get("path")
        if not path:
            continue  # a session whose main file is gone (pruned): nothing to show
        path = Path(path)
        name = page_name(item, taken)
        if redactor is not None:
            name = "/".join(redactor.redact_name(part) for part in name.split("/"))
        try:
            files = session_files(path)
            stats = _stats(files) if redactor is None else []
            before = old_pages.get(name)
            if before and before["files"] == stats and (out / name).is_file():
                pages[name] = before
                report.unchanged.append(name)
                continue
            digest = _digest(files) if redactor is None else ""
            if before and before["sha256"] == digest and (out / name).is_file():
                pages[name] = {**before, "files": stats}
                report.unchanged.append(name)
                continue
            # read as it is decoded when its harness can (as a single export is): the file's
            # bytes and typed records are never all held beside the page
            session = streamed(path, item.get("harness"))
            if session is None:
                session = load_row(item.get("harness"), item.get("session_id"), path)
            conv = api.to_common(session, PageLoss())  # drawn only as a page
            del session
            if redactor is not None:
                from ..redact import redact_conversation

                conv = redact_conversation(conv, redactor, redacted, name)
            with atomic_stream(out / name, overwrite=True) as stream:
                html.write(conv, stream, price=price, index="../" * name.count("/") + "index.html")
        except Exception as exc:  # noqa: BLE001 - one session's failure is that session's, never the site's
            report.errors.append(_one_line(exc, path))
            continue
        pages[name] = {
            "files": stats,
            "sha256": digest,
            "row": {
                "href": name,
                "harness": item.get("harness") or "",
                "title": html.title_of(conv),
                "prompt": html.first_prompt(conv),
                "project": conv.meta.cwd
                if isinstance(conv.meta.cwd, str)
                else _shown(str(_first(item, "cwd", "project") or ""), redactor),
                "updated": str(
                    _first(item, "updated", "last_timestamp", "last_updated", "started")
                    or (conv.meta.ended_at if isinstance(conv.meta.ended_at, str) else "")
                ),
                "words": search.words(conv),  # the index's full-text search (export/search.py)
                "messages": session_summary.message_count(conv),
            },
        }
        report.rendered.append(name)
    # pages of sessions not in this run (filtered out, or gone) stay listed in the manifest
    # only while their page exists, so a later run with other filters can reuse them
    keep = {k: v for k, v in old_pages.items() if k not in pages and (out / k).is_file()}
    # what index.html was made from: this run's pages, in order, and the title
    shown = {"title": title, "index": list(pages)}
    manifest = {"renderer": version, "pages": {**keep, **pages}, **shown}
    if manifest == old and (out / "index.html").is_file():
        return report  # nothing changed: the index and the manifest are already these (a stat per source)
    write_atomic(
        out / "index.html",
        html.render_index([p["row"] for p in pages.values()], title).encode("utf-8", "backslashreplace"),
        overwrite=True,
    )
    write_atomic(out / MANIFEST, msgspec.json.encode(manifest), overwrite=True)
    return report
