"""`txcodec list`'s table is written as text rather than laid out by rich, and must be
exactly what rich prints, whatever the cells hold (wide and zero-width characters, emoji
codes, control characters, tabs, long titles, narrow lines), on a terminal (a bold header
row) or not."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from txcodec.cli.store import _table
from txcodec.sessions import SessionRow

# pieces a title, project or id may hold: plain words and everything rich treats specially
PIECES = ["fix the parser", "a", " ", "  trailing  ", ":smile:", ":not_an_emoji:", "ts:12:30", "日本語のタイトル",
          "naïve café", "emoji 🎉 here", "e\u0301", "zero\u200bwidth", "tab\there", "bell\x07", "vt\x0b", "ff\x0c",
          "line\u2028sep", "nul\x00", "x" * 90, "—", "「引用」", "[metadata-only]", "[bold]markup[/bold]", "\\", "…"]


def _rows(rng: random.Random, count: int, pieces: list[str] = PIECES) -> list[SessionRow]:
    rows = []
    for n in range(count):
        harness = rng.choice(["claude_code", "codex", "gemini_cli", "pi"])
        words = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
        cwd = rng.choice([None, "/w/project", "/w/" + "".join(rng.choice(pieces) for _ in range(2)), "/w/" + "p" * 30])
        parent = rows[-1].session_id if rows and rows[-1].parent is None and rng.random() < 0.2 else None
        rows.append(SessionRow(
            harness=harness, session_id=f"{n:08x}-sess{'x' * rng.randint(0, 8)}", path=f"/s/{n}.jsonl", cwd=cwd,
            project=cwd.rsplit("/", 1)[-1] if cwd else None,
            title=rng.choice([None, words]), first_prompt=rng.choice([None, words, "hello\nworld"]),
            updated=rng.choice([None, "2026-01-02T03:04:05Z", "2026-11-30T23:59:59.123+01:00"]),
            messages=rng.choice([None, 0, 7, 12345]), parent=parent,
            status=rng.choice(["ok", "ok", "pruned", "metadata-only"]), subagents=rng.choice([0, 0, 3])))
    return rows


def _render(rows: list[SessionRow], width: int, plain: bool, colors: str | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, highlight=False, soft_wrap=False, width=width, markup=False,
                      force_terminal=colors is not None, color_system=colors)
    assert console.color_system == colors  # None: not a terminal, rich prints no styles
    _table(rows, console, plain=plain)
    return out.getvalue()


@pytest.mark.parametrize("seed", range(40))
def test_the_written_table_is_what_rich_prints(seed):
    rng = random.Random(seed)
    rows = _rows(rng, rng.randint(1, 30))
    for width in (160, 120, 100, 60, 40):
        assert _render(rows, width, plain=True) == _render(rows, width, plain=False), (seed, width)


@pytest.mark.parametrize("colors", ["standard", "256", "truecolor"])
@pytest.mark.parametrize("seed", range(8))
def test_on_a_terminal_the_header_is_bold_as_rich_makes_it(seed, colors):
    rng = random.Random(seed)
    rows = _rows(rng, rng.randint(1, 20), [p for p in PIECES if "\t" not in p])
    for width in (200, 120, 80):
        written = _render(rows, width, plain=True, colors=colors)
        assert written == _render(rows, width, plain=False, colors=colors), (seed, width)
    assert written.startswith("\x1b[1mharness")


@pytest.mark.parametrize("seed", range(10))
def test_rows_without_tabs_are_written_directly_and_match(monkeypatch, seed):
    # only a tab sends the table back to rich: everything else takes the direct path
    # (rich's Table is never built) and still prints what rich prints
    rng = random.Random(seed)
    rows = _rows(rng, 30, [p for p in PIECES if "\t" not in p])
    expected = {(width, colors): _render(rows, width, plain=False, colors=colors)
                for width in (160, 120) for colors in (None, "truecolor")}
    import rich.table

    def refuse(*args, **kwargs):
        raise AssertionError("rich's table was used")

    monkeypatch.setattr(rich.table.Table, "__init__", refuse)
    for (width, colors), text in expected.items():
        assert _render(rows, width, plain=True, colors=colors) == text
