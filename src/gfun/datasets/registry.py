"""The datasets by name, behind one loader signature.

Every entry of :data:`DATASETS` is a callable ``loader(data_dir=None, run=0, **kw) -> DatasetSplits``;
:func:`load_dataset` looks one up by name. Loaders import their modules lazily, so listing the datasets
costs nothing.

====================  ==========================================================================
name                  what
====================  ==========================================================================
``debtags``           Debian package descriptions with debtags (:mod:`gfun.datasets.debtags`)
``exceptius``         COVID-19 exceptional measures, 8 event types (:mod:`gfun.datasets.exceptius`)
``sib200``            SIB-200 topics, 11 languages, parallel (:mod:`gfun.datasets.sib200`)
``jrc-acquis``        JRC-Acquis, Funnelling protocol (:mod:`gfun.datasets.jrc`)
``rcv1-rcv2``         RCV1/RCV2, Funnelling protocol (:mod:`gfun.datasets.rcv`)
``demo``              the small sample bundled with the package (:mod:`gfun.datasets.demo`)
====================  ==========================================================================
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from gfun.datasets.splits import DatasetSplits

__all__ = ["DATASETS", "DESCRIPTIONS", "DatasetSplits", "load_dataset", "resolve_dataset_name"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]




Loader = Callable[..., DatasetSplits]


def _load_debtags(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.debtags import load_debtags

    r = load_debtags(run=run, data_dir=data_dir, **kw)
    return DatasetSplits(train=r.train, test=r.test, test_zeroshot=r.test_zeroshot, classes=tuple(r.classes),
                         name="debtags", info={"run": run})


#: The codeframe of ``debtags-rare``: the tags ranked 74 to 150 by frequency (a long tail after debtags' 73).
DEBTAGS_RARE_RANKS: tuple[int, int] = (74, 150)


def _load_debtags_rare(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.debtags import load_debtags

    kw.setdefault("class_ranks", DEBTAGS_RARE_RANKS)
    r = load_debtags(run=run, data_dir=data_dir, **kw)
    return DatasetSplits(train=r.train, test=r.test, test_zeroshot=r.test_zeroshot, classes=tuple(r.classes),
                         name="debtags-rare", info={"run": run, "class_ranks": list(kw["class_ranks"])})


def _fixed_split(name: str, run: int) -> None:
    if run != 0:
        logger.info("%s has one official split; run %d is the same as run 0", name, run)


def _load_exceptius(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.exceptius import load_exceptius

    _fixed_split("exceptius", run)
    s = load_exceptius(data_dir, **kw)
    s.info = {"run": run}
    return s


def _load_sib200(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.sib200 import load_sib200

    _fixed_split("sib200", run)
    s = load_sib200(data_dir, **kw)
    s.info = {"run": run}
    return s


def _load_jrc(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.jrc import load_jrc_acquis

    s = load_jrc_acquis(data_dir, run, **kw)
    s.name, s.info = "jrc-acquis", {"run": run, **s.info}
    return s


def _load_rcv(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.rcv import load_rcv1_rcv2

    s = load_rcv1_rcv2(data_dir, run, **kw)
    s.name, s.info = "rcv1-rcv2", {"run": run, **s.info}
    return s


def _load_demo(data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    from gfun.datasets.demo import load_demo

    if data_dir is not None:
        logger.info("the demo dataset ships with the package; data_dir %s is ignored", data_dir)
    _fixed_split("demo", run)
    train, test = load_demo(**kw)
    return DatasetSplits(train=train, test=test, name="demo", info={"run": run})


#: Dataset name -> loader ``(data_dir=None, run=0, **kw) -> DatasetSplits``.
DATASETS: dict[str, Loader] = {
    "debtags": _load_debtags,
    "debtags-rare": _load_debtags_rare,
    "exceptius": _load_exceptius,
    "sib200": _load_sib200,
    "jrc-acquis": _load_jrc,
    "rcv1-rcv2": _load_rcv,
    "demo": _load_demo,
}

#: One-line description of each dataset.
DESCRIPTIONS: dict[str, str] = {
    "debtags": "Debian package descriptions with debtags; 11 languages, multilabel, zero-shot languages",
    "debtags-rare": "debtags' documents with a long tail of rarer tags (ranked 74-150); many documents have none",
    "exceptius": "EXCEPTIUS COVID-19 exceptional measures; 7 languages, 8 event types, multilabel",
    "sib200": "SIB-200 topic classification; 11 languages, 7 topics, single-label, parallel",
    "jrc-acquis": "JRC-Acquis EU legislation; 11 languages, 300 EuroVoc classes (Funnelling protocol)",
    "rcv1-rcv2": "RCV1/RCV2 Reuters news; 9 languages, 73 topic classes (Funnelling protocol)",
    "demo": "small sample bundled with the package",
}

_ALIASES = {"jrc": "jrc-acquis", "jrcacquis": "jrc-acquis", "rcv": "rcv1-rcv2", "rcv1rcv2": "rcv1-rcv2",
            "rcv1/rcv2": "rcv1-rcv2", "sib-200": "sib200"}


def resolve_dataset_name(name: str) -> str:
    """The registry name for ``name`` (case, ``_`` for ``-`` and a few aliases are accepted).

    Raises
    ------
    ValueError
        When the name is unknown; the message lists the known names.
    """
    key = name.strip().lower().replace("_", "-")
    key = _ALIASES.get(key, _ALIASES.get(key.replace("-", ""), key))
    if key not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    return key


def load_dataset(name: str, data_dir: PathLike | None = None, run: int = 0, **kw: Any) -> DatasetSplits:
    """Load dataset ``name`` (see :data:`DATASETS`).

    Parameters
    ----------
    name : str
        Dataset name.
    data_dir : path, optional
        The dataset's folder; by default ``$GFUN_DATA/<name>`` (see :func:`gfun.datasets.dataset_dir`).
    run : int
        Run index, for datasets sampled anew in each run (``debtags``, ``jrc-acquis``, ``rcv1-rcv2``);
        the others have one official split.
    **kw
        Passed to the dataset's loader.

    Returns
    -------
    DatasetSplits
    """
    key = resolve_dataset_name(name)
    splits = DATASETS[key](data_dir=data_dir, run=run, **kw)
    if not splits.name:
        splits.name = key
    return splits
