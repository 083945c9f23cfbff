"""The meta tier of Generalized Funnelling: how the meta-classifier is trained.

:class:`MetaTrainer` trains the meta-classifier (a clone of the estimator's ``meta`` template, one-vs-rest RBF SVMs)
on a meta-level input, validated on its out-of-fold version when given; :func:`default_meta` and
:func:`default_mapper` are what ``meta=None`` and ``mapper=None`` mean. :class:`UnseenLanguageMeta` is the second
meta-classifier ``select`` trains for the documents of languages without training documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from gfun.core.state import checked_array, load_state, put_state
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.normalization import ZScore

__all__ = ["MetaTrainer", "UnseenLanguageMeta", "default_mapper", "default_meta"]


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


@dataclass
class UnseenLanguageMeta:
    """The meta-classifier of the documents of languages without training documents (zero-shot languages).

    Such a document reaches the meta tier through the views that represent any language only (not X or W, whose
    classifiers are per training language), so its meta-level input is the mean of fewer views than a training
    language's: a meta-classifier trained on the mean of all kept views reads it off its training distribution.
    This one is trained on the same training documents, on the mean of the views that do reach unseen languages,
    with the same form, class weights and validated thresholds (:class:`~gfun.funnelling.select.Select`'s
    ``unseen="own"``).

    Attributes
    ----------
    views : list of str
        The views whose mean it reads (in the model's order).
    meta : RBFSVMOvR
        The fitted meta-classifier.
    scaler : ZScore or None
        The z-scoring of its input.
    input_mean : ndarray (n_classes,)
        Its average training input (before the z-scoring): the reference point of explanations.
    """

    views: list[str]
    meta: RBFSVMOvR
    scaler: ZScore | None
    input_mean: np.ndarray

    def decision_function(self, Z: np.ndarray) -> np.ndarray:
        """The decisions for meta-level inputs ``Z`` (before the z-scoring)."""
        return self.meta.decision_function(self.scaler.transform(Z) if self.scaler is not None else Z)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """Metadata and named arrays (see :mod:`gfun.persistence`)."""
        arrays: dict[str, np.ndarray] = {"input_mean": self.input_mean}
        if self.scaler is not None:
            arrays.update({"scaler/mean": self.scaler.mean, "scaler/scale": self.scaler.scale})
        return {"views": list(self.views), "meta": put_state(self.meta, "meta/", arrays)}, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> UnseenLanguageMeta:
        """The object :meth:`get_state` described, its arrays checked."""
        mean = checked_array(arrays, "input_mean", (None,), what="one value per class")
        width = (len(mean),)
        scaler = (ZScore(*(checked_array(arrays, f"scaler/{k}", width, what="one value per meta-feature")
                           for k in ("mean", "scale"))) if "scaler/mean" in arrays else None)
        checked_array(arrays, "meta/support_vectors_", (None, len(mean)), what="one column per meta-feature")
        return cls(list(meta["views"]), load_state(RBFSVMOvR, meta["meta"], arrays, "meta/"), scaler, mean)
