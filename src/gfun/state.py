"""Composite fitted states: one component's share of the arrays, and the tracking that names a broken field.

A fitted estimator's state is JSON-able metadata and a flat dict of numpy arrays (see :mod:`gfun.persistence`);
a composite (gFun and its views, mappers and meta-classifier) stores each component's arrays under a prefix,
which :func:`sub_arrays` strips again. This module imports nothing from gfun, so views and estimators can use it
without importing persistence (which imports them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["sub_arrays"]


class _Trail(list):
    """The fields read while rebuilding a model from its state (to name the one that broke it)."""


class _TrackedDict(dict):
    """A state dict that records the path of every field read (used only to explain a failed load)."""

    def __init__(self, data: dict, path: str, trail: _Trail) -> None:
        super().__init__(data)
        self._path, self._trail = path, trail

    def _child(self, key: Any, value: Any) -> Any:
        return _track(value, f"{self._path}/{key}", self._trail)

    def __getitem__(self, key: Any) -> Any:
        self._trail.append(f"{self._path}/{key}")
        return self._child(key, super().__getitem__(key))

    def get(self, key: Any, default: Any = None) -> Any:
        self._trail.append(f"{self._path}/{key}")
        return self._child(key, super().get(key, default))

    def items(self) -> Any:
        return [(k, self._child(k, v)) for k, v in super().items()]

    def values(self) -> Any:
        return [self._child(k, v) for k, v in super().items()]


class _TrackedList(list):
    def __init__(self, data: list, path: str, trail: _Trail) -> None:
        super().__init__(data)
        self._path, self._trail = path, trail

    def __getitem__(self, index: Any) -> Any:
        self._trail.append(f"{self._path}/{index}")
        value = super().__getitem__(index)
        return value if isinstance(index, slice) else _track(value, f"{self._path}/{index}", self._trail)

    def __iter__(self) -> Iterator[Any]:
        for i, value in enumerate(super().__iter__()):  # elements are named once they are read from
            yield _track(value, f"{self._path}/{i}", self._trail)


def _track(value: Any, path: str, trail: _Trail) -> Any:
    if isinstance(value, dict) and not isinstance(value, _TrackedDict):
        return _TrackedDict(value, path, trail)
    if isinstance(value, list) and not isinstance(value, _TrackedList):
        return _TrackedList(value, path, trail)
    return value


def sub_arrays(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays stored under ``prefix`` (a component's share of a composite state), with the prefix removed."""
    out = {k[len(prefix):]: v for k, v in dict.items(arrays) if k.startswith(prefix)}
    if isinstance(arrays, _TrackedDict):  # explaining a failed load: keep naming arrays by their full key
        return _TrackedDict(out, f"{arrays._path}/{prefix.rstrip('/')}", arrays._trail)
    return out
