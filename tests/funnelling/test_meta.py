"""gfun.funnelling.meta: the meta-classifier's trainer and the defaults of ``meta=None`` and ``mapper=None``."""

from __future__ import annotations

import numpy as np

from gfun.funnelling.meta import MetaTrainer, default_mapper, default_meta


def test_defaults() -> None:
    meta, mapper = default_meta(), default_mapper()
    assert (meta.C, meta.threshold) == (1.0, "auto")
    assert (mapper.C, mapper.probability, mapper.support_dtype) == (1.0, True, "float32")


def test_clones_take_the_trainers_settings_and_resolve_the_threshold() -> None:
    for validation, threshold in (("oof", "validated"), ("same", "zero")):
        trainer = MetaTrainer(default_meta(), validation=validation, groups=None, n_jobs=2, random_state=3,
                              verbose=False)
        meta = trainer.clone(4, tol=0.1)
        assert (meta.threshold, meta.cv, meta.n_jobs, meta.random_state, meta.tol) == (threshold, 4, 2, 3, 0.1)
        assert trainer.template.threshold == "auto"  # the template is not modified
    fixed = MetaTrainer(default_meta().set_params(threshold="f1"), validation="oof", groups=None, n_jobs=None,
                        random_state=0, verbose=False)
    assert fixed.clone(None).threshold == "f1" and fixed.clone(None).cv == 5


def test_scaled_z_scores_both_inputs_with_the_training_statistics() -> None:
    rng = np.random.RandomState(0)
    Z, Zval = rng.rand(30, 4) * 5 + 2, rng.rand(30, 4)
    scaler, Zs, Zvs = MetaTrainer.scaled(Z, Zval, True)
    np.testing.assert_allclose(Zs.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(Zvs, scaler.transform(Zval))
    assert MetaTrainer.scaled(Z, None, False) == (None, Z, None)


def test_fit_trains_a_meta_classifier() -> None:
    rng = np.random.RandomState(0)
    Y = (rng.rand(60, 2) < 0.4).astype(int)
    Z = Y + rng.rand(60, 2) * 0.5
    trainer = MetaTrainer(default_meta(), validation="same", groups=None, n_jobs=1, random_state=0, verbose=False)
    meta, scaler = trainer.fit(Z, None, Y, zscore=True, cv=3)
    assert scaler is not None and meta.cv == 3 and (meta.predict(scaler.transform(Z)) == Y).mean() > 0.9
