"""Common conversation -> one self-contained HTML page.

The layout lives in Jinja2 templates (``templates/``, autoescaped); this module
prepares what they show, block by block, before they run (which results pair with
which calls, a view of each call), and makes the two pieces a long session holds by
the thousand itself: folded outputs and diff lines. Every string from the session
reaches the page escaped: through autoescape, through markupsafe's ``escape`` here, or
through markdown-it with raw HTML turned off, which escapes what it does not turn into
markup and refuses ``javascript:``-style links. A Content
Security Policy admits only the page's own script and style (by hash) and ``data:``
images, so a page never fetches anything.

The stable attributes people can scrape (``data-role``, ``data-tool-use-id``,
``data-tool-result-for``, ``data-agent-id``, ``data-epoch``) are described in
docs/html.md.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import os
import re
import shlex
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from itertools import islice
from typing import Any
from typing import BinaryIO

import msgspec
from markupsafe import Markup
from markupsafe import escape
from msgspec import UNSET

from ..core.gcpause import no_cycle_collection
from ..model import summary as session_summary
from ..model.common import Artifact
from ..model.common import Child
from ..model.common import Command
from ..model.common import Conversation
from ..model.common import Document
from ..model.common import Epoch
from ..model.common import Image
from ..model.common import Message
from ..model.common import RedactedThinking
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.common import Usage
from ..usage import ModelUsage
from ..usage import session_usage
from .text import child_title
from .text import compact_json

# A text longer than this (lines or characters) is folded: shown clipped, in full on a click.
FOLD_LINES = 24
FOLD_CHARS = 2400
# Markdown past this size is shown as plain text: markdown-it is the slowest step, and a
# megabyte-long assistant message is a paste, not prose.
MARKDOWN_LIMIT = 200_000

PriceFn = Callable[[ModelUsage], "float | None"]

# --- tool kinds ----------------------------------------------------------------------

# A tool whose kind the reader left generic still reads better by family: the names of
# Gemini CLI's, Qwen Code's and pi's own tools, as their packages define them (plus
# Claude Code's and Codex's, lower-cased, for readers that leave them generic).
_KIND_BY_NAME = {
    "read_file": "read_file",
    "read": "read_file",
    "read_many_files": "read_file",
    "run_shell_command": "shell_exec",
    "bash": "shell_exec",
    "shell": "shell_exec",
    "exec_command": "shell_exec",
    "replace": "modify_file",
    "edit": "modify_file",
    "write_file": "modify_file",
    "write": "modify_file",
    "multiedit": "modify_file",
    "apply_patch": "modify_file",
    "grep": "code_search",
    "glob": "code_search",
    "search_file_content": "code_search",
    "grep_search": "code_search",
    "find": "code_search",
    "list_directory": "code_search",
    "ls": "code_search",
    "web_search": "http_request",
    "google_web_search": "http_request",
    "web_fetch": "http_request",
    "todowrite": "manage_todos",
    "todo_write": "manage_todos",
    "write_todos": "manage_todos",
    "update_plan": "manage_todos",
    "task": "subagent_task",
    "agent": "subagent_task",
}

_LABEL = {
    "shell_exec": "shell",
    "modify_file": "edit",
    "read_file": "read",
    "code_search": "search",
    "http_request": "web",
    "manage_todos": "todos",
    "subagent_task": "agent",
    "create_task": "task",
    "generic": "tool",
}


def tool_kind(use: ToolUse) -> str:
    if use.kind != "generic":
        return use.kind
    name = use.name.lower()
    if name in _KIND_BY_NAME:
        return _KIND_BY_NAME[name]
    if isinstance(use.input, dict) and isinstance(use.input.get("command") or use.input.get("cmd"), (str, list)):
        return "shell_exec"
    return "generic"


def _first(d: Any, *keys: str) -> Any:
    if isinstance(d, dict):
        for k in keys:
            v = d.get(k)
            if v not in (None, ""):
                return v
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# --- folds, diffs, todos -------------------------------------------------------------


class Fold(msgspec.Struct):
    text: str
    lines: int
    folded: bool


def fold(text: str) -> Fold:
    lines = text.count("\n") + 1
    return Fold(text, lines, lines > FOLD_LINES or len(text) > FOLD_CHARS)


# The two pieces a long session holds by the thousand (a diff line, an output) are
# written here rather than as template macros: a Jinja macro call costs more than the
# markup it makes. Every string from the session goes through ``escape``; the classes
# are this module's own constants.


def folded(f: Fold, cls: str = "out") -> Markup:
    """An output in a ``<pre>``; a long one clipped, with a button that shows it all
    (the whole text is in the page once: the clip is CSS). ``cls`` is one of this module's
    class names. The markup is made in one piece: an output can be megabytes, and each
    ``Markup`` made of it is a copy."""
    text = escape(f.text)
    if not f.folded:
        return Markup(f'<pre class="{cls}">{text}</pre>')
    return Markup(
        f'<div class="fold" data-role="fold"><pre class="{cls}">{text}</pre><button type="button" '
        f'class="unfold" data-lines="{f.lines}">Show all {f.lines} lines</button></div>'
    )


class Hunk(msgspec.Struct):
    header: str
    lines: list[tuple[str, str]]  # (css class: add | del | ctx | meta, text)


_CLASS = {"+": "add", "-": "del", " ": "ctx"}


def _line(text: str) -> tuple[str, str]:
    return _CLASS.get(text[:1], "ctx"), text


_LINE_OPEN = {cls: f'<div class="{cls}">' for cls in ("add", "del", "ctx", "meta")}


def diff(hunks: list[Hunk]) -> Markup:
    out = ['<div class="diff">']
    for h in hunks:
        if h.header:
            out += ('<div class="hunk">', escape(h.header), "</div>")
        # a hunk's lines escaped in one call (escaping leaves line feeds as they are)
        escaped = str(escape("\n".join([text for _, text in h.lines]))).split("\n")
        if len(escaped) != len(h.lines):  # a line holding a line feed itself (or no line)
            escaped = [escape(text) for _, text in h.lines]
        out += [f"{_LINE_OPEN[cls]}{text}</div>" for (cls, _), text in zip(h.lines, escaped)]
    out.append("</div>")
    return Markup("".join(out))


def diff_from_patch(patch: Any) -> list[Hunk] | None:
    """Claude Code's ``structuredPatch``: hunks of prefixed lines, as the client computed them."""
    if not isinstance(patch, list) or not patch:
        return None
    hunks = []
    for h in patch:
        if not isinstance(h, dict) or not isinstance(h.get("lines"), list):
            return None
        header = (
            f"@@ -{h.get('oldStart', '?')},{h.get('oldLines', '?')} "
            f"+{h.get('newStart', '?')},{h.get('newLines', '?')} @@"
        )
        classes = _CLASS  # the lines of all edits: no call per line
        hunks.append(Hunk(header, [(classes.get(x[:1], "ctx"), x) for x in h["lines"] if isinstance(x, str)]))
    return hunks


