"""The meta tier of Generalized Funnelling: how the meta-classifier is trained.

:class:`MetaTrainer` trains the meta-classifier (a clone of the estimator's ``meta`` template, one-vs-rest RBF SVMs)
on a meta-level input, validated on its out-of-fold version when given; :func:`default_meta` and
:func:`default_mapper` are what ``meta=None`` and ``mapper=None`` mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from gfun.svm.kernel import RBFSVMOvR
from gfun.views.normalization import ZScore

__all__ = ["MetaTrainer", "default_mapper", "default_meta"]


def default_meta() -> RBFSVMOvR:
    """The meta-classifier of ``meta=None``: RBF SVMs at C = 1 (the authors' setting), the decision threshold chosen
    by the policy's validation (``"auto"``)."""
    return RBFSVMOvR(C=1.0, threshold="auto")


def default_mapper() -> RBFSVMOvR:
    """The mappers of ``mapper=None``: calibrated RBF SVMs at C = 1 (the paper optimises C for the meta-classifier
    only), support vectors kept in float32."""
    return RBFSVMOvR(C=1.0, probability=True, support_dtype="float32")


class MetaTrainer:
    """Trains meta-classifiers: clones of a template, with the estimator's folds, seed and parallelism.

    Parameters
    ----------
    template : RBFSVMOvR
        The estimator's ``meta`` (unfitted). A ``threshold`` of ``"auto"`` becomes ``"validated"`` when the policy
        validates on out-of-fold inputs, else ``"zero"`` (the SVM's own, the paper's).
    validation : {"same", "oof"}
        The policy's resolved validation.
    groups : ndarray, optional
        Groups of training documents that cross-validation keeps in one fold.
    n_jobs, random_state, verbose
        Given to every meta-classifier.
    """

    def __init__(self, template: RBFSVMOvR, *, validation: str, groups: np.ndarray | None, n_jobs: int | None,
                 random_state: int | None, verbose: bool) -> None:
        self.template = template
        self.validation = validation
        self.groups = groups
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int | None = None
            ) -> tuple[RBFSVMOvR, ZScore | None]:
        """A meta-classifier (and its input scaler) trained on ``Z``, validated on ``Zval`` if given; ``cv``
        overrides the template's folds."""
        scaler, Z, Zval = self.scaled(Z, Zval, zscore)
        meta = self.clone(cv)
        meta.fit(Z, Y, X_val=Zval, groups=self.groups)
        return meta, scaler

    @staticmethod
    def scaled(Z: np.ndarray, Zval: np.ndarray | None, zscore: bool
               ) -> tuple[ZScore | None, np.ndarray, np.ndarray | None]:
        """``Z`` and ``Zval`` z-scored with the statistics of ``Z`` when ``zscore`` (with the scaler), else as given."""
        scaler = ZScore.fit(Z) if zscore else None
        if scaler is None:
            return None, Z, Zval
        return scaler, scaler.transform(Z), (scaler.transform(Zval) if Zval is not None else None)

    def clone(self, cv: int | None, **params: Any) -> RBFSVMOvR:
        """A clone of the template with the folds, seed and parallelism of this trainer (and ``params``)."""
        meta = clone(self.template)
        params = {"n_jobs": self.n_jobs, "random_state": self.random_state, "verbose": self.verbose, **params}
        if cv is not None:
            params["cv"] = cv
        if meta.threshold == "auto":
            params["threshold"] = "validated" if self.validation == "oof" else "zero"
        return meta.set_params(**params)
