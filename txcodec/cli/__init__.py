"""The ``txcodec`` command: a thin layer over :mod:`txcodec.api`.

Each module in this package registers one command group; library errors become
``click.ClickException`` so the user sees one clear line, never a traceback.
"""

from __future__ import annotations

from importlib import import_module

import click

from .. import __version__
from ..errors import InternalError, describe, strict

# One module per command group. A module defines ``register(group)``.
COMMAND_MODULES = (
    "store", "inspect", "verify", "show", "export", "usage", "convert", "check", "changes", "metrics", "lineage", "sql",
)


# Exit status for a bug in txcodec (EX_SOFTWARE): 1 is bad input, 2 bad usage.
INTERNAL_ERROR = 70


class _Guarded(click.Group):
    """The last line of the error contract: an exception that no command turned into a
    one-line message is a bug. It is printed as one line and exits 70; in strict mode
    (``TXCODEC_STRICT=1``, set by the test suite) it propagates with its traceback, so a
    test that reaches this guard fails."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            if strict():
                raise
            message = str(exc) if isinstance(exc, InternalError) else f"internal error, please report: {describe(exc)}"
            click.echo(f"Error: {message}", err=True)
            ctx.exit(INTERNAL_ERROR)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="txcodec")
def main() -> None:
    """Read, convert and write the session transcripts of AI coding agents."""


for _name in COMMAND_MODULES:
    try:
        _module = import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as exc:  # a command group not built yet
        if exc.name != f"{__name__}.{_name}":
            raise
        continue
    _module.register(main)