def diff_from_strings(old: str, new: str) -> list[Hunk]:
    hunks: list[Hunk] = []
    for text in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if text.startswith(("---", "+++")) and not hunks:
            continue
        if text.startswith("@@"):
            hunks.append(Hunk(text, []))
        elif hunks:
            hunks[-1].lines.append(_line(text))
    return hunks


def diff_from_text(patch: str) -> list[Hunk]:
    """A freeform patch (Codex ``apply_patch``, a unified diff): classed by line prefix."""
    hunks = [Hunk("", [])]
    for text in patch.splitlines():
        if text.startswith(("@@", "*** ", "diff ", "--- ", "+++ ")):
            hunks.append(Hunk(text, []))
        else:
            hunks[-1].lines.append(_line(text))
    return [h for h in hunks if h.header or h.lines]


class TodoItem(msgspec.Struct):
    text: str
    status: str


def todos(value: Any) -> list[TodoItem] | None:
    items = _first(value, "todos", "plan", "items")
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if isinstance(item, dict):
            text = _first(item, "content", "step", "description", "text", "title", "subject")
            status = _first(item, "status", "state")
            out.append(TodoItem(str(text) if text is not None else compact_json(item), str(status or "")))
    return out


# --- the view of one tool call -------------------------------------------------------


class ToolView(msgspec.Struct):
    kind: str
    label: str  # a short family label: shell, edit, read, ...
    name: str
    summary: str  # one line for the call's title
    command: str | None = None
    path: str | None = None
    diffs: list[tuple[str, Markup]] | None = None  # (path, the diff)
    new_file: Markup | None = None  # the content written, folded
    todo_items: list[TodoItem] | None = None
    prompt: Markup | None = None  # folded
    params: Markup | None = None  # the input as JSON, folded, when nothing better shows it


