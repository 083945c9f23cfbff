"""Many-shot experiment (the paper's Tables 3-4 and Figure 4): every configuration trained on all languages.

Outputs in ``out`` (``<stem>`` is ``many-shot-<dataset>``):

* ``cells/many-shot/run=R__config=C.csv`` (and ``.parquet``): per-language, per-class contingency counts;
* ``<stem>-scores.csv``: every run, configuration and language (plus an ``average`` language row);
* ``<stem>.csv``, ``<stem>.md``, ``<stem>.tex``: mean ± std over runs, best, group best, significance;
* ``<stem>-improvement.csv`` and ``<stem>-improvement-<measure>.png``: per-language relative improvement
  over Naive (Figure 4), when ``naive`` is among the configurations;
* ``<stem>-timings.csv``: fit and predict seconds of every cell.

With ``zero_shot_test=True`` (``gfun experiment many-shot --zero-shot-test``) the test set also holds the dataset's
zero-shot test documents (debtags: fi, hu, nl, sv, languages without training documents). The many-shot tables
above stay on the training languages; the zero-shot languages get their own, over the same runs and fitted models:

* ``<stem>-zero-shot.csv``, ``.md``, ``.tex``: mean ± std over runs of the scores averaged over the zero-shot
  languages, for the configurations that serve them, with the same paired t-tests; the ``.md`` adds the mean of
  every zero-shot language;
* ``<stem>-scores.csv`` then also holds the zero-shot languages' rows (column ``setting``: ``many-shot`` or
  ``zero-shot``, each with its own ``average`` row).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gfun.configuration import Config
from gfun.core.atomic import write_bytes_atomic
from gfun.experiments.runner import (
    SCORE_COLUMNS,
    ExperimentSettings,
    cell_scores,
    drop_view_cache,
    evaluate_cell,
    experiment_estimator,
    load_run,
    open_experiment,
    run_cells,
)
from gfun.experiments.tables import significance_table, summary_frame, to_latex, to_markdown
from gfun.metrics.evaluation import UNLABELLED_FLAGGED
from gfun.metrics.formatting import DISPLAY_NAMES, count_noun
from gfun.metrics.measures import MEASURES

__all__ = ["RunCache", "language_average", "relative_improvement", "run_many_shot", "write_tables",
           "write_zero_shot_tables", "zero_shot_languages"]

logger = logging.getLogger(__name__)


class RunCache:
    """Loads the corpora of a run once, only when a cell needs them."""

    def __init__(self, settings: ExperimentSettings, *, zero_shot_test: bool = True) -> None:
        self.settings = settings
        self.zero_shot_test = zero_shot_test
        self._data: dict[int, tuple[Any, Any]] = {}

    def __call__(self, run: int) -> tuple[Any, Any]:
        if run not in self._data:
            self._data.clear()  # keep one run in memory
            drop_view_cache(self.settings, keep_run=run)  # and the cached views of this run only
            self._data[run] = load_run(self.settings, run, zero_shot_test=self.zero_shot_test)
        return self._data[run]


def cell_job(settings: ExperimentSettings, config: Config, run: int, data: Callable[[], tuple[Any, Any]], *,
             zero_shot: bool = False) -> Callable[[], pd.DataFrame]:
    """The computation of one cell: fit ``config`` seeded for ``run`` on the corpora returned by ``data``."""
    def compute() -> pd.DataFrame:
        train, test = data()
        return evaluate_cell(experiment_estimator(settings, config, run, zero_shot=zero_shot), train, test)
    return compute


def language_average(scores: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """The per-cell mean over languages (NaN languages skipped), with ``lang == "average"``."""
    avg = scores.groupby(list(keys), sort=False)[list(SCORE_COLUMNS)].mean().reset_index()
    avg.insert(len(keys), "lang", "average")
    return avg


def relative_improvement(scores: pd.DataFrame, measure: str = "F1_macro", baseline: str = "naive") -> pd.DataFrame:
    """Per-language relative improvement (%) of each configuration over ``baseline``, mean over runs.

    Returns a frame indexed by language (the ``average`` row last) with one column per configuration.
    """
    mean = scores.groupby(["config", "lang"], sort=False)[measure].mean().unstack("config")
    if baseline not in mean.columns:
        raise ValueError(f"no {baseline!r} results to compare with")
    base = mean[baseline]
    rel = mean.drop(columns=[baseline]).sub(base, axis=0).div(base.where(base != 0), axis=0) * 100
    order = sorted(i for i in rel.index if i != "average") + (["average"] if "average" in rel.index else [])
    return rel.loc[order]


def write_tables(out: Path, stem: str, run_scores: pd.DataFrame, configs: Sequence[Config], *,
                 title: str, groups: dict[str, str] | None = None) -> pd.DataFrame:
    """Write ``<stem>.csv``, ``.md`` and ``.tex`` from per-run language-averaged scores; returns the table.

    The measures are those of :data:`~gfun.metrics.measures.MEASURES`, and ``unlabelled_flagged`` where some test
    documents have no label."""
    order = [c.name for c in configs]
    groups = groups or {c.name: c.group for c in configs}
    labels = {c.name: c.display for c in configs}
    flagged = UNLABELLED_FLAGGED in run_scores.columns and run_scores[UNLABELLED_FLAGGED].notna().any()
    table = significance_table(run_scores, order=order, groups=groups,
                               measures=(*MEASURES, UNLABELLED_FLAGGED) if flagged else MEASURES)
    write_bytes_atomic(out / f"{stem}.csv", summary_frame(table).to_csv().encode("utf-8"))
    runs = count_noun(int(run_scores["run"].nunique()), "run")
    write_bytes_atomic(out / f"{stem}.md",
                       to_markdown(table, labels=labels, title=f"{title} ({runs})").encode("utf-8"))
    write_bytes_atomic(out / f"{stem}.tex", to_latex(table, labels=labels, caption=f"{title} ({runs}).",
                                                     label=f"tab:{stem}").encode("utf-8"))
    return table


def zero_shot_languages(frame: pd.DataFrame) -> list[str]:
    """The languages of stored cells that had no training documents (``n_train == 0``), sorted."""
    if "n_train" not in frame.columns:  # cells stored before the column existed: every language was trained on
        return []
    return sorted(frame.loc[frame["n_train"].eq(0), "lang"].astype(str).unique())


def write_zero_shot_tables(out: Path, stem: str, scores: pd.DataFrame, configs: Sequence[Config],
                           languages: Sequence[str], *, title: str) -> list[Path]:
    """The zero-shot tables of a many-shot experiment (``<stem>-zero-shot.csv/.md/.tex``); returns the files.

    ``scores`` holds the zero-shot languages' per-run rows and their ``average`` rows; configurations that
    serve none of the languages (NaN everywhere) are left out.
    """
    avg = scores[scores["lang"] == "average"]
    serving = [c for c in configs if avg.loc[avg["config"] == c.name, "F1_macro"].notna().any()]
    zstem = f"{stem}-zero-shot"
    files = [out / f"{zstem}{s}" for s in (".csv", ".md", ".tex")]
    if not serving:
        logger.warning("no configuration serves the zero-shot languages %s: no zero-shot table", list(languages))
        return []
    write_tables(out, zstem, avg, serving, title=title)
    labels = {c.name: c.display for c in serving}
    per = scores[scores["config"].isin(labels) & (scores["lang"] != "average")]
    mean = per.groupby(["config", "lang"], sort=False)[["F1_macro", "F1_micro"]].mean()
    lines = ["", "Mean over runs, per zero-shot language (F1M / F1µ):", "",
             "| Method | " + " | ".join(languages) + " |", "|---|" + "---|" * len(languages)]
    for c in serving:
        cells = []
        for lang in languages:
            m = mean.loc[(c.name, lang)] if (c.name, lang) in mean.index else None
            text = "-" if m is None or np.isnan(m["F1_macro"]) else f"{m['F1_macro']:.3f} / {m['F1_micro']:.3f}"
            cells.append(text.replace("0.", "."))
        lines.append(f"| {labels[c.name]} | " + " | ".join(cells) + " |")
    with open(files[1], "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return files


def run_many_shot(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path, *,
                  plots: bool = True, zero_shot_test: bool = False, experiment: str = "many-shot",
                  title: str = "Many-shot results") -> dict[str, Any]:
    """Run (or resume) the many-shot experiment and write its files.

    Parameters
    ----------
    settings : ExperimentSettings
    configs : sequence of Config
    out : path
        Output folder.
    plots : bool
        Also draw the PNG figures (needs matplotlib).
    zero_shot_test : bool
        Also test every cell on the dataset's zero-shot test documents and write the zero-shot tables (see the
        module docstring). Part of the experiment's settings: a folder is resumed with the same choice.
    experiment : str
        Name of the experiment: its cells folder, settings file and file stem (``<experiment>-<dataset>``); the
        recurrent-view tables (:mod:`gfun.experiments.recurrent`) are a many-shot experiment of their own.
    title : str
        Title of the tables (`` on <dataset>`` is appended).

    Returns
    -------
    dict
        ``table`` (:func:`significance_table` frame), ``scores`` (per run, config, language), ``files``
        (written paths), ``cells`` (computed/skipped counts), ``zero_shot_languages`` and ``wall_s``.
    """
    t0 = time.perf_counter()
    out, settings, store = open_experiment(out, experiment, settings,
                                           {"zero_shot_test": True} if zero_shot_test else None, configs=configs)
    cache = RunCache(settings, zero_shot_test=zero_shot_test)
    cells = []
    for run in range(settings.runs):
        for cfg in configs:
            key = {"run": run, "config": cfg.name}
            cells.append((key, cell_job(settings, cfg, run, lambda r=run: cache(r))))
    counts = run_cells(store, cells, label=experiment, settings=settings)
    frame = store.load_all(k for k, _ in cells)
    scores = cell_scores(frame, ["run", "config"])
    zs_langs = zero_shot_languages(frame)
    scores["setting"] = np.where(scores["lang"].isin(zs_langs), "zero-shot", "many-shot")
    many = scores[scores["setting"] == "many-shot"]
    avg = language_average(many, ["run", "config"]).assign(setting="many-shot")
    zero = scores[scores["setting"] == "zero-shot"]
    zavg = language_average(zero, ["run", "config"]).assign(setting="zero-shot") if zs_langs else None
    all_scores = pd.concat([scores, avg, zavg], ignore_index=True)
    stem = f"{experiment}-{settings.dataset}"
    files = [out / f"{stem}-scores.csv", out / f"{stem}-timings.csv"]
    write_bytes_atomic(files[0], all_scores.to_csv(index=False).encode("utf-8"))
    write_bytes_atomic(files[1], frame.groupby(["run", "config"], sort=False)[["fit_s", "predict_s"]].first()
                       .reset_index().to_csv(index=False).encode("utf-8"))
    table = write_tables(out, stem, avg, configs, title=f"{title} on {settings.dataset}")
    files += [out / f"{stem}{s}" for s in (".csv", ".md", ".tex")]
    if zs_langs:
        files += write_zero_shot_tables(out, stem, pd.concat([zero, zavg], ignore_index=True), configs, zs_langs,
                                        title=f"Zero-shot results on {settings.dataset} "
                                              f"({', '.join(zs_langs)}: no training documents)")
    elif zero_shot_test:
        logger.warning("%s has no zero-shot test documents here: no zero-shot table", settings.dataset)
    if "naive" in {c.name for c in configs} and len(configs) > 1:
        labels = {c.name: c.display for c in configs}
        many_scores = all_scores[all_scores["setting"] == "many-shot"]
        rel = {m: relative_improvement(many_scores, m) for m in MEASURES}
        long = pd.concat({m: r.rename(columns=labels) for m, r in rel.items()}, names=["measure", "lang"])
        write_bytes_atomic(out / f"{stem}-improvement.csv", long.to_csv().encode("utf-8"))
        files.append(out / f"{stem}-improvement.csv")
        if plots:
            from gfun.experiments.plots import relative_improvement_bars

            for m, r in rel.items():
                path = out / f"{stem}-improvement-{m}.png"
                relative_improvement_bars(r.rename(columns=labels), path, measure=DISPLAY_NAMES.get(m, m),
                                          title=f"{settings.dataset}: relative improvement over Naive")
                files.append(path)
    wall = time.perf_counter() - t0
    logger.info("%s finished in %.1f s (%d cells computed, %d resumed)", experiment, wall, counts["done"],
                counts["skipped"])
    return {"table": table, "scores": all_scores, "files": files, "cells": counts, "zero_shot_languages": zs_langs,
            "wall_s": wall}
