"""gFun with saved B-view vectors on debtags: B alone against X+M+B, under chosen aggregation policies.

The B vectors are those another run saved (``benchmarks/bench_b_cpu.py vectors --save-bvectors DIR``):
``DIR/{train,test}.npy`` with ``DIR/{train,test}.ids.jsonl`` (id and language of each row, the run's order).
Every configuration is fitted on the run's training documents (views cached in ``--cache``, meta C = 1) and
scored on its test documents (per-language averages)::

    python benchmarks/bench_saved_b.py --bvectors /work/notes/bvectors/run0 \
        --configs b-select,xmb-select,b-mean,xmb-mean
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_neural import _B_CACHE, PrecomputedB  # noqa: E402


def main() -> int:
    from gfun.datasets.registry import load_dataset
    from gfun.experiments.many_shot import language_average
    from gfun.experiments.runner import cell_scores, evaluate_cell
    from gfun.funnelling import GeneralizedFunnelling
    from gfun.views import make_view

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bvectors", required=True)
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "debtags"))
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--configs", default="b-select,xmb-select,b-mean,xmb-mean",
                    help="view letters (x, m, b) and an aggregation policy, e.g. xmb-select")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--cache", default=None, help="view cache folder")
    ap.add_argument("--out", default=None, help="CSV of the scores")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    splits = load_dataset("debtags", data_dir=args.data_dir, run=args.run)
    text_of = {(c.langs[i], c.ids[i]): c.texts[i] for c in (splits.train, splits.test) for i in range(len(c))}
    index, blocks = {}, []
    for part in ("train", "test"):
        rows = [json.loads(line) for line in Path(args.bvectors, f"{part}.ids.jsonl").read_text().splitlines()]
        offset = sum(len(b) for b in blocks)
        index.update({(d["lang"], text_of[(d["lang"], d["id"])]): offset + r for r, d in enumerate(rows)})
        blocks.append(np.load(Path(args.bvectors, f"{part}.npy")))
    _B_CACHE["b"] = {"index": index, "Z": np.vstack(blocks)}
    out = []
    for spec in args.configs.split(","):
        letters, policy = spec.split("-")
        views = [PrecomputedB() if v == "b" else
                 make_view(v, defaults={"n_jobs": args.n_jobs, "random_state": args.run},
                           **({"source": args.word_vectors} if v == "m" else {})) for v in letters]
        est = GeneralizedFunnelling(views=views, aggregation=policy, meta_C=1.0, random_state=args.run,
                                    n_jobs=args.n_jobs, memory=args.cache)
        frame = evaluate_cell(est, splits.train, splits.test)
        frame["run"], frame["config"] = args.run, spec
        row = language_average(cell_scores(frame, ["run", "config"]), ["run", "config"]).iloc[0].to_dict()
        row.update(fit_s=float(frame.fit_s.iloc[0]), selected="".join(getattr(est, "selected_views_", None) or []),
                   selected_l2=getattr(est, "selected_l2_", None))
        out.append(row)
        print(f"{spec:12s} F1M {row['F1_macro']:.3f} F1µ {row['F1_micro']:.3f} KM {row['K_macro']:.3f} "
              f"Kµ {row['K_micro']:.3f} fit {row['fit_s']:.1f} s"
              + (f" kept {row['selected']}{'' if row['selected_l2'] else ' (raw)'}" if policy == "select" else ""),
              flush=True)
    if args.out:
        import pandas as pd

        pd.DataFrame(out).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
