"""The cross-lingual baselines (LRI, CLESA, KCCA, DCI) on small corpora built here, and their resources."""

from __future__ import annotations

import string
from pathlib import Path

import lz4.frame
import numpy as np
import pytest

from gfun.baselines.crosslingual import CROSSLINGUAL, make_crosslingual
from gfun.baselines.crosslingual.clesa import CLESAClassifier
from gfun.baselines.crosslingual.dci import DCIClassifier
from gfun.baselines.crosslingual.kcca import KCCAClassifier, fit_kcca
from gfun.baselines.crosslingual.lri import LRIClassifier, random_index_vectors
from gfun.baselines.crosslingual.resources import ParallelCollection, debtags_parallel, resolve_parallel
from gfun.baselines.parts import LinearSVMs
from gfun.configuration import build_estimator, parse_config
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.errors import UnseenLanguageError
from gfun.metrics.measures import f1_score
from gfun.persistence.loading import load_model
from gfun.text.tfidf import MultilingualTfidf

LANGS = ("en", "it")
CLASSES = ["c0", "c1", "c2", "c3"]
N_CONCEPTS = 120  # concept ids: 0-23 topic words (6 per class), the rest background words
PREFIX = {"en": "e", "it": "i", "fr": "f"}


def _word(lang: str, concept: int) -> str:
    """The word of ``concept`` in ``lang``: a language prefix and two letters (each language its own words)."""
    return PREFIX[lang] + string.ascii_lowercase[concept // 26] + string.ascii_lowercase[concept % 26]


def _concept_doc(rng: np.random.RandomState, labels: list[int]) -> list[int]:
    words = [int(c) * 6 + int(rng.randint(6)) for c in labels for _ in range(4)]
    words += rng.randint(24, N_CONCEPTS, size=8).tolist()
    rng.shuffle(words)
    return words


def _corpus(n_per_lang: int, seed: int, langs: tuple[str, ...] = LANGS) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    ids, lg, texts, labels = [], [], [], []
    for lang in langs:
        for i in range(n_per_lang):
            labs = sorted(set(rng.choice(4, size=1 + rng.randint(2), replace=False).tolist()))
            ids.append(f"{lang}{i}")
            lg.append(lang)
            texts.append(" ".join(_word(lang, c) for c in _concept_doc(rng, labs)))
            labels.append([CLASSES[c] for c in labs])
    return MultilingualCorpus(ids, lg, texts, labels, CLASSES)


def _parallel(n_items: int, seed: int, langs: tuple[str, ...] = LANGS) -> ParallelCollection:
    """Items described in every language by the same concepts (a translated collection)."""
    rng = np.random.RandomState(seed)
    docs = [_concept_doc(rng, [int(rng.randint(4))]) for _ in range(n_items)]
    return ParallelCollection.from_aligned({lang: [" ".join(_word(lang, c) for c in d) for d in docs]
                                            for lang in langs})


COMMON = {"classifier": LinearSVMs(C=1.0), "tfidf": MultilingualTfidf(stopwords=False, stem=False), "random_state": 0}


def _make(name: str, **kw: object):
    params = dict(COMMON)
    if name in ("clesa", "kcca"):
        params["parallel"] = _parallel(150, 3)
    if name == "kcca":
        params.update(n_components=20, rank=40, tfidf=MultilingualTfidf(min_df=1, stopwords=False, stem=False))
    params.update(kw)
    return CROSSLINGUAL[name](**params)


@pytest.fixture(scope="module")
def data() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return _corpus(80, 1), _corpus(40, 2)


@pytest.fixture(scope="module")
def fitted(data) -> dict:
    return {name: _make(name).fit(data[0]) for name in CROSSLINGUAL}


@pytest.mark.parametrize("name", sorted(CROSSLINGUAL))
def test_fit_predict_shapes_and_quality(name: str, data, fitted) -> None:
    train, test = data
    model = fitted[name]
    assert model.classes_ == CLASSES and model.languages_ == list(LANGS)
    scores = model.decision_function(test)
    pred = model.predict(test)
    assert scores.shape == pred.shape == (len(test), 4) and pred.dtype == np.int8
    assert np.array_equal(pred, (scores > 0).astype(np.int8))
    assert model.transform(test).shape[0] == len(test)
    assert len(model.predict_labels(test)) == len(test)
    # the topic words decide the labels: every method must learn them
    assert f1_score(test.Y.toarray(), pred, "micro") > 0.8, name
    # score: macro-F1, as every gfun estimator (not scikit-learn's subset accuracy)
    assert model.score(test) == pytest.approx(f1_score(test.Y.toarray(), pred, "macro"))
    assert model.score(test.texts, test.Y.toarray(), langs=test.langs) == model.score(test)
    # a document's scores do not depend on the other documents it is classified with
    one = test.subset([5])
    assert np.allclose(model.decision_function(one), scores[5:6])


@pytest.mark.parametrize("name", sorted(CROSSLINGUAL))
def test_deterministic(name: str, data, fitted) -> None:
    again = _make(name).fit(data[0])
    assert np.array_equal(again.decision_function(data[1]), fitted[name].decision_function(data[1]))


@pytest.mark.parametrize("name", sorted(CROSSLINGUAL))
def test_save_load_round_trip(name: str, data, fitted, tmp_path: Path) -> None:
    model = fitted[name]
    model.save(str(tmp_path / name))
    loaded = load_model(tmp_path / name)
    assert type(loaded) is type(model) and loaded.classes_ == model.classes_
    assert loaded.languages_ == model.languages_
    assert np.allclose(loaded.decision_function(data[1]), model.decision_function(data[1]), atol=1e-6)
    assert np.array_equal(loaded.predict(data[1]), model.predict(data[1]))
    if name in ("clesa", "kcca"):  # the collection object is not saved; its fitted space is
        assert loaded.get_params()["parallel"] is None


def test_cross_validated_C(data) -> None:
    model = DCIClassifier(tfidf=MultilingualTfidf(stopwords=False, stem=False),
                          classifier=LinearSVMs(C="cv", C_grid=(0.1, 10.0), cv=3), random_state=0)
    model.fit(data[0])
    assert model.C_.shape == (4,) and set(model.C_) <= {0.1, 10.0}


def test_unseen_language(data, fitted) -> None:
    fr = _corpus(5, 9, ("fr",))
    for name in ("lri", "dci", "kcca"):
        with pytest.raises(UnseenLanguageError):
            fitted[name].predict(fr)


def test_collection_languages_are_served_zero_shot(data) -> None:
    """CLESA and KCCA place a language known only from the parallel collection (no training documents)."""
    coll = _parallel(150, 3, ("en", "it", "fr"))
    fr = _corpus(40, 9, ("fr",))
    tfidf = MultilingualTfidf(min_df=1, stopwords=False, stem=False)
    for cls, kw in ((CLESAClassifier, {}), (KCCAClassifier, {"n_components": 20, "rank": 40, "tfidf": tfidf})):
        model = cls(parallel=coll, **{**COMMON, **kw}).fit(data[0])
        assert model.languages_ == ["en", "fr", "it"]
        assert f1_score(fr.Y.toarray(), model.predict(fr), "micro") > 0.6, cls.__name__


@pytest.mark.parametrize("name", ["clesa", "kcca"])
@pytest.mark.parametrize("small", ["unique words", "one text", "same text"])
def test_a_collection_language_with_too_few_texts_is_left_out_with_a_warning(
        data, name: str, small: str, caplog: pytest.LogCaptureFixture) -> None:
    """A language of the collection with 3 texts (no term in min_df=2 of them, or a single
    text, or three identical ones) used to end the fit ("empty vocabulary for language 'hu' (3 documents)"); it is
    left out with a warning and the other languages are served."""
    coll = _parallel(150, 3)
    texts = {"unique words": ["hua hub", "huc hud", "hue huf"], "one text": ["hua hub huc", None, None],
             "same text": ["hua hub huc"] * 3}[small]
    coll.texts["hu"] = texts + [None] * (len(coll) - 3)
    kw = {"n_components": 20, "rank": 40} if name == "kcca" else {}
    model = CROSSLINGUAL[name](parallel=coll, **{**COMMON, "tfidf": MultilingualTfidf(min_df=2, stopwords=False,
                                                                                       stem=False)}, **kw)
    with caplog.at_level("WARNING"):
        model.fit(data[0])
    if name == "clesa" and small == "same text":  # terms in min_df texts: CLESA places it (KCCA needs 2 distinct)
        assert "hu" in model.languages_
        return
    assert model.languages_ == ["en", "it"]
    assert any("leaves out 'hu'" in r.getMessage() for r in caplog.records), caplog.text
    assert f1_score(data[1].Y.toarray(), model.predict(data[1]), "micro") > 0.8


# ------------------------------------------------------------------------------------------ known answers
def test_lri_index_vectors() -> None:
    dims, values = random_index_vectors(1000, 300, 2, random_state=0)
    assert dims.shape == values.shape == (1000, 2)
    assert np.array_equal(dims[:, 0], np.arange(1000) % 300)  # round robin: no dimension left unused
    assert np.all(dims[:, 0] != dims[:, 1])
    assert np.allclose(np.abs(values), 1 / np.sqrt(2))
    R = np.zeros((1000, 300))
    np.put_along_axis(R, dims.astype(np.int64), values, axis=1)
    G = R @ R.T
    assert np.allclose(np.diag(G), 1.0)
    off = np.abs(G[~np.eye(1000, dtype=bool)])
    assert off.max() <= 1.0 and np.mean(off > 0) < 0.02  # nearly orthogonal: few index vectors overlap
    d3, v3 = random_index_vectors(50, 10, 3, random_state=1)
    assert all(len(set(r)) == 3 for r in d3.tolist()) and np.allclose(np.abs(v3), 1 / np.sqrt(3))
    with pytest.raises(ValueError):
        random_index_vectors(5, 1, 2)


def test_lri_shared_terms_share_a_feature() -> None:
    texts = ["linux kernel eaa", "linux iab", "ebb other", "ibb other"]
    corpus = MultilingualCorpus([str(i) for i in range(4)], ["en", "it", "en", "it"], texts,
                                [["a"], ["a"], ["b"], ["b"]], ["a", "b"])
    shared = LRIClassifier(**COMMON).fit(corpus)
    apart = LRIClassifier(shared_terms=False, **COMMON).fit(corpus)
    f_en = dict(zip(shared.vectorizers_["en"].get_feature_names_out(), shared.features_["en"], strict=True))
    f_it = dict(zip(shared.vectorizers_["it"].get_feature_names_out(), shared.features_["it"], strict=True))
    assert f_en["linux"] == f_it["linux"] and f_en["other"] == f_it["other"] and f_en["eaa"] != f_it["iab"]
    assert shared.n_dimensions_ == 7 and apart.n_dimensions_ == 9  # juxtaposed features: union vs disjoint


def test_dci_maps_a_word_and_its_translation_together(data, fitted) -> None:
    dci = fitted["dci"]
    word = {lang: [" ".join([_word(lang, c)]) for c in range(24)] for lang in LANGS}
    en = dci.transform(word["en"], langs=["en"] * 24)
    it = dci.transform(word["it"], langs=["it"] * 24)
    en /= np.linalg.norm(en, axis=1, keepdims=True)
    it /= np.linalg.norm(it, axis=1, keepdims=True)
    sim = en @ it.T  # topic word i in English vs topic word j in Italian
    assert np.all(np.diag(sim) > 0.8)
    # with the classes as pivots a word is as close to its translation as to the translations of the other words
    # of its class (they correlate with the same classes), and closer than to any word of another class
    same_class = np.kron(np.eye(4), np.ones((6, 6))).astype(bool)
    assert np.all(np.diag(sim)[:, None] > np.where(same_class, -np.inf, sim))
    assert np.array_equal(np.argmax(sim, axis=1) // 6, np.arange(24) // 6)


def test_dci_correspondence_functions() -> None:
    from gfun.baselines.crosslingual.dci import correspondence

    X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
    P = np.array([[1], [1], [0], [0]])
    import scipy.sparse as sp

    lin = correspondence(sp.csr_matrix(X), P, "linear")
    assert np.allclose(lin.ravel(), [1.0 - 0.0, 0.5 - 0.5])  # P(t|p) - P(t|not p)
    pmi = correspondence(sp.csr_matrix(X), P, "pmi")
    assert np.allclose(pmi.ravel(), [np.log2(0.5 / (0.5 * 0.5)), np.log2(0.25 / (0.5 * 0.5))])
    with pytest.raises(ValueError):
        correspondence(sp.csr_matrix(X), P, "cosine")


def test_clesa_finds_the_concept_across_languages() -> None:
    coll = _parallel(60, 5)
    train = _corpus(30, 1)
    model = CLESAClassifier(parallel=coll, max_concepts=None, **COMMON).fit(train)
    assert model.concept_ids_ == coll.ids
    for j in (0, 17, 42):  # the Italian description of concept j is closest to concept j
        z = model.transform([coll.texts["it"][j]], langs=["it"])
        assert int(np.argmax(z)) == j


def test_clesa_selects_the_best_covered_concepts() -> None:
    coll = ParallelCollection(["a", "b", "c", "d"], {"en": ["x y", "x", None, "y"], "it": [None, "x", "y", "x y"],
                                                     "fr": [None, "y", None, "x"]})
    from gfun.baselines.crosslingual.clesa import select_items

    assert select_items(coll, ["en", "it", "fr"], 2, 2, 0).tolist() == [1, 3]
    assert select_items(coll, ["en", "it", "fr"], None, 2, 0).tolist() == [1, 3]
    assert select_items(coll, ["en", "it", "fr"], None, 1, 0).tolist() == [0, 1, 2, 3]


def test_kcca_recovers_a_planted_correlation() -> None:
    """Three views share one latent signal under larger independent noise; one view misses some items."""
    rng = np.random.RandomState(0)
    n, d = 600, 40
    s = rng.normal(size=n)
    views, tests = {}, {}
    for v in ("a", "b", "c"):
        loading = rng.normal(size=d)
        noise = rng.normal(size=(n, d)) * 1.5 + rng.normal(size=(n, 1)) * rng.normal(size=d) * 3  # a distractor
        X = np.outer(s, loading) + noise
        items = np.arange(0, 500) if v != "c" else np.arange(0, 500, 2)
        views[v] = (items, X[items])
        tests[v] = X[500:]
    proj, corr = fit_kcca(views, 500, n_components=3, rank=40, reg=0.01, random_state=0)
    assert corr[0] > corr[1]
    z = {v: (tests[v] - m) @ P[:, 0] for v, (m, P) in proj.items()}  # held-out items 500..599
    for v in z:
        assert abs(np.corrcoef(z[v], s[500:])[0, 1]) > 0.9, v
    assert np.corrcoef(z["a"], z["b"])[0, 1] > 0.85 and np.corrcoef(z["a"], z["c"])[0, 1] > 0.85


# -------------------------------------------------------------------------------------------- resources
def _write(path: Path, text: str) -> None:
    path.with_name(path.name + ".lz4").write_bytes(lz4.frame.compress(text.encode("utf-8")))


def test_debtags_parallel_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "debtags"
    root.mkdir()
    _write(root / "Packages", "\n".join(
        f"Package: {p}\nSource: {src}\nDescription-md5: m{p}\nTag: role::program\n"
        for p, src in (("alpha", "asrc"), ("alpha-doc", "asrc"), ("beta", "bsrc"), ("gamma", "gsrc"))))
    for lang, pkgs in (("en", ["alpha", "alpha-doc", "beta", "gamma"]), ("it", ["alpha", "gamma"]), ("fr", ["beta"])):
        _write(root / f"Translation-{lang}", "\n".join(
            f"Package: {p}\nDescription-md5: m{p}\nDescription-{lang}: {p} in {lang}\n long text\n" for p in pkgs))
    coll = debtags_parallel(root, languages=["en", "it", "fr"])
    assert coll.ids == ["alpha", "alpha-doc", "beta", "gamma"]
    assert coll.texts["it"][0] == "alpha in it\nlong text" and coll.texts["it"][2] is None
    assert coll.coverage().tolist() == [2, 1, 2, 2]
    only = debtags_parallel(root, languages=["en", "it", "fr"], sources={"asrc", "bsrc"}, exclude_sources={"bsrc"})
    assert only.ids == ["alpha", "alpha-doc"]
    coll.to_jsonl(tmp_path / "p.jsonl")
    back = ParallelCollection.from_jsonl(tmp_path / "p.jsonl")
    assert back.ids == coll.ids and back.texts == {k: coll.texts[k] for k in sorted(coll.texts)}
    assert resolve_parallel(str(tmp_path / "p.jsonl")).ids == coll.ids
    # "auto": the packages of the training documents' sources, from $GFUN_DATA/debtags
    monkeypatch.setenv("GFUN_DATA", str(tmp_path))
    train = MultilingualCorpus(["alpha", "beta"], ["it", "fr"], ["alpha in it\nlong text", "beta in fr\nlong text"],
                               [["a"], ["a"]], ["a"], extra={"source": ["asrc", "bsrc"]})
    auto = resolve_parallel("auto", train)
    assert auto.ids == ["alpha", "alpha-doc", "beta"] and auto.texts["en"][2] == "beta in en\nlong text"
    other = MultilingualCorpus(["alpha", "beta"], ["it", "fr"], ["other text", "beta in fr\nlong text"],
                               [["a"], ["a"]], ["a"], extra={"source": ["asrc", "bsrc"]})
    other.texts[1] = "changed"
    with pytest.raises(ValueError, match="not the files"):
        resolve_parallel("auto", other)


def test_resolve_parallel_errors() -> None:
    with pytest.raises(ValueError, match="source"):
        resolve_parallel("auto", _corpus(2, 0))
    with pytest.raises(TypeError):
        resolve_parallel(3)
    with pytest.raises(ValueError, match="sizes"):
        ParallelCollection.from_aligned({"en": ["a", "b"], "it": ["a"]})


def test_config_names() -> None:
    for name, cls in CROSSLINGUAL.items():
        cfg = parse_config(name.upper())
        assert (cfg.name, cfg.method, cfg.group) == (name, name, "baselines")
        est = build_estimator(cfg, meta_C=2.0, random_state=3, view_params={name: {"tfidf__min_df": 3}})
        assert isinstance(est, cls) and est.classifier.C == 2.0 and est.random_state == 3 and est.tfidf.min_df == 3
    assert parse_config("kcca").display == "KCCA"
    assert parse_config("clesa").serves_unseen and not parse_config("dci").serves_unseen


def test_rbf_svms_on_a_dense_space(data, tmp_path: Path) -> None:
    model = _make("dci", kernel="rbf").fit(data[0])
    assert type(model.svm_).__name__ == "RBFSVMOvR"
    pred = model.predict(data[1])
    assert f1_score(data[1].Y.toarray(), pred, "micro") > 0.8
    model.save(str(tmp_path / "m"))
    loaded = load_model(tmp_path / "m")
    assert np.allclose(loaded.decision_function(data[1]), model.decision_function(data[1]))
    with pytest.raises(ValueError, match="kernel"):
        _make("dci", kernel="poly").fit(data[0])


# ------------------------------------------------------------------------------------ SIB-200 "auto"
def _write_sib200(root: Path, n_train: int = 40, n_test: int = 15) -> Path:
    """A SIB-200 folder in the released format: the paper's eleven languages, one sentence per ``index_id``
    written with each language's own words for the same concepts (index_ids: train 0.., test 1000..)."""
    from gfun.datasets.sib200 import _ISO3, SIB200_CATEGORIES, SIB200_LANGS

    rng = np.random.RandomState(7)
    splits = {}
    for split, n, start in (("train", n_train, 0), ("dev", 5, 500), ("test", n_test, 1000)):
        labels = rng.randint(4, size=n)
        splits[split] = [(start + i, SIB200_CATEGORIES[c], _concept_doc(rng, [int(c)])) for i, c in enumerate(labels)]
    for lang in SIB200_LANGS:
        folder = root / f"{_ISO3[lang]}_Latn"
        folder.mkdir(parents=True)
        for split, rows in splits.items():
            lines = ["index_id\tcategory\ttext"] + [
                f"{i}\t{cat}\t" + " ".join(lang + string.ascii_lowercase[c // 26] + string.ascii_lowercase[c % 26]
                                           for c in words) for i, cat, words in rows]
            (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture()
def sib200(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GFUN_DATA", str(tmp_path))
    return _write_sib200(tmp_path / "sib200")


def test_sib200_auto_collection(sib200: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gfun.datasets.sib200 import SIB200_LANGS, load_sib200

    s = load_sib200(sib200, ["en", "it", "fr", "de"], train_langs=["en", "it"])
    coll = resolve_parallel("auto", s.train)
    # one item per training sentence, in the paper's eleven languages, never a dev or test sentence
    assert coll.ids == [str(i) for i in range(40)] and coll.languages == sorted(SIB200_LANGS)
    assert coll.coverage().tolist() == [11] * 40
    en = s.train.texts[s.train.ids.index("en:3")]
    assert coll.texts["en"][3] == en and coll.texts["fr"][3] == " ".join("fr" + w[2:] for w in en.split())
    assert not set(coll.ids) & set(s.test.extra["index_id"])
    # a sampled training set: only its sentences
    sub = s.train.subset([0, 5, 41])
    assert resolve_parallel("auto", sub).ids == ["0", "1", "5"]
    # other files than the corpus came from: refused
    bad = s.train.subset(range(len(s.train)))
    bad.texts[:] = [t + " changed" for t in bad.texts]
    with pytest.raises(ValueError, match="not the files"):
        resolve_parallel("auto", bad)
    # no SIB-200 folder: the training sentences themselves, in their languages only
    monkeypatch.setenv("GFUN_DATA", str(tmp_path / "nowhere"))
    alone = resolve_parallel("auto", s.train)
    assert alone.languages == ["en", "it"] and len(alone) == 40 and alone.texts["en"][3] == en


@pytest.mark.parametrize("name", ["clesa", "kcca"])
def test_sib200_auto_serves_zero_shot_languages(name: str, sib200: Path) -> None:
    from gfun.datasets.sib200 import load_sib200

    s = load_sib200(sib200, ["en", "it", "fr"], train_langs=["en", "it"])
    kw = {"n_components": 20, "rank": 40, "tfidf__min_df": 1} if name == "kcca" else {}
    model = make_crosslingual(name, classifier=LinearSVMs(C=1.0), random_state=0, **kw).fit(s.train)  # "auto"
    assert "fr" in model.languages_
    fr = s.test.subset(s.test.by_language()["fr"])
    assert f1_score(fr.Y.toarray(), model.predict(fr), "micro") > 0.6


def test_parallel_configs_refused_without_a_collection() -> None:
    from gfun.configuration import check_configs_for_dataset, parse_configs

    check_configs_for_dataset(parse_configs("lri,clesa,kcca,dci"), "sib200")
    for name in ("clesa", "kcca"):
        with pytest.raises(ValueError, match=f"{name}.parallel=PATH"):
            check_configs_for_dataset(parse_configs(f"lri,dci,{name}"), "exceptius")
    check_configs_for_dataset(parse_configs("lri,dci,kcca"), "exceptius", {"kcca": {"parallel": "p.jsonl"}})
    check_configs_for_dataset(parse_configs("lri,dci"), "exceptius")


def test_sib200_experiments_run_with_no_extra_option(sib200: Path, tmp_path: Path) -> None:
    """The many-shot experiment (zero-shot documents included) and the zero-shot one, on SIB-200, for the four."""
    from gfun.configuration import parse_configs
    from gfun.experiments.many_shot import run_many_shot
    from gfun.experiments.runner import ExperimentSettings
    from gfun.experiments.zero_shot import run_zero_shot

    settings = ExperimentSettings(dataset="sib200", runs=1, meta_C=1.0, languages=["en", "fr", "it"],
                                  view_params={"kcca": {"n_components": 20, "rank": 40}}, view_cache="")
    configs = parse_configs("lri,clesa,kcca,dci")
    res = run_many_shot(settings, configs, tmp_path / "ms", plots=False, zero_shot_test=True)
    table = res["scores"]
    assert set(table["config"]) == {"lri", "clesa", "kcca", "dci"}
    avg = table[table["lang"] == "average"].set_index("config")["F1_micro"]
    assert (avg > 0.6).all(), avg
    zs = run_zero_shot(settings, configs, tmp_path / "zs", plots=False)["scores"]
    first = zs[(zs["iteration"] == 0) & (zs["lang"] == "it")].set_index("config")["F1_micro"]  # trained on en only
    assert first[["clesa", "kcca"]].gt(0.5).all() and first[["lri", "dci"]].isna().all(), first


def test_auto_collection_reads_the_given_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``parallel="auto"`` reads ``data_dir`` (the experiments' --data-dir), not only ``$GFUN_DATA/<dataset>``."""
    from gfun.datasets.sib200 import SIB200_LANGS, load_sib200
    from gfun.experiments.runner import ExperimentSettings, experiment_estimator

    folder = _write_sib200(tmp_path / "elsewhere" / "my-sib")  # not $GFUN_DATA/sib200
    monkeypatch.setenv("GFUN_DATA", str(tmp_path / "nowhere"))
    s = load_sib200(folder, ["en", "it", "fr"], train_langs=["en", "it"])
    assert resolve_parallel("auto", s.train).languages == ["en", "it"]  # fallback: the training sentences
    assert resolve_parallel("auto", s.train, folder).languages == sorted(SIB200_LANGS)
    model = CROSSLINGUAL["clesa"](classifier=LinearSVMs(C=1.0), random_state=0, data_dir=str(folder)).fit(s.train)
    assert "fr" in model.languages_  # the collection's languages: served without training documents
    settings = ExperimentSettings(dataset="sib200", data_dir=str(folder), runs=1, meta_C=1.0, view_cache="")
    assert experiment_estimator(settings, "kcca", 0).data_dir == str(folder)
    assert experiment_estimator(settings, "lri", 0).get_params().get("data_dir") is None
    given = {"clesa": {"data_dir": "/given"}}
    assert experiment_estimator(ExperimentSettings(dataset="sib200", data_dir=str(folder), view_params=given),
                                "clesa", 0).data_dir == "/given"
