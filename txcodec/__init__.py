"""txcodec: read, convert and write the session transcripts of AI coding agents."""

from __future__ import annotations

from .api import detect, load, to_common
from .errors import InputError, StoreError, TxcodecError, UnsafeId
from .native import NativeSession, Opaque

__version__ = "0.1.0"

__all__ = [
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
