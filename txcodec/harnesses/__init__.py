"""One package per harness, the same module names in each: records, codec, store,
read, write."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def codec_on_demand(package: str) -> Callable[[str], Any]:
    """A harness package's module ``__getattr__`` giving its ``CODEC`` from ``.codec``: the
    package registers its codec, reader and writer without importing them (listing every
    store for ``export --all`` imports every package and needs none of them), and
    ``from <package> import CODEC`` still works."""

    def getattr_(name: str) -> Any:
        if name == "CODEC":
            return import_module(f"{package}.codec").CODEC
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return getattr_
