"""gfun.baselines.parts: the TF-IDF and SVM parts of the SVM baselines, as nested estimators."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gfun.baselines.crosslingual.kcca import KCCAClassifier
from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.text.tfidf import MultilingualTfidf


def test_linear_svms_with_a_fixed_or_validated_C() -> None:
    rng = np.random.RandomState(0)
    Y = (rng.rand(60, 2) < 0.5).astype(int)
    X = sp.csr_matrix(np.hstack([Y + rng.rand(60, 2) * 0.3, rng.rand(60, 3)]))
    svm, Cs = LinearSVMs(C=2.0).fit_ovr(X, Y, random_state=0)
    assert Cs.tolist() == [2.0, 2.0] and ((svm.decision_function(X) > 0) == Y).mean() > 0.9
    _, Cs = LinearSVMs(C="cv", C_grid=(0.1, 10.0), cv=3).fit_ovr(X, Y, random_state=0)
    assert set(Cs) <= {0.1, 10.0}
    with pytest.raises(ValueError, match="C must be"):
        LinearSVMs(C=-1.0).check()


def test_parts_are_nested_parameters_and_saved_as_parameters() -> None:
    est = NaiveClassifier().set_params(classifier__C=3.0, tfidf__min_df=2, random_state=1)
    assert est.get_params()["classifier__C"] == 3.0 and est.part("tfidf").min_df == 2
    assert est.part("classifier") is not est.classifier  # a clone for each fit
    state = est._params_state()
    assert state["classifier"] == {"params": {"C": 3.0, "C_grid": list(LinearSVMs().C_grid), "cv": 5,
                                              "loss": "squared_hinge", "class_weight": None}}
    assert state["tfidf"]["params"]["dtype"] == "float32"
    again = NaiveClassifier(**NaiveClassifier._params_from_state(state))
    assert again.get_params()["classifier__C_grid"] == LinearSVMs().C_grid
    assert again.tfidf.dtype is np.float32 and again.random_state == 1
    assert NaiveClassifier._params_from_state(NaiveClassifier()._params_state())["classifier"] is None


def test_a_baseline_may_have_its_own_default_part() -> None:
    assert KCCAClassifier().part("tfidf").min_df == 2 and NaiveClassifier().part("tfidf").min_df == 1
    assert isinstance(KCCAClassifier().part("tfidf"), MultilingualTfidf)
