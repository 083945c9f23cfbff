"""benchmarks/bench_bert_head.py: bert and bert-tuned scored from the fine-tuned network of a saved model."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from tests.benchmarks import load_benchmark
from tests.neural_fixtures import single_torch_thread, tiny_bert_folder
from tests.synthetic_vectors import make_corpus

one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


def _module():
    return load_benchmark("bench_bert_head")


def _corpus(langs: list[str], n: int, seed: int, classes: list[str]) -> MultilingualCorpus:
    texts, lang_list, Y = make_corpus(langs, n, seed=seed)
    labels = [[classes[j] for j in np.flatnonzero(row)] for row in np.asarray(Y)]
    return MultilingualCorpus([f"{seed}-{i}" for i in range(len(texts))], list(lang_list), texts, labels,
                              classes=classes)


def test_bert_and_bert_tuned_rows_match_the_estimators(tmp_path: Path):
    from gfun.baselines.transformer import TunedTransformerClassifier
    from gfun.metrics.evaluation import evaluate

    classes = [f"c{j}" for j in range(4)]
    train = _corpus(["de", "en", "it"], 20, 0, classes)
    test = _corpus(["de", "en", "it"], 6, 1, classes)
    zero_shot = _corpus(["fr"], 6, 2, classes)
    for name, corpus in (("train", train), ("test", test), ("test_zeroshot", zero_shot)):
        corpus.to_jsonl(tmp_path / f"{name}.jsonl")
    folder = tiny_bert_folder(tmp_path / "tiny-bert", train.texts + zero_shot.texts)
    params = {"preset": "cpu", "max_epochs": 2, "lr": 1e-3, "max_length": 48, "batch_size": 8, "random_state": 0,
              "device": "cpu", "trainable_layers": None, "quantize": False}
    tuned = TunedTransformerClassifier(model=str(folder), **params).fit(train)
    tuned.save(tmp_path / "model")
    out = tmp_path / "rows.csv"
    args = ["--model", str(tmp_path / "model"), "--run-dir", str(tmp_path), "--out", str(out),
            "--vectors", str(tmp_path / "vectors.npz")]
    assert _module().main(args) == 0
    rows = {(r["system"], r["test"]): r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert set(rows) == {(s, t) for s in ("bert", "bert-tuned") for t in ("test", "zero-shot")}
    for test_name, corpus in (("test", test), ("zero-shot", zero_shot)):
        # the benchmark's bert-tuned row is what the fitted estimator predicts
        expected = evaluate(corpus.Y.toarray(), tuned.predict(corpus), corpus.lang_array).loc["average"]
        assert float(rows[("bert-tuned", test_name)]["F1_macro"]) == pytest.approx(expected["F1_macro"], abs=1e-6)
    # the second call reads the vectors it wrote: same rows
    assert (tmp_path / "vectors.npz").is_file() and _module().main(args) == 0
    again = {(r["system"], r["test"]): r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert again == rows
    views = tmp_path / "views"
    assert _module().main([*args, "--views-dir", str(views)]) == 0
    np.testing.assert_allclose(np.load(views / "b-test.npy"), tuned.transform(test), atol=1e-5)
    assert {p.name for p in views.iterdir()} == {"b-train.npy", "b-test.npy", "b-zero-shot.npy", "b-langs.json",
                                                  "b-fit.json"}
