"""Aggregation policies (gfun.funnelling.aggregation) on a sample of the bundled demo data (Debian descriptions)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gfun.configuration import build_estimator
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.aggregation import Mean, Stack, WMean, fit_view_weights
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.funnelling.policies import make_aggregation
from gfun.funnelling.select import Select
from gfun.metrics.evaluation import evaluate
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.base import ViewGenerator
from gfun.views.posteriors import PosteriorsView
from tests.demo_samples import sample_languages

LANGS = ["de", "en", "it"]


class NoiseView(ViewGenerator):
    """A view that knows nothing: Gaussian noise for every document of every language."""

    letter = "n"
    output = "features"

    def __init__(self, dim: int = 16, random_state: int | None = 0) -> None:
        self.dim = dim
        self.random_state = random_state

    def fit_transform(self, texts, langs, Y):
        self.rng_ = np.random.RandomState(self.random_state)
        return self.rng_.normal(size=(len(texts), self.dim))

    def transform(self, texts, langs):
        return self.rng_.normal(size=(len(texts), self.dim))

    def covers(self, lang):
        return True

    def get_state(self):
        raise NotImplementedError

    @classmethod
    def from_state(cls, meta, arrays):
        raise NotImplementedError


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    train, test = load_demo()
    return sample_languages(train, 150, 0, LANGS), sample_languages(test, 80, 1, LANGS)


def _f1_macro(model: GeneralizedFunnelling, test: MultilingualCorpus) -> float:
    return float(evaluate(test.Y, model.predict(test)).loc["all", "F1_macro"])


# ----------------------------------------------------------------------------------------------- the functions
def test_stack_fills_a_missing_view_with_the_mean_of_the_others() -> None:
    a = np.array([[0.2, 0.4], [0.6, 0.8]])
    b = np.array([[0.0, 0.0], [0.2, 0.4]])
    out = Stack().combine([a, b], [np.array([True, True]), np.array([False, True])])
    np.testing.assert_allclose(out, [[0.2, 0.4, 0.2, 0.4], [0.6, 0.8, 0.2, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(Mean().combine([a, b], [np.ones(2, bool)] * 2), (a + b) / 2, rtol=1e-6)


def test_view_weights_follow_the_informative_view() -> None:
    rng = np.random.RandomState(0)
    Y = (rng.rand(500, 3) < 0.3).astype(int)
    good = np.clip(Y * 0.7 + rng.rand(500, 3) * 0.3, 0, 1)
    noise = rng.rand(500, 3)
    fitted = fit_view_weights([good, noise], Y)
    W, mean, scale = fitted
    np.testing.assert_allclose(W.sum(axis=0), 1.0)
    assert (W[0] > 0.9).all()
    # a document missing the noise view gets the good view's (standardised) posteriors
    wmean = WMean.from_state({}, {}, dict(zip(("view_weights/weights", "view_weights/mean", "view_weights/scale"),
                                              fitted, strict=True)), kept=())
    out = wmean.combine([good, noise], [np.ones(500, bool), np.zeros(500, bool)])
    np.testing.assert_allclose(out, (good - mean[0]) / scale[0], rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------- in gFun
@pytest.fixture(scope="module")
def noisy(demo) -> dict[str, GeneralizedFunnelling]:
    """gFun on X plus a pure-noise view, with each learned policy."""
    train, _ = demo
    views = [PosteriorsView(random_state=0), NoiseView()]
    return {agg: GeneralizedFunnelling(views=views, aggregation=agg, random_state=0,
                                       meta=default_meta().set_params(C=1.0)).fit(train)
            for agg in ("wmean", "stack", "select")}


def test_pure_noise_view_gets_almost_no_weight(noisy) -> None:
    W = noisy["wmean"].aggregation_.weights_[0]
    assert W.shape == (2, len(noisy["wmean"].classes_))
    assert W[1].mean() < 0.2 < 0.8 < W[0].mean() and np.median(W[1]) < 0.15


def test_stack_reads_every_views_posteriors_out_of_fold(demo, noisy) -> None:
    train, test = demo
    model = noisy["stack"]
    assert model.n_meta_features_ == 2 * len(model.classes_)
    assert model.views_[0].train_posteriors == "cv" and "n" in model.mappers_
    # a pure-noise view costs stacking little: within a few points of X alone
    alone = GeneralizedFunnelling(views='x', aggregation='stack', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    assert _f1_macro(model, test) > _f1_macro(alone, test) - 0.05


def test_select_leaves_a_pure_noise_view_out(noisy) -> None:
    model = noisy["select"]
    assert model.selected_views_ == ["x"]
    assert set(model.aggregation_.scores_) >= {"xn", "xn (raw)", "x" + ("" if model.aggregation_.l2_ else " (raw)")}
    # one-standard-error rule: X alone is kept because X plus noise is not validated clearly better
    kept = "x" + ("" if model.aggregation_.l2_ else " (raw)")
    assert model.aggregation_.scores_[kept] > max(model.aggregation_.scores_.values()) - 0.05
    scores = model.aggregation_.scores_
    assert scores["n" + ("" if model.aggregation_.l2_ else " (raw)")] < 0.6 * scores[kept]
    assert model.n_meta_features_ == len(model.classes_)


class OtherNoiseView(NoiseView):
    letter = "o"


def test_select_tries_every_subset_and_can_fall_back_to_one_view(demo) -> None:
    """With three views, the exhaustive search tries all 7 sets (all views and single views normalised and raw, the
    pairs in the form all views validated better in): X + two noise views is X, as with the backward search."""
    train, test = demo
    views = [PosteriorsView(random_state=0), NoiseView(random_state=1), OtherNoiseView(random_state=2)]
    model = GeneralizedFunnelling(views=views, random_state=0, meta=default_meta().set_params(C=1.0),
                                  aggregation=Select(search="exhaustive")).fit(train)
    backward = GeneralizedFunnelling(views=views, random_state=0, meta=default_meta().set_params(C=1.0)).fit(train)
    assert backward.selected_views_ == ["x"] and set(backward.aggregation_.scores_) < set(model.aggregation_.scores_)
    both = {s + suffix for s in ("xno", "x", "n", "o") for suffix in ("", " (raw)")}
    full_form = "" if model.aggregation_.scores_["xno"] >= model.aggregation_.scores_["xno (raw)"] else " (raw)"
    assert set(model.aggregation_.scores_) == both | {s + full_form for s in ("xn", "xo", "no")}
    assert model.selected_views_ == ["x"] and model.n_meta_features_ == len(model.classes_)
    # the kept model is the X-alone model: its predictions do not read the noise views
    assert _f1_macro(model, test) > 0.2


def test_select_with_both_forms_tries_every_set_normalised_and_raw(demo) -> None:
    """``forms="both"``: the pairs in both forms too (14 candidates for three views, every set tried); the views
    fitted for the default's selection are the same, and the kept candidate is the best one by the same rule, among
    more."""
    train, _ = demo
    views = [PosteriorsView(random_state=0), NoiseView(random_state=1), OtherNoiseView(random_state=2)]
    meta = default_meta().set_params(C=1.0)
    preferred = GeneralizedFunnelling(views=views, random_state=0, meta=meta,
                                      aggregation=Select(search="exhaustive")).fit(train)
    both = GeneralizedFunnelling(views=views, random_state=0, meta=meta,
                                 aggregation=Select(forms="both", search="exhaustive")).fit(train)
    every = {s + suffix for s in ("xno", "x", "n", "o", "xn", "xo", "no") for suffix in ("", " (raw)")}
    assert set(both.aggregation_.scores_) == every and len(preferred.aggregation_.scores_) == 11
    for name, score in preferred.aggregation_.scores_.items():  # the same candidates validate the same
        assert both.aggregation_.scores_[name] == pytest.approx(score, abs=1e-12)
    assert both.selected_views_ == ["x"]
    with pytest.raises(ValueError, match=r"select forms must be one of \('preferred', 'both'\), got 'all'"):
        GeneralizedFunnelling(views="x", meta=meta, aggregation=Select(forms="all")).fit(train)


class ThirdView(NoiseView):
    """A view that knows a third of the classes: the training labels of the classes ``j % 3 == part`` (looked up by
    text, unknown texts get zeros) plus a little noise; it knows nothing of the other classes."""

    letter = "t"
    part = 0

    def fit_transform(self, texts, langs, Y):
        self.rng_ = np.random.RandomState(self.random_state)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=float)
        self.known_ = {text: row[self.part::3] for text, row in zip(texts, Y, strict=True)}
        return self.transform(texts, langs)

    def transform(self, texts, langs):
        width = len(next(iter(self.known_.values())))
        rows = np.array([self.known_.get(text, np.zeros(width)) for text in texts])
        return rows + 0.1 * self.rng_.normal(size=rows.shape)


class SecondThirdView(ThirdView):
    letter = "u"
    part = 1


class LastThirdView(ThirdView):
    letter = "v"
    part = 2


def test_select_backward_search_stops_where_every_smaller_set_validates_clearly_worse(demo) -> None:
    """Three views that each know a third of the classes: every pair misses a third, so none validates within one
    standard error of all three, and the backward search (the default) tries no single view; the exhaustive
    search tries all 11 candidates, validates the shared ones the same, and keeps the same set."""
    train, _ = demo
    views = [ThirdView(random_state=1), SecondThirdView(random_state=2), LastThirdView(random_state=3)]
    meta = default_meta().set_params(C=1.0)
    backward = GeneralizedFunnelling(views=views, random_state=0, meta=meta).fit(train)
    every = GeneralizedFunnelling(views=views, random_state=0, meta=meta,
                                  aggregation=Select(search="exhaustive")).fit(train)
    tried = backward.aggregation_.scores_
    full_form = "" if tried["tuv"] >= tried["tuv (raw)"] else " (raw)"
    assert set(tried) == {"tuv", "tuv (raw)"} | {s + full_form for s in ("tu", "tv", "uv")}
    assert len(every.aggregation_.scores_) == 11
    for name, score in tried.items():
        assert every.aggregation_.scores_[name] == pytest.approx(score, abs=1e-12)
    assert backward.selected_views_ == every.selected_views_ == ["t", "u", "v"]
    folds = backward.aggregation_.fold_scores_  # each candidate's score on each of the shared folds
    assert set(folds) == set(tried) and all(len(f) == backward.aggregation_.cv for f in folds.values())
    assert all(np.mean(folds[pair + full_form]) < np.mean(folds["tuv" + full_form]) for pair in ("tu", "tv", "uv"))
    assert max(tried[s + full_form] for s in ("tu", "tv", "uv")) < tried["tuv" + full_form] - 0.03
    with pytest.raises(ValueError, match=r"select search must be one of \('backward', 'exhaustive'\), got 'all'"):
        GeneralizedFunnelling(views="x", meta=meta, aggregation=Select(search="all")).fit(train)


def test_select_forms_is_saved_with_the_model(demo, tmp_path) -> None:
    from gfun.persistence.loading import load_model

    train, test = demo
    model = GeneralizedFunnelling(views="x", random_state=0, meta=default_meta().set_params(C=1.0),
                                  aggregation=Select(forms="both")).fit(train)
    model.save(tmp_path / "model")
    back = load_model(tmp_path / "model")
    assert back.get_params()["aggregation__forms"] == "both"
    np.testing.assert_array_equal(back.decision_function(test), model.decision_function(test))


def test_validated_thresholds_move_only_where_the_cross_fitted_gain_is_real() -> None:
    from gfun.svm.linear import make_folds
    from gfun.svm.thresholds import f1_thresholds, validated_thresholds

    rng = np.random.RandomState(0)
    n = 600
    Y = np.zeros((n, 3), dtype=bool)
    Y[:, 0] = rng.rand(n) < 0.2
    Y[:, 1] = rng.rand(n) < 0.05
    Y[:, 2] = rng.rand(n) < 0.3
    S = np.empty((n, 3))
    # class 0: the SVM ranks well but its scores are shifted down (most positives score below 0)
    S[:, 0] = np.where(Y[:, 0], -0.3, -1.5) + 0.25 * rng.randn(n)
    # class 1: scores carry no information (the F1-optimal cut of noise)
    S[:, 1] = rng.randn(n) - 1.0
    # class 2: well calibrated already (0 is a good threshold)
    S[:, 2] = np.where(Y[:, 2], 1.0, -1.0) + 0.4 * rng.randn(n)
    folds = make_folds(n, 3, 0)
    t, validated = validated_thresholds(S, Y, folds)
    assert f1_thresholds(S, Y)[1] != 0  # the plain rule moves the noise class's threshold
    assert t[0] < -0.5 and t[1] == 0.0
    np.testing.assert_allclose(t[0], f1_thresholds(S, Y)[0])
    # the validated predictions of a class kept at 0 are the scores themselves
    np.testing.assert_array_equal(validated[:, 1], S[:, 1])
    t_zero, v_zero = validated_thresholds(S, Y, folds, rule="zero")
    assert (t_zero == 0).all() and np.array_equal(v_zero, S)


class LocalNoiseView(NoiseView):
    """Noise that, like X and W, represents only the languages it was trained on."""

    letter = "t"

    def fit_transform(self, texts, langs, Y):
        self.languages_ = sorted(set(np.asarray(langs).tolist()))
        return super().fit_transform(texts, langs, Y)

    def covers(self, lang):
        return lang in self.languages_

    def language_reach(self):
        return "training"


def test_select_drops_an_unselected_view_that_serves_only_training_languages(demo, monkeypatch) -> None:
    train, test = demo
    views = [PosteriorsView(random_state=0), LocalNoiseView()]
    model = GeneralizedFunnelling(views=views, aggregation='select', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    assert model.selected_views_ == ["x"]
    assert model.dropped_views_ == ["t"] and [v.letter for v in model.views_] == ["x"]
    assert "t" not in model.mappers_ and "t" not in model.mapper_scalers_
    monkeypatch.setattr(GeneralizedFunnelling, "_drop_unused_views", lambda self: None)
    whole = GeneralizedFunnelling(views=views, aggregation='select', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    assert [v.letter for v in whole.views_] == ["x", "t"] and whole.dropped_views_ == []
    np.testing.assert_array_equal(model.decision_function(test), whole.decision_function(test))


def test_select_keeps_an_unselected_view_that_serves_unseen_languages(demo, noisy) -> None:
    """N (noise, for every language, as M with word vectors for languages without training documents) is not
    kept by select, but stays: X alone cannot serve French, which no training document is written in."""
    model = noisy["select"]
    assert model.selected_views_ == ["x"] and model.dropped_views_ == [] and "n" in model.mappers_
    french = load_demo()[1].select(["fr"])
    assert "fr" not in model.languages_ and model.predict(french).shape == (len(french), len(model.classes_))


def test_an_unselected_view_runs_only_on_the_documents_no_kept_view_covers(demo, noisy, monkeypatch) -> None:
    """At predict, the view select did not keep (but could not drop) computes nothing for the languages the kept
    views serve: only the French documents reach it."""
    model = noisy["select"]
    noise = next(v for v in model.views_ if v.letter == "n")
    seen: list[str] = []
    real = noise.transform
    monkeypatch.setattr(noise, "transform", lambda texts, langs: seen.extend(np.asarray(langs).tolist()) or real(
        texts, langs))
    _, test = demo
    both = MultilingualCorpus.concat([test, load_demo()[1].select(["fr"])])
    model.predict(both)
    assert seen and set(seen) == {"fr"} and len(seen) == int((both.lang_array == "fr").sum())


@pytest.mark.parametrize("aggregation", ["stack", "wmean", "select"])
def test_save_load_round_trip_gives_identical_predictions(demo, aggregation: str) -> None:
    train, test = demo
    model = GeneralizedFunnelling(views='xw', aggregation=aggregation, random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    meta, arrays = model.get_state()
    loaded = GeneralizedFunnelling.from_state(json.loads(json.dumps(meta)), arrays)
    np.testing.assert_array_equal(loaded.predict(test), model.predict(test))
    np.testing.assert_allclose(loaded.predict_proba(test), model.predict_proba(test), rtol=1e-6)


def test_paper_policies_keep_in_sample_training_posteriors(demo) -> None:
    train, _ = demo
    for agg in ("mean", "concat"):
        model = GeneralizedFunnelling(views='x', aggregation=agg, random_state=0,
                                      meta=default_meta().set_params(C=1.0)).fit(train)
        assert model.views_[0].train_posteriors == "in-sample"


def test_f1_thresholds_pick_the_best_cut() -> None:
    from gfun.svm.thresholds import f1_thresholds

    scores = np.array([[-0.9, 2.0], [-0.5, 1.0], [-0.2, 0.5], [-1.0, -0.5], [-1.5, -1.0]])
    Y = np.array([[1, 0], [1, 0], [0, 0], [0, 0], [0, 0]])
    t = f1_thresholds(scores, Y, min_positives=1)
    assert (f1_thresholds(scores, Y) == 0).all()  # 2 positives: too few to move the threshold by default
    # class 0: the two positives are ranked 2nd and 3rd; the best F1 (0.8) predicts the top three
    assert t[0] == pytest.approx(-0.95)  # halfway between the 3rd and the 4th score
    assert t[1] == 0.0  # no positive: the SVM's own threshold stays


def test_meta_f1_threshold_raises_training_f1_of_its_own_out_of_fold_scores(demo) -> None:
    from gfun.metrics.measures import f1_from_counts
    from gfun.svm.kernel import RBFSVMOvR

    train, _ = demo
    stack = GeneralizedFunnelling(views='x', aggregation='stack', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    Z, Y = stack.transform(train), np.asarray(train.Y.toarray(), dtype=bool)

    def oof_f1(svm: RBFSVMOvR) -> float:
        pred = svm.oof_decision_ > 0
        return float(np.mean(f1_from_counts((pred & Y).sum(0), (pred & ~Y).sum(0), (~pred & Y).sum(0),
                                            (~pred & ~Y).sum(0))))

    plain = RBFSVMOvR(C=1.0, random_state=0).fit(Z, Y)
    tuned = RBFSVMOvR(C=1.0, threshold="f1", random_state=0).fit(Z, Y)
    assert oof_f1(tuned) > oof_f1(plain)
    np.testing.assert_allclose(tuned.decision_function(Z), plain.decision_function(Z) - tuned.threshold_)


# ------------------------------------------------------------------------- select's per-language score
def test_select_scores_each_training_language_then_averages(demo, monkeypatch) -> None:
    """``select_average="language"`` (the default) judges a candidate on each language's documents apart and
    averages over languages, as gFun is evaluated; ``"pooled"`` judges all documents at once."""
    import gfun.funnelling.select as meta_tier

    train, _ = demo
    sizes: dict[str, list[int]] = {}
    real = meta_tier._selection_score

    def recording(name: str):
        score = real(name)

        def wrapped(pred, y):
            sizes.setdefault(current, []).append(len(y))
            return score(pred, y)
        return wrapped

    monkeypatch.setattr(meta_tier, "_selection_score", recording)
    views = [PosteriorsView(random_state=0), NoiseView()]
    models = {}
    for current in ("language", "pooled"):
        models[current] = GeneralizedFunnelling(views=views, random_state=0, meta=default_meta().set_params(C=1.0),
               aggregation=Select(average=current, unseen="shared")).fit(train)  # the search's calls only
    n_candidates = len(models["pooled"].aggregation_.scores_)
    folds = models["pooled"].aggregation_.cv
    # pooled: the whole training set once per candidate, plus one call per fold
    assert len(sizes["pooled"]) == n_candidates * (folds + 1)
    assert sizes["pooled"].count(len(train)) == n_candidates
    # per language: one call per language for the whole set and for each fold, never a mixed-language call
    assert len(sizes["language"]) == n_candidates * (folds + 1) * len(LANGS)
    per_language = set(np.bincount(np.unique(train.lang_array, return_inverse=True)[1]).tolist())
    assert per_language <= set(sizes["language"]) and max(sizes["language"]) < len(train)
    assert models["language"].selected_views_ == ["x"]  # the noise view is still left out
    assert models["language"].aggregation_.average == "language"
    assert make_aggregation(GeneralizedFunnelling().aggregation).average == "language"


def test_select_average_is_the_same_on_one_language(demo) -> None:
    train, _ = demo
    one = train.select(["en"])
    scores = [GeneralizedFunnelling(views='x', random_state=0, aggregation=Select(average=avg)).fit(one)
              .aggregation_.scores_ for avg in ("language", "pooled")]
    assert scores[0] == scores[1]


def test_select_average_typo_is_refused_with_the_choices(demo) -> None:
    train, _ = demo
    with pytest.raises(ValueError, match=r"select average must be one of \('pooled', 'language'\), got 'languages'"):
        GeneralizedFunnelling(views='x', meta=default_meta().set_params(C=1.0),
                              aggregation=Select(average='languages')).fit(train)


def test_one_standard_error_rule_uses_the_paired_fold_differences() -> None:
    from gfun.funnelling.select import one_standard_error_choice

    # folds differ a lot in difficulty, the same for both candidates: the smaller candidate is always .02
    # below the larger one, a real difference although it is smaller than either candidate's fold spread
    big = np.array([0.50, 0.70, 0.90])
    small = big - 0.02
    assert one_standard_error_choice([big.mean(), small.mean()], [big, small], [2, 1]) == 0
    # the same means, but the difference flips sign from fold to fold: within noise, the smaller one is kept
    noisy = big + np.array([0.08, -0.07, -0.07])
    assert one_standard_error_choice([big.mean(), noisy.mean()], [big, noisy], [2, 1]) == 1
    # among the candidates within noise, the fewest views first, then the best score
    third = big + np.array([0.07, -0.08, -0.05])
    scores = [big.mean(), noisy.mean(), third.mean()]
    assert one_standard_error_choice(scores, [big, noisy, third], [3, 2, 1]) == 2
    assert one_standard_error_choice(scores, [big, noisy, third], [2, 1, 1]) == 1


def test_select_without_normalisation_tries_raw_candidates_only(demo) -> None:
    train, _ = demo
    views = [PosteriorsView(random_state=0), NoiseView(random_state=1)]
    model = GeneralizedFunnelling(views=views, random_state=0, normalize=False,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    assert set(model.aggregation_.scores_) == {"xn (raw)", "x (raw)", "n (raw)"}
    assert model.aggregation_.l2_ is False


def _count_validations(monkeypatch, tol: float | None = None) -> list[float]:
    """Record the C of every cross-validation ``RBFSVMOvR.validate`` runs (one entry per call: its C), or of those
    at libsvm tolerance ``tol`` only."""
    calls: list = []
    validate = RBFSVMOvR._validate
    monkeypatch.setattr(RBFSVMOvR, "_validate", lambda self, *a, **k: (
        calls.append(self.C) if tol is None or self.tol == tol else None) or validate(self, *a, **k))
    return calls


def test_select_validates_each_candidate_once_and_keeps_the_winners_validation(demo, monkeypatch) -> None:
    """Every candidate is cross-validated once, at ``SELECT_TOL``; the kept one's validation is its model's (one
    validation per candidate, none again), and its final models are trained at the meta-classifier's own tolerance.
    A kept candidate whose validation was released is validated again, to the same model."""
    import gfun.funnelling.select as meta_tier

    train, test = demo
    calls = _count_validations(monkeypatch, meta_tier.SELECT_TOL)  # not W's mapper's, at its own tolerance
    model = build_estimator("xw", meta_C=1.0, random_state=0).fit(train)
    assert len(model.aggregation_.scores_) == len(calls) == 6  # xw, x and w, each normalised and raw
    assert model.meta_.tol == RBFSVMOvR().tol != meta_tier.SELECT_TOL and model.meta_.probability
    monkeypatch.setattr(meta_tier, "_held", lambda *args: set())  # every validation released
    calls.clear()
    again = build_estimator("xw", meta_C=1.0, random_state=0).fit(train)
    assert len(calls) == 7 and again.selected_views_ == model.selected_views_
    np.testing.assert_array_equal(again.meta_.threshold_, model.meta_.threshold_)
    np.testing.assert_array_equal(again.predict_proba(test), model.predict_proba(test))


def test_select_with_C_by_cv_compares_at_one_C_and_chooses_C_for_the_kept_candidate(demo, monkeypatch) -> None:
    """With ``C="cv"`` the candidates are compared at one C (the grid's value nearest 1); the kept candidate's C is
    chosen per class over the whole grid, the comparison's held-out decisions standing for C = 1."""
    from gfun.funnelling.select import comparison_C

    train, _ = demo
    grid = (0.1, 1.0, 10.0)
    calls = _count_validations(monkeypatch)
    model = GeneralizedFunnelling(views="x", random_state=0, meta=default_meta().set_params(C="cv", C_grid=grid)
                                  ).fit(train)
    assert comparison_C(model.meta_) == 1.0
    assert calls == [1.0, 1.0, "cv"]  # two candidates at C = 1, then the grid for the kept one
    assert model.meta_.C == "cv" and model.meta_.cv_scores_.shape == (len(grid), len(model.classes_))
    assert set(model.meta_.C_) <= set(grid)
    assert comparison_C(RBFSVMOvR(C="cv", C_grid=(0.01, 0.3, 5.0))) == 0.3


class MemorisingView(NoiseView):
    """A network that learned its training documents by heart: their labels (plus noise) for the documents it
    trained on, noise for any other, as for new documents. With ``hold_out`` it keeps a fifth of the training
    documents out of its training, as the recurrent view's early-stopping split, and says which (``heldout_idx_``)."""

    letter = "q"

    def __init__(self, dim: int = 16, random_state: int | None = 0, hold_out: bool = True) -> None:
        super().__init__(dim, random_state)
        self.hold_out = hold_out

    def fit_transform(self, texts, langs, Y):
        self.rng_ = np.random.RandomState(self.random_state)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=float)
        self.n_classes_out_ = Y.shape[1]
        Z = self.rng_.normal(size=(len(texts), Y.shape[1]))
        held = np.sort(self.rng_.permutation(len(texts))[: len(texts) // 5])
        trained = np.setdiff1d(np.arange(len(texts)), held)
        Z[trained] += 4 * Y[trained]
        self.heldout_idx_ = held if self.hold_out else None
        return Z

    def transform(self, texts, langs):
        return self.rng_.normal(size=(len(texts), self.n_classes_out_))

    def covers(self, lang):
        return True


def test_select_judges_a_view_that_trained_on_its_documents_where_it_did_not(demo, caplog) -> None:
    """Judged on the documents it trained on, a memorising view wins (and the model is useless on new documents);
    judged on those it held out, it is seen for what it is, and X alone is kept."""
    train, test = demo

    def fit(hold_out: bool) -> GeneralizedFunnelling:
        memoriser = MemorisingView(random_state=1, hold_out=hold_out)
        return GeneralizedFunnelling(views=[PosteriorsView(random_state=0), memoriser], random_state=0,
                                     meta=default_meta().set_params(C=1.0)).fit(train)

    fooled = fit(hold_out=False)
    assert "q" in fooled.selected_views_
    with caplog.at_level("INFO", logger="gfun.funnelling.generalized"):
        wary = fit(hold_out=True)
    assert wary.selected_views_ == ["x"]
    assert any("judged on the 90 training documents view(s) Q did not train on" in r.getMessage()
               for r in caplog.records)
    assert wary.aggregation_.scores_["x"] > wary.aggregation_.scores_["q"] + 0.2
    assert _f1_macro(wary, test) > _f1_macro(fooled, test) + 0.1
