"""The package's layers hold (docs/architecture.md): no import circle among txcodec's
modules, no import from a lower layer to a higher one, and a harness package is imported
only by harness packages, the registry and the resume checks. Imports made inside a
function count as much as those at the top of a module; only ``if TYPE_CHECKING``
blocks (never run) are left out."""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import ROOT

PACKAGE = ROOT / "txcodec"

# The layers from the bottom up: a module may import its own layer and those below it.
# The features, export/ and resume_check/ sit side by side above the harnesses; cli/ and the
# package's own front (``txcodec/__init__``, ``__main__``) are on top.
LAYERS = {
    "core": 0,
    "model": 1,
    "kit": 2,
    "harnesses": 3,
    "api": 4,
    "sessions": 4,
    "session_index": 4,
    "grep_index": 4,
    "batch": 4,
    "lineage": 4,
    "usage": 4,
    "metrics": 4,
    "verify": 4,
    "live": 4,
    "metrics_follow": 4,
    "redact": 4,
    "export": 5,
    "resume_check": 5,
    "serve": 5,
    "cli": 6,
    "__main__": 6,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    """``txcodec`` itself (the lazy front) is on top; ``_moved`` (the old names' aliases)
    imports nothing of the package but by name, at run time."""
    parts = module.split(".")
    if len(parts) == 1:
        return 7
    if parts[1] == "_moved":
        return 0
    return LAYERS[parts[1]]


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, module: str) -> list[str]:
    """The txcodec modules ``node``'s imports name, wherever they stand (a function's
    too), but under ``if TYPE_CHECKING``. The package ``txcodec`` itself is left out as a
    target: importing any of its modules runs it first, whoever asks."""
    out: list[str] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import):
            out += [alias.name for alias in child.names]
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = module if _is_package(module) else module.rpartition(".")[0]
                for _ in range(child.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{child.module}" if child.module else base
            else:
                target = child.module or ""
            out.append(target)
            # ``from package import name`` imports the submodule when there is one
            out += [f"{target}.{alias.name}" for alias in child.names if f"{target}.{alias.name}" in MODULES]
        elif isinstance(child, ast.If) and _type_checking(child):
            out += [name for stmt in child.orelse for name in _imports(ast.Module([stmt], []), module)]
        else:
            out += _imports(child, module)
    return [name for name in out if name in MODULES and name != "txcodec"]


def _graph() -> dict[str, set[str]]:
    return {name: set(_imports(ast.parse(path.read_text()), name)) - {name} for name, path in MODULES.items()}


GRAPH = _graph()


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert _circles(GRAPH) == []


def test_no_import_runs_up_a_layer():
    up = sorted(
        (importer, imported)
        for importer, targets in GRAPH.items()
        for imported in targets
        if _layer(imported) > _layer(importer)
    )
    assert up == []


def test_only_harnesses_the_registry_and_the_resume_checks_import_a_harness():
    found = sorted(
        (importer, imported)
        for importer, targets in GRAPH.items()
        for imported in targets
        if imported.startswith("txcodec.harnesses.")
        and not importer.startswith(("txcodec.harnesses", "txcodec.resume_check"))
        and importer != "txcodec.kit.registry"
    )
    assert found == []


def test_a_harness_imports_no_other_harness_but_through_what_it_shares():
    """A harness reuses another's code only where the formats are one (stream_json is
    Claude Code's wire format; Kilo is opencode's fork) or where it converts straight from
    the other's records (Codex -> Claude Code without Common): each such borrowing is
    listed, so a new one is a decision."""
    shared = {("stream_json", "claude_code"), ("kilo", "opencode"), ("claude_code", "codex")}
    found = set()
    for importer, targets in GRAPH.items():
        if not importer.startswith("txcodec.harnesses."):
            continue
        own = importer.split(".")[2]
        for imported in targets:
            if imported.startswith("txcodec.harnesses.") and imported.count(".") >= 2:
                other = imported.split(".")[2]
                if other != own:
                    found.add((own, other))
    assert found == shared


def test_the_layer_check_sees_imports():
    """The graph holds the edges a reader sees (a relative import from a package, a
    submodule named in ``from . import``, an import inside a function), so an empty answer
    above means something."""
    assert "txcodec.kit.registry" in GRAPH["txcodec.harnesses.claude_code"]
    assert "txcodec.model.common" in GRAPH["txcodec.lineage"]
    assert "txcodec.harnesses.claude_code.origin" in GRAPH["txcodec.harnesses.claude_code.read"]
    assert "txcodec.kit.load" in GRAPH["txcodec.lineage"]  # inside origin()
    assert all(_layer(name) >= 0 for name in MODULES)  # every top-level module has its layer
