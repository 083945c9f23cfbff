"""Partial fine-tuning of the B view on a tiny 4-layer BERT: the cached frozen pass, which weights train, saved
models that refer to their base encoder, presets by device."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gfun.views.transformer import TransformerView
from tests.neural_fixtures import single_torch_thread, tiny_bert_folder, train_test_texts

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.torch

LANGS = ["de", "en", "it"]
#: top layer (of 4) and output layer trained; a learning rate that moves a random tiny model; float32 on every CPU
PARTIAL = {"preset": "cpu", "trainable_layers": 1, "max_epochs": 2, "patience": 2, "lr": 1e-2, "head_lr": 1e-2,
           "max_length": 48, "batch_size": 8, "random_state": 0, "device": "cpu", "eval_batch_size": 7,
           "quantize": False, "amp": False}


one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


@pytest.fixture(scope="module")
def data() -> dict:
    return train_test_texts(LANGS, 16, 5)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, data) -> Path:
    return tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert4"), data["texts"] + data["test_texts"], layers=4)


@pytest.fixture(scope="module")
def fitted(model_dir, data):
    view = TransformerView(model=str(model_dir), **PARTIAL)
    return view, view.fit_transform(data["texts"], data["langs"], data["Y"])


def _base(model_dir):
    from gfun.encoders.resolver import load_encoder

    return load_encoder(str(model_dir))[0]


def test_frozen_pass_matches_a_straight_forward_pass(model_dir, data):
    from gfun.encoders.frozen import FrozenPass, encoder_layers, pad_ids, run_layers
    from gfun.encoders.resolver import load_encoder

    encoder, tokenizer = load_encoder(str(model_dir))
    ids = [np.asarray(tokenizer(t, truncation=True, max_length=48)["input_ids"]) for t in data["texts"]]
    frozen = FrozenPass(encoder, 3, pad_id=tokenizer.pad_token_id, device=torch.device("cpu"), batch_size=5)
    states = frozen.states(ids)
    assert [s.shape for s in states] == [(len(x), 32) for x in ids] and states[0].dtype == np.float16
    # views of one buffer, in document order (not one heap allocation per document)
    assert all(s.base is states[0].base for s in states)
    assert states[0].base.shape == (sum(len(x) for x in ids), 32)
    assert np.array_equal(np.concatenate(states), states[0].base)
    # the top layer on the cached (float16, unpadded) states gives the encoder's own last layer, document by document
    top = list(encoder_layers(encoder))[3:]
    for i in (0, 5, 11):
        input_ids, mask = pad_ids([ids[i]], tokenizer.pad_token_id, "cpu")
        with torch.no_grad():
            expected = encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state[0].numpy()
            h = torch.from_numpy(states[i].astype(np.float32))[None]
            got = run_layers(encoder, top, h, mask)[0].numpy()
        np.testing.assert_allclose(got, expected, atol=2e-2)


def test_only_the_top_layers_and_the_head_train(model_dir, fitted):
    view, _ = fitted
    base = dict(_base(model_dir).named_parameters())
    changed = {n for n, p in view.tuner_.net_.encoder.named_parameters() if not torch.equal(p, base[n])}
    assert changed and all(n.startswith("encoder.layer.3.") for n in changed), sorted(changed)[:5]
    assert view.tuner_.trainable_layers_ == 1


def test_cached_training_vectors_equal_test_time_vectors(fitted, data):
    view, Z = fitted
    assert Z.shape == (len(data["texts"]), 32) and np.isfinite(Z).all()
    # training vectors came from the cached frozen pass, transform runs it again: the same numbers
    np.testing.assert_allclose(view.transform(data["texts"], data["langs"]), Z, atol=1e-2)


def test_frozen_pass_disk_cache_is_shared(model_dir, data, tmp_path):
    from gfun.baselines.transformer import FineTunedTransformerClassifier

    params = {**PARTIAL, "frozen_cache": str(tmp_path), "max_epochs": 1}
    view = TransformerView(model=str(model_dir), **params)
    Z = view.fit_transform(data["texts"], data["langs"], data["Y"])
    files = sorted((tmp_path / "frozen-pass").glob("*.npz"))
    assert len(files) == 1
    clf = FineTunedTransformerClassifier(model=str(model_dir), **params)
    clf.fit(data["texts"], data["Y"], langs=data["langs"])
    assert sorted((tmp_path / "frozen-pass").glob("*.npz")) == files  # read, not computed again
    np.testing.assert_allclose(clf.transform(data["texts"], langs=data["langs"]), Z, atol=1e-5)


def test_k0_is_the_frozen_encoders_pooled_vector(model_dir, data):
    view = TransformerView(model=str(model_dir), **{**PARTIAL, "trainable_layers": 0, "pooling": "mean"})
    Z = view.fit_transform(data["texts"], data["langs"], data["Y"])
    from gfun.encoders.pooling import encode_texts
    from gfun.encoders.resolver import load_encoder

    encoder, tokenizer = load_encoder(str(model_dir))
    ref = encode_texts(encoder, tokenizer, data["texts"], batch_size=4, max_length=48, normalize=False)
    np.testing.assert_allclose(Z, ref, atol=2e-2)


def test_saved_state_refers_to_the_base_encoder(model_dir, fitted, data, tmp_path):
    view, _ = fitted
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))
    tuner_meta = meta["tuner"]
    assert "base" in tuner_meta and len(tuner_meta["base"]["sha256"]) == 64
    assert not any("layer.0." in k or "embeddings" in k for k in arrays) and "tuner/tokenizer_json" not in arrays
    view.set_params(self_contained=True)
    try:
        full_meta, full_arrays = view.get_state()
    finally:
        view.set_params(self_contained=False)
    size = sum(a.nbytes for a in arrays.values())
    assert size < 0.5 * sum(a.nbytes for a in full_arrays.values())
    loaded = TransformerView.from_state(meta, arrays)
    np.testing.assert_array_equal(loaded.transform(data["test_texts"], data["test_langs"]),
                                  view.transform(data["test_texts"], data["test_langs"]))
    # another encoder under the same folder: refused with a clear error
    other = tiny_bert_folder(tmp_path / "other", data["texts"], layers=4)
    meta2 = json.loads(json.dumps(meta))
    meta2["tuner"]["base"]["model"] = str(other)
    with pytest.raises(ValueError, match="differ from the ones it was trained with"):
        TransformerView.from_state(meta2, arrays)


def test_default_preset_follows_the_device(monkeypatch):
    from gfun.neural.training import device_preset
    from gfun.views.recurrent import RecurrentView

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device_preset("auto") == "cpu" and TransformerView().training_settings()["trainable_layers"] is not None
    assert RecurrentView().training_settings()["max_epochs"] == 30
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device_preset("auto") == "gpu" and device_preset("auto", "cpu") == "cpu"
    assert TransformerView().training_settings()["max_length"] == 256
    assert device_preset("paper") == "paper"


def test_cpu_preset_quantises_on_a_cpu_only(monkeypatch):
    """The ``cpu`` preset's int8 frozen layers run on CPUs only: on a CUDA device the preset drops them (it failed
    there before); asked for explicitly they stay, and the fit says why it cannot run."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert TransformerView(preset="cpu").training_settings()["quantize"] is False
    assert TransformerView(preset="cpu", device="cpu").training_settings()["quantize"] is True
    assert TransformerView(preset="cpu", quantize=True).training_settings()["quantize"] is True
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert TransformerView(preset="cpu").training_settings()["quantize"] is True


