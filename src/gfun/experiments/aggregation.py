"""Aggregation experiment (the paper's Table 5, extended): every aggregation policy for chosen configurations.

Every gFun configuration is run with each policy (by default ``concat``, ``mean``, ``stack`` and ``wmean``,
see :mod:`gfun.funnelling.aggregation`); baselines (``fun``, ``naive``) are run once. Views are fitted once per run
(the view cache), so the policies of a run differ only at the meta level. The table groups the variants of
each configuration (the better one is marked as group best); significance is against the best overall, as
in the many-shot table. ``-pairs`` compares, for every policy and measure, each multi-view configuration with
the configurations of its views and subsets (paired two-tailed t-tests over runs), and every configuration
with Fun: the acceptance checks "adding a view never makes gFun significantly worse".

Outputs in ``out``: ``cells/aggregation/`` and ``aggregation-<dataset>`` ``-scores.csv``, ``.csv``, ``.md``,
``.tex``, ``-pairs.csv``, ``-pairs.md``, ``-timings.csv``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gfun.configuration import Config, parse_config
from gfun.core.atomic import write_bytes_atomic
from gfun.experiments.many_shot import RunCache, cell_job, language_average, write_tables
from gfun.experiments.runner import (
    ExperimentSettings,
    cell_scores,
    open_experiment,
    run_cells,
)
from gfun.funnelling import AGGREGATIONS

__all__ = ["aggregation_variants", "pair_tests", "run_aggregation"]

logger = logging.getLogger(__name__)


def aggregation_variants(configs: Sequence[Config], policies: Sequence[str] = AGGREGATIONS) -> list[Config]:
    """The variant of each gFun configuration with each policy of ``policies``; baselines are kept as they are.

    A configuration named with a policy (``xm-stack``) is kept as it is.
    """
    unknown = [p for p in policies if p not in AGGREGATIONS]
    if unknown or not policies:
        raise ValueError(f"unknown aggregation policies {unknown}; choose from {AGGREGATIONS}")
    out: list[Config] = []
    for cfg in configs:
        if cfg.method != "gfun" or cfg.name.endswith(tuple(f"-{a}" for a in AGGREGATIONS)):
            variants = [cfg]
        else:
            stem = cfg.name
            variants = [parse_config(f"{stem}-{agg}") for agg in policies]
        out.extend(v for v in variants if v.name not in {c.name for c in out})
    if not any(c.method == "gfun" for c in out):
        raise ValueError("the aggregation experiment needs gFun configurations (view letters such as xm, xmw)")
    return out


def pair_tests(run_scores: pd.DataFrame, configs: Sequence[Config]) -> pd.DataFrame:
    """Paired t-tests over runs: each multi-view configuration against each of its sub-configurations within
    its aggregation policy, every gFun configuration against the paper's ``mean`` of the same views, and
    against Fun.

    Returns one row per (policy, config, reference, measure): ``mean`` of both, ``diff`` (config minus
    reference), ``p`` (two-tailed paired t-test over runs) and ``worse`` (significantly worse at p < 0.05).
    """
    from gfun.metrics.measures import MEASURES
    from gfun.metrics.significance import paired_ttest

    by_name = {c.name: c for c in configs}
    piv = {m: run_scores.pivot_table(index="run", columns="config", values=m) for m in MEASURES}
    gfun = [c for c in configs if c.method == "gfun"]
    rows = []
    for cfg in gfun:
        refs = [c for c in gfun if c.aggregation == cfg.aggregation and c.name != cfg.name
                and set(c.views) < set(cfg.views)]
        # and the paper's mean of the same views
        refs += [c for c in gfun if c.aggregation == "mean" != cfg.aggregation and c.views == cfg.views
                 and c.r_wce == cfg.r_wce]
        if "fun" in by_name:
            refs.append(by_name["fun"])
        for ref in refs:
            for m in MEASURES:
                a, b = piv[m].get(cfg.name), piv[m].get(ref.name)
                if a is None or b is None:
                    continue
                ok = a.notna() & b.notna()
                if ok.sum() < 2:
                    p = float("nan")
                else:
                    p = paired_ttest(a[ok].to_numpy(), b[ok].to_numpy())
                diff = float(a[ok].mean() - b[ok].mean())
                rows.append({"policy": cfg.aggregation, "config": cfg.display, "reference": ref.display,
                             "measure": m, "mean": float(a[ok].mean()), "reference_mean": float(b[ok].mean()),
                             "diff": diff, "p": p, "worse": bool(diff < 0 and p < 0.05)})
    return pd.DataFrame(rows)


def run_aggregation(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path,
                    policies: Sequence[str] = AGGREGATIONS) -> dict[str, Any]:
    """Run (or resume) the aggregation comparison and write its files.

    Returns
    -------
    dict
        ``table``, ``scores``, ``files``, ``cells`` and ``wall_s``.
    """
    t0 = time.perf_counter()
    variants = aggregation_variants(configs, policies)
    out, settings, store = open_experiment(out, "aggregation", settings, configs=variants)
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
    write_bytes_atomic(out / f"{stem}-scores.csv",
                       pd.concat([scores, avg], ignore_index=True).to_csv(index=False).encode("utf-8"))
    groups = {c.name: f"gFun-{c.views.upper()}" if c.method == "gfun" else "baselines" for c in variants}
    table = write_tables(out, stem, avg, variants, title=f"Aggregation policies on {settings.dataset}",
                         groups=groups)
    pairs = pair_tests(avg, variants)
    write_bytes_atomic(out / f"{stem}-pairs.csv", pairs.to_csv(index=False).encode("utf-8"))
    write_bytes_atomic(out / f"{stem}-pairs.md", _pairs_markdown(pairs, settings.dataset).encode("utf-8"))
    write_bytes_atomic(out / f"{stem}-timings.csv", frame.groupby(["run", "config"], sort=False)[["fit_s", "predict_s"]]
                       .first().reset_index().to_csv(index=False).encode("utf-8"))
    files = [out / f"{stem}{s}" for s in ("-scores.csv", ".csv", ".md", ".tex", "-pairs.csv", "-pairs.md",
                                          "-timings.csv")]
    wall = time.perf_counter() - t0
    logger.info("aggregation finished in %.1f s (%d cells computed, %d resumed)", wall, counts["done"],
                counts["skipped"])
    return {"table": table, "scores": avg, "files": files, "cells": counts, "wall_s": wall}


def _pairs_markdown(pairs: pd.DataFrame, dataset: str) -> str:
    """The comparisons of :func:`pair_tests` as a Markdown table (one line per pair, one column per measure)."""
    if pairs.empty:
        return f"### Paired comparisons on {dataset}\n\n(none)\n"
    measures = list(dict.fromkeys(pairs["measure"]))
    lines = [f"### Paired comparisons on {dataset}: configuration minus reference (p: paired t-test over runs)",
             "", "| Policy | Configuration | Reference | " + " | ".join(measures) + " |",
             "|---|---|---|" + "---|" * len(measures)]
    for (policy, cfg, ref), sub in pairs.groupby(["policy", "config", "reference"], sort=False):
        by_measure = sub.set_index("measure")
        cells = []
        for m in measures:
            if m not in by_measure.index:
                cells.append("")
                continue
            d, p = float(by_measure.at[m, "diff"]), float(by_measure.at[m, "p"])
            mark = " **worse**" if d < 0 and p < 0.05 else (" better" if d > 0 and p < 0.05 else "")
            cells.append(f"{d:+.3f} (p={p:.3f}){mark}")
        lines.append(f"| {policy} | {cfg} | {ref} | " + " | ".join(cells) + " |")
    lines += ["", "**worse** / better: significantly (p < 0.05) below / above the reference."]
    return "\n".join(lines) + "\n"
