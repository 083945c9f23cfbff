"""gFun against the pooled classifier (one vocabulary and one classifier over all languages), lever by lever.

Each configuration is a name of ``gfun experiment`` (``pooled``, ``x``, ``xp``, ``xmp`` ...) optionally followed by
``:`` and estimator parameters (nested ones included), e.g. ``xp:meta__class_weight=balanced`` or
``xp:p__train_posteriors=in-sample``. Every configuration is fitted on each run's training documents and scored on
its test documents, per language and averaged over languages as ``gfun evaluate`` does: ``many`` over the training
languages, ``zero`` over the languages without training documents (debtags). Rows already in ``--out`` are kept
(resumable); the table printed at the end holds the mean over runs of each measure and of the fit time, and, with
``--reference``, the paired t-test of each configuration against it (``+``/``-``: significantly better/worse at
p < .05), and, where some test documents carry no label, the share of them given a label (``unlabelled``).
``--view-cache`` lets the configurations of a run share the views they have in common.

Example (the ablation on debtags run 0)::

    python benchmarks/bench_pooled.py --dataset debtags --data-dir ../shared/data/debtags --runs 0 \\
        --configs pooled,x,p,xp,xp:meta__class_weight=balanced,xmp --word-vectors e5-subword \\
        --out results/pooled-ablation-debtags.csv
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runs import run_list  # noqa: E402

from gfun.metrics.evaluation import UNLABELLED_FLAGGED as FLAGGED  # noqa: E402
from gfun.metrics.measures import MEASURES  # noqa: E402


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


#: ``--encoder-settings``: the E and F views' ``max_length`` / ``quantize``. ``auto``: the views' defaults (on this
#: machine's device); ``gpu``: 512 float32 tokens (the vectors of a GPU, read from a cache filled there); ``cpu``: 128
#: tokens with int8 layers.
ENCODER_SETTINGS: dict[str, dict] = {"auto": {}, "gpu": {"max_length": 512, "quantize": False},
                                     "cpu": {"max_length": 128, "quantize": True}}


def build(spec: str, run: int, args: argparse.Namespace) -> Any:
    """The unfitted estimator of a configuration spec (``name[:param=value:...]``)."""
    from gfun.configuration import build_estimator, parse_config

    name, *overrides = spec.split(":")
    config = parse_config(name)
    view_params: dict[str, dict] = {"m": {"source": args.word_vectors}} if args.word_vectors else {}
    if args.vector_cache:  # the frozen encoder's document vectors, shared by the E/F views and the encoder baselines
        for key in ("e", "f", "encoder-tfidf", "encoder-lr"):
            view_params[key] = {"cache_dir": args.vector_cache}
    settings = ENCODER_SETTINGS[getattr(args, "encoder_settings", "auto")]
    if settings:  # the E and F views' frozen pass (the encoder baselines keep theirs: 512 float32 tokens)
        for key in ("e", "f"):
            view_params.setdefault(key, {}).update(settings)
    est = build_estimator(config, random_state=run, n_jobs=args.n_jobs, view_params=view_params or None,
                          meta_C=None if config.method in ("pooled", "naive") else 1.0)
    params = {k: _value(v) for k, v in (o.split("=", 1) for o in overrides)}
    return est.set_params(**params) if params else est


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="debtags")
    ap.add_argument("--data-dir")
    ap.add_argument("--runs", default="0")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--reference", help="configuration every other one is t-tested against")
    ap.add_argument("--out", help="CSV of the rows (resumable)")
    ap.add_argument("--vector-cache", help="folder of the frozen encoder's document-vector cache (the E and F views, "
                    "the encoder baselines): a document is embedded once for every configuration and run")
    ap.add_argument("--encoder-settings", choices=sorted(ENCODER_SETTINGS), default="auto",
                    help="the E and F views' frozen pass: auto (the views' defaults on this machine), gpu (512 float32 "
                    "tokens), cpu (128 tokens, int8 layers)")
    ap.add_argument("--zero-shot-langs", help="comma-separated languages removed from the training documents (their "
                    "test documents stay): a zero-shot setting for any dataset, e.g. half of SIB-200's languages")
    ap.add_argument("--view-cache", help="folder where the views fitted in a run are kept for its other "
                    "configurations (GeneralizedFunnelling(memory=...)): configurations that differ only after the "
                    "views (e.g. by aggregation parameters) fit them once; default: none")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    from gfun.experiments.many_shot import language_average
    from gfun.experiments.runner import ExperimentSettings, cell_scores, evaluate_cell, load_run

    out = Path(args.out) if args.out else None
    rows = pd.read_csv(out).to_dict("records") if out is not None and out.exists() else []
    done = {(int(r["run"]), r["config"]) for r in rows}
    specs = [s for s in args.configs.split(",") if s]
    for run in run_list(args.runs):
        todo = [s for s in specs if (run, s) not in done]
        if not todo:
            continue
        train, test = load_run(ExperimentSettings(dataset=args.dataset, data_dir=args.data_dir, view_cache=""), run)
        if args.zero_shot_langs:
            held = set(args.zero_shot_langs.split(","))
            train = train.select([lang for lang in train.languages if lang not in held])
        for spec in todo:
            est = build(spec, run, args)
            if args.view_cache and "memory" in est.get_params(deep=False):
                est.set_params(memory=str(Path(args.view_cache) / f"run={run}"))
            frame = evaluate_cell(est, train, test)
            frame["run"], frame["config"] = run, spec
            scores = cell_scores(frame, ["run", "config"])
            zero = ~scores["lang"].isin(set(train.langs))
            for setting, mask in (("many", ~zero), ("zero", zero)):
                if not mask.any() or scores[mask][list(MEASURES)].isna().all().all():
                    continue
                row = language_average(scores[mask], ["run", "config"]).iloc[0].to_dict()
                row.update(setting=setting, fit_s=round(float(frame.fit_s.iloc[0]), 1))
                rows.append(row)
                print(f"run {run} {spec:36s} {setting:4s} " + " ".join(f"{row[m]:.3f}" for m in MEASURES)
                      + f"  fit {row['fit_s']:.0f} s", flush=True)
            if out is not None:
                pd.DataFrame(rows).to_csv(out, index=False)
    print(table(pd.DataFrame(rows), specs, args.reference))
    return 0


def significance_mark(a: pd.Series, b: pd.Series) -> str:
    """``+``/``-`` when ``a`` is significantly above/below ``b`` (paired t-test over the runs, the index, both have;
    p < .05), else ``""``."""
    from gfun.metrics.significance import paired_ttest

    a, b = a.dropna(), b.dropna()
    common = a.index.intersection(b.index)
    if len(common) < 2:
        return ""
    x, y = a.loc[common].to_numpy(), b.loc[common].to_numpy()
    if not paired_ttest(x, y) < 0.05:  # NaN: identical runs
        return ""
    return "+" if x.mean() > y.mean() else "-"


def table(frame: pd.DataFrame, specs: list[str], reference: str | None) -> str:
    """Mean over runs per configuration and setting, with the paired t-test against ``reference``."""
    lines = []
    for setting in ("many", "zero"):
        s = frame[(frame.setting == setting) & frame.config.isin(specs)]
        if s.empty:
            continue
        runs = sorted(set(s.run))
        lines.append(f"\n{setting}-shot, {len(runs)} run(s)" + (f", t-test against {reference}" if reference else ""))
        flagged = FLAGGED in s.columns and s[FLAGGED].notna().any()
        lines.append(f"{'configuration':40s} " + " ".join(f"{m:>9s}" for m in MEASURES) + "   fit_s"
                     + (" unlabelled" if flagged else ""))
        ref = s[s.config == reference].set_index("run") if reference else None
        for spec in specs:
            c = s[s.config == spec].set_index("run")
            if c.empty:
                continue
            cells = []
            for m in MEASURES:
                mark = significance_mark(c[m], ref[m]) if ref is not None and spec != reference else ""
                cells.append(f"{c[m].mean():8.3f}{mark or ' '}")
            lines.append(f"{spec:40s} " + " ".join(cells) + f" {c.fit_s.mean():7.1f}"
                         + (f" {c[FLAGGED].mean():10.3f}" if flagged else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