def test_a_network_saved_for_a_cuda_device_loads_on_a_machine_without_one(fitted, data, monkeypatch, caplog):
    """A model trained on a GPU (``device="cuda"`` in its state) runs on the CPU where there is no CUDA device, with a
    warning; it was refused as a damaged file (torch could not move the network to the missing device)."""
    import logging

    view, _ = fitted
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))
    meta["params"]["device"] = "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with caplog.at_level(logging.WARNING, logger="gfun.neural.training"):
        loaded = TransformerView.from_state(meta, arrays)
    assert loaded.tuner_.device_.type == "cpu"
    assert "saved to run on cuda, which this machine does not have: running on the CPU" in caplog.text
    np.testing.assert_array_equal(loaded.transform(data["test_texts"], data["test_langs"]),
                                  view.transform(data["test_texts"], data["test_langs"]))


def test_a_network_with_an_int8_frozen_part_loads_on_the_cpu_of_a_gpu_machine(model_dir, data, monkeypatch):
    """Trained on a CPU with the ``cpu`` preset's int8 frozen layers and loaded where ``device="auto"`` means CUDA:
    the network runs on the CPU (the int8 kernels exist there only; loading failed before), as it was fitted."""
    q = TransformerView(model=str(model_dir), **{**PARTIAL, "quantize": True, "max_epochs": 1})
    q.fit_transform(data["texts"], data["langs"], data["Y"])
    meta, arrays = q.get_state()
    meta = json.loads(json.dumps(meta))
    meta["params"]["device"] = "auto"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    loaded = TransformerView.from_state(meta, arrays)
    assert loaded.tuner_.device_.type == "cpu"
    np.testing.assert_array_equal(loaded.transform(data["test_texts"], data["test_langs"]),
                                  q.transform(data["test_texts"], data["test_langs"]))


