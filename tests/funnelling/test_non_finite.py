"""NaN or infinite values from a view, a mapper, a loaded array or a baseline are an error naming their source, and
what gfun writes is JSON (no bare NaN)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gfun import GeneralizedFunnelling, NaiveClassifier, register_view
from gfun.baselines.parts import LinearSVMs
from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import NonFiniteError
from gfun.funnelling.meta import default_meta
from gfun.predictions import prediction_records
from gfun.views import unregister_view
from gfun.views.posteriors import PosteriorsView

MARK = "zzqnanzz"  # a document holding this word gets NaN from the views below


class NaNAtPredictView(PosteriorsView):
    """The X view, but NaN for every document holding MARK (a bug, or damaged arrays, of a view)."""

    def transform(self, texts, langs):  # noqa: ANN001, ANN201
        out = super().transform(texts, langs)
        out[[i for i, t in enumerate(texts) if MARK in t]] = np.nan
        return out


class NaNAtFitView(PosteriorsView):
    """The X view, but NaN for the first training document."""

    def fit_transform(self, texts, langs, Y):  # noqa: ANN001, ANN201
        out = super().fit_transform(texts, langs, Y)
        out[0] = np.nan
        return out


class NaNFeaturesView(NaNAtPredictView):
    """Not posteriors: a view the model maps to posteriors (NaN for MARK, before its mapper)."""

    output = "features"


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    train, test = load_demo()
    return train.subset(range(0, len(train), 6)), test.subset(range(0, len(test), 20))


def _with_mark(corpus: MultilingualCorpus, i: int) -> MultilingualCorpus:
    texts = list(corpus.texts)
    texts[i] = texts[i] + " " + MARK
    return MultilingualCorpus(corpus.ids, corpus.langs, texts, corpus.labels)


def _gfun(views: list) -> GeneralizedFunnelling:  # noqa: ANN001
    return GeneralizedFunnelling(views=views, aggregation="mean", random_state=0, meta=default_meta().set_params(C=1.0))


@pytest.mark.parametrize("cached", [False, True])
def test_a_view_giving_nan_in_training_names_the_view(demo, tmp_path: Path, cached: bool) -> None:
    train, _ = demo
    with pytest.raises(NonFiniteError, match=r"view 'broken' \(NaNAtFitView\) gave NaN") as info:
        _gfun([("broken", NaNAtFitView(cv=3))]).set_params(memory=tmp_path if cached else None).fit(train)
    assert info.value.source == "view 'broken' (NaNAtFitView)"


@pytest.mark.parametrize("view", [NaNAtPredictView(cv=3), NaNFeaturesView(cv=3)], ids=["posteriors", "mapped"])
def test_a_view_giving_nan_at_prediction_names_the_view(demo, view) -> None:  # noqa: ANN001
    train, test = demo
    model = _gfun([("x", PosteriorsView(cv=3)), ("odd", view)]).fit(train)
    assert np.isfinite(model.predict_proba(test)).all()
    bad = _with_mark(test, 3)
    name = type(view).__name__
    for call in (model.predict, model.decision_function, model.predict_with_proba,
                 lambda docs: prediction_records(model, docs)):
        with pytest.raises(NonFiniteError, match=rf"view 'odd' \({name}\) gave NaN or infinite values for 1 of "
                                                 rf"{len(test)} document\(s\)"):
            call(bad)


def test_a_naive_baseline_with_a_nan_coefficient_names_the_baseline(demo) -> None:
    train, test = demo
    model = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(train)
    lang = test.langs[0]
    model.models_[lang][1].coef[0, :] = np.nan  # a damaged array
    with pytest.raises(NonFiniteError, match=rf"the NaiveClassifier gave NaN .* \({lang}\)"):
        model.predict(test)


class _NaNProba:
    classes_ = ["a", "b"]

    def predict(self, docs):  # noqa: ANN001, ANN201
        return np.zeros((len(docs), 2), dtype=np.int8)

    def predict_proba(self, docs):  # noqa: ANN001, ANN201
        return np.full((len(docs), 2), np.nan)


def test_prediction_records_refuse_nan_probabilities() -> None:
    docs = MultilingualCorpus(["d"], ["en"], ["text"])
    with pytest.raises(NonFiniteError, match="probabilities of _NaNProba"):
        prediction_records(_NaNProba(), docs)


@pytest.fixture()
def registered():
    register_view("nanx", NaNAtPredictView)
    yield
    unregister_view("nanx")


def test_gfun_predict_writes_json_or_fails_naming_the_view(registered, demo, tmp_path: Path, capsys) -> None:
    train, test = demo
    _gfun([("x", PosteriorsView(cv=3)), ("nanx", NaNAtPredictView(cv=3))]).fit(train).save(tmp_path / "model")
    test.to_jsonl(tmp_path / "good.jsonl")
    _with_mark(test, 2).to_jsonl(tmp_path / "bad.jsonl")
    out = tmp_path / "out.jsonl"
    assert main(["-q", "predict", "--model", str(tmp_path / "model"), "--input", str(tmp_path / "good.jsonl"),
                 "--output", str(out)]) == 0
    good = out.read_text(encoding="utf-8")

    def strict(text: str) -> None:
        for line in text.splitlines():
            json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in the output"))

    strict(good)
    capsys.readouterr()
    code = main(["-q", "predict", "--model", str(tmp_path / "model"), "--input", str(tmp_path / "bad.jsonl"),
                 "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "view 'nanx' (NaNAtPredictView) gave NaN" in err and "Traceback" not in err
    assert out.read_text(encoding="utf-8") == good  # the previous predictions are intact


def test_the_server_answers_a_nan_from_a_view_with_a_json_error(registered, demo, tmp_path: Path) -> None:
    from gfun.errors import RequestError
    from gfun.serve.app import ModelService

    train, test = demo
    _gfun([("x", PosteriorsView(cv=3)), ("nanx", NaNAtPredictView(cv=3))]).fit(train).save(tmp_path / "model")
    service = ModelService(tmp_path / "model")
    doc = {"id": "d0", "text": test.texts[0], "lang": test.langs[0]}
    assert service.predict([doc])["predictions"]
    with pytest.raises(RequestError) as exc:
        service.predict([{**doc, "text": doc["text"] + " " + MARK}])
    assert exc.value.status == 422 and "nanx" in exc.value.message
