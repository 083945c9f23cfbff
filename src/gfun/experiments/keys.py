"""Cell keys of an experiment: what a key's value may hold to name a cell's file."""

from __future__ import annotations

from typing import Any

__all__ = ["check_key_value"]


def check_key_value(name: str, value: Any) -> str:
    """The text of a cell key value, checked to be usable in a cell's file name.

    ``__`` separates the key's parts and ``=`` a part's name from its value, so a value may hold single
    underscores (``r_mw``) but not ``__``, ``=``, a path separator, a space, nor start with ``.`` or start or
    end with ``_``.

    Raises
    ------
    ValueError
    """
    text = str(value)
    if (not text or any(ch in text for ch in "/\\= ") or "__" in text or text.startswith((".", "_"))
            or text.endswith("_")):
        raise ValueError(f"cell key value {text!r} of {name!r} cannot be used in a file name")
    return text
