"""The layers of the README's table, as imports: each package may import only the packages
below it (imports under ``if TYPE_CHECKING`` do not count: they never run). A new edge that
breaks the one-way order fails here, naming the module and the import."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "workload_map"

BASE = {"errors", "messages", "logs", "__version__", "py"}  # leaf modules any layer may use
#: What every consumer may read: the machinery below the views.
CONSUMER_BASE = {
    "expr",
    "model",
    "kube",
    "resolve",
    "catalog",
    "cluster",
    "cost",
    "quarantine",
    "definitions_source",
    "runtime",
}
VIEWS = {"type_words", "views", "live"}

#: package -> the workload_map packages it may import (besides itself and BASE).
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "messages": set(),
    "logs": set(),
    "expr": set(),
    "model": {"expr"},
    "crd": {"model"},
    "kube": {"model"},
    "resolve": {"expr", "model", "kube"},
    "lint": {"expr", "model", "kube"},
    "catalog": {"model", "kube"},
    "cluster": {"model", "kube"},
    "cost": set(),
    "quarantine": set(),
    "definitions_source": {"model", "kube", "catalog"},
    "type_words": {"model", "definitions_source"},
    "views": {"model", "kube", "resolve", "definitions_source", "cost"},
    "live": {"model", "kube", "resolve", "views", "definitions_source"},
    "cases": {"model", "kube", "resolve"},
    "generate": {"model", "kube", "lint", "resolve"},
    "interpret": {"expr", "model", "kube", "resolve", "definitions_source", "views"},
    "runtime": {"cluster", "kube"},
    # consumers: none imports another consumer (the CLI starts them all)
    "operator": CONSUMER_BASE | {"crd", "interpret"},
    "exporter": CONSUMER_BASE,
    "server": CONSUMER_BASE | VIEWS,
    "cli": CONSUMER_BASE
    | VIEWS
    | {"crd", "lint", "cases", "generate", "operator", "exporter", "server", "interpret"},
}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("workload_map"):
            if node.module == "workload_map":
                yield from ((node.lineno, a.name) for a in node.names)
            else:
                yield node.lineno, _package(node.module)
        elif isinstance(node, ast.Import):
            yield from (
                (node.lineno, _package(a.name)) for a in node.names if a.name.startswith("workload_map.")
            )


def test_every_package_has_a_layer() -> None:
    found = {
        p.stem if p.is_file() else p.name
        for p in SRC.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    found -= {"__init__", "__main__"}
    assert found <= set(ALLOWED), sorted(found - set(ALLOWED))


def test_imports_go_one_way() -> None:
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        pkg = rel.parts[0].removesuffix(".py")
        if pkg in ("__init__", "__main__"):
            continue
        allowed = ALLOWED[pkg] | BASE | {pkg}
        for line, target in _imports(path):
            if target not in allowed:
                wrong.append(f"{rel}:{line}: {pkg} imports {target}")
    assert not wrong, "\n".join(wrong)
