"""The package stands in layers: each module imports only its own layer and those below it,
no two modules import each other (directly or around a loop), only `kernels/` names a
backend, product files and functions stay within their size limits, and the wheel holds
every product package.

Imports are read from the source (module level and function level alike, `TYPE_CHECKING`
blocks included), so a lazy import cannot hide a breach. The layers, bottom first, are drawn
in docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Folders (or root modules) by layer, bottom first; a module may import its own layer and
# those below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("diagnostics", "files", "limits"),
    ("dialects",),
    ("ir",),
    ("kernels",),
    ("runtime",),
    ("lowering",),
    ("transforms",),
    ("reports",),
    ("frontends",),
    ("tools", "examples"),
)
NOT_PRODUCT = ("tests", "lit", "benchmarks", "scripts", "docs", "build", ".venv")
PROVIDER_WORDS = re.compile(r"\b(onednn|dnnl)\b", re.IGNORECASE)
FILE_LIMIT = 600
DIALECT_FILE_LIMIT = 1500  # op-definition files run long, as in xDSL
FUNCTION_LIMIT = 60


def in_package(path: Path) -> bool:
    """Whether `path` is a module of the package: every folder from the root down to it is a
    package (so a generated module written under examples/models/ is not)."""
    relative = path.relative_to(ROOT)
    return all((ROOT / folder / "__init__.py").exists() for folder in relative.parents)


def product_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if path.relative_to(ROOT).parts[0] not in NOT_PRODUCT
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
        and in_package(path)
    )


def module_name(path: Path) -> str:
    parts = ["nnlayout", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, module: str) -> set[str]:
    """Every `nnlayout` module name `path` imports, wherever the import stands."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] == "nnlayout"}


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in product_files()}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {resolve(name) for name in imported_names(path, module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package's own __init__
    for index, names in enumerate(LAYERS):
        if parts[1] in names:
            return index
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_files() -> None:
    assert cycles(import_graph()) == []


def test_each_module_imports_only_its_layer_and_below() -> None:
    breaches = []
    for module, targets in import_graph().items():
        own = layer_of(module)
        for target in sorted(targets):
            theirs = layer_of(target)
            if own is not None and theirs is not None and theirs > own:
                breaches.append(f"{module} imports {target}")
    assert breaches == []


def backend_words(path: Path) -> list[str]:
    """The names, attributes, imports and string literals of `path` (docstrings and comments
    left out) that name a backend."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (body := node.body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    }
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = "" if id(node) in docstrings else node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.alias):
            text = node.name
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        else:
            continue
        if PROVIDER_WORDS.search(text.replace("_", " ").replace(".", " ")):
            words.append(f"{getattr(node, 'lineno', '?')}: {text[:60]!r}")
    return words


def test_only_kernels_name_a_backend() -> None:
    named = [
        f"{path.relative_to(ROOT)}:{word}"
        for path in product_files()
        if path.relative_to(ROOT).parts[0] != "kernels"
        for word in backend_words(path)
    ]
    assert named == []


@pytest.mark.parametrize("path", product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_sizes(path: Path) -> None:
    relative = path.relative_to(ROOT)
    lines = len(path.read_text().splitlines())
    limit = DIALECT_FILE_LIMIT if relative.parts[0] == "dialects" else FILE_LIMIT
    assert lines <= limit, f"{relative}: {lines} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > FUNCTION_LIMIT
    ]
    assert long == []


def test_the_wheel_lists_every_product_package() -> None:
    """pyproject.toml names the wheel's packages one by one: each product folder is one of
    them, and nothing else is (tests, lit tests, benchmarks and scripts stay out)."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    packages = {module_name(path) for path in product_files() if path.name == "__init__.py"}
    assert listed == packages