def _shell_command(inp: Any) -> str | None:
    cmd = _first(inp, "command", "cmd")
    if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
        # Codex's shell tool takes argv, often ["bash", "-lc", "script"]: show the script
        if len(cmd) == 3 and cmd[1] in ("-lc", "-c"):
            return cmd[2]
        return shlex.join(cmd)
    return _str(cmd)


def _edits(inp: dict, result: ToolResult | None) -> list[tuple[str, Markup]] | None:
    path = _str(_first(inp, "file_path", "path", "absolute_path", "notebook_path")) or ""
    structured = result.structured if result is not None else UNSET
    if isinstance(structured, dict):
        hunks = diff_from_patch(structured.get("structuredPatch"))
        if hunks:
            return [(_str(structured.get("filePath")) or path, diff(hunks))]
    old = _first(inp, "old_string", "oldText", "old_str")
    new = _first(inp, "new_string", "newText", "new_str")
    if isinstance(old, str) or isinstance(new, str):
        return [
            (path, diff(diff_from_strings(old if isinstance(old, str) else "", new if isinstance(new, str) else "")))
        ]
    if isinstance(inp.get("edits"), list):
        out = []
        for e in inp["edits"]:
            o, n = _first(e, "old_string", "oldText"), _first(e, "new_string", "newText")
            if isinstance(o, str) or isinstance(n, str):
                out.append(
                    (path, diff(diff_from_strings(o if isinstance(o, str) else "", n if isinstance(n, str) else "")))
                )
        return out or None
    return None


def _params(inp: Any) -> Markup | None:
    if inp is None or inp == {}:
        return None
    try:
        text = msgspec.json.format(msgspec.json.encode(inp), indent=2).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(inp)
    return folded(fold(text), "out json")


def tool_view(use: ToolUse, result: ToolResult | None) -> ToolView:
    kind = tool_kind(use)
    inp = use.input
    view = ToolView(kind, _LABEL.get(kind, "tool"), use.name, "")
    if kind == "shell_exec":
        view.command = _shell_command(inp)
        desc = _str(_first(inp, "description"))
        view.summary = desc or (view.command or "").strip().split("\n", 1)[0]
        if view.command is None:
            view.params = _params(inp)
    elif kind == "modify_file":
        patch = inp if isinstance(inp, str) else _first(inp, "patch", "input")
        if isinstance(patch, str):  # an apply_patch with no text for its patch shows its input as it is
            hunks = diff_from_text(patch)
            view.diffs = [("", diff(hunks))]
            files = [
                h.header.split(":", 1)[1].strip() for h in hunks if h.header.startswith("*** ") and ":" in h.header
            ]
            view.summary = ", ".join(files)
        elif isinstance(inp, dict):
            view.path = _str(_first(inp, "file_path", "path", "absolute_path", "notebook_path"))
            view.summary = view.path or ""
            view.diffs = _edits(inp, result)
            content = _first(inp, "content", "new_source")
            if view.diffs is None and isinstance(content, str):
                view.new_file = folded(fold(content), "out new")
        if view.diffs is None and view.new_file is None:
            view.params = _params(inp)
    elif kind == "read_file":
        view.path = _str(_first(inp, "file_path", "path", "absolute_path"))
        extra = [
            f"{k} {inp[k]}" for k in ("offset", "limit", "pages") if isinstance(inp, dict) and inp.get(k) is not None
        ]
        view.summary = (view.path or "") + (f" ({', '.join(extra)})" if extra else "")
        if view.path is None:
            view.params = _params(inp)
    elif kind in ("code_search", "http_request"):
        query = _first(inp, "pattern", "query", "url", "q")
        where = _first(inp, "path", "dir_path", "glob", "include")
        view.summary = " in ".join(str(x) for x in (query, where) if x is not None)
        view.params = _params(inp)
    elif kind == "manage_todos":
        view.todo_items = todos(inp)
        view.summary = f"{len(view.todo_items)} items" if view.todo_items is not None else ""
        if view.todo_items is None:
            view.params = _params(inp)
    elif kind == "subagent_task":
        view.summary = str(_first(inp, "description", "subagent_type") or "")
        prompt = _first(inp, "prompt")
        view.prompt = folded(fold(prompt), "out prompt") if isinstance(prompt, str) else None
        if view.prompt is None:
            view.params = _params(inp)
    else:
        first = (
            next((v for v in inp.values() if isinstance(v, (str, int, float))), None) if isinstance(inp, dict) else None
        )
        view.summary = " ".join(str(first).split()) if first is not None else ""
        view.params = _params(inp)
    if len(view.summary) > 160:
        view.summary = view.summary[:159] + "…"
    return view


