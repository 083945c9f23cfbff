"""Baselines: the Naive per-language classifier, Fun (make_fun) on (a sample of) the demo data, and UpperBound:
the English versions of a parallel corpus (debtags by Description-md5, SIB-200 by index_id), one English
classifier, and the experiment's refusal on corpora without English versions.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import lz4.frame
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from gfun.baselines.naive import NaiveClassifier, UpperBoundClassifier, english_versions, make_fun
from gfun.baselines.parts import LinearSVMs
from gfun.cli.main import main
from gfun.configuration import build_estimator, check_configs_for_dataset, parse_config, parse_configs
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.debtags import load_debtags, write_debtags_run
from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.experiments.many_shot import run_many_shot
from gfun.experiments.runner import ExperimentSettings
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.loading import load_model
from gfun.svm.linear import fit_linear_ovr
from gfun.text.tfidf import TfidfVectorizer

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in LANGS])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus, MultilingualCorpus]:
    full_train, full_test = load_demo()
    return _sample(full_train, 120, 0), _sample(full_test, 60, 1), full_test


@pytest.fixture(scope="module")
def naive(demo) -> NaiveClassifier:
    return NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(demo[0])


@pytest.fixture(scope="module")
def fun(demo) -> GeneralizedFunnelling:
    return make_fun(random_state=0, meta=default_meta().set_params(C=1.0)).fit(demo[0])


# ----------------------------------------------------------------------------------------------- Naive
def test_naive_sklearn_contract(demo, naive: NaiveClassifier) -> None:
    est = NaiveClassifier(classifier=LinearSVMs(C=0.5, cv=3))
    params = est.get_params(deep=False)
    assert set(params) == set(inspect.signature(NaiveClassifier.__init__).parameters) - {"self"}
    assert est.set_params(classifier__C=2.0) is est and est.classifier.C == 2.0
    assert est.get_params()["classifier__cv"] == 3 and clone(est).get_params()["classifier__C"] == 2.0
    default = NaiveClassifier().set_params(classifier__C=3.0, tfidf__min_df=2)  # the default parts made explicit
    assert (default.classifier.C, default.classifier.cv, default.tfidf.min_df) == (3.0, 5, 2)
    assert not hasattr(clone(naive), "models_")
    for method in (est.predict, est.decision_function, est.predict_labels):
        with pytest.raises(NotFittedError):
            method(demo[1])
    learned = set(vars(naive)) - set(params)
    assert learned == {"classes_", "languages_", "models_", "C_"}
    assert naive.classes_ == list(demo[0].classes) and naive.languages_ == LANGS


def test_naive_predictions(demo, naive: NaiveClassifier) -> None:
    _, test, _ = demo
    pred = naive.predict(test)
    assert pred.shape == (len(test), len(test.classes)) and pred.dtype == np.int8
    assert set(np.unique(pred)) <= {0, 1} and pred.any()
    np.testing.assert_array_equal(pred, (naive.decision_function(test) > 0).astype(np.int8))
    np.testing.assert_array_equal(naive.predict(test.texts, langs=test.langs), pred)
    assert naive.predict_labels(test) == [[naive.classes_[j] for j in np.flatnonzero(r)] for r in pred]
    assert all(C.tolist() == [1.0] * len(test.classes) for C in naive.C_.values())


def test_naive_is_one_independent_classifier_per_language(demo, naive: NaiveClassifier) -> None:
    train, test, _ = demo
    en_train, en_test = train.select("en"), test.select("en")
    alone = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(en_train)
    assert alone.languages_ == ["en"]
    np.testing.assert_array_equal(alone.decision_function(en_test), naive.decision_function(en_test))
    # and it is exactly TF-IDF of that language followed by one linear SVM per class
    vec = TfidfVectorizer("en")
    svm = fit_linear_ovr(vec.fit_transform(en_train.texts), en_train.Y.toarray(), 1.0, random_state=0)
    np.testing.assert_allclose(svm.decision_function(vec.transform(en_test.texts)),
                               naive.decision_function(en_test), rtol=1e-6, atol=1e-7)


def test_naive_C_by_cross_validation(demo) -> None:
    train, _, _ = demo
    grid = (10.0, 0.1, 1.0)
    est = NaiveClassifier(classifier=LinearSVMs(C="cv", C_grid=grid, cv=3), random_state=0)
    est.fit(train.select(["en", "it"]))
    assert sorted(est.C_) == ["en", "it"]
    for Cs in est.C_.values():
        assert Cs.shape == (len(train.classes),) and set(Cs.tolist()) <= set(grid)
    assert len({c for Cs in est.C_.values() for c in Cs.tolist()}) > 1
    with pytest.raises(ValueError, match="C must be"):
        NaiveClassifier(classifier=LinearSVMs(C="auto")).fit(train)


def test_naive_deterministic(demo, naive: NaiveClassifier) -> None:
    again = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)
    assert again.fit(demo[0]) is again
    np.testing.assert_array_equal(again.decision_function(demo[1]), naive.decision_function(demo[1]))


def test_naive_unseen_language(demo, naive: NaiveClassifier) -> None:
    _, test, full_test = demo
    mixed = MultilingualCorpus.concat([test.subset(range(4)), full_test.select("fr").subset(range(2))])
    with pytest.raises(UnseenLanguageError, match="'fr'"):
        naive.predict(mixed)


def test_naive_label_lists_and_single_document_language(demo) -> None:
    train, test, _ = demo
    texts = train.texts + ["ein einziges dänisches Dokument"]
    langs = train.langs + ["da"]
    labels = [list(ls) for ls in train.labels] + [[train.classes[0]]]
    est = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(texts, labels, langs=langs)
    assert est.classes_ == sorted(train.classes) and est.languages_ == ["da", *LANGS]
    pred = est.predict(["et andet dokument", "noch ein Text"], langs=["da", "de"])
    assert pred.shape == (2, len(train.classes))
    assert pred[0].tolist() == [1 if c == train.classes[0] else 0 for c in est.classes_]  # constant classifiers


# ----------------------------------------------------------------------------------------------- Fun
def test_make_fun_configuration() -> None:
    est = make_fun(random_state=3, meta=default_meta().set_params(C=1.0))
    assert isinstance(est, GeneralizedFunnelling)
    assert est.normalize is False and est.views == "x" and est.aggregation == "concat"
    assert est.random_state == 3 and est.get_params()["meta__C"] == 1.0
    assert make_fun().normalize is False and make_fun().meta is None  # None: default_meta()
    with pytest.raises(ValueError, match="Posteriors view only"):
        make_fun(views="xm")
    cloned = clone(est)
    assert cloned.meta is not est.meta and type(cloned.meta) is type(est.meta)
    # the nested meta-classifier is compared by its parameters (meta__*), not by identity
    assert ({k: v for k, v in cloned.get_params().items() if k != "meta"}
            == {k: v for k, v in est.get_params().items() if k != "meta"})


def test_fun_meta_input_is_the_raw_posteriors(demo, fun: GeneralizedFunnelling) -> None:
    _, test, _ = demo
    assert fun.scaler_ is None and fun.mappers_ == {} and fun.mapper_scalers_ == {}
    Z = fun.transform(test)
    raw = fun.views_[0].transform(test.texts, np.asarray(test.langs, dtype=object))
    np.testing.assert_array_equal(Z, raw)  # no L2, no z-scoring
    assert ((Z >= 0) & (Z <= 1)).all()
    pred, proba = fun.predict(test), fun.predict_proba(test)
    assert pred.shape == proba.shape == (len(test), len(test.classes)) and pred.dtype == np.int8
    assert ((proba >= 0) & (proba <= 1)).all()


def test_fun_differs_from_normalised_gfun(demo, fun: GeneralizedFunnelling) -> None:
    train, test, _ = demo
    gfun = GeneralizedFunnelling(random_state=0, aggregation='concat', meta=default_meta().set_params(C=1.0)).fit(train)
    assert gfun.scaler_ is not None
    assert not np.allclose(gfun.transform(test), fun.transform(test), atol=1e-3)
    assert not np.allclose(gfun.decision_function(test), fun.decision_function(test), atol=1e-3)


CLASSES = ["editor", "game", "net"]


# one English word per class; the "translations" are unrelated tokens, so only the English side can be learnt
WORDS = {"editor": "texteditor", "game": "arcadegame", "net": "webserver"}


def _parallel(n: int, seed: int, langs=("en", "it", "de")) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    ids, lang_list, texts, labels, english = [], [], [], [], []
    for i in range(n):
        lang = langs[i % len(langs)]
        cls = [c for c in CLASSES if rng.rand() < 0.4] or [CLASSES[i % 3]]
        en = " ".join([WORDS[c] for c in cls] + [f"filler{rng.randint(20)}" for _ in range(4)])
        text = en if lang == "en" else " ".join(f"{lang}tok{rng.randint(40)}" for _ in range(6))
        ids.append(f"d{i}")
        lang_list.append(lang)
        texts.append(text)
        labels.append(cls)
        english.append(en)
    return MultilingualCorpus(ids, lang_list, texts, labels, CLASSES, extra={"text_en": english})


@pytest.fixture(scope="module")
def data() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return _parallel(90, 0), _parallel(45, 1)


@pytest.fixture(scope="module")
def upper(data) -> UpperBoundClassifier:
    return UpperBoundClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(data[0])


def test_upperbound_is_the_english_classifier_of_the_english_versions(data, upper) -> None:
    train, test = data
    # known answer: the Naive English classifier fitted on the English versions labelled as English documents
    as_english = MultilingualCorpus(train.ids, ["en"] * len(train), train.extra["text_en"], train.labels, CLASSES)
    naive_en = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(as_english)
    test_en = MultilingualCorpus(test.ids, ["en"] * len(test), test.extra["text_en"], test.labels, CLASSES)
    np.testing.assert_allclose(upper.decision_function(test), naive_en.decision_function(test_en))
    assert upper.languages_ == ["en"] and upper.train_languages_ == ["de", "en", "it"]
    # the translations carry nothing here: Naive fails on it/de, UpperBound classifies them through English
    pred = upper.predict(test)
    assert pred.shape == (len(test), 3) and pred.dtype == np.int8
    assert (pred == test.Y).all(axis=1).mean() > 0.9
    naive = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(train)
    non_en = np.asarray(test.langs) != "en"
    assert (naive.predict(test)[non_en] == test.Y[non_en]).all(axis=1).mean() < 0.6


def test_upperbound_ignores_the_original_texts(data, upper) -> None:
    test = data[1]
    scrambled = MultilingualCorpus(test.ids, test.langs, ["whatever"] * len(test), test.labels, CLASSES,
                                   extra=test.extra)
    np.testing.assert_array_equal(upper.decision_function(scrambled), upper.decision_function(test))


def test_upperbound_deterministic_and_saved(data, upper, tmp_path) -> None:
    again = UpperBoundClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(data[0])
    np.testing.assert_array_equal(again.decision_function(data[1]), upper.decision_function(data[1]))
    upper.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert type(loaded) is UpperBoundClassifier and loaded.train_languages_ == upper.train_languages_
    np.testing.assert_array_equal(loaded.decision_function(data[1]), upper.decision_function(data[1]))


def test_upperbound_cv_keeps_identical_english_copies_in_one_fold(monkeypatch) -> None:
    import gfun.baselines.parts as baselines

    seen = {}
    real = baselines.make_folds

    def spy(n, k, rs, groups=None):
        seen["groups"] = groups
        return real(n, k, rs, groups)

    monkeypatch.setattr(baselines, "make_folds", spy)
    # fully parallel: every sentence in three languages, so three identical English copies
    base = _parallel(30, 2, langs=("en",))
    langs = ["en", "it", "de"]
    corpus = MultilingualCorpus([f"{g}{i}" for g in langs for i in base.ids], [g for g in langs for _ in base.ids],
                                [t for _ in langs for t in base.texts], [y for _ in langs for y in base.labels],
                                CLASSES, extra={"text_en": [t for _ in langs for t in base.texts]})
    UpperBoundClassifier(classifier=LinearSVMs(C="cv", C_grid=(0.1, 1.0), cv=3), random_state=0).fit(corpus)
    groups = seen["groups"]
    for fold_train, fold_test in real(len(corpus), 3, 0, groups):
        english = np.asarray(corpus.extra["text_en"], dtype=object)
        assert not set(english[fold_train]) & set(english[fold_test])


def test_english_versions_errors_and_english_fallback() -> None:
    c = MultilingualCorpus(["a", "b", "c"], ["en", "it", "it"], ["hello", "ciao", "salve"], [[], [], []], CLASSES,
                           extra={"text_en": [None, "hi", None]})
    with pytest.raises(ValueError, match=r"1 of 3 documents have none \(it: 1\)"):
        english_versions(c)
    assert english_versions(["one", "two"], langs=["en", "en"]) == ["one", "two"]
    with pytest.raises(ValueError, match="parallel datasets set: debtags, sib200; in files, a 'text_en' field"):
        UpperBoundClassifier(classifier=LinearSVMs(C=1.0)).fit(["x", "y"], [["editor"], ["game"]], langs=["en", "fr"])


# ------------------------------------------------------------------------------------ datasets
def _write(path: Path, records: list[dict[str, str]]) -> None:
    text = "\n".join("".join(f"{k}: {v}\n" for k, v in r.items()) for r in records)
    path.with_name(path.name + ".lz4").write_bytes(lz4.frame.compress(text.encode("utf-8")))


def test_debtags_english_versions_follow_the_description_md5(tmp_path) -> None:
    root = tmp_path / "debtags"
    root.mkdir()
    tags = "use::editing, role::program"
    pkgs = [{"Package": p, "Description-md5": m, "Tag": tags} for p, m in
            [("aa", "m1"), ("bb", "m2"), ("cc", "m3"), ("dd", "m2")]]
    _write(root / "Packages", pkgs)
    # dd shares bb's description (same md5): the English side keeps only bb, dd's translation still finds it
    _write(root / "Translation-en", [{"Package": p, "Description-md5": m, "Description-en": f"English {m}"}
                                     for p, m in [("aa", "m1"), ("bb", "m2"), ("cc", "m3"), ("dd", "m2")]])
    _write(root / "Translation-it", [{"Package": p, "Description-md5": m, "Description-it": f"Italiano {p}"}
                                     for p, m in [("aa", "m1"), ("cc", "m3"), ("dd", "m2")]])
    _write(root / "Translation-fi", [{"Package": "bb", "Description-md5": "m2", "Description-fi": "Suomi bb"}])
    r = load_debtags(0, root, n_classes=2, max_train=10, max_test=10, many_shot=("en", "it"), zero_shot=("fi",))
    docs = list(r.train) + list(r.test) + list(r.test_zeroshot)
    assert docs
    for d in docs:
        md5 = {"aa": "m1", "bb": "m2", "cc": "m3", "dd": "m2"}[d.id]
        assert d.extra["text_en"] == f"English {md5}\n"
        if d.lang == "en":
            assert d.extra["text_en"] == d.text
    # the JSONL files hold it only when asked (the default files stay the reference builder's)
    write_debtags_run(r, tmp_path / "plain")
    write_debtags_run(r, tmp_path / "english", english=True)
    plain = [json.loads(x) for x in (tmp_path / "plain" / "train.jsonl").read_text().splitlines()]
    english = [json.loads(x) for x in (tmp_path / "english" / "train.jsonl").read_text().splitlines()]
    assert plain and all("text_en" not in rec for rec in plain)
    assert [rec.pop("text_en") for rec in english] == r.train.extra["text_en"] and english == plain
    # without an English file there is no English version, and UpperBound says so
    (root / "Translation-en.lz4").unlink()
    r = load_debtags(0, root, n_classes=2, max_train=10, max_test=10, many_shot=("it",), zero_shot=())
    assert all(t is None for t in r.train.extra["text_en"])
    with pytest.raises(ValueError, match="English version"):
        UpperBoundClassifier(classifier=LinearSVMs(C=1.0)).fit(r.train)


def test_sib200_english_versions_by_index_id(shared_data) -> None:
    from gfun.datasets.sib200 import load_sib200

    s = load_sib200(shared_data / "sib200", langs=["it", "de"])  # English not among the languages: read anyway
    en = load_sib200(shared_data / "sib200", langs=["en"])
    for split in ("train", "test"):
        corpus, english = getattr(s, split), getattr(en, split)
        by_id = dict(zip(english.extra["index_id"], english.texts, strict=True))
        assert corpus.extra["text_en"] == [by_id[i] for i in corpus.extra["index_id"]]
    assert s.train.extra["text_en"][0] != s.train.texts[0]


# --------------------------------------------------------------------------------- experiments
def test_upper_config_and_its_dataset_check(tmp_path) -> None:
    assert [c.name for c in parse_configs("upperbound,UPPER,naive")] == ["upper", "naive"]
    cfg = parse_config("upper")
    assert cfg.display == "UpperBound" and cfg.group == "baselines" and cfg.serves_unseen
    est = build_estimator(cfg, meta_C=1.0, random_state=3)
    assert isinstance(est, UpperBoundClassifier) and est.classifier.C == 1.0 and est.random_state == 3
    check_configs_for_dataset([cfg], "debtags")
    check_configs_for_dataset([cfg], "sib200")
    with pytest.raises(ValueError, match="only the parallel datasets debtags, sib200 provide; 'demo' does not"):
        run_many_shot(ExperimentSettings(dataset="demo", runs=1, meta_C=1.0), [parse_config("naive"), cfg],
                      tmp_path / "out", plots=False)
    assert not (tmp_path / "out").exists()  # refused before the first cell, before the folder


def test_upper_in_a_sib200_experiment(shared_data, tmp_path) -> None:
    settings = ExperimentSettings(dataset="sib200", data_dir=str(shared_data / "sib200"), runs=1, meta_C=1.0,
                                  sample=(40, 20, 2), view_cache="")
    res = run_many_shot(settings, parse_configs("naive,upper"), tmp_path, plots=False)
    avg = res["scores"][(res["scores"]["lang"] == "average") & (res["scores"]["setting"] == "many-shot")]
    assert set(avg["config"]) == {"naive", "upper"} and avg["F1_macro"].notna().all()
    timings = (tmp_path / "many-shot-sib200-timings.csv").read_text()
    assert "upper" in timings


def test_cli_train_and_evaluate_upper_from_files(data, tmp_path, capsys) -> None:
    train, test = data
    train.to_jsonl(tmp_path / "train.jsonl")  # extra fields (text_en) are written with each record
    test.to_jsonl(tmp_path / "test.jsonl")
    assert main(["train", "--method", "upper", "--meta-C", "1", "--train", str(tmp_path / "train.jsonl"),
                 "--model", str(tmp_path / "m")]) == 0
    assert type(load_model(tmp_path / "m")) is UpperBoundClassifier
    capsys.readouterr()
    assert main(["evaluate", "--model", str(tmp_path / "m"), "--test", str(tmp_path / "test.jsonl"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert set(scores) == {"en", "it", "de", "average"}
    direct = UpperBoundClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(train).predict(test)
    assert scores["average"]["F1_micro"] > 0.9 and (direct == test.Y).all(axis=1).mean() > 0.9
    # a file without English versions: one error line naming what is missing
    MultilingualCorpus(test.ids, test.langs, test.texts, test.labels, CLASSES).to_jsonl(tmp_path / "plain.jsonl")
    assert main(["evaluate", "--model", str(tmp_path / "m"), "--test", str(tmp_path / "plain.jsonl")]) == 1
    assert "gfun datasets build debtags --english" in capsys.readouterr().err
