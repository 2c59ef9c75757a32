"""txcodec's own exceptions: the only ones the library raises on purpose.

Every error a caller can provoke with bad input or a bad store is a subclass of
:class:`TxcodecError`, and also of the builtin a caller would naturally catch
(``ValueError`` for bad input, ``OSError`` for the file system), so existing
``except ValueError`` code keeps working. See ``docs/guarantees.md``.
"""

from __future__ import annotations


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
