"""Helpers the command modules share."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click
import msgspec

from .. import registry


def harness_choice() -> click.Choice:
    return click.Choice(sorted(registry.harnesses()), case_sensitive=True)


def echo_json(value: Any) -> None:
    click.echo(msgspec.json.format(msgspec.json.encode(value), indent=2).decode())


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn library errors into one clear line and exit status 1."""
    try:
        yield
    except click.ClickException:
        raise
    except (OSError, ValueError, msgspec.MsgspecError) as exc:
        raise click.ClickException(str(exc)) from exc


def stdout_binary() -> Any:
    return sys.stdout.buffer
