"""The versions of the numeric libraries a model was saved with, and the library a failed load raised in.

A saved model's manifest records the versions of the libraries its state passes through (:data:`LIBRARIES`: those
imported by the saving process, so that saving a TF-IDF model does not import torch). When rebuilding the state
fails inside one of them and the installed version differs from the saved one, the loader says so instead of
calling the model damaged: its files match their checksums, so a version change is the likely cause.
"""

from __future__ import annotations

import sys
from functools import cache
from types import TracebackType

__all__ = ["LIBRARIES", "library_versions", "raising_library"]

#: Import name -> distribution name of the libraries recorded in a manifest.
LIBRARIES: dict[str, str] = {"numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn", "torch": "torch",
                             "transformers": "transformers", "tokenizers": "tokenizers",
                             "safetensors": "safetensors"}


@cache  # an imported library's version does not change in a process (GET /model asks each time)
def _version(module: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(LIBRARIES[module])
    except PackageNotFoundError:  # imported from a source tree, not installed
        return getattr(sys.modules.get(module), "__version__", None)


def library_versions(modules: tuple[str, ...] | None = None) -> dict[str, str]:
    """``{distribution: version}`` of the :data:`LIBRARIES` this process has imported (or of ``modules``)."""
    names = [m for m in LIBRARIES if m in sys.modules] if modules is None else list(modules)
    out = {}
    for module in names:
        found = _version(module)
        if found is not None:
            out[LIBRARIES[module]] = str(found)
    return out


def raising_library(exc: BaseException) -> str | None:
    """The import name of the :data:`LIBRARIES` package whose code raised ``exc`` (its innermost Python frame), or
    None when that frame is gfun's (or another package's)."""
    tb: TracebackType | None = exc.__traceback__
    module = None
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__")
        tb = tb.tb_next
    top = str(module or "").split(".")[0]
    return top if top in LIBRARIES else None
