"""Dataset loaders and where they look for their files.

:mod:`gfun.datasets.registry` names the datasets behind one loader signature
(:func:`~gfun.datasets.registry.load_dataset`); each loader returns a :class:`~gfun.datasets.splits.DatasetSplits`.
One module per dataset: :mod:`~gfun.datasets.debtags` (with :mod:`~gfun.datasets.debian_archive`, the apt index
files it reads), :mod:`~gfun.datasets.sib200`, :mod:`~gfun.datasets.exceptius`, :mod:`~gfun.datasets.jrc`,
:mod:`~gfun.datasets.rcv` (both with :mod:`~gfun.datasets.funnelling_corpora` and the authors' pickles and split
files, :mod:`~gfun.datasets.funnelling_pickle`) and :mod:`~gfun.datasets.demo` (the bundled sample);
:mod:`~gfun.datasets.stats` gives the statistics of the paper's Table 1.

Every loader takes ``data_dir``; when it is omitted the loader looks in ``$GFUN_DATA/<name>``
(see :func:`dataset_dir`, defined here).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["GFUN_DATA_ENV", "dataset_dir"]

GFUN_DATA_ENV = "GFUN_DATA"


def dataset_dir(name: str, data_dir: str | os.PathLike[str] | None = None,
                fallback: str | os.PathLike[str] | None = None) -> Path:
    """Directory holding the files of dataset ``name``.

    Parameters
    ----------
    name : str
        Dataset name, e.g. ``"debtags"``.
    data_dir : path, optional
        Explicit directory; returned as is when given.
    fallback : path, optional
        Used when neither ``data_dir`` nor ``$GFUN_DATA`` is set (e.g. apt's lists directory for debtags).

    Raises
    ------
    FileNotFoundError
        When no location is configured, or the chosen directory does not exist.
    """
    if data_dir is not None:
        path = Path(data_dir)
    elif os.environ.get(GFUN_DATA_ENV):
        path = Path(os.environ[GFUN_DATA_ENV]) / name
    elif fallback is not None:
        path = Path(fallback)
    else:
        raise FileNotFoundError(
            f"no data directory for dataset {name!r}: pass data_dir (--data-dir) or set "
            f"{GFUN_DATA_ENV} to the folder that contains {name}/")
    if not path.is_dir():
        raise FileNotFoundError(f"data directory for dataset {name!r} not found: {path}")
    return path
