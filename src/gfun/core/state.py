"""Composite fitted states: each component's share of the arrays, and the tracking that names a broken field.

A fitted estimator's state is JSON-able metadata and a flat dict of numpy arrays (see :mod:`gfun.persistence`);
a composite (gFun and its views, mappers and meta-classifier; a view and its per-language vectorizers) stores
each component's arrays under a key prefix. The flattening is written here once: :func:`put_state` /
:func:`put_states` store a component's (or a dict of components') state under a prefix, :func:`load_state` /
:func:`load_states` rebuild them, :func:`prefixed` and :func:`sub_arrays` are the two directions of the
prefixing. This module imports nothing from gfun, so views and estimators use it without importing the file
machinery of :mod:`gfun.persistence`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from gfun.errors import StateArrayError

__all__ = ["checked_array", "load_state", "load_states", "prefixed", "put_state", "put_states",
           "sub_arrays"]


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


#: numpy dtype kinds, as a message says them.
_KINDS = {"b": "booleans", "i": "integers", "u": "integers", "f": "floating-point numbers"}


def checked_array(arrays: Mapping[str, np.ndarray], key: str, shape: tuple[int | None, ...], kinds: str = "f", *,
                  optional: bool = False, what: str = "") -> np.ndarray | None:
    """``arrays[key]``, checked before use: its dtype is of one of the numpy ``kinds`` (``"f"``: floating point,
    ``"iu"``: integers) and its shape is ``shape`` (``None``: any length on that axis).

    ``optional``: ``None`` when the array is absent. ``what`` says in the message what the shape must match
    (``"one value per class"``).

    Raises
    ------
    StateArrayError
        Naming the array, its dtype or shape and the expected one.
    KeyError
        A required array is absent.
    """
    if optional and not dict.__contains__(arrays, key):
        return None
    arr = arrays[key]
    full = f"{arrays._path}/{key}" if isinstance(arrays, _TrackedDict) else key
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in kinds:
        expected = " or ".join(dict.fromkeys(_KINDS.get(k, k) for k in kinds))
        found = arr.dtype if isinstance(arr, np.ndarray) else type(arr).__name__
        raise StateArrayError(f"array {key!r} has dtype {found}, expected {expected}", full)
    if arr.ndim != len(shape) or any(e is not None and e != n for e, n in zip(shape, arr.shape, strict=True)):
        axes = ["any" if e is None else str(e) for e in shape]
        expected = f"({axes[0]},)" if len(axes) == 1 else f"({', '.join(axes)})"
        raise StateArrayError(f"array {key!r} has shape {arr.shape}, expected {expected}"
                              + (f" ({what})" if what else ""), full)
    return arr


def sub_arrays(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays stored under ``prefix`` (a component's share of a composite state), with the prefix removed."""
    out = {k[len(prefix):]: v for k, v in dict.items(arrays) if k.startswith(prefix)}
    if isinstance(arrays, _TrackedDict):  # explaining a failed load: keep naming arrays by their full key
        return _TrackedDict(out, f"{arrays._path}/{prefix.rstrip('/')}", arrays._trail)
    return out


def prefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """``arrays`` stored under ``prefix`` (``"meta/"``): the inverse of :func:`sub_arrays`."""
    return {f"{prefix}{k}": v for k, v in arrays.items()}


def put_state(component: Any, prefix: str, arrays: dict[str, np.ndarray]) -> dict:
    """Add ``component.get_state()``'s arrays to ``arrays`` under ``prefix``; return its metadata."""
    meta, own = component.get_state()
    arrays.update(prefixed(own, prefix))
    return meta


def load_state(cls: type, meta: dict, arrays: dict[str, np.ndarray], prefix: str) -> Any:
    """``cls.from_state`` of the component :func:`put_state` stored under ``prefix``."""
    return cls.from_state(meta, sub_arrays(arrays, prefix))


def put_states(components: Mapping[str, Any], pattern: str, arrays: dict[str, np.ndarray]) -> dict[str, dict]:
    """:func:`put_state` of each named component (``{"en": vectorizer}``), under ``pattern.format(name)``
    (``"{}/vec/"``); returns the metadata by name."""
    return {name: put_state(c, pattern.format(name), arrays) for name, c in components.items()}


def load_states(cls: type, metas: Mapping[str, dict], arrays: dict[str, np.ndarray], pattern: str) -> dict[str, Any]:
    """The components :func:`put_states` stored, rebuilt, by name."""
    return {name: load_state(cls, meta, arrays, pattern.format(name)) for name, meta in metas.items()}
