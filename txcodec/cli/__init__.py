"""The ``txcodec`` command: a thin layer over :mod:`txcodec.api`.

Each module in this package registers one command group; library errors become
``click.ClickException`` so the user sees one clear line, never a traceback.
"""

from __future__ import annotations

from importlib import import_module

import click

from .. import __version__

# One module per command group. A module defines ``register(group)``.
COMMAND_MODULES = (
    "store", "inspect", "verify", "show", "export", "usage", "convert", "check", "changes", "metrics", "lineage", "sql",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
