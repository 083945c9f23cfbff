"""Every exception gfun defines lives in gfun/errors.py, and the broad classes catch the specific ones."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import gfun
import gfun.errors

SRC = Path(gfun.__file__).parent


def test_every_public_exception_class_is_defined_in_errors_py() -> None:
    defined = {name for name, obj in vars(gfun.errors).items()
               if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == "gfun.errors"}
    assert set(gfun.errors.__all__) == defined
    stragglers = []
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            bases = [ast.unparse(b) for b in getattr(node, "bases", [])] if isinstance(node, ast.ClassDef) else []
            if not node_is_private(node) and any(b.endswith(("Error", "Exception")) or b in defined for b in bases):
                stragglers.append(f"{path.relative_to(SRC)}: {node.name}")
    assert not stragglers, f"exceptions defined outside gfun/errors.py: {stragglers}"


def node_is_private(node: ast.AST) -> bool:
    return isinstance(node, ast.ClassDef) and node.name.startswith("_")


def test_the_broad_classes_catch_the_specific_errors() -> None:
    """A caller catching CorpusFormatError also catches an undetectable language in a file, and one catching
    KeyError an unknown language name."""
    from gfun.errors import CorpusFormatError, LanguageDetectionError, UnknownLanguageError

    assert issubclass(LanguageDetectionError, CorpusFormatError) and issubclass(UnknownLanguageError, KeyError)
