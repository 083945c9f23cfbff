"""gfun.svm.kernel_validation: C, thresholds and Platt sigmoids of RBFSVMOvR from held-out decision scores."""

from __future__ import annotations

import numpy as np

from gfun.svm.kernel import RBFSVMOvR


def test_C_per_class_ties_to_the_smaller_C_and_global() -> None:
    Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    right, wrong = np.where(Y, 1.0, -1.0), np.where(Y, -1.0, 1.0)
    oof = np.stack([wrong, right, right])  # C index 1 and 2 tie: the smaller
    scores, best = RBFSVMOvR(C="cv")._choose_C(oof, Y)
    assert scores.shape == (3, 2) and best.tolist() == [1, 1]
    mixed = np.stack([np.column_stack([right[:, 0], wrong[:, 1]]), np.column_stack([wrong[:, 0], right[:, 1]])])
    assert RBFSVMOvR(C="cv")._choose_C(mixed, Y)[1].tolist() == [0, 1]
    assert RBFSVMOvR(C="cv", C_selection="global")._choose_C(mixed, Y)[1].tolist() == [0, 0]


def test_sigmoids_without_held_out_scores_are_smoothed_priors() -> None:
    model = RBFSVMOvR(probability=True)
    model.oof_decision_ = None
    Y = np.array([[1, 0], [0, 0], [0, 0]], dtype=bool)
    model._set_platt(Y)
    np.testing.assert_allclose(model.platt_B_, np.log([3 / 2, 4 / 1]))
    model.probability = False
    model._set_platt(Y)
    assert model.platt_A_ is None and model.platt_B_ is None


def test_anchored_sigmoids_put_one_half_at_decision_zero() -> None:
    rng = np.random.RandomState(0)
    Y = rng.rand(50, 2) < 0.5
    model = RBFSVMOvR(probability=True)
    model.oof_decision_ = np.where(Y, 1.0, -1.0) + rng.randn(50, 2) * 0.5
    model._set_platt(Y)
    model.anchor_sigmoids(Y)
    np.testing.assert_array_equal(model.platt_B_, 0.0)
