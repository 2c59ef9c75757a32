"""The ``txcodec`` command: a thin layer over :mod:`txcodec.api`.

Each module in this package registers one command group; library errors become
``click.ClickException`` so the user sees one clear line, never a traceback.
"""

from __future__ import annotations

import gc
from importlib import import_module

import click

from .. import __version__
from ..core.errors import InternalError
from ..core.errors import TxcodecError
from ..core.errors import describe
from ..core.errors import strict

# Every command: the module of this package that registers it (``register(group)``) and the
# first sentence of its help, which ``txcodec --help`` lists without importing the module
# (tests/features/test_cli_startup.py checks the sentences against the commands' own help).
COMMANDS = {
    "changes": (
        "changes",
        "The files each tool call changed, per call, with its diff: as the client reported it, "
        "or computed from the versions it recorded.",
    ),
    "check-resume": (
        "check",
        "Resume FILE (a path, a session id or prefix, or latest[:HARNESS]) with the real client "
        "against a strict local mock model and report what it sent.",
    ),
    "convert": ("convert", "Convert sessions to another harness's native format."),
    "export": ("export", "Export sessions (each a file, a session id or prefix, or latest[:HARNESS])."),
    "fixtures": (
        "redact",
        "Build a fixture set from real sessions: for each shape of the fixture checklist, the first record "
        "holding it, cut to a minimal session, redacted, with a MANIFEST.tsv.",
    ),
    "index": ("index", "Show or clear the session index, where `list` keeps what it read of each session."),
    "inspect": (
        "inspect",
        "Show what FILE holds: its harness, a census of record types, every line kept only as bytes "
        "(with its line number and why) and the session's side files.",
    ),
    "lineage": (
        "lineage",
        "How the session in PATH began (new, clear, fork, resume), the sessions it was forked from "
        "and the ones forked from it, by the links the files record (forkedFrom, forked_from_id, parentSession), "
        "never by guessing.",
    ),
    "list": ("store", "List the sessions in the harnesses' stores, newest first."),
    "metrics": (
        "metrics",
        "claude_code.token.usage as Claude Code's exporter writes it, derived from the transcripts: "
        "one point per finished call (its last fragment's usage, counted once), "
        "type input/output/cacheRead/cacheCreation, model, session.id and query_source main/subagent, "
        "as per-minute delta sums.",
    ),
    "redact": (
        "redact",
        "Replace secrets and personal data in sessions, folders or stores by placeholders.",
    ),
    "resume": (
        "convert",
        "Convert SRC to the target harness, install it in that client's store, "
        "and continue it there (``claude --resume``, ``codex resume``, ...).",
    ),
    "sample": ("store", "Print the path of a small synthetic session bundled with txcodec."),
    "serve": (
        "serve",
        "Serve the sessions of every store as local web pages: the index with full-text search, "
        "and each session's page, updated in place while it is written.",
    ),
    "show": (
        "show",
        "Show the conversation in PATH (a file, a session id or prefix, or latest[:HARNESS]), "
        "its subagents indented under their calls.",
    ),
    "sql": ("sql", "Run QUERY with DuckDB over an exported dataset."),
    "usage": (
        "usage",
        "Tokens and cost per session and model, or grouped --by day, week, month, model, project or harness, "
        "with a totals row.",
    ),
    "verify": ("verify", "Check that every file decodes and re-encodes to exactly its own bytes."),
    "watch": (
        "watch",
        "A live table of the sessions being written now, in every store: harness, last activity, project, "
        "title, the tool running, tokens so far and cost where known.",
    ),
}


# Exit status for a bug in txcodec (EX_SOFTWARE): 1 is bad input, 2 bad usage.
INTERNAL_ERROR = 70


class _Guarded(click.Group):
    """The last line of the error contract. txcodec's own errors (but :class:`InternalError`)
    are the user's problem: one line and exit 1, as a command's are. Any other exception
    that no command turned into a one-line message is a bug: it is printed as one line and
    exits 70; in strict mode (``TXCODEC_STRICT=1``, set by the test suite) it propagates
    with its traceback, so a test that reaches this guard fails."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            if isinstance(exc, TxcodecError) and not isinstance(exc, InternalError):
                # raised on purpose (a folder that is not a dataset, an extra not installed):
                # the user's problem, told in one line as any other
                raise click.ClickException(str(exc)) from exc
            if strict():
                raise
            message = str(exc) if isinstance(exc, InternalError) else f"internal error, please report: {describe(exc)}"
            click.echo(f"Error: {message}", err=True)
            ctx.exit(INTERNAL_ERROR)


class _Lazy(_Guarded):
    """Commands imported when they run: ``txcodec --help`` lists :data:`COMMANDS` from
    the table, and ``txcodec usage`` imports the usage module alone."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            import_module(f"{__name__}.{COMMANDS[cmd_name][0]}").register(self)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, from each command's first sentence instead of the command
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit))
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_Lazy, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="txcodec")
def main() -> None:
    """Read, convert and write the session transcripts of AI coding agents."""


def run() -> None:
    """The ``txcodec`` program (the console script and ``python -m txcodec``): :func:`main`,
    after which the process ends. Its objects are then frozen out of the cycle collector:
    the interpreter's exit-time collections would otherwise walk every object the imports
    made (a tenth of a small ``usage``'s run) to free cycles the process's end frees anyway.
    (Not in :func:`main`, which a program may call again and again in-process.)"""
    try:
        main()
    finally:
        gc.freeze()
