"""The B view and the fine-tuned transformer baselines on a CUDA device, on a tiny BERT.

Skipped where torch sees no CUDA device (CI has none). On a GPU machine::

    pytest -m torch tests/neural/test_cuda.py

What a user of a GPU relies on: the fit runs on the device (bfloat16 autocast where the device supports it), a
model trained there loads and predicts on a machine without one with the same decisions (up to the precision of
the two devices' arithmetic), and two fits with the same seed give the same bits once torch is asked for
deterministic algorithms (what the user guide's "Repeatable fits" promises).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.neural_fixtures import tiny_bert_folder, train_test_texts

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [pytest.mark.torch,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")]

ROOT = Path(__file__).resolve().parents[2]
LANGS = ["de", "en", "it"]
#: full fine-tuning of the tiny model for a few epochs, on the CUDA device
TINY_CUDA = {"preset": "gpu", "max_epochs": 3, "patience": 2, "lr": 1e-3, "max_length": 48, "batch_size": 8,
             "random_state": 0, "device": "cuda", "val_size": 0.2, "amp": "auto"}

#: Run in a fresh interpreter: fit the B view (``fit``) and save its training vectors, or load a saved model and
#: save its decision scores (``load``). Arguments: mode, model folder (tiny BERT or saved model), output .npy.
CHILD = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[4])
from tests.synthetic_vectors import make_corpus
mode, model, out = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "fit":
    import json, torch
    from gfun.views.transformer import TransformerView
    torch.use_deterministic_algorithms(True)
    texts, langs, Y = make_corpus(["de", "en", "it"], 20, seed=0)
    view = TransformerView(model=model, **json.loads(sys.argv[5]))
    np.save(out, view.fit_transform(texts, langs, Y))
else:
    import gfun
    texts, langs, _ = make_corpus(["de", "en", "it"], 6, seed=1)
    np.save(out, gfun.load_model(model).decision_function(texts, langs=list(langs)))
"""


def run_child(*args: str, env: dict[str, str] | None = None) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, *args[:3], str(ROOT), *args[3:]], capture_output=True,
                         text=True, env={**os.environ, **(env or {})}, check=False, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.fixture(scope="module")
def data() -> dict:
    return train_test_texts(LANGS, 20, 6)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, data) -> Path:
    return tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert"), data["texts"] + data["test_texts"])


@pytest.mark.parametrize("preset", ["gpu", "cpu"])
def test_b_view_fits_on_the_cuda_device(model_dir, data, preset):
    from gfun.views.transformer import TransformerView

    # "cpu": partial fine-tuning over a cached frozen pass, which runs on the device too
    view = TransformerView(model=str(model_dir), **{**TINY_CUDA, "preset": preset, "trainable_layers": 1})
    Z = view.fit_transform(data["texts"], data["langs"], data["Y"])
    assert Z.shape == (len(data["texts"]), 32) and Z.dtype == np.float32 and np.isfinite(Z).all()
    tuner = view.tuner_
    assert tuner.device_.type == "cuda"
    assert all(p.device.type == "cuda" for p in tuner.net_.parameters())
    assert tuner.amp_ == torch.cuda.is_bf16_supported()  # "auto": bfloat16 autocast where the device has it
    np.testing.assert_allclose(view.transform(data["texts"][:7], data["langs"][:7]), Z[:7], atol=1e-2)


def test_bert_and_bert_tuned_fit_on_the_cuda_device(model_dir, data):
    from gfun.baselines.transformer import FineTunedTransformerClassifier, TunedTransformerClassifier

    for cls in (FineTunedTransformerClassifier, TunedTransformerClassifier):
        clf = cls(model=str(model_dir), **TINY_CUDA).fit(data["texts"], data["Y"], langs=data["langs"])
        assert clf.tuner_.device_.type == "cuda"
        D = clf.decision_function(data["test_texts"], langs=data["test_langs"])
        assert D.shape == (len(data["test_texts"]), data["Y"].shape[1]) and np.isfinite(D).all()
        np.testing.assert_array_equal(clf.predict(data["test_texts"], langs=data["test_langs"]), D > 0)
    assert np.isfinite(clf.thresholds_).all()


def test_model_trained_on_cuda_predicts_the_same_without_one(model_dir, data, tmp_path):
    import gfun

    model = gfun.GeneralizedFunnelling(views="b", view_params={"b": {"model": str(model_dir), **TINY_CUDA}},
                                       aggregation="mean", random_state=0)
    model.fit(data["texts"], data["Y"], langs=data["langs"])
    on_gpu = model.decision_function(data["test_texts"], langs=list(data["test_langs"]))
    model.save(tmp_path / "model")
    run_child("load", str(tmp_path / "model"), str(tmp_path / "cpu.npy"), env={"CUDA_VISIBLE_DEVICES": ""})
    on_cpu = np.load(tmp_path / "cpu.npy")
    assert on_cpu.shape == on_gpu.shape
    # the same network in bfloat16 (GPU) or the CPU's precision: close scores, the same decisions bar near-ties
    assert np.abs(on_cpu - on_gpu).max() < 0.1
    assert ((on_cpu > 0) == (on_gpu > 0)).mean() >= 0.97


def test_cuda_fits_repeat_bit_for_bit_with_deterministic_algorithms(model_dir, tmp_path):
    params = json.dumps(TINY_CUDA)
    env = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
    for name in ("a", "b"):
        run_child("fit", str(model_dir), str(tmp_path / f"{name}.npy"), params, env=env)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
