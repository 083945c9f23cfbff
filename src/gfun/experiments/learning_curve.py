"""Learning-curve experiment (the paper's Figure 8): a growing share of one target language's training data.

For each target language and each percentage in ``fractions`` (default 0, 10, 20, 30, 50, 100), the
configurations are trained on all the training documents of the other languages plus that share of the
target's (a seeded sample per run) and tested on the target's test documents. At 0% the target is a
zero-shot language: configurations that cannot serve it get NaN.

Outputs in ``out`` (``<stem>`` is ``learning-curve-<dataset>``): ``cells/learning-curve/``;
``<stem>-scores.csv`` (every run); ``<stem>.csv`` and ``<stem>.md`` (mean and std over runs);
``<stem>-<target>.png``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gfun.configuration import Config
from gfun.core.atomic import write_bytes_atomic
from gfun.experiments.many_shot import RunCache, cell_job
from gfun.experiments.runner import (
    ExperimentSettings,
    cell_scores,
    open_experiment,
    run_cells,
)
from gfun.metrics.formatting import DISPLAY_NAMES, count_noun
from gfun.metrics.measures import MEASURES

__all__ = ["DEFAULT_FRACTIONS", "reduce_language", "run_learning_curve"]

logger = logging.getLogger(__name__)

DEFAULT_FRACTIONS: tuple[int, ...] = (0, 10, 20, 30, 50, 100)


def reduce_language(corpus: Any, lang: str, percent: float, rng: np.random.RandomState) -> Any:
    """``corpus`` with only ``percent`` % of the documents of ``lang`` (sampled), the others kept in full."""
    by_lang = corpus.by_language()
    members = by_lang.get(lang, np.array([], dtype=np.int64))
    keep = int(round(len(members) * percent / 100.0))
    chosen = rng.choice(members, keep, replace=False) if keep else np.array([], dtype=np.int64)
    others = [idx for other, idx in by_lang.items() if other != lang]
    idx = np.sort(np.concatenate([*others, chosen]).astype(np.int64))
    return corpus.subset(idx)


def run_learning_curve(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path, *,
                       targets: Sequence[str] | None = None, fractions: Sequence[int] = DEFAULT_FRACTIONS,
                       plots: bool = True) -> dict[str, Any]:
    """Run (or resume) the learning-curve experiment and write its files.

    Parameters
    ----------
    settings : ExperimentSettings
    configs : sequence of Config
    out : path
    targets : sequence of str, optional
        Target languages (default: the first training language alphabetically).
    fractions : sequence of int
        Percentages of the target's training documents.
    plots : bool

    Returns
    -------
    dict
        ``scores``, ``summary``, ``files``, ``cells`` and ``wall_s``.
    """
    t0 = time.perf_counter()
    fractions = sorted({int(f) for f in fractions})
    if any(f < 0 or f > 100 for f in fractions):
        raise ValueError(f"fractions must be percentages in [0, 100], got {fractions}")
    out, settings, store = open_experiment(out, "learning-curve", settings, configs=configs)
    cache = RunCache(settings, zero_shot_test=False)
    languages = sorted(cache(0)[0].languages)
    targets = list(targets) if targets else languages[:1]
    missing = [t for t in targets if t not in languages]
    if missing:
        raise ValueError(f"target language(s) {missing} have no training documents; training languages: {languages}")
    cells = []
    for run in range(settings.runs):
        for target in targets:
            for frac in fractions:
                def data(r: int = run, t: str = target, f: int = frac) -> tuple[Any, Any]:
                    train, test = cache(r)
                    rng = np.random.RandomState(settings.seed * 1000 + r * 101 + f)
                    return reduce_language(train, t, f, rng), test.select(t)
                for cfg in configs:
                    key = {"run": run, "config": cfg.name, "target": target, "fraction": frac}
                    cells.append((key, cell_job(settings, cfg, run, data)))
    counts = run_cells(store, cells, label="learning-curve", settings=settings)
    frame = store.load_all(k for k, _ in cells)
    scores = cell_scores(frame, ["run", "config", "target", "fraction"])
    scores = scores[scores["lang"] == scores["target"]].drop(columns="lang")
    stem = f"learning-curve-{settings.dataset}"
    files = [out / f"{stem}-scores.csv", out / f"{stem}.csv", out / f"{stem}.md"]
    write_bytes_atomic(files[0], scores.to_csv(index=False).encode("utf-8"))
    grouped = scores.groupby(["target", "config", "fraction"], sort=False)[list(MEASURES)]
    summary = grouped.mean().join(grouped.std(ddof=1).add_suffix("_std")).reset_index()
    write_bytes_atomic(files[1], summary.to_csv(index=False).encode("utf-8"))
    labels = {c.name: c.display for c in configs}
    md = [f"# Learning curves on {settings.dataset} ({count_noun(settings.runs, 'run')})", "",
          "Mean over runs of the target language's scores, by percentage of its training documents used "
          "(all other languages in full); `-`: the configuration cannot serve the target.", ""]
    for target in targets:
        for m in MEASURES:
            sub = summary[summary["target"] == target].pivot(index="config", columns="fraction", values=m)
            sub = sub.reindex([c.name for c in configs])
            md += [f"## target {target}: {DISPLAY_NAMES[m]}", "",
                   "| config | " + " | ".join(f"{f}%" for f in sub.columns) + " |", "|---|" + "---|" * sub.shape[1]]
            md += [f"| {labels[i]} | " + " | ".join("-" if np.isnan(v) else f"{v:.3f}" for v in row) + " |"
                   for i, row in sub.iterrows()]
            md.append("")
    write_bytes_atomic(files[2], "\n".join(md).encode("utf-8"))
    if plots:
        from gfun.experiments.plots import learning_curves

        for target in targets:
            sub = summary[summary["target"] == target].copy()
            sub["method"] = sub["config"].map(labels)
            cols = {m: DISPLAY_NAMES[m] for m in MEASURES} | {f"{m}_std": f"{DISPLAY_NAMES[m]}_std" for m in MEASURES}
            sub = sub.rename(columns=cols)[["method", "fraction", *cols.values()]]
            path = out / f"{stem}-{target}.png"
            learning_curves(sub, path, measures=[DISPLAY_NAMES[m] for m in MEASURES],
                            title=f"{settings.dataset}: learning curve, target language {target}")
            files.append(path)
    wall = time.perf_counter() - t0
    logger.info("learning-curve finished in %.1f s (%d cells computed, %d resumed)", wall, counts["done"],
                counts["skipped"])
    return {"scores": scores, "summary": summary, "files": files, "cells": counts, "wall_s": wall}
