"""txcodec: read, convert and write the session transcripts of AI coding agents."""

from __future__ import annotations

from . import usage
from .api import ToolCall, convert, detect, install, load, messages, sample, to_common, tool_calls
from .common import Conversation, Message, Usage
from .errors import InputError, StoreError, TxcodecError, UnsafeId
from .native import NativeSession, Opaque
from .sessions import SessionRow, discover, resolve
from .usage import total_usage

__version__ = "0.1.0"

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