# --- results ---------------------------------------------------------------------------


class Output(msgspec.Struct):
    body: Markup | None  # the text: folded, or (a subagent's report) as Markdown
    report: bool  # the body is a subagent's report
    images: list[str]  # data: URIs
    others: list[str]  # labels of blocks shown only by name
    persisted: bool


def result_output(result: ToolResult, view: ToolView | None = None) -> Output:
    """What a result shows; ``view`` is its call's (None for a result whose call is not
    in the conversation)."""
    images: list[str] = []
    others: list[str] = []
    report = view is not None and view.kind == "subagent_task"
    cls = "out err" if result.is_error else "out"
    if isinstance(result.persisted_output, str):
        # the preview in ``content`` is the head of this: show the whole once, not both
        text = result.persisted_output
        return Output(markdown(text) if report else folded(fold(text), cls), report, images, others, True)
    if isinstance(result.content, str):
        text = result.content
    else:
        parts = []
        for b in result.content:
            if type(b) is Text:
                parts.append(b.text)
            elif type(b) is Image and (src := image_src(b)):
                images.append(src)
            else:
                others.append(type(b).__name__.lower())
        text = "\n".join(parts)
    if not text or text.isspace():  # blank (as ``not text.strip()``, without copying a long output)
        return Output(None, report, images, others, False)
    return Output(markdown(text) if report else folded(fold(text), cls), report, images, others, False)


_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]*={0,2}")


def image_src(block: Image) -> str | None:
    """A ``data:`` URI for an inline image, or None: only raster types, only base64
    text (an SVG could carry script; a URL would be a network fetch)."""
    if not isinstance(block.data, str) or block.media_type not in _IMAGE_TYPES:
        return None
    if not _BASE64.fullmatch(block.data):
        return None
    return f"data:{block.media_type};base64,{block.data}"


# --- Markdown ------------------------------------------------------------------------


# Both renderers run the same rules: CommonMark's, plus tables and strikethrough. Raw HTML
# is not a rule (it shows as the text it is). Links are checked by the renderer (no
# ``javascript:``, ``vbscript:``, ``file:`` or ``data:`` page; a ``data:`` image only of a
# raster type), and the images it makes are checked again by ``_images``.
_RULES = (
    "blockquote",
    "code",
    "fence",
    "heading",
    "hr",
    "lheading",
    "list",
    "paragraph",
    "reference",
    "autolink",
    "backticks",
    "emphasis",
    "entity",
    "escape",
    "link",
    "image",
    "newline",
    "strikethrough",
    "table",
)


@lru_cache(maxsize=2)
def _markdown(native: bool = True) -> Callable[[str], str]:
    """Markdown to HTML: markdown-it.rs (the ``fast`` extra) when it is installed, about
    ten times quicker than markdown-it-py, which is used otherwise. They give the same
    HTML for the same rules (tests/features/test_html.py compares them on every golden session)."""
    if native:
        try:
            import markdown_it_pyrs
        except ImportError:
            pass
        else:
            return markdown_it_pyrs.MarkdownIt("zero").enable_many(list(_RULES)).render
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md.render


# With raw HTML off, every <img> in the renderer's output is one it made from ``![alt](src)``,
# its attributes escaped (and every ``<a `` a link it made). An image whose source is a
# base64 ``data:`` URI of a raster type stays an image (the page's CSP admits ``data:``
# images and nothing else); any other would be a fetch, so it becomes a link to its
# address named by its alt text (inside a link: the alt text alone, links do not nest).
_IMG_OR_LINK = re.compile(r'<img src="([^"]*)" alt="([^"]*)"( title="[^"]*")? />|<a |</a>')
_INLINE = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}")


