"""Where gfun keeps what it derives once and reuses (converted models, word-vector matrices)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["gfun_cache_dir"]


def gfun_cache_dir(cache_dir: str | os.PathLike[str] | None = None, *, subdir: str | None = None) -> Path:
    """Return gfun's cache folder (not created).

    Parameters
    ----------
    cache_dir : path-like, optional
        Explicit folder; wins over everything else.
    subdir : str, optional
        Sub-folder appended to the result (``"encoders"``, ``"wordvectors"``).

    Returns
    -------
    pathlib.Path
        ``cache_dir``, else ``$GFUN_CACHE``, else ``$XDG_CACHE_HOME/gfun``, else ``~/.cache/gfun``;
        with ``subdir`` appended when given.
    """
    if cache_dir is not None:
        root = Path(cache_dir)
    elif os.environ.get("GFUN_CACHE"):
        root = Path(os.environ["GFUN_CACHE"])
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "gfun"
    root = root.expanduser()
    return root / subdir if subdir else root
