"""The recurrent view (R_M, R_MW) on the synthetic multilingual world of ``synthetic_vectors``."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from gfun.errors import UnseenLanguageError
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.views.recurrent import RecurrentView
from tests.neural_fixtures import BATCH_TOLERANCE, single_torch_thread
from tests.synthetic_vectors import DIM, N_CLASSES, make_corpus, write_vec_files

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LANGS = ["de", "en", "it"]
TINY = {"hidden_size": 16, "preset": "cpu", "max_epochs": 6, "patience": 3, "batch_size": 16, "random_state": 0,
        "device": "cpu"}


one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


@pytest.fixture(scope="module")
def vec_folder(tmp_path_factory) -> Path:
    return write_vec_files(tmp_path_factory.mktemp("vec"), ["de", "en", "it", "fr"])


@pytest.fixture(scope="module")
def data() -> dict:
    texts, langs, Y = make_corpus(LANGS, 30, seed=0)
    test_texts, test_langs, test_Y = make_corpus(LANGS, 6, seed=1)
    fr_texts, fr_langs, fr_Y = make_corpus(["fr"], 6, seed=2)
    return {"texts": texts, "langs": langs, "Y": Y, "test_texts": test_texts, "test_langs": test_langs,
            "test_Y": test_Y, "fr_texts": fr_texts, "fr_langs": fr_langs, "fr_Y": fr_Y}


def _source(vec_folder: Path) -> dict:
    return {"spec": f"vec:{vec_folder}", "cache": False}


@pytest.fixture(scope="module", params=[False, True], ids=["R_M", "R_MW"])
def fitted(request, vec_folder, data):
    view = RecurrentView(source=_source(vec_folder), wce=request.param, **TINY)
    return view, view.fit_transform(data["texts"], data["langs"], data["Y"])


def test_shapes_history_and_embedding_table(fitted, data):
    view, Z = fitted
    assert view.letter == "r" and view.output == "features"
    assert Z.shape == (len(data["texts"]), 16) and Z.dtype == np.float32 and np.isfinite(Z).all()
    assert view.word_dim_ == DIM and view.embedding_dim_ == DIM + (N_CLASSES if view.wce else 0)
    assert 1 <= view.best_epoch_ <= len(view.history_) <= 6
    assert all(h["phase"] == "train" for h in view.history_)  # no held-out epoch for R (paper)
    assert view.net_.embedding.weight.requires_grad  # embeddings are fine-tuned
    np.testing.assert_allclose(view.transform(data["texts"][:9], data["langs"][:9]), Z[:9], **BATCH_TOLERANCE)


def test_batch_independence(fitted, data):
    view, _ = fitted
    texts, langs = data["test_texts"], data["test_langs"]
    Z = view.transform(texts, langs)
    perm = np.random.RandomState(0).permutation(len(texts))
    np.testing.assert_allclose(view.transform([texts[i] for i in perm], langs[perm]), Z[perm], **BATCH_TOLERANCE)
    for i in (0, 4):
        np.testing.assert_allclose(view.transform([texts[i]], langs[i:i + 1])[0], Z[i], **BATCH_TOLERANCE)


def test_training_batches_are_cut_to_their_average_length(vec_folder, data, monkeypatch):
    caps: list[tuple[int, int]] = []
    original = RecurrentView._collate

    def spy(self, ids, batch, cap):
        caps.append((cap, math.ceil(np.mean([len(ids[i]) for i in batch]))))
        return original(self, ids, batch, cap)

    monkeypatch.setattr(RecurrentView, "_collate", spy)
    RecurrentView(source=_source(vec_folder), **{**TINY, "max_epochs": 1, "val_size": 0.0}).fit(
        data["texts"], data["langs"], data["Y"])
    train_caps = [c for c in caps if c[0] != 500]
    assert train_caps and all(cap == avg for cap, avg in train_caps)


def test_determinism(vec_folder, fitted, data):
    view, Z = fitted
    again = RecurrentView(source=_source(vec_folder), wce=view.wce, **TINY)
    np.testing.assert_allclose(again.fit_transform(data["texts"], data["langs"], data["Y"]), Z, atol=1e-5)


def test_state_round_trip(fitted, data):
    view, _ = fitted
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values())
    loaded = RecurrentView.from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    assert loaded.get_params() == view.get_params()
    for texts, langs in ((data["test_texts"], data["test_langs"]), (data["fr_texts"], data["fr_langs"])):
        np.testing.assert_allclose(loaded.transform(texts, langs), view.transform(texts, langs), atol=1e-6)


def test_state_saved_for_a_cuda_device_loads_on_a_machine_without_one(fitted, data, monkeypatch):
    """A model trained on a GPU (``device="cuda"`` in its state) runs on the CPU where there is no CUDA device."""
    view, _ = fitted
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))
    meta["params"]["device"] = "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    loaded = RecurrentView.from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    assert loaded.device_.type == "cpu"
    np.testing.assert_allclose(loaded.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), atol=1e-6)


def test_zero_shot_through_the_word_vector_source(fitted, data):
    view, _ = fitted
    assert view.covers("fr") and not view.covers("tlh")
    Z = view.transform(data["fr_texts"], data["fr_langs"])
    assert Z.shape == (6, 16) and np.isfinite(Z).all()
    with pytest.raises(UnseenLanguageError, match="tlh"):
        view.transform(["qapla"], np.array(["tlh"], dtype=object))
    assert np.isfinite(view.transform(["", "zzz qqq"], np.array(["en", "it"], dtype=object))).all()


def test_unknown_words_read_as_unk_without_the_source(vec_folder, data):
    view = RecurrentView(source=_source(vec_folder), oov="unk", **{**TINY, "max_epochs": 1})
    view.fit(data["texts"], data["langs"], data["Y"])
    assert not view.covers("fr") and view.covers("en")


@pytest.mark.parametrize("aggregation", ["mean", "concat"])
def test_gfun_xr_end_to_end(vec_folder, data, aggregation, tmp_path):
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.persistence.loading import load_model

    gf = GeneralizedFunnelling(views='xr', aggregation=aggregation, random_state=0,
                               view_params={'r': {'source': _source(vec_folder), 'wce': True, **TINY}},
                               meta=default_meta().set_params(C=1.0), mapper=default_mapper().set_params(cv=3))
    gf.fit(data["texts"], data["Y"], langs=data["langs"])
    pred = gf.predict(data["test_texts"], langs=data["test_langs"])
    assert pred.shape == data["test_Y"].shape
    gf.save(tmp_path / "model")
    back = load_model(tmp_path / "model")
    np.testing.assert_allclose(back.decision_function(data["test_texts"], langs=data["test_langs"]),
                               gf.decision_function(data["test_texts"], langs=data["test_langs"]), atol=1e-5)
    if aggregation == "mean":
        assert gf.predict(data["fr_texts"], langs=data["fr_langs"]).shape == data["fr_Y"].shape


def test_config_names_reach_the_view(vec_folder):
    from gfun.configuration import build_estimator, parse_config

    est = build_estimator(parse_config("xbr_mw"), meta_C=1.0, view_params={"r": {"source": "e5"}})
    assert est.views == "xbr" and est.view_params["r"] == {"wce": True, "source": "e5"}
    # without a source, gfun train's word vectors (as on the command line)
    assert build_estimator(parse_config("r"), meta_C=1.0).view_params == {"r": {"wce": False, "source": "e5-subword"}}


def test_bad_input(vec_folder, data):
    with pytest.raises(ValueError, match="unknown preset"):
        RecurrentView(source=_source(vec_folder), preset="huge").fit(data["texts"], data["langs"], data["Y"])
    with pytest.raises(ValueError, match="oov"):
        RecurrentView(source=_source(vec_folder), oov="zero").fit(data["texts"], data["langs"], data["Y"])
    with pytest.raises(TypeError, match="single string"):
        RecurrentView(source=_source(vec_folder)).fit("text", ["en"], np.eye(1))
    with pytest.raises(ValueError, match="texts but"):
        RecurrentView(source=_source(vec_folder)).fit(["a", "b"], ["en"], np.eye(2))


def test_missing_torch_gives_an_install_hint(vec_folder, monkeypatch, data):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"gfun\[torch\]"):
        RecurrentView(source=_source(vec_folder)).fit(data["texts"], data["langs"], data["Y"])


def test_pickle_round_trip(fitted, data):
    import pickle

    view, _ = fitted
    back = pickle.loads(pickle.dumps(view))
    np.testing.assert_allclose(back.transform(data["fr_texts"], data["fr_langs"]),
                               view.transform(data["fr_texts"], data["fr_langs"]), atol=1e-6)
