"""Benchmark of the neural parts on debtags (one run): fine-tuned transformer baseline, gFun with B and R views.

Fits and evaluates (many-shot test set of the run) the configurations of ``--configs`` (default: the fine-tuned
transformer baseline ``bert``, gFun-B, gFun-XMB, gFun-XWMB, gFun-R_M, gFun-XBR_M), then the zero-shot macro-F1
of the configurations of ``--zero-shot-configs`` (default gFun-XMB vs gFun-XMW) on the zero-shot languages
(fi nl sv hu). Prints a table (F1M, F1µ, KM, Kµ, fit seconds, seconds per epoch of the B and R views, peak
memory: the process's RSS so far and, on CUDA, the configuration's peak GPU memory) and writes CSVs.

By default the transformer is fine-tuned ONCE (``--reuse``, on): the fine-tuned B view's vectors of the
training, test and zero-shot documents are computed once and every configuration with B reads them (its
fit time then excludes the fine-tuning, reported in ``b_fit_s``), and the ``bert`` baseline is that same
fine-tuned network used as the classifier (same settings, same seed: it is the network a separate fine-tuning
would give). ``--no-reuse`` fine-tunes for each configuration.

Usage::

    python benchmarks/bench_neural.py --device cuda --preset paper
    python benchmarks/bench_neural.py --max-docs 200 --preset cpu --configs bert,b,xmb   # quick smoke run
    python benchmarks/bench_neural.py --save-views results/b-views   # also dump the B vectors as .npy
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gfun.views.base import ViewGenerator

ROOT = Path(__file__).resolve().parents[1]
logger = logging.getLogger("bench_neural")

#: Vectors of the fine-tuned B view, by document (lang, text); filled once, read by PrecomputedB.
_B_CACHE: dict[str, Any] = {}


class PrecomputedB(ViewGenerator):
    """Stands for the B view: returns the vectors of the B view fine-tuned once (benchmark only).

    Defined at module level so that the view cache (joblib) can pickle it by reference.
    """

    letter = "b"
    output = "features"

    def __init__(self, key: str = "b") -> None:
        self.key = key

    def _lookup(self, texts: Any, langs: Any) -> np.ndarray:
        entry = _B_CACHE[self.key]
        rows = [entry["index"][(str(lang), text)] for text, lang in zip(texts, langs, strict=True)]
        return entry["Z"][rows]

    def fit_transform(self, texts: Any, langs: Any, Y: Any) -> np.ndarray:
        self.n_features_out_ = int(_B_CACHE[self.key]["Z"].shape[1])
        return self._lookup(texts, langs)

    def transform(self, texts: Any, langs: Any) -> np.ndarray:
        return self._lookup(texts, langs)

    def covers(self, lang: str) -> bool:
        return True

    def get_state(self) -> tuple[dict, dict]:
        raise NotImplementedError("benchmark stand-in: not saved")

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> Any:
        raise NotImplementedError


def _precomputed_view_class() -> type:
    return PrecomputedB


def _peak_mb() -> dict[str, float]:
    out = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        import torch

        if torch.cuda.is_available():
            out["gpu_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    except ImportError:
        pass
    return out


def _reset_gpu_peak() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
    except ImportError:
        pass


def _sample(corpus: Any, n: int | None, seed: int) -> Any:
    if n is None or len(corpus) <= n:
        return corpus
    idx = np.sort(np.random.RandomState(seed).choice(len(corpus), n, replace=False))
    return corpus.subset(idx)


def _scores(Y: Any, pred: np.ndarray, langs: Any) -> dict[str, float]:
    from gfun.metrics.evaluation import evaluate

    res = evaluate(Y, pred, langs).loc["average"]
    return {m: float(res[m]) for m in ("F1_macro", "F1_micro", "K_macro", "K_micro")}


def _epoch_seconds(est: Any, letter: str) -> float:
    """Mean seconds per epoch of the neural view ``letter`` of a fitted estimator (the bert baseline counts as b)."""
    views = getattr(est, "views_", None)
    if views is None:
        views = [est] if letter == "b" else []
    secs = [s for v in views if getattr(v, "letter", "b") == letter for s in getattr(v, "epoch_seconds_", [])]
    return float(np.mean(secs)) if secs else float("nan")


def _load_run(args: argparse.Namespace) -> Any:
    """The debtags run: built from the raw files, or read from a folder of JSONL files (``--corpus-dir``)."""
    if args.corpus_dir is None:
        from gfun.datasets.debtags import load_debtags

        return load_debtags(run=args.run, data_dir=args.data_dir)
    import lzma
    import tempfile
    from types import SimpleNamespace

    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import MultilingualCorpus

    folder = Path(args.corpus_dir)
    classes = read_classes(folder / "classes.json")
    parts = {}
    for name in ("train", "test", "test_zeroshot"):
        path = folder / f"{name}.jsonl"
        if not path.is_file() and (folder / f"{name}.jsonl.xz").is_file():
            tmp = Path(tempfile.mkdtemp()) / f"{name}.jsonl"
            tmp.write_bytes(lzma.decompress((folder / f"{name}.jsonl.xz").read_bytes()))
            path = tmp
        parts[name] = MultilingualCorpus.from_jsonl(path, classes) if path.is_file() else None
    return SimpleNamespace(train=parts["train"], test=parts["test"], test_zeroshot=parts["test_zeroshot"])


class _LoadedB:
    """What the rest of the script reads from a fine-tuned B view, restored from --save-views files."""

    def __init__(self, info: dict) -> None:
        self.epoch_seconds_ = info.get("epoch_seconds", [])
        self.best_epoch_ = info.get("best_epoch")


def _load_views(folder: Path, train: Any, test: Any, zs_test: Any) -> tuple[Any, float, dict]:
    """Fill the B cache from vectors saved by an earlier run; check they belong to these documents."""
    index: dict[tuple[str, str], int] = {}
    rows = []
    for name, corpus in (("train", train), ("test", test), ("zero-shot", zs_test)):
        if corpus is None or not len(corpus):
            continue
        Z = np.load(folder / f"b-{name}.npy")
        langs = json.loads((folder / "b-langs.json").read_text(encoding="utf-8"))[name]
        if len(Z) != len(corpus) or list(langs) != list(corpus.langs):
            raise ValueError(f"{folder}/b-{name}.npy holds {len(Z)} vectors for other documents than the "
                             f"{len(corpus)} of this run's {name} set")
        for i, (text, lang) in enumerate(zip(corpus.texts, corpus.langs, strict=True)):
            if (lang, text) not in index:
                index[(lang, text)] = len(index)
                rows.append(Z[i])
    _B_CACHE["b"] = {"index": index, "Z": np.asarray(rows, dtype=np.float32)}
    info = json.loads((folder / "b-fit.json").read_text(encoding="utf-8"))
    logger.info("B view vectors loaded from %s (fine-tuned in %.0f s there)", folder, info["b_fit_s"])
    peak = {k: v for k, v in info.items() if k.endswith("_mb")}
    return _LoadedB(info), float(info["b_fit_s"]), peak


def main() -> int:  # noqa: C901 - a linear script
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS",
                                                         str(ROOT.parent / "shared" / "data" / "debtags")))
    ap.add_argument("--configs", default="bert,b,xmb,xwmb,r_m,xbr_m",
                    help="many-shot configurations (names of gfun.configuration)")
    ap.add_argument("--zero-shot-configs", default="xmb,xmw", help="configurations evaluated on fi nl sv hu ('' skips)")
    ap.add_argument("--preset", default="paper", choices=("paper", "gpu", "cpu"), help="B and R training preset")
    ap.add_argument("--encoder", default="multilingual-e5-small", help="model of the B view and of bert")
    ap.add_argument("--word-vectors", default="e5", help="word-vector source of the M and R views")
    ap.add_argument("--device", default="auto", help="torch device (auto, cpu, cuda, cuda:1)")
    ap.add_argument("--max-docs", type=int, default=None,
                    help="keep at most this many training (and test, and zero-shot test) documents: a quick run")
    ap.add_argument("--b-params", default=None, help="JSON of extra B view parameters, e.g. '{\"max_epochs\": 3}'")
    ap.add_argument("--r-params", default=None, help="JSON of extra R view parameters")
    ap.add_argument("--meta-C", default="cv", help="meta-classifier C ('cv' or a number)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--reuse", action=argparse.BooleanOptionalAction, default=True,
                    help="fine-tune the transformer once and reuse it across bert and every B configuration")
    ap.add_argument("--save-views", default=None, help="folder to write the B view's vectors (.npy) to")
    ap.add_argument("--load-views", default=None,
                    help="folder written by --save-views (e.g. on a GPU machine): use those B vectors instead of "
                         "fine-tuning here (the bert baseline then needs the fine-tuned network: leave it out)")
    ap.add_argument("--corpus-dir", default=None,
                    help="read the run from train.jsonl, test.jsonl, test_zeroshot.jsonl (optionally .xz) and "
                         "classes.json in this folder instead of building it from --data-dir")
    ap.add_argument("--progress", action="store_true", help="progress bars over batches")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "neural_run{run}"),
                    help="CSV prefix: <out>.csv (many-shot) and <out>-zero-shot.csv")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s",
                        datefmt="%H:%M:%S", stream=sys.stderr)
    import pandas as pd

    import gfun.views as gviews
    from gfun.baselines.transformer import FineTunedTransformerClassifier
    from gfun.configuration import build_estimator, parse_configs
    from gfun.views.transformer import TransformerView

    meta_C: float | str = args.meta_C if args.meta_C == "cv" else float(args.meta_C)
    configs = parse_configs(args.configs)
    zs_configs = parse_configs(args.zero_shot_configs) if args.zero_shot_configs.strip() else []
    t0 = time.perf_counter()
    r = _load_run(args)
    train = _sample(r.train, args.max_docs, args.run)
    test = _sample(r.test, args.max_docs, args.run + 1)
    zs_test = _sample(r.test_zeroshot, args.max_docs, args.run + 2)
    logger.info("debtags run %d loaded in %.0f s: train %s, test %s, zero-shot test %s", args.run,
                time.perf_counter() - t0, train, test, zs_test)
    b_params = {"model": args.encoder, "preset": args.preset, "device": args.device, "random_state": args.run,
                "progress": args.progress, **json.loads(args.b_params or "{}")}
    r_params = {"source": args.word_vectors, "preset": args.preset, "device": args.device,
                "progress": args.progress, **json.loads(args.r_params or "{}")}
    view_params = {"m": {"source": args.word_vectors}, "b": b_params, "r": r_params}

    needs_b = any("b" in c.views or c.method == "bert" for c in configs + zs_configs)
    b_view, b_fit_s = None, 0.0
    if needs_b and args.load_views:
        if any(c.method == "bert" for c in configs + zs_configs):
            ap.error("--load-views gives the B view's vectors, not the fine-tuned network: drop bert from --configs")
        b_view, b_fit_s, b_peak = _load_views(Path(args.load_views), train, test, zs_test)
        gviews.VIEW_CLASSES["b"] = _precomputed_view_class()
        view_params["b"] = {"key": "b"}
    elif needs_b and args.reuse:
        _reset_gpu_peak()
        b_view = TransformerView(**b_params)
        t = time.perf_counter()
        Z_train = b_view.fit_transform(train.texts, train.lang_array, train.Y)
        b_fit_s = time.perf_counter() - t
        Z_test = b_view.transform(test.texts, test.lang_array)
        Z_zs = b_view.transform(zs_test.texts, zs_test.lang_array) if len(zs_test) else np.zeros((0, Z_train.shape[1]))
        b_peak = _peak_mb()
        logger.info("B view fine-tuned once in %.0f s (%d epochs, best %d, %.1f s per epoch)", b_fit_s,
                    len(b_view.history_), b_view.best_epoch_, np.mean(b_view.epoch_seconds_))
        index: dict[tuple[str, str], int] = {}
        rows = []
        for corpus, Z in ((train, Z_train), (test, Z_test), (zs_test, Z_zs)):
            for i, (text, lang) in enumerate(zip(corpus.texts, corpus.langs, strict=True)):
                if (lang, text) not in index:
                    index[(lang, text)] = len(index)
                    rows.append(Z[i])
        _B_CACHE["b"] = {"index": index, "Z": np.asarray(rows, dtype=np.float32)}
        gviews.VIEW_CLASSES["b"] = _precomputed_view_class()  # every "b" below reads the cached vectors
        view_params["b"] = {"key": "b"}
        if args.save_views:
            out = Path(args.save_views)
            out.mkdir(parents=True, exist_ok=True)
            langs = {}
            for name, corpus, Z in (("train", train, Z_train), ("test", test, Z_test), ("zero-shot", zs_test, Z_zs)):
                np.save(out / f"b-{name}.npy", Z)
                langs[name] = [str(x) for x in corpus.langs]
            (out / "b-langs.json").write_text(json.dumps(langs), encoding="utf-8")
            (out / "b-history.json").write_text(json.dumps(b_view.history_, indent=1), encoding="utf-8")
            (out / "b-fit.json").write_text(json.dumps({"b_fit_s": b_fit_s, "epoch_seconds": b_view.epoch_seconds_,
                                                        "best_epoch": b_view.best_epoch_, **b_peak}), encoding="utf-8")
            logger.info("B view vectors written to %s", out)

    def estimator(cfg: Any) -> Any:
        if cfg.method == "bert":
            if b_view is not None:
                clf = FineTunedTransformerClassifier(**b_params)
                clf.classes_, clf.languages_, clf.tuner_ = list(train.classes), train.languages, b_view.tuner_
                clf._set_fitted()
                return clf
            return FineTunedTransformerClassifier(**b_params)
        est = build_estimator(cfg, meta_C=meta_C, random_state=args.run, n_jobs=args.n_jobs,
                              view_params=view_params, memory=view_cache)
        if args.load_views and "b" in (getattr(est, "view_params", None) or {}):
            est.view_params["b"].pop("frozen_cache", None)  # loaded vectors: no frozen pass to cache
        return est

    import tempfile

    # views shared by several configurations (X, M, W, R) are fitted once; their fit time goes to the first
    view_cache = tempfile.mkdtemp(prefix="gfun-bench-views-") if args.reuse else None
    results, fitted = [], {}
    for cfg in configs + [c for c in zs_configs if c.name not in {x.name for x in configs}]:
        est = estimator(cfg)
        _reset_gpu_peak()
        t = time.perf_counter()
        if not (cfg.method == "bert" and b_view is not None):
            est.fit(train)
        fit_s = time.perf_counter() - t
        fitted[cfg.name] = est
        reused = b_view is not None and ("b" in cfg.views or cfg.method == "bert")
        t = time.perf_counter()
        pred = est.predict(test)
        row = {"config": cfg.display, "name": cfg.name, **_scores(test.Y, pred, test.langs),
               "fit_s": fit_s, "predict_s": time.perf_counter() - t, "b_fit_s": b_fit_s if reused else float("nan"),
               "b_epoch_s": (float(np.mean(b_view.epoch_seconds_)) if reused else _epoch_seconds(est, "b")),
               "r_epoch_s": _epoch_seconds(est, "r"),
               **_peak_mb()}
        if reused and "gpu_peak_mb" in b_peak:
            row["gpu_peak_mb"] = max(row.get("gpu_peak_mb", 0.0), b_peak["gpu_peak_mb"])
        if cfg in configs:
            results.append(row)
        logger.info("%s: F1M %.3f F1mu %.3f (fit %.0f s)", cfg.display, row["F1_macro"], row["F1_micro"], fit_s)

    zs_rows = []
    if len(zs_test):
        from gfun.metrics.evaluation import evaluate
        from gfun.metrics.measures import f1_macro_present

        for cfg in zs_configs:
            est = fitted[cfg.name]
            pred = est.predict(zs_test)
            df = evaluate(zs_test.Y, pred, zs_test.langs)
            Y = zs_test.Y.toarray()
            langs = np.asarray(zs_test.langs)
            for lang in sorted(set(zs_test.langs)):
                m = langs == lang
                zs_rows.append({"config": cfg.display, "lang": lang, "n_docs": int(m.sum()),
                                "F1_macro": float(df.loc[lang, "F1_macro"]),
                                "F1_micro": float(df.loc[lang, "F1_micro"]),
                                "F1_macro_present": float(f1_macro_present(Y[m], pred[m]))})
    out = Path(args.out.format(run=args.run))
    out.parent.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(results).set_index("config")
    table.to_csv(out.with_suffix(".csv"))
    with pd.option_context("display.width", 220, "display.float_format", "{:.3f}".format):
        sys.stdout.write(table.to_string() + "\n")
        if zs_rows:
            zs = pd.DataFrame(zs_rows)
            zs.to_csv(out.with_name(out.name + "-zero-shot.csv"), index=False)
            sys.stdout.write("\nzero-shot (no training documents in these languages):\n")
            sys.stdout.write(zs.pivot(index="lang", columns="config", values=["F1_macro", "F1_micro",
                                                                               "F1_macro_present"]).to_string() + "\n")
    sys.stdout.write(f"written to {out.with_suffix('.csv')} (total {time.perf_counter() - t0:.0f} s)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
