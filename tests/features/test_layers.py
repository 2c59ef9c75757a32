"""The package's layers hold (docs/architecture.md): no import circle among txcodec's
modules, and a harness package is imported only by harness packages, the registry and the
resume checks. Everything else reaches a harness through the registry."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "txcodec"

# Module-level import edges (importer -> imported) known to close a circle, each being
# opened on a branch of its own (issue 32); remove an entry once its branch lands, and the
# test keeps the circle from coming back. None now: the circles the issue names
# (common <-> changes, claude_code read <-> subagents, cline read <-> store, and api ->
# claude_code.from_codex -> codex.read -> lineage -> api) each close through an import
# made inside a function.
KNOWN_CIRCLES: set[tuple[str, str]] = set()

# Imports of a harness package from outside harnesses/, kit/registry.py and
# resume_check/, each being removed on a branch of its own (issue 32). Remove an entry
# once its branch lands.
KNOWN_HARNESS_IMPORTS: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST, module: str, top_level: bool) -> list[str]:
    """The txcodec modules ``node``'s imports name: at module level only (not in a
    function, nor under ``if TYPE_CHECKING``) when ``top_level``, else every one."""
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
        elif top_level and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif top_level and isinstance(child, ast.If) and _type_checking(child):
            out += [name for stmt in child.orelse for name in _imports(ast.Module([stmt], []), module, top_level)]
        else:
            out += _imports(child, module, top_level)
    return [name for name in out if name in MODULES]


def _graph(top_level: bool) -> dict[str, set[str]]:
    return {name: set(_imports(ast.parse(path.read_text()), name, top_level)) - {name} for name, path in MODULES.items()}


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
    graph = _graph(top_level=True)
    for importer, imported in KNOWN_CIRCLES:
        assert imported in graph[importer], f"{importer} -> {imported} is gone: take it off KNOWN_CIRCLES"
        graph[importer].discard(imported)
    assert _circles(graph) == []


def _harness_importers() -> set[tuple[str, str]]:
    out = set()
    for importer, imported in _graph(top_level=False).items():
        if importer.startswith(("txcodec.harnesses", "txcodec.resume_check")) or importer == "txcodec.kit.registry":
            continue
        out |= {(importer, name) for name in imported if name.startswith("txcodec.harnesses.")}
    return out


def test_only_harnesses_the_registry_and_the_resume_checks_import_a_harness():
    found = _harness_importers()
    assert KNOWN_HARNESS_IMPORTS <= found, f"gone: take {KNOWN_HARNESS_IMPORTS - found} off KNOWN_HARNESS_IMPORTS"
    assert found - KNOWN_HARNESS_IMPORTS == set()


def test_the_layer_check_sees_imports():
    """The graph holds the edges a reader sees (a relative import from a package, a
    submodule named in ``from . import``), so an empty answer above means something."""
    graph = _graph(top_level=True)
    assert "txcodec.kit.registry" in graph["txcodec.harnesses.claude_code"]
    assert "txcodec.model.common" in graph["txcodec.lineage"]
    assert "txcodec.harnesses.claude_code.origin" in graph["txcodec.harnesses.claude_code.read"]