def _images(rendered: str) -> str:
    if "<img " not in rendered:
        return rendered
    depth = 0  # links open around the current place

    def swap(m: re.Match) -> str:
        nonlocal depth
        src, alt, title = m.group(1, 2, 3)
        if src is None:
            depth += 1 if m.group(0) == "<a " else -1
            return m.group(0)
        title = title or ""
        if _INLINE.fullmatch(src):
            return f'<img src="{src}" alt="{alt}"{title} loading="lazy">'
        if depth:
            return f'<span class="image-link">{alt or src}</span>'
        return f'<a class="image-link" href="{src}"{title}>{alt or src}</a>'

    return _IMG_OR_LINK.sub(swap, rendered)


# Text with none of Markdown's marks renders as its paragraphs: no need to parse it.
_MARKS = re.compile(r"[`*_\[\]<>#|~&\\!]|^ *(?:[-+=]|\d+[.)])|^(?: {4}|\t)| {2}$", re.M)
_PARAGRAPHS = re.compile(r"\n[ \t]*\n\s*")


def markdown(text: str) -> Markup:
    if len(text) > MARKDOWN_LIMIT:
        return Markup('<pre class="plain">%s</pre>') % text
    if not _MARKS.search(text):
        paragraphs = _PARAGRAPHS.split(text.strip())
        lines = ["\n".join([x.strip() for x in p.split("\n")]) for p in paragraphs]
        return Markup("".join([f"<p>{escape(p)}</p>\n" for p in lines]))
    return Markup(_images(_markdown()(text)))


# --- usage -----------------------------------------------------------------------------


