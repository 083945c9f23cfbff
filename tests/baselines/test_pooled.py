"""The pooled baseline: one vocabulary and one classifier per class over all languages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.pooled import PooledClassifier
from gfun.configuration import build_estimator, parse_config
from gfun.datasets.demo import load_demo
from gfun.persistence.loading import load_model
from gfun.persistence.saving import save_model


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return train.select(["en", "de", "it"]), test


@pytest.fixture(scope="module")
def fitted(demo) -> PooledClassifier:
    return PooledClassifier(random_state=0, C_grid=(0.3, 1.0)).fit(demo[0])


def test_C_is_chosen_by_cross_validation_on_the_training_documents(fitted: PooledClassifier) -> None:
    assert set(fitted.cv_scores_) == {0.3, 1.0}
    assert fitted.C_ == max(fitted.cv_scores_, key=lambda c: (fitted.cv_scores_[c], -c))


def test_class_weights_raise_recall_on_rare_classes(demo, fitted: PooledClassifier) -> None:
    train, test = demo
    plain = PooledClassifier(C=fitted.C_, class_weight=None, random_state=0).fit(train)
    seen = test.select(["en", "de", "it"])
    assert fitted.predict(seen).sum() > plain.predict(seen).sum()


def test_it_classifies_a_language_without_training_documents(demo, fitted: PooledClassifier) -> None:
    french = demo[1].select(["fr"])
    scores = fitted.decision_function(french)
    assert scores.shape == (len(french), len(fitted.classes_)) and np.isfinite(scores).all()


def test_save_and_load_give_identical_decisions(demo, fitted: PooledClassifier, tmp_path: Path) -> None:
    path = save_model(fitted, tmp_path / "pooled")
    loaded = load_model(path)
    test = demo[1].subset(range(100))
    np.testing.assert_array_equal(loaded.decision_function(test), fitted.decision_function(test))
    assert loaded.C_ == fitted.C_ and loaded.cv_scores_ == fitted.cv_scores_


def test_the_configuration_name_builds_it() -> None:
    config = parse_config("pooled")
    assert config.method == "pooled" and config.display == "Pooled" and config.serves_unseen
    est = build_estimator(config, random_state=3)
    assert isinstance(est, PooledClassifier) and est.C == "cv" and est.random_state == 3
    assert build_estimator("pooled", meta_C=0.5).C == 0.5
