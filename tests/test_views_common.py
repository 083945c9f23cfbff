"""Checks every registered view-generating function must pass (``VIEW_CLASSES``, by letter).

A view registered in :data:`gfun.views.VIEW_CLASSES` needs an entry in ``FACTORIES`` below (the
parameters that make it small and deterministic on the synthetic corpus); without one its checks
are skipped with a message saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from gfun.views import VIEW_CLASSES, ViewGenerator, make_view
from gfun.views.base import UnseenLanguageError
from synthetic_vectors import make_corpus, write_vec_files

TRAIN_LANGS = ["de", "en", "it"]

_NEURAL = {"preset": "cpu", "max_epochs": 2, "random_state": 0, "device": "cpu"}


def _tiny_transformer(vec: Path) -> ViewGenerator:
    """A B view over a tiny random BERT saved next to the vectors (built once per folder)."""
    from neural_fixtures import tiny_bert_folder

    folder = vec / "tiny-bert"
    if not (folder / "config.json").exists():
        tiny_bert_folder(folder, make_corpus(TRAIN_LANGS, 30, seed=0)[0])
    # float32 frozen layers: int8 ones (the cpu preset's default) scale activations per batch, so a document's
    # vector moves ~1e-3 with its batch companions (bounded in test_frozen_pass.py)
    return make_view("b", model=str(folder), lr=1e-3, max_length=48, batch_size=8, quantize=False, **_NEURAL)


#: letter -> function(vec_folder) -> unfitted view.
FACTORIES: dict[str, Callable[[Path], ViewGenerator]] = {
    "x": lambda vec: make_view("x", cv=3, random_state=0),
    "m": lambda vec: make_view("m", source={"spec": f"vec:{vec}", "cache": False}),
    "w": lambda vec: make_view("w", random_state=0),
    "b": _tiny_transformer,
    "r": lambda vec: make_view("r", source={"spec": f"vec:{vec}", "cache": False}, hidden_size=8, batch_size=16,
                               **_NEURAL),
}
#: Neural views: an out-of-vocabulary document still has a (learned) non-zero view; B covers every language.
NEURAL = ("b", "r")


@pytest.fixture(scope="module")
def vec_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_vec_files(tmp_path_factory.mktemp("vec"), ["de", "en", "it", "fr"])


@pytest.fixture(scope="module")
def data() -> dict:
    texts, langs, Y = make_corpus(TRAIN_LANGS, 30, seed=0)
    test_texts, test_langs, _ = make_corpus(TRAIN_LANGS, 8, seed=1)
    return {"texts": texts, "langs": langs, "Y": Y, "test_texts": test_texts, "test_langs": test_langs}


@pytest.fixture(scope="module", params=sorted(VIEW_CLASSES))
def letter(request: pytest.FixtureRequest) -> str:
    if request.param in NEURAL:
        pytest.importorskip("torch")
        pytest.importorskip("transformers")
    if request.param not in FACTORIES:
        pytest.skip(f"view {request.param!r} has no factory in tests/test_views_common.py::FACTORIES")
    return request.param


@pytest.fixture(scope="module")
def fitted(letter: str, vec_folder: Path, data: dict) -> tuple[ViewGenerator, np.ndarray]:
    view = FACTORIES[letter](vec_folder)
    return view, view.fit_transform(data["texts"], data["langs"], data["Y"])


def test_class_attributes(letter: str) -> None:
    cls = VIEW_CLASSES[letter]
    assert cls.letter == letter
    assert cls.output in ("posteriors", "features")


def test_clone_and_params(letter: str, vec_folder: Path, fitted) -> None:
    view, _ = fitted
    fresh = clone(view)
    assert type(fresh) is type(view) and fresh.get_params() == view.get_params()
    assert not [k for k in vars(fresh) if k.endswith("_") and not k.startswith("_")]
    assert not [k for k in vars(FACTORIES[letter](vec_folder)) if k.endswith("_") and not k.startswith("_")]


def test_rows_and_dimensionality(fitted, data: dict) -> None:
    view, Z = fitted
    n = len(data["texts"])
    assert Z.shape[0] == n and Z.ndim == 2 and np.isfinite(Z).all()
    dim = Z.shape[1]
    if view.output == "posteriors":
        assert dim == data["Y"].shape[1]
    if hasattr(view, "n_features_out_"):
        assert view.n_features_out_ == dim
    for lang in TRAIN_LANGS:
        assert view.covers(lang)
        idx = np.flatnonzero(data["test_langs"] == lang)
        Zl = view.transform([data["test_texts"][i] for i in idx], data["test_langs"][idx])
        assert Zl.shape == (len(idx), dim)


def test_transform_keeps_input_order_and_is_batch_independent(fitted, data: dict) -> None:
    view, _ = fitted
    texts, langs = data["test_texts"], data["test_langs"]
    Z = view.transform(texts, langs)
    perm = np.random.RandomState(0).permutation(len(texts))
    Zp = view.transform([texts[i] for i in perm], langs[perm])
    np.testing.assert_allclose(Zp, Z[perm], rtol=1e-5, atol=1e-6)
    for i in (0, 5):  # a document's view does not depend on the others in the batch
        np.testing.assert_allclose(view.transform([texts[i]], langs[i:i + 1])[0], Z[i], rtol=1e-5, atol=1e-6)


def test_state_round_trip(fitted, data: dict) -> None:
    view, _ = fitted
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))  # JSON-able, and survives a round trip
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values())
    loaded = type(view).from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    assert loaded.get_params() == view.get_params()
    np.testing.assert_allclose(loaded.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), rtol=1e-5, atol=1e-6)
    for lang in TRAIN_LANGS:
        assert loaded.covers(lang)


def test_refit_is_deterministic(letter: str, vec_folder: Path, fitted, data: dict) -> None:
    view, Z = fitted
    again = FACTORIES[letter](vec_folder)
    np.testing.assert_allclose(again.fit_transform(data["texts"], data["langs"], data["Y"]), Z, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again.transform(data["test_texts"], data["test_langs"]),
                               view.transform(data["test_texts"], data["test_langs"]), rtol=1e-5, atol=1e-6)


def test_out_of_vocabulary_documents_are_finite(fitted) -> None:
    view, _ = fitted
    texts = ["xqxqxq wvwvwv", "", "12345 !!"]
    Z = view.transform(texts, np.array(["en", "it", "de"], dtype=object))
    assert np.isfinite(Z).all()
    if view.output == "features" and view.letter not in NEURAL:
        assert not Z.any()  # no known term: the zero vector, never NaN


def test_unseen_language_is_refused_unless_covered(fitted) -> None:
    view, _ = fitted
    if view.letter == "b":
        pytest.skip("the B view's multilingual tokenizer covers every language")
    assert not view.covers("tlh")  # Klingon: no training documents, no word vectors
    with pytest.raises(UnseenLanguageError, match="tlh"):
        view.transform(["qapla"], np.array(["tlh"], dtype=object))