def _n(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def usage_line(m: Message) -> str:
    u = m.usage if isinstance(m.usage, Usage) else m.usage_unverified if isinstance(m.usage_unverified, Usage) else None
    if u is None:
        return ""
    parts = [f"in {_n(u.input_tokens)}", f"out {_n(u.output_tokens)}"]
    if u.cache_read_input_tokens:
        parts.append(f"cache read {_n(u.cache_read_input_tokens)}")
    if u.cache_creation_input_tokens:
        parts.append(f"cache write {_n(u.cache_creation_input_tokens)}")
    return " · ".join(parts) + ("" if isinstance(m.usage, Usage) else " (unverified)")


class Totals(msgspec.Struct):
    rows: list[ModelUsage]
    prices: list[float | None]
    total: ModelUsage
    total_price: float | None


def totals(conv: Conversation, price: PriceFn | None) -> Totals | None:
    rows = [r for r in session_usage(conv) if r.model != "<synthetic>"]
    if not rows:
        return None
    prices = [price(r) if price is not None else None for r in rows]
    total = ModelUsage(rows[0].session, "all models")
    for r in rows:
        for f in msgspec.structs.fields(ModelUsage):
            if isinstance(getattr(r, f.name), int):
                setattr(total, f.name, getattr(total, f.name) + getattr(r, f.name))
    known = [p for p in prices if p is not None]
    return Totals(rows, prices, total, sum(known) if known and len(known) == len(prices) else None)


# --- one conversation's layout ----------------------------------------------------------


class Layout:
    """What the template needs to place one conversation's messages: results beside
    their calls, subagents under theirs, compactions before their summary."""

    def __init__(self, conv: Conversation) -> None:
        calls = {b.id for m in conv.messages for b in m.content if type(b) is ToolUse}
        self.results: dict[str, ToolResult] = {}
        for m in conv.messages:
            for b in m.content:
                if type(b) is ToolResult and b.tool_use_id in calls and b.tool_use_id not in self.results:
                    self.results[b.tool_use_id] = b
        self.paired = {id(b) for b in self.results.values()}
        self.children: dict[str, list[Child]] = {}
        self.orphans: list[Child] = []
        for child in conv.children:
            tid = child.link.tool_use_id
            if isinstance(tid, str) and tid in calls:
                self.children.setdefault(tid, []).append(child)
            else:
                self.orphans.append(child)
        self.epochs = {e.start: (n, e) for n, e in enumerate(conv.epochs, 1)}
        self.messages = conv.messages

    def rows(self) -> Iterator[Row]:
        """One row per message, in order; a row with no blocks draws only its
        compaction line (its results are drawn beside their calls)."""
        previous = ""
        for i, m in enumerate(self.messages):
            assistant = m.role == "assistant"
            blocks = [
                (tag, b, self._prepare(tag, b, assistant))
                for b in m.content
                if id(b) not in self.paired and not _blank(b)
                for tag in (_TAGS.get(type(b), "raw"),)
            ]
            epoch = self.epochs.get(i)
            if epoch:
                previous = ""
            if not blocks:  # results only, drawn beside their calls (half a long session's messages)
                yield Row(m, "", blocks, False, epoch, "", "")
                continue
            kind = message_kind(m)
            yield Row(
                m,
                kind,
                blocks,
                kind == "assistant" and previous == "assistant",
                epoch,
                usage_line(m),
                when(m.timestamp),
            )
            previous = kind

    def _prepare(self, tag: str, block: Any, assistant: bool) -> Any:
        """What the template shows of a block beside the block itself, made here so that
        the template calls no function per block (a call from Jinja costs microseconds)."""
        if tag == "tool_use":
            result = self.results.get(block.id)
            view = tool_view(block, result)
            output = result_output(result, view) if result is not None else None
            return Call(view, result, output, self.children.get(block.id, []))
        if tag == "tool_result":  # a result whose call is not in this conversation
            return Call(None, block, result_output(block), [])
        if tag == "text" and assistant:
            return markdown(block.text)
        if tag == "image":
            return image_src(block)
        return None


class Call(msgspec.Struct):
    """A tool call as the page draws it, or (``view`` None) a result on its own."""

    view: ToolView | None
    result: ToolResult | None
    output: Output | None
    children: list[Child]  # the subagents it started


class Row(msgspec.Struct):
    message: Message
    kind: str  # user, assistant, api-error, summary, injected; "" for a row with no blocks (nothing drawn)
    blocks: list[
        tuple[str, Any, Any]
    ]  # (tag, block, what Layout._prepare made of it), as the template switches on tags
    cont: bool  # a call right after another of the assistant: drawn as the same turn
    epoch: tuple[int, Epoch] | None
    usage: str
    when: str


_TAGS = {
    Text: "text",
    Thinking: "thinking",
    RedactedThinking: "redacted_thinking",
    ToolUse: "tool_use",
    ToolResult: "tool_result",
    Image: "image",
    Command: "command",
    Artifact: "artifact",
    Document: "document",
}


def _blank(block: Any) -> bool:
    return type(block) is Text and (not block.text or block.text.isspace())


def message_kind(m: Message) -> str:
    if m.api_error:
        return "api-error"
    if m.compact_summary:
        return "summary"
    if m.meta or (m.synthetic and m.role == "user"):
        return "injected"
    return m.role


def when(stamp: Any) -> str:
    """``2026-01-02 03:04:05`` from an ISO stamp (kept as written when it is not one)."""
    if not isinstance(stamp, str):
        return ""
    return stamp[:19].replace("T", " ") if len(stamp) >= 19 and stamp[10:11] == "T" else stamp


def title_of(conv: Conversation) -> str:
    """The page's title: the session's own (:mod:`txcodec.model.summary`), else its first
    prompt cut at 80 characters, else its id."""
    own = session_summary.title(conv)
    if own:
        return own
    prompt = first_prompt(conv)
    if prompt:
        return prompt if len(prompt) <= 80 else prompt[:79] + "…"
    return conv.meta.id if isinstance(conv.meta.id, str) else "Conversation"


def full_title(conv: Conversation) -> str:
    """The page heading: the title, or the whole first prompt (wrapped, never cut)."""
    if isinstance(conv.meta.title, str) and conv.meta.title.strip():
        return conv.meta.title.strip()
    for m in conv.messages:
        if m.role == "user" and not (m.meta or m.synthetic or m.compact_summary):
            text = " ".join(b.text for b in m.content if type(b) is Text).strip()
            if text:
                return " ".join(text.split())
    return title_of(conv)


def first_prompt(conv: Conversation) -> str:
    """The first prompt (:func:`txcodec.model.summary.first_prompt`) on one line."""
    return " ".join((session_summary.first_prompt(conv) or "").split())


# --- the page ------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def _template_cache() -> Any:
    """Compiled templates kept for the next run, in ``$XDG_CACHE_HOME/txcodec/templates``
    (compiling them costs each export about 0.05 s). Jinja keys each by the
    template's path and checks its source and the Python version, and compiles again
    what it cannot read (a damaged entry); a cache that cannot be opened or written is
    only a cache: the template is compiled as if there were none."""
    import jinja2

    class Cache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Any) -> None:
            try:
                super().load_bytecode(bucket)
            except OSError:
                bucket.reset()

        def dump_bytecode(self, bucket: Any) -> None:
            try:
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Cache(os.path.join(base, "txcodec", "templates"))


