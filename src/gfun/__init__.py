"""gfun: Generalized Funnelling for cross-lingual multilabel text classification.

The main entry points are :class:`gfun.GeneralizedFunnelling` (the two-tier ensemble),
:class:`gfun.NaiveClassifier` (one monolingual classifier per language), :func:`gfun.make_fun`
(Funnelling, 2019), :class:`gfun.MultilingualCorpus` (documents, languages, labels),
:func:`gfun.evaluate` (F1/K per language), :func:`gfun.load_model` and :func:`gfun.build_estimator` (an
estimator from a configuration name such as ``"xmw"`` or ``"naive"``, as ``gfun train`` and the experiments
build theirs).
Heavy modules are imported lazily, on first use of these names.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "CorpusFormatError": "gfun.errors",
    "ModelFormatError": "gfun.errors",
    "UnseenLanguageError": "gfun.errors",
    "build_estimator": "gfun.configuration",
    "Document": "gfun.corpus.multilingual",
    "MultilingualCorpus": "gfun.corpus.multilingual",
    "read_corpus": "gfun.corpus.multilingual",
    "GeneralizedFunnelling": "gfun.funnelling.generalized",
    "NaiveClassifier": "gfun.baselines.naive",
    "FineTunedTransformerClassifier": "gfun.baselines.transformer",
    "TunedTransformerClassifier": "gfun.baselines.transformer",
    "make_fun": "gfun.baselines.naive",
    "evaluate": "gfun.metrics.evaluation",
    "load_model": "gfun.persistence.loading",
    "save_model": "gfun.persistence.saving",
    "register_view": "gfun.views",
}

__all__ = ["__version__", *sorted(_LAZY)]

logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gfun' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
