"""Aggregation experiment (the paper's Table 5): concatenation against averaging for chosen configurations.

Every gFun configuration is run with ``-concat`` and ``-mean`` aggregation. The table groups the two
variants of each configuration (the better one is marked as group best); significance is against the best
overall, as in the many-shot table. Outputs in ``out``: ``cells/aggregation/`` and ``aggregation-<dataset>``
``-scores.csv``, ``.csv``, ``.md``, ``.tex``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gfun.experiments.configs import Config, parse_config
from gfun.experiments.many_shot import RunCache, cell_job, language_average, write_tables
from gfun.experiments.runner import (
    ExperimentSettings,
    cell_scores,
    open_experiment,
    run_cells,
)

__all__ = ["aggregation_variants", "run_aggregation"]

logger = logging.getLogger(__name__)


def aggregation_variants(configs: Sequence[Config]) -> list[Config]:
    """The ``-concat`` and ``-mean`` variants of each gFun configuration (baselines are dropped)."""
    out: list[Config] = []
    for cfg in configs:
        if cfg.method != "gfun":
            logger.info("aggregation: %s has no aggregation choice; skipped", cfg.display)
            continue
        for agg in ("concat", "mean"):
            variant = parse_config(f"{cfg.views}-{agg}")
            if variant.name not in {c.name for c in out}:
                out.append(variant)
    if not out:
        raise ValueError("the aggregation experiment needs gFun configurations (view letters such as xm, xmw)")
    return out


def run_aggregation(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path) -> dict[str, Any]:
    """Run (or resume) the aggregation comparison and write its files.

    Returns
    -------
    dict
        ``table``, ``scores``, ``files``, ``cells`` and ``wall_s``.
    """
    t0 = time.perf_counter()
    variants = aggregation_variants(configs)
    out, settings, store = open_experiment(out, "aggregation", settings)
    cache = RunCache(settings, zero_shot_test=False)
    cells = []
    for run in range(settings.runs):
        for cfg in variants:
            cells.append(({"run": run, "config": cfg.name}, cell_job(settings, cfg, run, lambda r=run: cache(r))))
    counts = run_cells(store, cells, label="aggregation", settings=settings)
    frame = store.load_all(k for k, _ in cells)
    scores = cell_scores(frame, ["run", "config"])
    avg = language_average(scores, ["run", "config"])
    stem = f"aggregation-{settings.dataset}"
    pd.concat([scores, avg], ignore_index=True).to_csv(out / f"{stem}-scores.csv", index=False)
    groups = {c.name: f"gFun-{c.views.upper()}" for c in variants}
    table = write_tables(out, stem, avg, variants, title=f"Concatenation vs averaging on {settings.dataset}",
                         groups=groups)
    files = [out / f"{stem}{s}" for s in ("-scores.csv", ".csv", ".md", ".tex")]
    wall = time.perf_counter() - t0
    logger.info("aggregation finished in %.1f s (%d cells computed, %d resumed)", wall, counts["done"],
                counts["skipped"])
    return {"table": table, "scores": avg, "files": files, "cells": counts, "wall_s": wall}
