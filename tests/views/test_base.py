"""gfun.views.base: what the tiers read from a fitted view, with the contract's defaults."""

from __future__ import annotations

import numpy as np

from gfun.views.base import LanguageCoverage, ViewGenerator
from gfun.views.posteriors import PosteriorsView


class _Minimal(ViewGenerator):
    letter = "q"

    def __init__(self, n_jobs: int | None = None) -> None:
        self.n_jobs = n_jobs

    def fit_transform(self, texts, langs, Y):
        self.languages_ = sorted(set(langs))
        return np.zeros((len(texts), 2))

    def transform(self, texts, langs):
        return np.zeros((len(texts), 2))

    def covers(self, lang: str) -> bool:
        return lang in self.languages_

    def get_state(self):
        return {}, {}

    @classmethod
    def from_state(cls, meta, arrays):
        return cls()


class _Grouped(_Minimal):
    def fit_transform(self, texts, langs, Y, groups=None):
        return super().fit_transform(texts, langs, Y)


def test_the_contract_defaults() -> None:
    view = _Minimal().fit(["a", "b"], np.array(["en", "it"]), np.zeros((2, 1)))
    assert view.language_reach() == "some" and view.output == "features"
    assert view.pop_training_oof() is None and view.heldout_documents() is None and view.release() is None
    assert not view.takes_groups() and _Grouped().takes_groups()
    assert view.from_estimator == ("n_jobs", "random_state")
    assert PosteriorsView.from_estimator == ("n_jobs", "random_state", "train_posteriors")
    coverage = view.language_coverage()
    assert coverage == LanguageCoverage("some", ("en", "it")) and coverage.as_dict()["languages"] == ["en", "it"]


def test_the_training_oof_is_handed_over_once() -> None:
    view = _Minimal()
    view.train_oof_ = np.ones((2, 2))
    view.heldout_idx_ = np.array([1])
    assert view.pop_training_oof().shape == (2, 2) and view.pop_training_oof() is None
    assert view.heldout_documents().tolist() == [1]
