"""Helpers the command modules share."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click
import msgspec

from .. import registry


class _HarnessChoice(click.Choice):
    """The registered harnesses, looked up when first needed: building the command
    line then imports no harness package, so ``txcodec --help`` starts fast."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(sorted(registry.harnesses()))

    @choices.setter
    def choices(self, value: object) -> None:
        pass


def harness_choice() -> click.Choice:
    return _HarnessChoice()


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


def read_common(path: Any, harness: str | None = None, loss: Any = None) -> Any:
    """The Common conversation in the file at ``path``; errors name the file. A file no
    harness recognizes (empty, or not a known session format) is refused here, with a
    hint, rather than read as generic JSONL."""
    from .. import api

    try:
        session = api.load(path, harness)
        if harness is None and session.harness == "jsonl":
            what = "empty file" if not session.lines else "no known session format in its first lines"
            raise click.ClickException(f"{path}: {what}; name its harness with --from")
        return api.to_common(session, loss)
    except click.ClickException:
        raise
    except (OSError, ValueError, msgspec.MsgspecError) as exc:
        raise click.ClickException(str(exc) if str(exc).startswith(f"{path}:") else f"{path}: {exc}") from exc
