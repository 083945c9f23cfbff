"""gfun.funnelling.select: the parts of select that need no fit (the documents it judges on, the views it lets the
model drop, how many candidates it compares directly, the C of its comparisons, its saved state)."""

from __future__ import annotations

import logging

import numpy as np

from gfun.funnelling.select import (
    SELECT_DIRECT_UP_TO,
    SELECT_MIN_JUDGED,
    Select,
    compares_directly,
    comparison_C,
    judged_documents,
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
    assert compares_directly(SELECT_DIRECT_UP_TO) and not compares_directly(SELECT_DIRECT_UP_TO + 1)
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
