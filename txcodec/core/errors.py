"""txcodec's own exceptions: the only ones the library raises on purpose.

Every error a caller can provoke with bad input or a bad store is a subclass of
:class:`TxcodecError`, and also of the builtin a caller would naturally catch
(``ValueError`` for bad input, ``OSError`` for the file system), so existing
``except ValueError`` code keeps working. See ``docs/guarantees.md``.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any
from typing import ParamSpec
from typing import TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class TxcodecError(Exception):
    """Base of every error txcodec raises on purpose. ``path`` and ``line`` name the
    place in the input when there is one (``line`` is 1-based)."""

    def __init__(self, message: str, *, path: object = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        message = super().__str__()
        if self.path is None:
            return message
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {message}"


class InputError(TxcodecError, ValueError):
    """The input cannot be used as asked: it is not a session, or not of the harness named."""


class UnsafeId(InputError):
    """An id from a source cannot name a file, folder or command as it is."""


class StoreError(TxcodecError, OSError):
    """A client's store cannot be read or written as needed."""


class InternalError(TxcodecError, RuntimeError):
    """A bug in txcodec, not a problem with the input: an exception nobody expected,
    caught at the library's edge so that callers still see only txcodec's errors."""


# Set to 1 (the test suite does) to let an unexpected exception propagate as it is from
# the guards below, the CLI's included: reaching a guard is a bug, and a test must fail
# on it with the real traceback rather than pass on a tidy message.
STRICT_ENV = "TXCODEC_STRICT"


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


# What a reader or writer raises when a value has another shape than the one it expects
# (a string where it wants an object, a key missing, a number where it wants a list).
# Input is data: such a value is reported in the loss report, never a crash.
# (``MALFORMED``, built on first use by ``__getattr__`` below: importing this module does
# not import msgspec, so ``txcodec --help`` starts without it.)
def __getattr__(name: str) -> Any:
    if name == "MALFORMED":
        import msgspec

        return (TypeError, AttributeError, KeyError, IndexError, ValueError, LookupError, msgspec.MsgspecError)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _msgspec_error() -> type[Exception]:
    """msgspec's base error; before msgspec is imported none can be raised, and
    ``ValueError`` stands in."""
    msgspec = sys.modules.get("msgspec")
    return getattr(msgspec, "MsgspecError", ValueError)


def describe(exc: BaseException) -> str:
    """One line for an exception: its type and message, without a traceback."""
    text = " ".join(str(exc).split()) or "(no message)"
    if len(text) > 300:
        text = text[:300] + "..."
    return f"{type(exc).__name__}: {text}"


def guarded(fn: Callable[P, T]) -> Callable[P, T]:
    """The error contract at a public function's edge: txcodec's own errors pass, an
    ``OSError`` becomes :class:`StoreError`, a ``ValueError`` (or msgspec error) becomes
    :class:`InputError`, and anything else :class:`InternalError` (re-raised as it is
    in strict mode)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except TxcodecError:
            raise
        except OSError as exc:
            error = StoreError(exc.strerror or describe(exc), path=exc.filename)
            error.errno = exc.errno
            raise error from exc
        except (ValueError, _msgspec_error()) as exc:
            raise InputError(str(exc)) from exc
        except RecursionError as exc:
            raise InputError("input nested too deeply to process") from exc
        except Exception as exc:
            if strict():
                raise
            raise InternalError(f"internal error, please report: {describe(exc)}") from exc

    return wrapper
