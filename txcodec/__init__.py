"""txcodec: read, convert and write the session transcripts of AI coding agents."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING
from typing import Any

from . import _moved
from .core.errors import InputError
from .core.errors import StoreError
from .core.errors import TxcodecError
from .core.errors import UnsafeId

_moved.install()  # the old module names (txcodec.common, txcodec.registry, ...) for one release

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and editors
    from . import usage
    from .api import ToolCall
    from .api import convert
    from .api import detect
    from .api import install
    from .api import load
    from .api import messages
    from .api import sample
    from .api import to_common
    from .api import tool_calls
    from .model.common import Conversation
    from .model.common import Message
    from .model.common import Usage
    from .model.native import NativeSession
    from .model.native import Opaque
    from .sessions import SessionRow
    from .sessions import discover
    from .sessions import resolve
    from .usage import total_usage

__version__ = "0.1.0"

# The public API by the module that defines it, imported on first use: ``import txcodec``
# (and so every ``txcodec`` command) does not pay for msgspec, the harnesses or the usage
# report until it touches them.
_LAZY = {
    "ToolCall": "api",
    "convert": "api",
    "detect": "api",
    "install": "api",
    "load": "api",
    "messages": "api",
    "sample": "api",
    "to_common": "api",
    "tool_calls": "api",
    "Conversation": "model.common",
    "Message": "model.common",
    "Usage": "model.common",
    "NativeSession": "model.native",
    "Opaque": "model.native",
    "SessionRow": "sessions",
    "discover": "sessions",
    "resolve": "sessions",
    "total_usage": "usage",
    "usage": "usage",  # the module itself
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = import_module(f"{__name__}.{_LAZY[name]}")
        value = module if name == _LAZY[name].rpartition(".")[2] else getattr(module, name)
        globals()[name] = value
        return value
    if not name.startswith("_"):  # ``txcodec.api`` and the like, as when all were imported at once
        try:
            return import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Conversation",
    "Message",
    "SessionRow",
    "ToolCall",
    "Usage",
    "convert",
    "discover",
    "install",
    "messages",
    "resolve",
    "sample",
    "tool_calls",
    "total_usage",
    "usage",
    "InputError",
    "NativeSession",
    "Opaque",
    "StoreError",
    "TxcodecError",
    "UnsafeId",
    "detect",
    "load",
    "to_common",
    "__version__",
]
