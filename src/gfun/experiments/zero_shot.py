"""Zero-shot experiment (the paper's Figures 5-7): training languages added one at a time.

Iteration ``i`` (0-based) trains on the first ``i + 1`` training languages in alphabetical order and tests on
every test language; a test language outside the training languages is a zero-shot cell. Configurations
that cannot serve a language without training documents (Naive, gFun configurations of X and W only) get NaN in
those cells; Fun serves them as in Esuli et al. (2019), through an auxiliary classifier on the M view
(:attr:`gfun.configuration.Config.serves_unseen`).

Outputs in ``out`` (``<stem>`` is ``zero-shot-<dataset>``): ``cells/zero-shot/``; ``<stem>-scores.csv`` (run,
config, iteration, language, setting, measures); ``<stem>-grid-<config>-<measure>.csv`` and ``<stem>.md`` (grids
averaged over runs, every configuration and measure: what ``gfun experiment zero-shot`` prints);
``<stem>-<measure>.png`` (Fun, gFun and difference heat maps); ``<stem>-by-n-languages.csv`` and
``<stem>-by-n-languages-<measure>.png`` (Figure 7).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

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

__all__ = ["grid", "run_zero_shot", "training_languages"]

logger = logging.getLogger(__name__)


def training_languages(settings: ExperimentSettings, cache: RunCache) -> list[str]:
    """The training languages of run 0, sorted (the order they are added in)."""
    train, _ = cache(0)
    return sorted(train.languages)


def grid(scores: pd.DataFrame, config: str, measure: str, languages: Sequence[str]) -> pd.DataFrame:
    """Mean over runs of ``measure`` for ``config``: rows = iterations (``"k: +lang"``), columns = test languages."""
    sub = scores[scores["config"] == config]
    g = sub.groupby(["iteration", "lang"])[measure].mean().unstack("lang")
    g = g.reindex(index=range(len(languages)))
    train_set = set(languages)
    cols = [c for c in languages if c in g.columns] + sorted(c for c in g.columns if c not in train_set)
    g = g[cols]
    g.index = [f"{i + 1}: +{languages[i]}" for i in g.index]
    return g


def run_zero_shot(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path, *,
                  heatmap_configs: tuple[str, str] | None = None, plots: bool = True) -> dict[str, Any]:
    """Run (or resume) the zero-shot experiment and write its files.

    Parameters
    ----------
    settings : ExperimentSettings
    configs : sequence of Config
    out : path
    heatmap_configs : (str, str), optional
        The two configurations of the heat maps (default: ``fun`` and the last gFun configuration).
    plots : bool

    Returns
    -------
    dict
        ``scores``, ``languages``, ``files``, ``cells`` and ``wall_s``.
    """
    t0 = time.perf_counter()
    out, settings, store = open_experiment(out, "zero-shot", settings, configs=configs)
    if not any(c.serves_unseen for c in configs):
        logger.warning("no configuration among %s can serve languages without training documents (fun, bert, clesa, "
                       "kcca, or gFun with an m, b or r view can): every zero-shot cell will be NaN",
                       [c.name for c in configs])
    cache = RunCache(settings)
    languages = training_languages(settings, cache)
    cells = []
    for run in range(settings.runs):
        for it in range(len(languages)):
            def data(r: int = run, k: int = it) -> tuple[Any, Any]:
                train, test = cache(r)
                return train.select(languages[:k + 1]), test
            for cfg in configs:
                key = {"run": run, "config": cfg.name, "iteration": it}
                cells.append((key, cell_job(settings, cfg, run, data, zero_shot=True)))
    counts = run_cells(store, cells, label="zero-shot", settings=settings)
    frame = store.load_all(k for k, _ in cells)
    scores = cell_scores(frame, ["run", "config", "iteration"])
    scores.insert(3, "n_languages", scores["iteration"] + 1)
    scores["setting"] = [("many-shot" if lang in languages[:it + 1] else "zero-shot")
                         for lang, it in zip(scores["lang"], scores["iteration"], strict=True)]
    stem = f"zero-shot-{settings.dataset}"
    files = [out / f"{stem}-scores.csv"]
    write_bytes_atomic(files[0], scores.to_csv(index=False).encode("utf-8"))
    labels = {c.name: c.display for c in configs}
    md = [f"# Zero-shot results on {settings.dataset} ({count_noun(settings.runs, 'run')})", "",
          "Rows: training languages, added one at a time in alphabetical order; columns: test languages. "
          "Mean over runs; `-`: the configuration cannot serve that language (no training documents). "
          "Fun serves languages without training documents as in Esuli et al. (2019): an auxiliary classifier "
          "on the M view (aligned word embeddings) takes over for them.", ""]
    for cfg in configs:
        for m in MEASURES:
            g = grid(scores, cfg.name, m, languages)
            path = out / f"{stem}-grid-{cfg.name}-{m}.csv"
            write_bytes_atomic(path, g.to_csv(index_label="iteration").encode("utf-8"))
            files.append(path)
            md += [f"## {labels[cfg.name]}: {DISPLAY_NAMES[m]}", "", _grid_markdown(g), ""]
    write_bytes_atomic(out / f"{stem}.md", "\n".join(md).encode("utf-8"))
    files.append(out / f"{stem}.md")
    by_n = (scores.groupby(["config", "setting", "n_languages"])[list(MEASURES)].mean().reset_index())
    write_bytes_atomic(out / f"{stem}-by-n-languages.csv", by_n.to_csv(index=False).encode("utf-8"))
    files.append(out / f"{stem}-by-n-languages.csv")
    if plots:
        files += _plots(out, stem, scores, by_n, configs, languages, heatmap_configs, settings.dataset)
    wall = time.perf_counter() - t0
    logger.info("zero-shot finished in %.1f s (%d cells computed, %d resumed)", wall, counts["done"],
                counts["skipped"])
    return {"scores": scores, "languages": languages, "files": files, "cells": counts, "wall_s": wall}


def _grid_markdown(g: pd.DataFrame) -> str:
    lines = ["| training | " + " | ".join(map(str, g.columns)) + " |", "|---|" + "---|" * g.shape[1]]
    for idx, row in g.iterrows():
        lines.append(f"| {idx} | " + " | ".join("-" if np.isnan(v) else f"{v:.3f}" for v in row) + " |")
    return "\n".join(lines)


def _plots(out: Path, stem: str, scores: pd.DataFrame, by_n: pd.DataFrame, configs: Sequence[Config],
           languages: list[str], heatmap_configs: tuple[str, str] | None, dataset: str) -> list[Path]:
    from gfun.experiments.plots import averages_by_training_languages, zero_shot_heatmaps

    labels = {c.name: c.display for c in configs}
    names = [c.name for c in configs]
    files: list[Path] = []
    pair = heatmap_configs
    if pair is None:
        gfuns = [c.name for c in configs if c.method == "gfun"]
        serving = [c.name for c in configs if c.serves_unseen and c.method == "gfun"]
        first = "fun" if "fun" in names else names[0]
        second = (serving or gfuns or [n for n in names if n != first] or [first])[-1]
        pair = (first, second)
    if all(p in names for p in pair) and pair[0] != pair[1]:
        for m in MEASURES:
            a, b = grid(scores, pair[0], m, languages), grid(scores, pair[1], m, languages)
            mask = np.array([[c in languages[:i + 1] for c in a.columns] for i in range(a.shape[0])])
            path = out / f"{stem}-{m}.png"
            zero_shot_heatmaps(a, b, path, measure=DISPLAY_NAMES[m], names=(labels[pair[0]], labels[pair[1]]),
                               many_shot=mask, title=f"{dataset}: zero-shot grid, {DISPLAY_NAMES[m]} "
                               "(outlined: many-shot cells; grey: not served)")
            files.append(path)
    for m in MEASURES:
        frame = by_n.rename(columns={"config": "method", m: "value"})[["method", "setting", "n_languages", "value"]]
        frame = frame.assign(method=frame["method"].map(labels))
        path = out / f"{stem}-by-n-languages-{m}.png"
        averages_by_training_languages(frame, path, measure=DISPLAY_NAMES[m],
                                       title=f"{dataset}: {DISPLAY_NAMES[m]} by number of training languages")
        files.append(path)
    return files
