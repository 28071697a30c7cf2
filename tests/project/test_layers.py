"""The layer rule: a module imports only from layers below its own (or from its own package), function-local
imports included, and no two modules import each other, however indirectly."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "embedsearch"

LAYERS = [
    {"errors", "version", "disk", "web"},
    {"corpus"},
    {"embedding"},
    {"jobs"},
    {"store"},
    {"retrieval"},
    {"topics", "dedup", "recommend"},
    {"ingest"},
    {"index"},
    {"reviewers", "watch"},
    {"serve"},
    {"cli"},
    {"__init__", "__main__"},
]


def modules() -> dict[str, Path]:
    found = {}
    for file in PACKAGE.rglob("*.py"):
        parts = list(file.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = file
    return found


def imports(name: str, file: Path, known: dict[str, Path]) -> set[str]:
    """Every embedsearch module ``name`` imports, anywhere in the file."""
    package = name.split(".") if file.name == "__init__.py" and name != "__init__" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "embedsearch":
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                target = ".".join([*base, alias.name])
                out.add(target if target in known else ".".join(base) or "__init__")
        elif isinstance(node, ast.Import):
            out.update(".".join(a.name.split(".")[1:]) or "__init__" for a in node.names
                       if a.name.split(".")[0] == "embedsearch")
    return out - {name}


def layer(name: str) -> int:
    top = name.split(".")[0]
    return next(i for i, group in enumerate(LAYERS) if top in group)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, file, known) for name, file in known.items()}


def test_every_module_has_a_layer():
    assert [name for name in modules() if not any(name.split(".")[0] in g for g in LAYERS)] == []


def test_no_module_imports_from_its_own_layer_or_above_except_its_own_package():
    wrong = [f"{name} -> {target}" for name, targets in graph().items() for target in sorted(targets)
             if target.split(".")[0] != name.split(".")[0] and layer(target) >= layer(name)]
    assert wrong == []


def test_no_import_cycles():
    edges = graph()
    for name in edges:  # a package's __init__ may gather its own modules; they must not import it back
        if name in modules() and modules()[name].name == "__init__.py":
            edges[name] = {t for t in edges[name] if not t.startswith(name + ".")}
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_rule_catches_an_upward_import(tmp_path):
    """The test itself fails on what it forbids: a store module importing topics inside a function."""
    file = tmp_path / "snapshot.py"
    file.write_text("def f():\n    from ..topics.model import load\n")
    targets = imports("store.snapshot", file, modules())
    assert "topics.model" in targets and layer("topics.model") > layer("store.snapshot")


def test_the_service_reads_through_the_facade():
    """No route rebuilds the read path: ``serve/`` reaches searches, evidence and recommendations through
    ``Index`` alone (``serve/cluster.py`` is the remote part's adapter of ``retrieval.parts``)."""
    known = modules()
    read_path = {"retrieval.find", "retrieval.evidence", "retrieval.parts", "recommend", "recommend.library",
                 "recommend.model"}
    found = {name: imports(name, file, known) & read_path for name, file in known.items()
             if name.startswith("serve.") and name != "serve.cluster"}
    assert not {name: hits for name, hits in found.items() if hits}
