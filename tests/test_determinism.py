"""Determinism: the same data, configuration and random_state give the same predictions in two processes.

One fit runs in a fresh Python process, the other in the test process itself (after whatever other
tests did there), with different ``PYTHONHASHSEED`` values (so an iteration over a set or dict of
strings that leaked into the result would show). Each writes its predictions, posteriors and decision
scores with ``numpy.save``; the files must be identical byte for byte. The configurations use
cross-validation (fold shuffling, C selection, Platt calibration), where the random state matters.

The same holds for any ``n_jobs``: fits with 1, 2 and 4 jobs (threads running liblinear and libsvm at the same
time) give the same decision scores, probabilities, saved arrays and ``gfun predict`` files.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.main import main as gfun_main
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling

SCRIPT = textwrap.dedent('''
    import sys
    from pathlib import Path

    import numpy as np

    from gfun.baselines.naive import NaiveClassifier
    from gfun.baselines.parts import LinearSVMs
    from gfun.datasets.demo import load_demo
    from gfun.funnelling.select import Select
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.funnelling.meta import default_meta

    def main(out):
        """Fit both models and save their outputs under ``out``."""
        train, test = load_demo()
        train, test = first(train, 40), first(test, 10)
        models = {
            "gfun": GeneralizedFunnelling(views="x", aggregation=Select(train_posteriors="cv"),
                                          view_params={"x": {"cv": 3}},
                                          meta=default_meta().set_params(C="cv", C_grid=(1.0, 10.0), cv=3),
                                          random_state=7),
            "naive": NaiveClassifier(classifier=LinearSVMs(C="cv", C_grid=(0.1, 1.0, 10.0), cv=3), random_state=7),
        }
        for name, est in models.items():
            est.fit(train)
            np.save(out / f"{name}-predict.npy", est.predict(test))
            np.save(out / f"{name}-decision.npy", est.decision_function(test))
            if hasattr(est, "predict_proba"):
                np.save(out / f"{name}-proba.npy", est.predict_proba(test))


    def first(corpus, n):
        idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in ("de", "en", "it")])
        return corpus.subset(np.sort(idx))

    if __name__ == "__main__":
        main(Path(sys.argv[1]))
''')


def _start(script: Path, out: Path, hash_seed: str) -> subprocess.Popen:
    out.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.Popen([sys.executable, str(script), str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One fit in a subprocess and, meanwhile, one in this process."""
    folder = tmp_path_factory.mktemp("determinism")
    script = folder / "fit.py"
    script.write_text(SCRIPT, encoding="utf-8")
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    proc = _start(script, folder / "a", seed)
    try:
        (folder / "b").mkdir()
        runpy.run_path(str(script), run_name="gfun_determinism")["main"](folder / "b")
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    return folder / "a", folder / "b"


@pytest.mark.parametrize("name", ["gfun-predict", "gfun-decision", "gfun-proba", "naive-predict", "naive-decision"])
def test_two_processes_give_byte_identical_predictions(runs: tuple[Path, Path], name: str) -> None:
    a, b = (run / f"{name}.npy" for run in runs)
    assert a.read_bytes() == b.read_bytes(), f"{name} differs between two fits with random_state=7"
    if name.endswith("predict"):
        pred = np.load(a)
        assert pred.any() and not pred.all(), "degenerate predictions would make the comparison vacuous"


# ------------------------------------------------------------------------------------------------ any n_jobs
def _first(corpus: MultilingualCorpus, n: int) -> MultilingualCorpus:
    return corpus.subset(np.sort(np.concatenate([ix[:n] for ix in corpus.by_language().values()])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """The demo's five languages: 100 training documents each (30 classes), 40 test documents each."""
    train, test = load_demo()
    return _first(train, 100), _first(test, 40)


def _saved_arrays(model: GeneralizedFunnelling, folder: Path) -> dict[str, np.ndarray]:
    model.save(folder)
    (arrays,) = folder.glob("v-*/arrays.npz")
    with np.load(arrays) as saved:
        return {name: saved[name] for name in saved.files}


def _outputs(model: GeneralizedFunnelling, test: MultilingualCorpus, folder: Path) -> dict[str, np.ndarray]:
    return {"decision_function": model.decision_function(test), "predict_proba": model.predict_proba(test),
            **{f"saved {name}": array for name, array in _saved_arrays(model, folder).items()}}


def _assert_identical(outputs: list[dict[str, np.ndarray]], what: str) -> None:
    first = outputs[0]
    for other in outputs[1:]:
        assert sorted(other) == sorted(first), what
        for name, array in first.items():
            assert other[name].dtype == array.dtype and other[name].shape == array.shape, f"{what}: {name}"
            if other[name].tobytes() != array.tobytes():
                gap = np.abs(other[name].astype(np.float64) - array.astype(np.float64)).max()
                pytest.fail(f"{what}: {name} differs (largest difference {gap:.3g})")


@pytest.mark.parametrize("views", ["x", "xp", pytest.param("xm", marks=pytest.mark.torch)])
def test_fits_with_any_n_jobs_are_identical(demo, tmp_path: Path, views: str) -> None:
    """n_jobs changes the speed, never the model: 1 and 4 jobs give the same arrays, byte for byte."""
    train, test = demo
    view_params = None
    if "m" in views:  # sub-word word vectors (as e5-subword's) of a tiny local encoder
        from tests.neural_fixtures import tiny_bert_folder

        encoder = tiny_bert_folder(tmp_path / "encoder", train.texts)
        view_params = {"m": {"source": {"spec": f"encoder-subword:{encoder}", "cache": False}}}
    outputs = [_outputs(GeneralizedFunnelling(views=views, view_params=view_params, n_jobs=n_jobs,
                                              random_state=3).fit(train), test, tmp_path / f"{i}-jobs-{n_jobs}")
               for i, n_jobs in enumerate((1, 4))]
    assert 0 < (outputs[0]["predict_proba"] > 0.5).mean() < 0.5, "degenerate predictions make the check vacuous"
    _assert_identical(outputs, f"gFun-{views.upper()} fitted with n_jobs 1 and 4")


def test_gfun_train_with_any_n_jobs_gives_byte_identical_predictions(demo, tmp_path: Path) -> None:
    """Two `gfun train --n-jobs 2` fits (and one with --n-jobs 1) give the same `gfun predict` file."""
    train, test = demo
    train.to_jsonl(tmp_path / "train.jsonl")
    test.to_jsonl(tmp_path / "test.jsonl")
    files = []
    for i, n_jobs in enumerate((1, 2, 2)):
        model, out = tmp_path / f"model-{i}", tmp_path / f"predictions-{i}.jsonl"
        assert gfun_main(["-q", "train", "--train", str(tmp_path / "train.jsonl"), "--model", str(model),
                          "--views", "x", "--n-jobs", str(n_jobs), "--seed", "0"]) == 0
        assert gfun_main(["-q", "predict", "--model", str(model), "--input", str(tmp_path / "test.jsonl"),
                          "--output", str(out)]) == 0
        files.append(out.read_bytes())
    assert files[0] and files[1] == files[0] and files[2] == files[0], "gfun predict differs between fits"
