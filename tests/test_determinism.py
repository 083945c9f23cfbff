"""Determinism: the same data, configuration and random_state give the same predictions in two processes.

One fit runs in a fresh Python process, the other in the test process itself (after whatever other
tests did there), with different ``PYTHONHASHSEED`` values (so an iteration over a set or dict of
strings that leaked into the result would show). Each writes its predictions, posteriors and decision
scores with ``numpy.save``; the files must be identical byte for byte. The configurations use
cross-validation (fold shuffling, C selection, Platt calibration), where the random state matters.
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

SCRIPT = textwrap.dedent('''
    import sys
    from pathlib import Path

    import numpy as np

    from gfun.baselines.naive import NaiveClassifier
    from gfun.datasets.demo import load_demo
    from gfun.funnelling.aggregation import Select
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
            "naive": NaiveClassifier(C="cv", C_grid=(0.1, 1.0, 10.0), cv=3, random_state=7),
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
