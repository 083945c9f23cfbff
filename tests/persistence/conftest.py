"""Fixtures of the persistence tests: a sample of the demo corpus, three fitted models, one saved model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier, make_fun
from gfun.baselines.parts import LinearSVMs
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.saving import save_model

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in LANGS])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus, MultilingualCorpus]:
    full_train, full_test = load_demo()
    return _sample(full_train, 80, 0), _sample(full_test, 40, 1), full_test


@pytest.fixture(scope="module")
def models(demo) -> dict[str, object]:
    train = demo[0]
    return {
        "gfun": GeneralizedFunnelling(random_state=0,
                                      meta=default_meta().set_params(C='cv', C_grid=(1.0, 10.0), cv=3)).fit(train),
        "fun": make_fun(random_state=0, meta=default_meta().set_params(C=1.0)).fit(train),
        "naive": NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(train),
    }


@pytest.fixture(scope="module")
def saved(models, tmp_path_factory) -> Path:
    """The fitted GeneralizedFunnelling saved once; tests that damage it work on copies."""
    return save_model(models["gfun"], tmp_path_factory.mktemp("saved") / "gfun-model")