@lru_cache(maxsize=1)
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("txcodec.export", "templates"),
        bytecode_cache=_template_cache(),
        autoescape=True,  # every template is HTML
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    css, js, index_js = _asset("page.css"), _asset("page.js"), _asset("index.js")
    env.globals.update(
        css=Markup(css),
        js=Markup(js),
        index_js=Markup(index_js),
        csp=f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)} {_csp_hash(index_js)}; "
        "img-src data:; base-uri 'none'; form-action 'none'",
        Layout=Layout,
        fold=fold,
        folded=folded,
        diff=diff,
        tool_view=tool_view,
        result_output=result_output,
        markdown=markdown,
        image_src=image_src,
        when=when,
        child_title=child_title,
        n=_n,
        UNSET=UNSET,
    )
    env.filters["n"] = _n
    return env


def _context(conv: Conversation, price: PriceFn | None) -> dict[str, Any]:
    meta = conv.meta
    models = [x for x in meta.models if x != "<synthetic>"] or sorted(
        {m.model for m in conv.messages if isinstance(m.model, str) and m.model != "<synthetic>"}
    )
    facts = [
        (k, v)
        for k, v in (
            ("harness", meta.source_harness),
            ("models", ", ".join(models) or UNSET),
            ("cwd", meta.cwd),
            ("branch", meta.git_branch),
            ("started", when(meta.started_at) or UNSET),
            ("ended", when(meta.ended_at) or UNSET),
            ("client", meta.client_version),
            ("session", meta.id),
        )
        if isinstance(v, str) and v
    ]
    return {
        "conv": conv,
        "title": title_of(conv),
        "heading": full_title(conv),
        "facts": facts,
        "totals": totals(conv, price),
        "index": None,
        "live": None,
    }


def generate(
    conv: Conversation, *, price: PriceFn | None = None, index: str | None = None, live: str | None = None
) -> Iterator[str]:
    """The page in chunks, for writing as it is made. ``price`` turns a model's usage
    row into dollars (None when it cannot); without it no cost is shown. ``index``: the
    address of the index the page links back to (a page of a store export, or of
    ``txcodec serve``); ``live``: the address of the server-sent events that update it
    (``txcodec serve``)."""
    context = {**_context(conv, price), "index": index, "live": live}
    if live is not None:  # the page listens to its server's events (txcodec serve)
        context["csp"] = environment().globals["csp"] + "; connect-src 'self'"
    return environment().get_template("page.html.j2").generate(context)


def conversation_html(conv: Conversation) -> str:
    """What a page's ``<main>`` holds: the conversation alone (``txcodec serve`` sends it to
    a page that is open when the session grows)."""
    return environment().get_template("conversation.html.j2").render(c=conv)


def render(
    conv: Conversation, *, price: PriceFn | None = None, index: str | None = None, live: str | None = None
) -> str:
    return "".join(generate(conv, price=price, index=index, live=live))


def write(conv: Conversation, out: BinaryIO, *, price: PriceFn | None = None, index: str | None = None) -> None:
    """The page as UTF-8 into a binary stream, as it renders. Jinja yields many small
    strings: they are joined a few thousand at a time (by ``str.join``, not a Python loop
    per string). A lone surrogate a reader kept shows as ``\\udXXX``."""
    chunks = generate(conv, price=price, index=index)
    with no_cycle_collection():  # the pieces make no cycles: scanning the conversation again and again would not pay
        while batch := list(islice(chunks, 4096)):
            out.write("".join(batch).encode("utf-8", "backslashreplace"))


def render_index(sessions: Iterable[dict[str, Any]], title: str = "Sessions") -> str:
    """The store's index: sessions grouped by project, newest first, each a dict with
    ``href``, ``title``, ``prompt``, ``harness``, ``project``, ``updated``, ``messages`` and
    ``words`` (the full-text search's: :func:`txcodec.export.search.words`)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in sorted(sessions, key=lambda s: s.get("updated") or "", reverse=True):
        groups.setdefault(s.get("project") or "(no project)", []).append(s)
    ordered = sorted(groups.items(), key=lambda kv: kv[1][0].get("updated") or "", reverse=True)
    harnesses = sorted({s.get("harness") or "" for rows in groups.values() for s in rows} - {""})
    return (
        environment().get_template("index.html.j2").render(title=title, groups=ordered, when=when, harnesses=harnesses)
    )