def test_int8_frozen_part_stays_close_to_float32(model_dir, fitted, data):
    view, Z = fitted
    q = TransformerView(model=str(model_dir), **{**PARTIAL, "quantize": True})
    Zq = q.fit_transform(data["texts"], data["langs"], data["Y"])
    cos = np.sum(Z * Zq, 1) / (np.linalg.norm(Z, axis=1) * np.linalg.norm(Zq, axis=1))
    assert cos.min() > 0.9 and not np.array_equal(Z, Zq)  # quantised, yet close
    # int8 activations are scaled per batch: a document's vector moves a little with its batch companions
    np.testing.assert_allclose(q.transform(data["texts"][:3], data["langs"][:3]), Zq[:3], atol=5e-2)


@pytest.mark.parametrize("quantize", [False, True])
def test_frozen_pass_on_a_dask_cluster_gives_the_local_fit(model_dir, data, quantize):
    """Under the Dask backend the frozen pass runs on the workers (each loads the encoder from its spec), in jobs
    of the local pass's batches: the fine-tuned view is the local one, bit for bit, int8 batches included."""
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    params = {**PARTIAL, "quantize": quantize, "eval_batch_size": 5}  # 48 documents: 10 batches, 3 jobs
    local = TransformerView(model=str(model_dir), **params)
    Z = local.fit_transform(data["texts"], data["langs"], data["Y"])
    remote = TransformerView(model=str(model_dir), **params)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream, parallel_config(backend="dask"):
            Zr = remote.fit_transform(data["texts"], data["langs"], data["Y"])
    assert any("_frozen_batches" in task["key"] for task in stream.data)
    assert np.array_equal(Zr, Z)
    assert [h["train_loss"] for h in remote.history_] == [h["train_loss"] for h in local.history_]
    assert np.array_equal(remote.transform(data["test_texts"], data["test_langs"]),
                          local.transform(data["test_texts"], data["test_langs"]))


def test_cli_saves_a_small_model_that_predicts_the_same(model_dir, data, tmp_path):
    from gfun.cli.main import main
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.persistence.loading import load_model

    labels = [[f"c{j}" for j in np.flatnonzero(row)] for row in data["Y"]]
    train = tmp_path / "train.jsonl"
    MultilingualCorpus([str(i) for i in range(len(labels))], list(data["langs"]), list(data["texts"]),
                       labels).to_jsonl(train)

    def size(path: Path) -> int:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())

    base = ["-q", "train", "--train", str(train), "--views", "xb", "--encoder", str(model_dir), "--device", "cpu",
            "--trainable-layers", "1", "--meta-C", "1"]
    assert main([*base, "--model", str(tmp_path / "small")]) == 0
    assert main([*base, "--model", str(tmp_path / "full"), "--self-contained"]) == 0
    assert main([*base, "--model", str(tmp_path / "half"), "--save-dtype", "float16"]) == 0
    assert size(tmp_path / "small") < size(tmp_path / "full")
    assert size(tmp_path / "half") < size(tmp_path / "small")
    small, full = load_model(tmp_path / "small"), load_model(tmp_path / "full")
    b = next(v for v in small.views_ if v.letter == "b")
    assert b.preset == "auto" and b.tuner_.trainable_layers_ == 1  # no preset named: the device's (cpu here)
    np.testing.assert_array_equal(small.decision_function(data["test_texts"], langs=data["test_langs"]),
                                  full.decision_function(data["test_texts"], langs=data["test_langs"]))


