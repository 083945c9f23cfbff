"""Every exception gfun defines lives in gfun/errors.py (the modules that raise them re-export them)."""

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


def test_the_usual_names_are_the_same_classes() -> None:
    from gfun.errors import (
        CorpusFormatError,
        EncoderNotAvailableError,
        LanguageDetectionError,
        ModelFormatError,
        RequestError,
        UnknownLanguageError,
        UnseenLanguageError,
    )

    for cls in (CorpusFormatError, EncoderNotAvailableError, LanguageDetectionError, ModelFormatError, RequestError,
                UnknownLanguageError, UnseenLanguageError):
        assert getattr(gfun.errors, cls.__name__) is cls
    assert issubclass(LanguageDetectionError, CorpusFormatError) and issubclass(UnknownLanguageError, KeyError)
