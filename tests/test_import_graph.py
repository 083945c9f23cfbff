"""The package's import graph has no circles (every ``import`` counted, also those inside functions)."""

from __future__ import annotations

import ast
from pathlib import Path

import gfun

SRC = Path(gfun.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the gfun modules it imports (``from a.b import c`` counts ``a.b``, and ``a.b.c`` if a module)."""
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            # a module importing the package it belongs to is not a circle (Python runs the package first)
            graph[mod] |= {n for n in names if n in files and n != mod and not mod.startswith(n + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (its modules, first one repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "gfun.corpus.multilingual" in graph["gfun.corpus.inputs"]  # a module-level import
    assert "gfun.text.langid" in graph["gfun.corpus.multilingual"]  # an import inside a method
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


#: The packages and top-level modules of gfun, lowest first: each imports only from those before it.
LAYERS = ["errors", "core", "text", "corpus", "metrics", "svm", "datasets", "encoders", "wordvectors", "neural",
          "views", "predictions", "persistence", "estimator", "funnelling", "baselines", "configuration",
          "experiments", "serve", "cli"]


def test_every_top_level_entry_is_a_layer_and_no_import_runs_back_up() -> None:
    entries = {p.stem if p.suffix == ".py" else p.name for p in SRC.iterdir()
               if p.name != "__init__.py" and not p.name.startswith((".", "__")) and (p.suffix == ".py" or p.is_dir())}
    assert entries == set(LAYERS), "every top-level entry of src/gfun is one layer of the architecture"
    assert len(entries) <= 20
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = []
    for mod, imported in import_graph().items():
        if "." not in mod:
            continue
        layer = mod.split(".")[1]
        upward += [f"{mod} -> {other}" for other in imported
                   if "." in other and rank[other.split(".")[1]] > rank[layer]]
    assert not upward, "imports running back up the layers: " + ", ".join(sorted(upward))


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = import_graph()
    assert "gfun.svm.kernel" in graph["gfun.funnelling.meta"]  # downward: allowed
    assert LAYERS.index("svm") < LAYERS.index("funnelling")


def test_code_and_tests_cite_no_issue_numbers() -> None:
    """Docstrings and comments say what the code does and why; the history of a change belongs to git."""
    import re

    pattern = re.compile(r"issue[s]? [0-9]+", re.IGNORECASE)
    root = SRC.parents[1]
    hits = [f"{path.relative_to(root)}:{i}" for folder in (SRC, root / "tests") for path in folder.rglob("*.py")
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not hits, f"issue numbers in the code: {hits}"