def test_experiment_configs_share_the_frozen_pass(tmp_path):
    from gfun.configuration import build_estimator, parse_config

    params = {"b": {"model": "m", "trainable_layers": 1}}
    bert = build_estimator(parse_config("bert"), view_params=params, memory=str(tmp_path))
    xmb = build_estimator(parse_config("xmb"), view_params=params, memory=str(tmp_path))
    assert bert.frozen_cache == str(tmp_path) and xmb.view_params["b"]["frozen_cache"] == str(tmp_path)
    assert params == {"b": {"model": "m", "trainable_layers": 1}}  # the caller's dict is left alone
    assert build_estimator(parse_config("bert"), view_params=params).frozen_cache is None


def test_head_refit_changes_the_classifier_not_the_vectors(model_dir, data):
    from gfun.neural.training import _bce

    plain = TransformerView(model=str(model_dir), **{**PARTIAL, "head_epochs": 0})
    refit = TransformerView(model=str(model_dir), **{**PARTIAL, "head_epochs": 20})
    Z0 = plain.fit_transform(data["texts"], data["langs"], data["Y"])
    Z1 = refit.fit_transform(data["texts"], data["langs"], data["Y"])
    np.testing.assert_allclose(Z1, Z0, atol=1e-6)
    L0, L1 = plain.tuner_.logits(data["texts"]), refit.tuner_.logits(data["texts"])
    assert _bce(L1, data["Y"]) < _bce(L0, data["Y"])  # a better fit of the training labels


def test_bert_reuses_the_b_views_fine_tuning(model_dir, data, tmp_path, monkeypatch):
    from gfun.baselines.transformer import FineTunedTransformerClassifier
    from gfun.neural.fine_tuning import TransformerFineTuner

    params = {**PARTIAL, "head_epochs": 5, "frozen_cache": str(tmp_path)}
    alone = FineTunedTransformerClassifier(model=str(model_dir), **{**params, "frozen_cache": None})
    alone.fit(data["texts"], data["Y"], langs=data["langs"])  # the reference: fine-tuned on its own
    view = TransformerView(model=str(model_dir), **params)
    Z = view.fit_transform(data["texts"], data["langs"], data["Y"])
    assert len(list((tmp_path / "fine-tuned").glob("*.joblib"))) == 1

    def refuse(*args, **kw):
        raise AssertionError("fine-tuned again")

    monkeypatch.setattr(TransformerFineTuner, "fit", refuse)
    bert = FineTunedTransformerClassifier(model=str(model_dir), **{**params, "progress": True})
    bert.fit(data["texts"], data["Y"], langs=data["langs"])  # the B view's network, not fine-tuned again
    test = {"X": data["test_texts"], "langs": data["test_langs"]}
    np.testing.assert_allclose(bert.decision_function(**test), alone.decision_function(**test), atol=1e-5)
    np.testing.assert_allclose(bert.transform(data["texts"], langs=data["langs"]), Z, atol=1e-5)
    assert [h["train_loss"] for h in bert.history_] == [h["train_loss"] for h in alone.history_]
    again = TransformerView(model=str(model_dir), **params)  # and a B view reuses it too
    np.testing.assert_array_equal(again.fit_transform(data["texts"], data["langs"], data["Y"]), Z)
    # another seed, other documents or no seed: fine-tuned anew
    for other, texts, Y in (({**params, "random_state": 1}, data["texts"], data["Y"]),
                            (params, data["texts"][1:], data["Y"][1:]),
                            ({**params, "random_state": None}, data["texts"], data["Y"])):
        with pytest.raises(AssertionError, match="fine-tuned again"):
            clf = FineTunedTransformerClassifier(model=str(model_dir), **other)
            clf.fit(texts, Y, langs=data["langs"][-len(texts):])


