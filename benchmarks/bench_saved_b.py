"""gFun with saved B-view vectors on debtags: B alone against X+M+B, under chosen aggregation settings, over runs.

The B view is fine-tuned once per run and its vectors saved; then any number of gFun configurations read them
(the X and M views come from a joblib cache per run), so that comparing aggregation policies over 10 runs costs
the meta level only. Two steps, both resumable:

``fit``
    Fine-tune the B view of each run exactly as ``gfun experiment many-shot`` does (seed = run, the run's
    training documents, ``--b-param`` overrides) and save ``DIR/run=R/{train,test}.npy`` with
    ``{train,test}.ids.jsonl`` (id and language of each row; test = the run's test documents followed by its
    zero-shot ones). With ``--frozen-cache`` the fine-tuned network is kept there too, so that an experiment
    given ``--view-param b.frozen_cache=<same folder>`` reuses it.
``score``
    Fit each configuration of ``--configs`` on the run's training documents with the saved B vectors (meta C = 1)
    and score it on the test documents: one row per run, configuration and setting (``many``: the training
    languages, ``zero``: the zero-shot ones), per-language averages as in ``gfun evaluate``. A configuration is
    view letters, a policy and ``GeneralizedFunnelling`` parameters: ``xmb-select``,
    ``xmb-select:aggregation__average=pooled``, ``xmb-stack``; ``fun`` is Funnelling. Rows already in ``--out`` are
    kept. ``--dataset`` scores any dataset of ``gfun experiment`` (configurations without ``b`` need no
    ``--bvectors``); the views are built from their letters, so each gets what ``gfun train`` hands it (W its
    out-of-fold word-class embeddings).

Example (issue 14, the 10-run comparison of gFun-XMB and gFun-B)::

    python benchmarks/bench_saved_b.py fit --runs 0-9 --bvectors .scratch/bvec --frozen-cache .scratch/fc
    python benchmarks/bench_saved_b.py score --runs 0-9 --bvectors .scratch/bvec \\
        --configs b-select,xmb-select,xmb-select:aggregation__average=pooled --out results/saved-b.csv \\
        --pairs xmb-select:b-select,xmb-select:aggregation__average=pooled:b-select

A folder made by ``bench_b_cpu.py vectors --save-bvectors DIR`` (one run: ``train``, ``test`` and ``zeroshot``
files, no ``run=R``) is read as run ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runs import run_list  # noqa: E402
from bench_neural import _B_CACHE, PrecomputedB  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("F1_macro", "F1_micro", "K_macro", "K_micro")
logger = logging.getLogger("bench_saved_b")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _load_run(data_dir: str | None, run: int, dataset: str = "debtags") -> tuple[Any, Any]:
    from gfun.experiments.runner import ExperimentSettings, load_run

    return load_run(ExperimentSettings(dataset=dataset, data_dir=data_dir, view_cache=""), run)


def _run_dir(base: Path, run: int) -> Path:
    return base / f"run={run}" if (base / f"run={run}").is_dir() or not (base / "train.npy").is_file() else base


def fit(args: argparse.Namespace) -> None:
    from gfun.views.transformer import TransformerView

    params = {k: _value(v) for k, v in (p.split("=", 1) for p in args.b_param)}
    for run in run_list(args.runs):
        out = Path(args.bvectors) / f"run={run}"
        if (out / "info.json").is_file():
            continue
        train, test = _load_run(args.data_dir, run)
        view = TransformerView(random_state=run, frozen_cache=args.frozen_cache, **params)
        t0 = time.perf_counter()
        Z = view.fit_transform(list(train.texts), train.lang_array, train.Y)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Zt = view.transform(list(test.texts), test.lang_array)
        extract_s = time.perf_counter() - t0
        out.mkdir(parents=True, exist_ok=True)
        for name, corpus, M in (("train", train, Z), ("test", test, Zt)):
            np.save(out / f"{name}.npy", np.asarray(M, dtype=np.float32))
            (out / f"{name}.ids.jsonl").write_text("".join(json.dumps({"id": i, "lang": lang}) + "\n"
                                                           for i, lang in zip(corpus.ids, corpus.langs, strict=True)))
        info = {"run": run, "b_params": params, "settings": view.training_settings(), "fit_s": round(fit_s, 1),
                "extract_s": round(extract_s, 1)}
        (out / "info.json").write_text(json.dumps(info, indent=1))
        logger.info("run %d: B fitted in %.1f s, test extracted in %.1f s", run, fit_s, extract_s)


def _index(folder: Path, train: Any, test: Any) -> dict[str, Any]:
    """The saved vectors of a run, by (language, text), for PrecomputedB."""
    corpora = {"train": train, "test": test}
    index: dict[tuple[str, str], int] = {}
    blocks = []
    parts = ["train", "test"] + (["zeroshot"] if (folder / "zeroshot.npy").is_file() else [])
    by_id = {(lang, i): t for c in corpora.values() for i, lang, t in zip(c.ids, c.langs, c.texts, strict=True)}
    offset = 0
    for part in parts:
        rows = [json.loads(line) for line in (folder / f"{part}.ids.jsonl").read_text().splitlines()]
        Z = np.load(folder / f"{part}.npy")
        if len(rows) != len(Z):
            raise ValueError(f"{folder}/{part}: {len(rows)} ids but {len(Z)} vectors")
        for r, d in enumerate(rows):
            index[(d["lang"], by_id[(d["lang"], d["id"])])] = offset + r
        blocks.append(Z)
        offset += len(Z)
    return {"index": index, "Z": np.vstack(blocks)}


def score(args: argparse.Namespace) -> None:
    import pandas as pd

    from gfun.experiments.many_shot import language_average
    from gfun.experiments.runner import cell_scores, evaluate_cell
    from gfun.funnelling.generalized import GeneralizedFunnelling

    out = Path(args.out) if args.out else None
    rows = pd.read_csv(out).to_dict("records") if out is not None and out.is_file() else []
    done = {(r["run"], r["config"]) for r in rows}
    for run in run_list(args.runs):
        todo = [c for c in args.configs.split(",") if (run, c) not in done]
        if not todo:
            continue
        train, test = _load_run(args.data_dir, run, args.dataset)
        if args.bvectors:
            _B_CACHE["b"] = _index(_run_dir(Path(args.bvectors), run), train, test)
        for spec in todo:
            head, *overrides = spec.split(":")
            letters, _, policy = head.partition("-")
            params = {k: _value(v) for k, v in (o.split("=", 1) for o in overrides)}
            cache = args.cache.format(run=run) if args.cache else None
            if letters == "fun":  # Funnelling (the X view's posteriors, raw, to the meta-classifier)
                from gfun.baselines.naive import make_fun

                est = make_fun(n_jobs=args.n_jobs, random_state=run, memory=cache)
                est.set_params(**params)
            else:
                if "b" in letters and not args.bvectors:
                    raise SystemExit(f"{spec}: a configuration with the B view needs --bvectors")
                # letters, so that each view gets what a letters configuration hands it (W: out-of-fold WCEs)
                views = [PrecomputedB() if v == "b" else v for v in letters]
                est = GeneralizedFunnelling(views=views, aggregation=policy or "mean",
                                            view_params={"m": {"source": args.word_vectors}} if "m" in letters
                                            else None, random_state=run, n_jobs=args.n_jobs, memory=cache, **params)
            frame = evaluate_cell(est, train, test)
            frame["run"], frame["config"] = run, spec
            scores = cell_scores(frame, ["run", "config"])
            zero = ~scores["lang"].isin(set(train.langs))  # languages without training documents
            kept = "".join(getattr(est, "selected_views_", None) or [])
            for setting, mask in (("many", ~zero), ("zero", zero)):
                if not mask.any():
                    continue
                row = language_average(scores[mask], ["run", "config"]).iloc[0].to_dict()
                row.update(setting=setting, fit_s=round(float(frame.fit_s.iloc[0]), 1), selected=kept,
                           selected_l2=getattr(est.aggregation_, "l2_", None),
                           validated=json.dumps({k: round(v, 4) for k, v in
                                                 (getattr(est, "selection_scores_", None) or {}).items()}))
                rows.append(row)
                print(f"run {run} {spec:40s} {setting:4s} " + " ".join(f"{m} {row[m]:.3f}" for m in MEASURES)
                      + f" fit {row['fit_s']:.0f} s" + (f" kept {kept}" if policy == "select" else ""), flush=True)
            if out is not None:
                pd.DataFrame(rows).to_csv(out, index=False)
    if args.pairs and out is not None:
        print(paired(pd.DataFrame(rows), args.pairs))


def paired(frame: Any, pairs: str) -> str:
    """Paired t-tests over runs, ``a:b`` pairs (a configuration may itself hold ``:``; split at ``:`` before
    the second configuration's letters)."""
    from scipy.stats import ttest_rel

    configs = sorted(set(frame["config"]), key=len, reverse=True)
    lines = []
    for pair in pairs.split(","):
        a = next((c for c in configs if pair.startswith(c + ":") and pair[len(c) + 1:] in configs), None)
        if a is None:
            raise ValueError(f"pair {pair!r}: not two configurations of the scores")
        b = pair[len(a) + 1:]
        for setting in ("many", "zero"):
            s = frame[frame.setting == setting]
            A, B = (s[s.config == c].set_index("run") for c in (a, b))
            common = A.index.intersection(B.index)
            if len(common) < 2:
                continue
            parts = []
            for m in MEASURES:
                diff = float((A.loc[common, m] - B.loc[common, m]).mean())
                p = float(ttest_rel(A.loc[common, m], B.loc[common, m]).pvalue) if diff else 1.0
                parts.append(f"{m} {diff:+.3f} (p={p:.3g})")
            lines.append(f"{a} vs {b}, {setting}, {len(common)} runs: " + ", ".join(parts))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("fit", "score"))
    ap.add_argument("--bvectors", default=None,
                    help="folder of the saved vectors (run=R subfolders); needed by fit and by configurations with b")
    ap.add_argument("--dataset", default="debtags", help="score: any dataset of gfun experiment (fit: debtags)")
    ap.add_argument("--data-dir", default=None, help="the dataset's folder (default: GFUN_DATA's)")
    ap.add_argument("--runs", default="0", help="e.g. 0-9 or 0,3,5")
    ap.add_argument("--frozen-cache", default=None, help="fit: cache of the frozen pass and fine-tuned network")
    ap.add_argument("--b-param", action="append", default=[], help="fit: a B view parameter, NAME=VALUE")
    ap.add_argument("--configs", default="b-select,xmb-select",
                    help="score: letters-policy[:param=value...], comma-separated")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--cache", default=None, help="score: view cache folder; {run} is replaced by the run")
    ap.add_argument("--out", default=None, help="score: CSV of the scores (resumed)")
    ap.add_argument("--pairs", default=None, help="score: paired t-tests, a:b,...")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.step == "fit" and not args.bvectors:
        ap.error("fit needs --bvectors")
    if args.data_dir is None and args.dataset == "debtags":
        args.data_dir = str(ROOT.parent / "shared" / "data" / "debtags")
    (fit if args.step == "fit" else score)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
