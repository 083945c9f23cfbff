"""Fixtures of the `gfun serve` tests: a saved model that serves any language (SIB-200, views X and P)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def any_language_model(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gFun-XP on SIB-200's German, Finnish and English training sentences (a few seconds): ``select`` keeps X,
    and P, whose one vocabulary for all languages serves documents of any language, stays for the others."""
    from gfun.datasets.sib200 import load_sib200
    from gfun.funnelling.generalized import GeneralizedFunnelling

    sib = load_sib200(shared_data / "sib200", ["de", "fi", "en"])
    path = tmp_path_factory.mktemp("serve-xp") / "model"
    GeneralizedFunnelling(views="xp", random_state=0, n_jobs=1).fit(sib.train).save(str(path))
    return path