def test_progress_bars_only_on_a_terminal(model_dir, data, capsys, caplog, monkeypatch):
    import io
    import logging
    import sys

    from gfun.core.progress import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    items = [1, 2, 3]
    assert progress_bar(items, enabled=True, desc="phase") is items  # stderr captured: not a terminal
    with monkeypatch.context() as m:
        m.setattr(sys, "stderr", Terminal())
        bar = progress_bar(items, enabled=True, desc="phase")
        assert bar is not items and list(bar) == items and "phase" in sys.stderr.getvalue()
        assert progress_bar(items, enabled=False, desc="phase") is items
    # a B view asked for bars, its stderr redirected: no bar at all, one log line per phase instead
    with caplog.at_level(logging.INFO):
        view = TransformerView(model=str(model_dir), **{**PARTIAL, "progress": True, "eval_batch_size": 4})
        view.fit_transform(data["texts"], data["langs"], data["Y"])
        view.transform(data["test_texts"], data["test_langs"])
    err = capsys.readouterr().err
    assert "it/s" not in err and "%|" not in err, err[-300:]
    messages = [r.getMessage() for r in caplog.records]
    assert sum("B frozen pass (embeddings + 3 layers): 48 documents in" in m for m in messages) == 1
    assert sum("epoch" in m and "/2" in m for m in messages) == 2
    # the epoch lines say how long the rest takes at most (early stopping may end sooner)
    assert "; at most about" in next(m for m in messages if "epoch 1/2" in m)
    assert "left" not in next(m for m in messages if "epoch 2/2" in m)
    assert sum(m.startswith("B extraction: ") for m in messages) == 2  # training vectors, test vectors


def test_fit_keeps_one_tokenizer_and_hashes_the_base_only_when_saving(model_dir, data, monkeypatch):
    """Memory of a fit: the loaded backend tokenizer itself is used (no ~280 MB copy of a 250k-piece
    vocabulary) and released once the training documents are tokenised (built again from its JSON when texts
    come), and the frozen weights are hashed when a save needs it, not during training (hashing reads the whole
    memory-mapped embedding table)."""
    import gfun.encoders.frozen as frozen_module
    import gfun.encoders.resolver

    loaded, hashed = [], []
    real_load, real_hash = gfun.encoders.resolver.load_encoder, frozen_module.frozen_fingerprint
    monkeypatch.setattr(gfun.encoders.resolver, "load_encoder",
                        lambda *a, **k: loaded.append(real_load(*a, **k)) or loaded[-1])
    monkeypatch.setattr(frozen_module, "frozen_fingerprint", lambda *a: hashed.append(a) or real_hash(*a))
    view = TransformerView(model=str(model_dir), **{**PARTIAL, "max_epochs": 1})
    view.fit_transform(data["texts"], data["langs"], data["Y"])
    tuner = view.tuner_
    assert len(loaded) == 1 and tuner.tokenizer_ is None
    view.transform(data["test_texts"], data["test_langs"])
    backend = loaded[0][1].backend_tokenizer
    assert tuner.tokenizer_ is not None and tuner.tokenizer_ is not backend
    assert [e.ids for e in tuner.tokenizer_.encode_batch(data["test_texts"])] == [
        e.ids for e in backend.encode_batch(data["test_texts"])]
    assert not hashed and tuner.base_fingerprint_ is None
    meta, _ = view.get_state()
    assert len(hashed) == 1
    assert meta["tuner"]["base"]["sha256"] == real_hash(real_load(str(model_dir))[0], meta["tuner"]["base"]["frozen"])


