"""The modules that moved when the package was layered (0.2), importable by their old names
for one release: ``import txcodec.registry`` gives ``txcodec.kit.registry`` itself, with a
DeprecationWarning naming the new place. An old module whose names now live in several
(``txcodec.common``: the structs, Common JSON) is a module of its own that finds each name
where it went. See CHANGELOG.md."""

from __future__ import annotations

import importlib
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

MOVED: dict[str, str | tuple[str, ...]] = {
    "txcodec.errors": "txcodec.core.errors",
    "txcodec.jsonl": "txcodec.core.jsonl",
    "txcodec.zst": "txcodec.core.zst",
    "txcodec.atomic": "txcodec.core.atomic",
    "txcodec.ids": "txcodec.core.ids",
    "txcodec.dates": "txcodec.core.dates",
    "txcodec.common": ("txcodec.model.common", "txcodec.model.common_json", "txcodec.kit.changes"),
    "txcodec.schema": "txcodec.model.schema",
    "txcodec.changes": ("txcodec.model.changes", "txcodec.kit.changes"),
    "txcodec.tools": "txcodec.model.tools",
    "txcodec.loss": "txcodec.model.loss",
    "txcodec.native": "txcodec.model.native",
    "txcodec.registry": "txcodec.kit.registry",
    "txcodec.detection": "txcodec.kit.detect",
    "txcodec.readkit": "txcodec.kit.read",
    "txcodec.writekit": "txcodec.kit.write",
    "txcodec.conform": "txcodec.kit.conform",
    "txcodec.render": "txcodec.export",
    "txcodec.render.html": "txcodec.export.html",
    "txcodec.render.markdown": "txcodec.export.markdown",
    "txcodec.render.site": "txcodec.export.site",
    "txcodec.render.terminal": "txcodec.export.terminal",
    "txcodec.training": "txcodec.export.training",
    "txcodec.columnar": "txcodec.export.columnar",
    "txcodec.dataset": "txcodec.export.dataset",
    "txcodec.ray": "txcodec.export.ray",
    "txcodec.clients": "txcodec.resume_check",
    "txcodec.clients.mockserver": "txcodec.resume_check.mock.server",
    "txcodec.clients.anthropic": "txcodec.resume_check.mock.anthropic",
    "txcodec.clients.responses": "txcodec.resume_check.mock.responses",
    "txcodec.clients.openai_chat": "txcodec.resume_check.mock.openai_chat",
    "txcodec.clients.process": "txcodec.resume_check.process",
    "txcodec.clients.report": "txcodec.resume_check.report",
    **{
        f"txcodec.clients.{old}": f"txcodec.resume_check.{new}"
        for old, new in (
            ("claude", "claude_code"),
            ("codex", "codex"),
            ("gemini", "gemini_cli"),
            ("qwen", "qwen_code"),
            ("pi", "pi"),
            ("copilot", "copilot_cli"),
            ("continue_cli", "continue_cli"),
            ("opencode", "opencode"),
            ("kimi", "kimi_cli"),
            ("vibe", "mistral_vibe"),
            ("cline", "cline"),
            ("openhands", "openhands"),
            ("aider", "aider"),
            ("droid", "droid"),
        )
    },
}


class _Alias:
    """A finder and loader of the old names (importlib's protocols, without importing its
    ABCs at start-up). It is asked first, so ``txcodec.render.html`` is not found a second
    time under the old package's path; an import of any other name pays one dict look-up."""

    def __init__(self) -> None:
        self._specs: dict[str, ModuleSpec] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        return ModuleSpec(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        new = MOVED[spec.name]
        places = (new,) if isinstance(new, str) else new
        warnings.warn(
            f"{spec.name} moved to {' and '.join(places)}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        if isinstance(new, str):
            module = importlib.import_module(new)
            # the import system sets the alias's spec on the module it is given: kept here to
            # be put back, or the new module would pass for a plain module of the old name
            self._specs[spec.name] = module.__spec__
            return module
        return _Facade(spec.name, [importlib.import_module(name) for name in places])

    def exec_module(self, module: ModuleType) -> None:
        # the new module ran when it was imported; only its own spec is put back
        if module.__spec__.name in self._specs:
            module.__spec__ = self._specs.pop(module.__spec__.name)

    def __repr__(self) -> str:
        return "txcodec._moved._Alias()"


class _Facade(ModuleType):
    """An old module whose names went to several new ones: each name from the first that has it."""

    def __init__(self, name: str, modules: list[ModuleType]) -> None:
        super().__init__(name)
        self._modules = modules

    def __getattr__(self, name: str) -> Any:
        for module in self._modules:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


def install() -> None:
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
