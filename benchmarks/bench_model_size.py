"""Size of a saved gFun model, per component, and what loading it costs (issue 13: a gFun-XMB model <= 60 MB).

``train``: runs ``gfun train`` (in this process, the exact CLI path) on a debtags run folder, keeps the fitted
model, then reports the saved directory's size per component, whether the reloaded model gives the same decision
scores as the fitted one (test and zero-shot documents), and the load time: as saved (M's sub-word vectors by
reference: recomputed at load, with the word-vector cache of the encoder warm and cold), and saved
self-contained (``--self-contained``: every B weight and the M vectors stored) next to it::

    nice -n 5 flock /tmp/gfun-heavy.lock python benchmarks/bench_model_size.py train --run-dir RUN0 \
        --views xmb --model /tmp/size-M --out results/model-size-xmb.csv

``resave``: a model saved before these changes (matrices stored, float64 mappers, every view saved) saved again
as gfun saves now, without refitting: M kept whatever select chose, its sub-word vectors by reference, mappers'
support vectors in float32; sizes, reload check on ``--docs`` documents, load times::

    python benchmarks/bench_model_size.py resave --model OLD --out-model /tmp/size-resaved --run-dir RUN0

``mapper-dtype``: gFun (views ``--views``, default aggregation) on the bundled demo sample with the mappers'
support vectors in float64 (before) and float32 (now): F1 on the demo test set and mapper size::

    python benchmarks/bench_model_size.py mapper-dtype --views xmw
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def component_sizes(model_dir: Path) -> dict[str, int]:
    """Bytes of the saved arrays per component (``view/m``, ``mapper/b``, ...) and of state.json."""
    version = model_dir / json.loads((model_dir / "CURRENT").read_text())["version"]
    sizes: collections.Counter = collections.Counter()
    with np.load(version / "arrays.npz", allow_pickle=False) as z:
        for key in z.files:
            parts = key.split("/")
            name = "/".join(parts[:2]) if parts[0] in ("view", "mapper", "fallback", "mapper_scaler") else parts[0]
            if parts[0] == "view" and len(parts) > 3 and parts[-1].startswith("matrix"):
                name += " (word vectors)"
            sizes[name] += int(z[key].nbytes)
    sizes["state.json"] = (version / "state.json").stat().st_size
    return dict(sizes)


@contextlib.contextmanager
def _word_vector_cache(enabled: bool) -> Iterator[None]:
    """With ``enabled=False``, the encoder-derived word vectors are computed from the encoder (no disk cache)."""
    from gfun.wordvectors.encoder import EncoderWordVectors

    if enabled:
        yield
        return
    saved = EncoderWordVectors.cache_path, EncoderWordVectors.bank_path
    EncoderWordVectors.cache_path = lambda self, lang, vocabulary: None  # type: ignore[method-assign]
    EncoderWordVectors.bank_path = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        EncoderWordVectors.cache_path, EncoderWordVectors.bank_path = saved


def _timed_load(path: Path, cache: bool = True) -> tuple[Any, float]:
    from gfun.persistence.loading import load_model

    with _word_vector_cache(cache):
        t0 = time.perf_counter()
        model = load_model(path)
        return model, time.perf_counter() - t0


def _m_recompute_s(model: Any, cache: bool) -> float | None:
    """Seconds the M view of ``model`` takes to recompute its word vectors by reference (None: stored)."""
    view = next((v for v in model.views_ if v.letter == "m"), None)
    if view is None or not view._by_reference():
        return None
    expected = view.get_state()[0]["vectors_sha256"]
    with _word_vector_cache(cache):
        t0 = time.perf_counter()
        view._recompute_vectors(expected)
        return round(time.perf_counter() - t0, 1)


def _fit_by_cli(argv: list[str]) -> Any:
    """``gfun <argv>`` in this process; returns the estimator it saved."""
    from gfun.cli.main import main
    from gfun.funnelling.generalized import GeneralizedFunnelling

    fitted: list[Any] = []
    original = GeneralizedFunnelling.save

    def save(self: Any, path: str) -> None:
        fitted.append(self)
        original(self, path)

    GeneralizedFunnelling.save = save  # type: ignore[method-assign]
    try:
        rc = main(argv)
    finally:
        GeneralizedFunnelling.save = original  # type: ignore[method-assign]
    if rc != 0 or not fitted:
        raise SystemExit(f"gfun {' '.join(argv)} failed (exit {rc})")
    return fitted[0]


def _self_contained_copy(model: Any, path: Path) -> None:
    """Save ``model`` with every weight and word vector stored (what ``--self-contained`` saves)."""
    views = model.views_ + list(getattr(model, "fallback_views_", []))
    before = [(v, v.get_params()) for v in views]
    try:
        for v in views:
            v.set_params(**{k: val for k, val in (("store_vectors", True), ("self_contained", True))
                            if k in v.get_params()})
        model.save(path)
    finally:
        for v, params in before:
            v.set_params(**{k: params[k] for k in ("store_vectors", "self_contained") if k in params})


def cmd_train(args: argparse.Namespace) -> int:
    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import read_corpus
    from gfun.metrics.evaluation import evaluate

    run = Path(args.run_dir)
    model_dir = Path(args.model)
    argv = ["train", "--train", str(run / "train.jsonl"), "--classes", str(run / "classes.json"),
            "--views", args.views, "--word-vectors", args.word_vectors, "--model", str(model_dir), *args.extra]
    t0 = time.perf_counter()
    model = _fit_by_cli(argv)
    train_s = time.perf_counter() - t0
    classes = read_classes(run / "classes.json")
    parts = {name: read_corpus(run / f"{name}.jsonl", classes) for name in ("test", "test_zeroshot")}
    before = {name: model.decision_function(c) for name, c in parts.items()}
    rows = []
    loaded, load_s = _timed_load(model_dir)
    identical = all(np.array_equal(loaded.decision_function(c), before[name]) for name, c in parts.items())
    scores = {name: evaluate(c.Y, (before[name] > 0).astype(np.int8), c.langs).loc["average"]
              for name, c in parts.items()}
    m_warm, m_cold = _m_recompute_s(loaded, True), _m_recompute_s(loaded, False)
    del loaded
    _, cold_s = _timed_load(model_dir, cache=False)
    full_dir = model_dir.with_name(model_dir.name + "-self-contained")
    _self_contained_copy(model, full_dir)
    _, full_s = _timed_load(full_dir)
    for label, path, secs, cold in (("default", model_dir, load_s, cold_s), ("self-contained", full_dir, full_s, None)):
        sizes = component_sizes(path)
        row = {"views": args.views, "kept": "".join(model.selected_views_),
               "dropped": "".join(getattr(model, "dropped_views_", [])), "saved": label,
               "dir_MB": round(_dir_bytes(path) / 1e6, 1), "load_s": round(secs, 1),
               "load_cold_wordvector_cache_s": None if cold is None else round(cold, 1),
               "identical_after_reload": identical if label == "default" else None,
               "m_recompute_s": m_warm if label == "default" else None,
               "m_recompute_cold_wordvector_cache_s": m_cold if label == "default" else None,
               "train_s": round(train_s, 1),
               "test_F1M": round(float(scores["test"]["F1_macro"]), 4),
               "test_F1u": round(float(scores["test"]["F1_micro"]), 4),
               "zeroshot_F1u": round(float(scores["test_zeroshot"]["F1_micro"]), 4)}
        row.update({f"MB {k}": round(v / 1e6, 2) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])})
        rows.append(row)
    _report(rows, args.out)
    return 0


def cmd_resave(args: argparse.Namespace) -> int:
    """A model saved before these changes, re-saved as gfun saves now (M kept, whatever select chose)."""
    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import read_corpus

    run = Path(args.run_dir)
    old, new = Path(args.model), Path(args.out_model)
    model, _ = _timed_load(old)
    if args.prune:  # what fit now does at its end with select
        model._drop_unused_views()
    for view in model.views_ + list(getattr(model, "fallback_views_", [])):
        if "store_vectors" in view.get_params():
            view.set_params(store_vectors="auto")
    for mapper in model.mappers_.values():  # what fit now leaves: float32 support vectors
        mapper.set_params(support_dtype="float32")
        mapper.support_vectors_ = mapper.support_vectors_.astype(np.float32)
    model.save(new)
    classes = read_classes(run / "classes.json")
    docs = [read_corpus(run / f"{name}.jsonl", classes) for name in ("test", "test_zeroshot")]
    docs = [c.subset(range(min(len(c), args.docs))) for c in docs]
    before = [model.decision_function(c) for c in docs]
    loaded, load_s = _timed_load(new)
    identical = all(np.array_equal(loaded.decision_function(c), b) for c, b in zip(docs, before, strict=True))
    m_warm, m_cold = _m_recompute_s(loaded, True), _m_recompute_s(loaded, False)
    del loaded
    _, cold_s = _timed_load(new, cache=False)
    _, old_s = _timed_load(old)
    rows = []
    for label, path, secs, cold in (("before", old, old_s, None), ("now", new, load_s, cold_s)):
        row = {"model": str(path), "saved": label,
               "views": "".join(v.letter for v in model.views_) if label == "now" else "(all)",
               "kept": "".join(model.selected_views_), "dir_MB": round(_dir_bytes(path) / 1e6, 1),
               "load_s": round(secs, 1), "load_cold_wordvector_cache_s": None if cold is None else round(cold, 1),
               "identical_after_reload": identical if cold is not None else None,
               "m_recompute_s": m_warm if cold is not None else None,
               "m_recompute_cold_wordvector_cache_s": m_cold if cold is not None else None}
        row.update({f"MB {k}": round(v / 1e6, 2) for k, v in sorted(component_sizes(path).items(),
                                                                      key=lambda kv: -kv[1])})
        rows.append(row)
    _report(rows, args.out)
    return 0


def cmd_mapper_dtype(args: argparse.Namespace) -> int:
    from gfun.datasets.demo import load_demo
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.metrics.evaluation import evaluate

    train, test = load_demo()
    original = GeneralizedFunnelling._mapper
    rows = []
    for dtype in ("float64", "float32"):
        def mapper(self: Any, _dtype: str = dtype) -> Any:
            return original(self).set_params(support_dtype=_dtype)

        GeneralizedFunnelling._mapper = mapper  # type: ignore[method-assign]
        try:
            t0 = time.perf_counter()
            est = GeneralizedFunnelling(views=args.views, random_state=0, n_jobs=args.n_jobs,
                                        view_params={"m": {"source": args.word_vectors}}).fit(train)
            fit_s = time.perf_counter() - t0
        finally:
            GeneralizedFunnelling._mapper = original  # type: ignore[method-assign]
        avg = evaluate(test.Y, est.predict(test), test.langs).loc["average"]
        rows.append({"views": args.views, "support_dtype": dtype, "kept": "".join(est.selected_views_),
                     "F1M": round(float(avg["F1_macro"]), 4), "F1u": round(float(avg["F1_micro"]), 4),
                     "mapper_sv_MB": round(sum(m.support_vectors_.nbytes for m in est.mappers_.values()) / 1e6, 2),
                     "fit_s": round(fit_s, 1)})
    _report(rows, args.out)
    return 0


def _report(rows: list[dict], out: str | None) -> None:
    import pandas as pd

    frame = pd.DataFrame(rows)
    with pd.option_context("display.max_columns", None, "display.width", 250):
        print(frame.T.to_string(header=False) if len(frame.columns) > 12 else frame.to_string(index=False))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out, index=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="train with `gfun train`, then sizes, reload check and load times")
    p.add_argument("--run-dir", required=True, help="folder with train/test/test_zeroshot.jsonl and classes.json")
    p.add_argument("--views", default="xmb")
    p.add_argument("--word-vectors", default="e5-subword")
    p.add_argument("--model", required=True)
    p.add_argument("--out", default=None, help="CSV of the table")
    p.add_argument("extra", nargs="*", help="more `gfun train` options (after --)")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("resave", help="re-save a model saved by an earlier gfun as gfun saves now (every view kept)")
    p.add_argument("--model", required=True, help="the saved model")
    p.add_argument("--out-model", required=True, help="where to save it again")
    p.add_argument("--run-dir", required=True, help="test.jsonl / test_zeroshot.jsonl to compare the predictions on")
    p.add_argument("--docs", type=int, default=300, help="documents of each file compared")
    p.add_argument("--prune", action="store_true", help="drop the views select did not keep that no document needs "
                   "(what fit now does); without it every view is kept")
    p.add_argument("--out", default=None)
    p.set_defaults(func=cmd_resave)
    p = sub.add_parser("mapper-dtype", help="demo F1 with float64 and float32 mapper support vectors")
    p.add_argument("--views", default="xmw")
    p.add_argument("--word-vectors", default="e5-subword")
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--out", default=None)
    p.set_defaults(func=cmd_mapper_dtype)
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