def test_frozen_pass_reuses_freed_memory(model_dir, data, monkeypatch):
    """The frozen pass runs its batches (longest first) with freed blocks kept for reuse, and gives the states it
    gives without."""
    import contextlib

    import gfun.core.memory
    from gfun.encoders.frozen import FrozenPass
    from gfun.encoders.resolver import load_encoder

    encoder, tokenizer = load_encoder(str(model_dir))
    ids = [np.asarray(tokenizer(t, truncation=True, max_length=48)["input_ids"]) for t in data["texts"]]
    frozen = FrozenPass(encoder, 3, pad_id=tokenizer.pad_token_id, device=torch.device("cpu"), batch_size=5)
    widths = []
    real_forward = frozen.forward
    monkeypatch.setattr(frozen, "forward", lambda input_ids, mask: widths.append(
        (input_ids.shape[1], entered[-1])) or real_forward(input_ids, mask))
    entered = [False]

    @contextlib.contextmanager
    def recorded():
        entered.append(True)
        yield True
        entered.append(False)

    monkeypatch.setattr(gfun.core.memory, "freed_blocks_reused", recorded)
    states = frozen.states(ids)
    assert widths and all(inside for _, inside in widths) and entered[-1] is False
    assert [w for w, _ in widths] == sorted((w for w, _ in widths), reverse=True)
    monkeypatch.setattr(gfun.core.memory, "freed_blocks_reused", contextlib.nullcontext)
    assert all(np.array_equal(a, b) for a, b in zip(states, frozen.states(ids), strict=True))


def test_bfloat16_autocast_covers_the_trainable_layers_above_an_int8_frozen_part(model_dir, data):
    """``amp=True`` on a CPU with the int8 frozen part: the int8 layers run in float32 (their kernels take no
    bfloat16), the trainable top layer and the output layer in bfloat16; the training vectors are what the
    fitted view gives (within int8's dependence on the batch: the training documents' frozen pass and their
    extraction batch them differently)."""
    params = {**PARTIAL, "quantize": True, "max_epochs": 1}
    plain = TransformerView(model=str(model_dir), **params)
    Z_plain = plain.fit_transform(data["texts"], data["langs"], data["Y"])
    view = TransformerView(model=str(model_dir), **{**params, "amp": True})
    Z = view.fit_transform(data["texts"], data["langs"], data["Y"])
    assert Z.dtype == np.float32 and np.isfinite(Z).all() and not np.array_equal(Z, Z_plain)
    np.testing.assert_allclose(Z, Z_plain, atol=0.1)  # bfloat16 rounding, not another network
    np.testing.assert_allclose(view.transform(data["texts"], data["langs"]), Z, atol=1e-2)


@pytest.mark.parametrize("bfloat16_cpu", [True, False])
def test_amp_auto_follows_the_cpu_and_is_saved_with_the_network(model_dir, data, monkeypatch, bfloat16_cpu):
    """``amp="auto"``: bfloat16 autocast on a CPU with bfloat16 instructions, float32 on one without; the choice is
    saved, so that the loaded network extracts as the fitted one did, on any CPU. A state saved before the choice
    was recorded reads ``"auto"`` as it did then (CUDA only: float32 on a CPU)."""
    import gfun.neural.fine_tuning as fine_tuning

    monkeypatch.setattr(fine_tuning, "cpu_has_bfloat16", lambda: bfloat16_cpu)
    view = TransformerView(model=str(model_dir), **{**PARTIAL, "amp": "auto", "quantize": True, "max_epochs": 1})
    view.fit_transform(data["texts"], data["langs"], data["Y"])
    assert view.tuner_.amp_ is bfloat16_cpu
    Z = view.transform(data["test_texts"], data["test_langs"])
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))
    assert meta["tuner"]["amp"] is bfloat16_cpu
    monkeypatch.setattr(fine_tuning, "cpu_has_bfloat16", lambda: not bfloat16_cpu)  # loaded on the other kind
    loaded = TransformerView.from_state(meta, arrays)
    assert loaded.tuner_.amp_ is bfloat16_cpu
    np.testing.assert_array_equal(loaded.transform(data["test_texts"], data["test_langs"]), Z)
    del meta["tuner"]["amp"]
    assert TransformerView.from_state(meta, arrays).tuner_.amp_ is False
