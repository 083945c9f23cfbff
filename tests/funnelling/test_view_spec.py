"""gfun.funnelling.view_spec: the ``views`` parameter (letters, objects, names) and the one rule by which every view
takes the estimator's n_jobs, random_state and training posteriors."""

from __future__ import annotations

import pytest

from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.view_spec import check_unique_names, label, parse_views, view_names
from gfun.views.posteriors import PosteriorsView
from gfun.views.wce import WordClassEmbeddingView


def test_letters_are_read_in_any_order_and_checked() -> None:
    assert parse_views("XW") == ["x", "w"] and view_names("x m") == ["x", "m"]
    for bad, message in (("xx", "repeat"), ("xq", "unknown view letter"), ("", "at least one")):
        with pytest.raises(ValueError, match=message):
            parse_views(bad)
    with pytest.raises(TypeError):
        parse_views(["x"])


def test_names_of_objects_and_pairs() -> None:
    assert view_names([PosteriorsView(), ("x2", PosteriorsView(C=10)), "w"]) == ["x", "x2", "w"]
    with pytest.raises(ValueError, match="two views are named 'x'"):
        view_names([PosteriorsView(), ("x", PosteriorsView())])
    with pytest.raises(ValueError, match="nested meta"):
        view_names([("meta", PosteriorsView())])
    with pytest.raises(ValueError, match="repeat"):
        check_unique_names("xwx")
    check_unique_names([("x", 3)])  # malformed: left to fit
    assert label(["x", "m"]) == "xm" and label(["x", "x2"]) == "x+x2"


def _views(model: GeneralizedFunnelling) -> dict:
    model.random_seed_ = model.random_state
    return dict(model._named_views())


def test_one_rule_for_letters_and_objects() -> None:
    """The estimator's n_jobs, random_state and (X) training posteriors reach every view that leaves them at their
    default, named by letter or given as an object; view_params and an object's own values win."""
    letters = _views(GeneralizedFunnelling(views="xw", n_jobs=3, random_state=7, aggregation="stack"))
    objects = _views(GeneralizedFunnelling(views=[PosteriorsView(), WordClassEmbeddingView()], n_jobs=3,
                                           random_state=7, aggregation="stack"))
    for views in (letters, objects):
        assert (views["x"].n_jobs, views["x"].random_state, views["x"].train_posteriors) == (3, 7, "cv")
        assert (views["w"].random_state, views["w"].train_views) == (7, "cv")
    own = _views(GeneralizedFunnelling(views=[PosteriorsView(random_state=1)], random_state=7, aggregation="stack",
                                       view_params={"x": {"n_jobs": 2, "train_posteriors": "in-sample"}}))
    assert (own["x"].random_state, own["x"].train_posteriors, own["x"].n_jobs) == (1, "in-sample", 2)
    given = _views(GeneralizedFunnelling(views="x", random_state=7, view_params={"x": {"random_state": 4}}))
    assert (given["x"].random_state, given["x"].train_posteriors) == (4, "in-sample")  # select: in-sample


def test_the_views_parameter_is_not_modified() -> None:
    view = PosteriorsView()
    model = GeneralizedFunnelling(views=[view], random_state=5)
    assert _views(model)["x"] is not view and view.random_state is None
