"""gfun.funnelling.select: the parts of select that need no view (the documents it judges on, the views it lets the
model drop, the C of its comparisons, the kept candidate's model from its comparison, its saved state)."""

from __future__ import annotations

import logging

import numpy as np

from gfun.funnelling.meta import MetaTrainer, default_meta
from gfun.funnelling.select import (
    SELECT_MIN_JUDGED,
    SELECT_TOL,
    Select,
    compare,
    comparison_C,
    judged_documents,
    keep,
    unused_views,
)
from gfun.svm.kernel import RBFSVMOvR


def test_judged_documents_are_those_every_holding_out_view_held_out(caplog) -> None:
    n, cv = 400, 3
    a, b = np.arange(0, 300), np.arange(100, 400)
    assert judged_documents(["x", "r"], [None, None], n, cv) is None
    mask = judged_documents(["x", "r", "b"], [None, a, b], n, cv)
    assert mask.sum() == 200 and mask[100:300].all()
    with caplog.at_level(logging.WARNING, logger="gfun.funnelling.generalized"):
        assert judged_documents(["r"], [np.arange(SELECT_MIN_JUDGED * cv - 1)], n, cv) is None
    assert "held out only" in caplog.text


class _View:
    def __init__(self, reach: str, langs: set[str]) -> None:
        self.reach, self.langs = reach, langs

    def language_reach(self) -> str:
        return self.reach

    def covers(self, lang: str) -> bool:
        return lang in self.langs


class _Branch:
    def __init__(self, name: str, view: _View) -> None:
        self.name, self.view = name, view


def test_unused_views_are_those_no_document_can_need() -> None:
    x, w = _Branch("x", _View("training", {"en", "it"})), _Branch("w", _View("training", {"en", "it"}))
    m, b = _Branch("m", _View("some", {"en", "it", "fi"})), _Branch("b", _View("any", set()))
    assert unused_views([x, w], ["x"], ["en", "it"]) == ["w"]
    assert unused_views([x, m], ["x"], ["en", "it"]) == []  # M may be the only view of a new language
    assert unused_views([x, m, b], ["b"], ["en", "it"]) == ["x", "m"]  # B serves any language


def test_comparisons() -> None:
    assert comparison_C(RBFSVMOvR(C=3.0)) == 3.0
    assert comparison_C(RBFSVMOvR(C="cv", C_grid=(0.01, 0.3, 5.0))) == 0.3


def test_select_saves_and_restores_its_form() -> None:
    policy = Select(cv=4)
    policy.selected_, policy.l2_, policy.scores_ = ["x"], True, {"x": 0.5}
    meta, arrays = policy.get_state()
    assert meta == {"selected_l2_": True} and arrays == {}
    loaded = Select.from_state(policy.get_params(), meta, {}, kept=["x"])
    assert (loaded.cv, loaded.selected_, loaded.l2_, loaded.scores_) == (4, ["x"], True, {})
    assert loaded.kept_views(["x", "w"]) == ["x"]


def _meta_input(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A meta-level input (in-sample and out-of-fold posteriors of 3 classes) and its labels."""
    rng = np.random.RandomState(seed)
    Y = rng.rand(150, 3) < 0.3
    Z = np.clip(Y * 0.6 + rng.rand(150, 3) * 0.5, 0, 1)
    Zval = np.clip(Y * 0.4 + rng.rand(150, 3) * 0.7, 0, 1)
    return Z, Zval, Y


def test_the_kept_model_is_its_comparisons_validation_with_full_precision_final_models() -> None:
    """``keep`` turns the kept candidate's comparison (``SELECT_TOL``, no sigmoids) into the model that a validation
    with sigmoids at ``SELECT_TOL`` gives, its final models trained at the template's own ``tol``."""
    Z, Zval, Y = _meta_input()
    trainer = MetaTrainer(default_meta().set_params(C=1.0), validation="oof", groups=None, n_jobs=1,
                          random_state=0, verbose=False)
    compared = compare(trainer, Z, Zval, Y, zscore=True, cv=3)
    assert compared.tol == SELECT_TOL and not compared.probability
    kept, scaler = keep(trainer, Z, Zval, Y, zscore=True, cv=3, compared=compared)
    direct = trainer.clone(3, tol=SELECT_TOL)
    direct.validate(scaler.transform(Z), Y, X_val=scaler.transform(Zval))
    direct.set_params(tol=trainer.template.tol).finish(scaler.transform(Z), Y)
    assert kept.tol == trainer.template.tol != SELECT_TOL
    np.testing.assert_array_equal(kept.threshold_, direct.threshold_)
    np.testing.assert_array_equal(kept.platt_A_, direct.platt_A_)
    test = scaler.transform(_meta_input(1)[0])
    np.testing.assert_array_equal(kept.predict_proba(test), direct.predict_proba(test))


def test_the_kept_model_with_C_by_cv_reuses_its_comparison_for_that_C() -> None:
    Z, Zval, Y = _meta_input()
    trainer = MetaTrainer(default_meta().set_params(C="cv", C_grid=(0.1, 1.0, 10.0)), validation="oof", groups=None,
                          n_jobs=1, random_state=0, verbose=False)
    compared = compare(trainer, Z, Zval, Y, zscore=False, cv=3)
    assert np.unique(compared.C_).tolist() == [1.0]
    kept, scaler = keep(trainer, Z, Zval, Y, zscore=False, cv=3, compared=compared)
    assert scaler is None and kept.tol == trainer.template.tol and set(kept.C_) <= {0.1, 1.0, 10.0}
    assert kept.cv_scores_.shape == (3, 3)
