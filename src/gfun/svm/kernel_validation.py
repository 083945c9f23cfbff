"""The validation concern of :class:`gfun.svm.kernel.RBFSVMOvR`: what its held-out decision scores decide.

Whichever path produced them (exact, :mod:`gfun.svm.kernel_exact`; Nystroem, :mod:`gfun.svm.nystroem`), the
out-of-fold decision scores of every C choose the C of each class (:meth:`ValidationMixin._choose_C`), the decision
threshold of each class (the rules of :mod:`gfun.svm.thresholds`) and the Platt sigmoids of the posteriors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gfun.metrics.measures import f1_from_counts
from gfun.svm.calibration import fit_platt
from gfun.svm.thresholds import validated_thresholds

__all__ = ["ValidationMixin"]


def _as_dense_labels(Y: object) -> np.ndarray:
    Y = Y.toarray() if hasattr(Y, "toarray") else np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    return Y.astype(bool)


class ValidationMixin:
    """C, thresholds and Platt sigmoids of :class:`gfun.svm.kernel.RBFSVMOvR` from held-out decision scores."""

    def calibrate(self, Y: object) -> Any:
        """Fit the Platt sigmoids of a model validated with ``probability=False`` (set ``probability=True``
        first), on the held-out decisions of that validation, as :meth:`validate` itself would have."""
        self._set_platt(_as_dense_labels(Y))
        return self

    def _choose_C(self, oof: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cross-validated F1 ``(n_grid, k)`` of the out-of-fold scores ``(n_grid, n, k)`` of every C, and the
        index of the C each class keeps (``C_selection``; ties to the smaller C)."""
        pred = oof > 0
        tp = (pred & Y).sum(axis=1)
        fp = (pred & ~Y).sum(axis=1)
        fn = (~pred & Y).sum(axis=1)
        scores = f1_from_counts(tp, fp, fn, np.zeros_like(tp))
        if self.C_selection == "global":
            return scores, np.full(Y.shape[1], int(np.argmax(scores.mean(axis=1))))
        return scores, np.argmax(scores >= scores.max(axis=0, keepdims=True) - 1e-12, axis=0)

    def _set_thresholds_and_platt(self, Y: np.ndarray, folds: list) -> None:
        """``threshold_``, ``validated_decision_`` and the Platt sigmoids from ``oof_decision_`` (pre-threshold)."""
        self.threshold_ = np.zeros(Y.shape[1])
        self.validated_decision_ = self.oof_decision_
        if self.threshold != "zero" and folds:
            self.threshold_, self.validated_decision_ = validated_thresholds(self.oof_decision_, Y, folds,
                                                                             self.threshold, n_jobs=self.n_jobs)
            self.oof_decision_ = self.oof_decision_ - self.threshold_
        self._set_platt(Y)

    def _set_platt(self, Y: np.ndarray) -> None:
        """The Platt sigmoids (``probability``) from ``oof_decision_``, smoothed priors where there is none."""
        if not self.probability:
            self.platt_A_ = self.platt_B_ = None
        elif self.oof_decision_ is not None:
            self.platt_A_, self.platt_B_ = fit_platt(self.oof_decision_, Y, n_jobs=self.n_jobs)
        else:  # too few samples to cross-validate: smoothed priors
            n, n_pos = Y.shape[0], Y.sum(axis=0)
            self.platt_A_ = np.zeros(Y.shape[1])
            self.platt_B_ = np.log((n - n_pos + 1.0) / (n_pos + 1.0))

    def anchor_sigmoids(self, Y: np.ndarray) -> None:
        """Refit the fitted model's Platt sigmoids through 0.5 at decision 0 (``B = 0``), on its out-of-fold
        decision scores (the logistic of the decision score when it has none: too few documents).

        Predictions threshold the decision scores at 0; with free sigmoids a probability could fall on the other
        side of 0.5. Anchored, ``predict_proba > 0.5`` equals the predictions by construction; the predicted labels
        are unchanged. Does nothing without sigmoids (``probability=False``).
        """
        if getattr(self, "platt_A_", None) is None:
            return
        oof = getattr(self, "oof_decision_", None)
        if oof is not None:
            self.platt_A_, self.platt_B_ = fit_platt(oof, Y, fit_intercept=False, n_jobs=self.n_jobs)
        else:
            self.platt_A_, self.platt_B_ = np.full(Y.shape[1], -1.0), np.zeros(Y.shape[1])
