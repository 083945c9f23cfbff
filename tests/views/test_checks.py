"""Every registered view-generating function (``VIEW_CLASSES``, by name) passes :mod:`gfun.views.checks`'s checks.

A view registered in :data:`gfun.views.VIEW_CLASSES` needs an entry in ``FACTORIES`` below (the
parameters that make it small and deterministic on the synthetic corpus); without one its checks
are skipped with a message saying so. The checks themselves are public: :func:`gfun.views.checks.check_view`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gfun.views import BUILTIN_VIEWS, VIEW_CLASSES, make_view
from gfun.views import checks as testing
from gfun.views.base import ViewGenerator
from tests.neural_fixtures import BATCH_TOLERANCE, tiny_bert_folder
from tests.synthetic_vectors import make_corpus, write_vec_files

TRAIN_LANGS = ["de", "en", "it"]

_NEURAL = {"preset": "cpu", "max_epochs": 2, "random_state": 0, "device": "cpu"}


def _tiny_transformer(vec: Path) -> ViewGenerator:
    """A B view over a tiny random BERT saved next to the vectors (built once per folder)."""
    folder = vec / "tiny-bert"
    if not (folder / "config.json").exists():
        tiny_bert_folder(folder, make_corpus(TRAIN_LANGS, 30, seed=0)[0])
    # float32 everywhere, whatever the CPU: int8 frozen layers (the cpu preset's default) scale activations per
    # batch, so a document's vector moves ~1e-3 with its batch companions (bounded in
    # tests/neural/test_fine_tuning.py), and bfloat16 autocast (amp="auto" on CPUs with bfloat16 instructions)
    # rounds it differently in batches of other shapes (tests/views/test_transformer.py)
    return make_view("b", model=str(folder), lr=1e-3, max_length=48, batch_size=8, quantize=False, amp=False,
                     **_NEURAL)


def _tiny_encoder_view(letter: str) -> Callable[[Path], ViewGenerator]:
    """An E or F view over the same tiny random BERT (frozen: nothing is trained), without a vector cache."""
    def make(vec: Path) -> ViewGenerator:
        folder = vec / "tiny-bert"
        if not (folder / "config.json").exists():
            tiny_bert_folder(folder, make_corpus(TRAIN_LANGS, 30, seed=0)[0])
        return make_view(letter, model=str(folder), prefix="", max_length=48, cache_dir=None, device="cpu", cv=3,
                         random_state=0, **({"min_df": 1} if letter == "f" else {}))
    return make


#: letter -> function(vec_folder) -> unfitted view.
FACTORIES: dict[str, Callable[[Path], ViewGenerator]] = {
    "x": lambda vec: make_view("x", cv=3, random_state=0),
    "m": lambda vec: make_view("m", source={"spec": f"vec:{vec}", "cache": False}),
    "w": lambda vec: make_view("w", random_state=0),
    "b": _tiny_transformer,
    "r": lambda vec: make_view("r", source={"spec": f"vec:{vec}", "cache": False}, hidden_size=8, batch_size=16,
                               **_NEURAL),
    "p": lambda vec: make_view("p", cv=3, min_df=1, random_state=0),
    "e": _tiny_encoder_view("e"),
    "f": _tiny_encoder_view("f"),
}
#: Neural views: an out-of-vocabulary document still has a (learned) non-zero view; B covers every language.
#: Their views are compared within BATCH_TOLERANCE (float32 products round by the shape of the batch on some CPUs).
NEURAL = ("b", "r", "e", "f")


@pytest.fixture(scope="module")
def vec_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_vec_files(tmp_path_factory.mktemp("vec"), ["de", "en", "it", "fr"])


@pytest.fixture(scope="module")
def data() -> testing.CheckData:
    texts, langs, Y = make_corpus(TRAIN_LANGS, 30, seed=0)
    test_texts, test_langs, _ = make_corpus(TRAIN_LANGS, 8, seed=1)
    zero_texts, zero_langs, _ = make_corpus(["fr"], 8, seed=2)  # no training document: covered by M, R and B
    return testing.CheckData(texts, langs, Y, test_texts, test_langs, zero_texts, zero_langs)


@pytest.fixture(scope="module", params=sorted(BUILTIN_VIEWS))
def letter(request: pytest.FixtureRequest) -> str:
    if request.param in NEURAL:
        pytest.importorskip("torch")
        pytest.importorskip("transformers")
    if request.param not in FACTORIES:
        pytest.skip(f"view {request.param!r} has no factory in tests/views/test_checks.py::FACTORIES")
    return request.param


@pytest.fixture(scope="module")
def fitted(letter: str, vec_folder: Path, data: testing.CheckData) -> testing.FittedView:
    tolerance = BATCH_TOLERANCE if letter in NEURAL else {}
    return testing.fit_for_check(FACTORIES[letter](vec_folder), data, **tolerance)


def test_class_attributes(letter: str, fitted: testing.FittedView) -> None:
    assert VIEW_CLASSES[letter].letter == letter
    testing.check_class_attributes(fitted)


def test_language_coverage_says_which_languages_the_view_serves(letter: str, fitted: testing.FittedView) -> None:
    """What `gfun info`, GET /model and the served page show for each view."""
    served = {"x": "de, en, it", "w": "de, en, it", "p": "any language (trained on de, en, it)",
              "b": "any language (trained on de, en, it)", "e": "any language (trained on de, en, it)",
              "f": "any language (trained on de, en, it)",
              "m": "de, en, it and the other languages its word vectors cover",
              "r": "de, en, it and the other languages its word vectors cover"}
    coverage = fitted.view.language_coverage()
    assert coverage.describe() == served[letter]
    assert coverage.as_dict() == {"languages": TRAIN_LANGS, "any_language": letter in ("b", "p", "e", "f"),
                                  "reach": fitted.view.language_reach(), "serves": served[letter]}


def test_clone_and_params(fitted: testing.FittedView) -> None:
    testing.check_clone_and_params(fitted)


def test_rows_and_dimensionality(fitted: testing.FittedView) -> None:
    testing.check_rows_and_dimensionality(fitted)


def test_transform_keeps_input_order_and_is_batch_independent(fitted: testing.FittedView) -> None:
    testing.check_transform_order_and_batch_independence(fitted)


def test_state_round_trip(fitted: testing.FittedView) -> None:
    testing.check_state_round_trip(fitted)


def test_refit_is_deterministic(fitted: testing.FittedView) -> None:
    testing.check_refit_is_deterministic(fitted)


def test_out_of_vocabulary_documents_are_finite(letter: str, fitted: testing.FittedView) -> None:
    # a TF-IDF view gives an unknown document the zero vector; a neural one a learned (non-zero) vector
    testing.check_out_of_vocabulary_documents_are_finite(
        fitted, expect_zero=fitted.view.output == "features" and letter not in NEURAL)


def test_unseen_language_is_refused_unless_covered(letter: str, fitted: testing.FittedView) -> None:
    # B's tokenizer and P's vocabulary shared by all languages cover every language
    assert (fitted.view.language_reach() == "any") == (letter in ("b", "p", "e", "f"))
    testing.check_unseen_language_is_refused(fitted)


def test_check_view_catches_a_broken_view(data: testing.CheckData) -> None:
    """The public checker fails a view that breaks the contract, naming the check (so it cannot pass blindly)."""
    from gfun.views.posteriors import PosteriorsView

    class Forgetful(PosteriorsView):  # the state round trip loses the classifiers' intercepts
        def get_state(self):  # noqa: ANN202
            meta, arrays = super().get_state()
            return meta, {k: (np.zeros_like(v) if "intercept" in k else v) for k, v in arrays.items()}

    with pytest.raises(AssertionError, match="state_round_trip"):
        testing.check_view(Forgetful(cv=3, random_state=0), data)
    testing.check_view(PosteriorsView(cv=3, random_state=0), data)  # the same view, unbroken, passes
