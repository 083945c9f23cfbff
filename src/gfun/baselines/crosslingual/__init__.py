"""Cross-lingual baselines of the paper's Tables 3-4 (the best four of Esuli, Moreo & Sebastiani 2019).

One module per method: :mod:`~gfun.baselines.crosslingual.lri` (Lightweight Random Indexing),
:mod:`~gfun.baselines.crosslingual.clesa` (Cross-Lingual Explicit Semantic Analysis),
:mod:`~gfun.baselines.crosslingual.kcca` (Kernel Canonical Correlation Analysis),
:mod:`~gfun.baselines.crosslingual.dci` (Distributional Correspondence Indexing);
:mod:`~gfun.baselines.crosslingual.base` holds what they share, and :mod:`~gfun.baselines.crosslingual.resources`
builds the parallel collection CLESA and KCCA need. All share the API of
:class:`gfun.baselines.naive.NaiveClassifier` (``fit(corpus)``, ``predict``, ``save``). This package holds their
registry by name (:data:`CROSSLINGUAL`, :func:`make_crosslingual`).
"""

from __future__ import annotations

from typing import Any

from gfun.baselines.crosslingual.base import CrossLingualClassifier
from gfun.baselines.crosslingual.clesa import CLESAClassifier
from gfun.baselines.crosslingual.dci import DCIClassifier
from gfun.baselines.crosslingual.kcca import KCCAClassifier
from gfun.baselines.crosslingual.lri import LRIClassifier

__all__ = ["CROSSLINGUAL", "CLESAClassifier", "CrossLingualClassifier", "DCIClassifier", "KCCAClassifier",
           "LRIClassifier", "make_crosslingual"]

#: Configuration name -> estimator class.
CROSSLINGUAL: dict[str, type[CrossLingualClassifier]] = {
    "lri": LRIClassifier, "clesa": CLESAClassifier, "kcca": KCCAClassifier, "dci": DCIClassifier}


def make_crosslingual(name: str, **params: Any) -> CrossLingualClassifier:
    """The unfitted baseline called ``name`` (``lri``, ``clesa``, ``kcca``, ``dci``) with ``params``, which may
    name the parameters of its parts (``classifier__C``, ``tfidf__min_df``)."""
    try:
        cls = CROSSLINGUAL[name]
    except KeyError:
        raise ValueError(f"unknown cross-lingual baseline {name!r}; expected one of {sorted(CROSSLINGUAL)}") from None
    nested = {k: v for k, v in params.items() if "__" in k}
    return cls(**{k: v for k, v in params.items() if k not in nested}).set_params(**nested)
