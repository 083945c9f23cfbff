"""Cross-lingual baselines of the paper's Tables 3-4 (the best four of Esuli, Moreo & Sebastiani 2019).

One module per method: :mod:`~gfun.crosslingual.lri` (Lightweight Random Indexing),
:mod:`~gfun.crosslingual.clesa` (Cross-Lingual Explicit Semantic Analysis), :mod:`~gfun.crosslingual.kcca`
(Kernel Canonical Correlation Analysis), :mod:`~gfun.crosslingual.dci` (Distributional Correspondence
Indexing); :mod:`~gfun.crosslingual.resources` builds the parallel collection CLESA and KCCA need.
All share the API of :class:`gfun.baselines.NaiveClassifier` (``fit(corpus)``, ``predict``, ``save``).
"""

from __future__ import annotations

from typing import Any

from gfun.crosslingual.base import CrossLingualClassifier
from gfun.crosslingual.clesa import CLESAClassifier
from gfun.crosslingual.dci import DCIClassifier
from gfun.crosslingual.kcca import KCCAClassifier
from gfun.crosslingual.lri import LRIClassifier
from gfun.crosslingual.resources import ParallelCollection, debtags_parallel

__all__ = ["CROSSLINGUAL", "CLESAClassifier", "CrossLingualClassifier", "DCIClassifier", "KCCAClassifier",
           "LRIClassifier", "ParallelCollection", "debtags_parallel", "make_crosslingual"]

#: Configuration name -> estimator class.
CROSSLINGUAL: dict[str, type[CrossLingualClassifier]] = {
    "lri": LRIClassifier, "clesa": CLESAClassifier, "kcca": KCCAClassifier, "dci": DCIClassifier}


def make_crosslingual(name: str, **params: Any) -> CrossLingualClassifier:
    """The unfitted baseline called ``name`` (``lri``, ``clesa``, ``kcca``, ``dci``) with ``params``."""
    try:
        cls = CROSSLINGUAL[name]
    except KeyError:
        raise ValueError(f"unknown cross-lingual baseline {name!r}; expected one of {sorted(CROSSLINGUAL)}") from None
    return cls(**params)
