"""Benchmark: ``select``'s backward search against the exhaustive one (docs/select.md, version 8).

Two measurements, on views fitted once and kept in ``--view-cache`` (as ``bench_pooled.py``: the fit is then the meta
tier and the reading of the views):

- **replay** (the default): on each run, gFun-``--views`` validates every candidate once, each set of views in both
  forms (``Select(forms="both", search="exhaustive")``); the records go to ``--records`` (JSON lines, resumable).
  The searches of every configuration of ``--replay`` (sets of those views) are then replayed on those numbers,
  forms ``preferred`` and ``both``, exhaustive and backward: the table says which candidate each keeps and how many
  it validated. The validated scores of a set do not depend on the other views of the model (the folds are the
  meta-classifier's), so one fit serves every configuration.
- ``--time``: the fit of gFun-``--views`` with each search on one run (time it on a quiet machine), its number of
  candidates, the kept set and its F1 on the test documents.

Example::

    python benchmarks/bench_select_search.py --dataset debtags --data-dir ../shared/data/debtags --runs 0-2 \\
        --views xpef --replay xpef,xpe,xpf,xp,pe,xe --vector-cache DIR --encoder-settings gpu --view-cache VC \\
        --records results/select-search/debtags.jsonl
    python benchmarks/bench_select_search.py --dataset debtags --data-dir ../shared/data/debtags --runs 0 \\
        --views xpe --time --vector-cache DIR --encoder-settings gpu --view-cache VC
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runs import run_list  # noqa: E402
from bench_pooled import ENCODER_SETTINGS, build  # noqa: E402

from gfun.funnelling.select import (  # noqa: E402
    SELECT_SEARCHES,
    Select,
    one_standard_error_choice,
    sets_to_try,
    within_one_standard_error,
)


def replay(record: dict, views: str, search: str, forms: str) -> tuple[str, int]:
    """The candidate ``select`` keeps for gFun-``views`` (``search``, ``forms``) and how many it validates, from the
    validated scores of every candidate in ``record`` (``Select.scores_`` and ``fold_scores_`` of a fit with every set
    in both forms)."""
    tried: list[tuple[str, tuple[str, ...]]] = []

    def name(subset: tuple[str, ...], l2: bool) -> str:
        return "".join(subset) + ("" if l2 else " (raw)")

    def rule_near() -> list[int]:
        return within_one_standard_error([record["scores"][n] for n, _ in tried],
                                         [record["fold_scores"][n] for n, _ in tried])

    full = tuple(views)
    tried += [(name(full, l2), full) for l2 in (True, False)]
    preferred = record["scores"][name(full, True)] >= record["scores"][name(full, False)]
    subsets = [c for size in range(len(full) - 1, 0, -1) for c in combinations(full, size)]
    for size in sorted({len(s) for s in subsets}, reverse=True):
        for subset in sets_to_try(subsets, size, [tried[i][1] for i in rule_near()], search):
            for l2 in ((True, False) if size == 1 or forms == "both" else (preferred,)):
                tried.append((name(subset, l2), subset))
    kept = one_standard_error_choice([record["scores"][n] for n, _ in tried],
                                     [record["fold_scores"][n] for n, _ in tried], [len(s) for _, s in tried])
    return tried[kept][0], len(tried)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="debtags")
    ap.add_argument("--data-dir")
    ap.add_argument("--runs", default="0")
    ap.add_argument("--views", default="xpef", help="the views of the fitted model (letters)")
    ap.add_argument("--replay", default="", help="comma-separated sets of those views whose searches are replayed "
                    "(default: the views alone)")
    ap.add_argument("--records", help="JSON lines of every candidate's validation (resumable)")
    ap.add_argument("--time", action="store_true", help="time the fit with each search instead of replaying")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--vector-cache")
    ap.add_argument("--encoder-settings", choices=sorted(ENCODER_SETTINGS), default="auto")
    ap.add_argument("--view-cache", help="folder of the fitted views of each run (run=<i> inside)")
    args = ap.parse_args(argv)
    from gfun.experiments.runner import ExperimentSettings, load_run
    from gfun.metrics.evaluation import evaluate

    def fitted(run: int, aggregation: Select) -> tuple:
        train, test = load_run(ExperimentSettings(dataset=args.dataset, data_dir=args.data_dir, view_cache=""), run)
        est = build(args.views, run, args).set_params(aggregation=aggregation)
        if args.view_cache:
            est.set_params(memory=str(Path(args.view_cache) / f"run={run}"))
        started = time.perf_counter()
        est.fit(train)
        return est, time.perf_counter() - started, test

    if args.time:
        print("| run | search | candidates | fit s | kept | F1M / F1µ (all test documents) |")
        print("|---|---|---|---|---|---|")
        for run in run_list(args.runs):
            for search in SELECT_SEARCHES:
                est, seconds, test = fitted(run, Select(search=search))
                res = evaluate(test.Y, est.predict(test), test.langs).loc["average"]
                print(f"| {run} | {search} | {len(est.aggregation_.scores_)} | {seconds:.1f} | "
                      f"{''.join(est.selected_views_)} | {res['F1_macro']:.4f} / {res['F1_micro']:.4f} |", flush=True)
        return 0
    path = Path(args.records) if args.records else None
    records = [json.loads(line) for line in path.open()] if path is not None and path.exists() else []
    done = {r["run"] for r in records if r["dataset"] == args.dataset and r["views"] == args.views}
    for run in run_list(args.runs):
        if run in done:
            continue
        est, seconds, _ = fitted(run, Select(forms="both", search="exhaustive"))
        policy = est.aggregation_
        record = {"dataset": args.dataset, "views": args.views, "run": run, "scores": policy.scores_,
                  "fold_scores": {k: [float(x) for x in v] for k, v in policy.fold_scores_.items()},
                  "fit_s": round(seconds, 1)}
        records.append(record)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as fh:
                fh.write(json.dumps(record) + "\n")
    configs = [c for c in args.replay.split(",") if c] or [args.views]
    print("| run | configuration | forms | exhaustive: kept (candidates) | backward: kept (candidates) | same |")
    print("|---|---|---|---|---|---|")
    same = total = 0
    for record in sorted((r for r in records if r["dataset"] == args.dataset and r["views"] == args.views),
                         key=lambda r: r["run"]):
        for config in configs:
            for forms in ("preferred", "both"):
                (a, na), (b, nb) = (replay(record, config, s, forms) for s in ("exhaustive", "backward"))
                same, total = same + (a == b), total + 1
                print(f"| {record['run']} | {config} | {forms} | {a} ({na}) | {b} ({nb}) | "
                      f"{'yes' if a == b else 'NO'} |")
    print(f"\nthe same candidate kept in {same} of {total} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
