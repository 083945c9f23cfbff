"""The meta tier of Generalized Funnelling: how the meta-classifier is trained, and which views it needs.

* :class:`MetaTrainer` trains the meta-classifier (a clone of the estimator's ``meta`` template, one-vs-rest RBF
  SVMs) on a meta-level input, validated on its out-of-fold version when given;
* :func:`judged_documents` (the documents ``select`` judges its candidates on) and :func:`unused_views` (the views
  ``select`` did not keep and no document can need).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone

from gfun.funnelling.branch import Branch
from gfun.funnelling.view_spec import label
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.normalization import ZScore

__all__ = ["SELECT_MIN_JUDGED", "SELECT_TOL", "MetaTrainer", "default_mapper", "default_meta",
           "judged_documents", "unused_views"]

logger = logging.getLogger("gfun.funnelling.generalized")

#: libsvm stopping tolerance of the cross-validation models with which ``aggregation="select"`` compares its
#: candidates (libsvm's default is 1e-3; the kept candidate is validated again and trained with it). A looser
#: tolerance makes the comparison markedly cheaper and moves the validated scores far less than the folds differ
#: from one another (the measurements are in docs/select.md).
SELECT_TOL = 0.1
#: ``select`` judges its candidates on the documents a neural view held out of its training only when there are at
#: least this many per cross-validation fold (else on all training documents, with a warning).
SELECT_MIN_JUDGED = 20


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

    def fit(self, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int | None = None,
            final: bool = True) -> tuple[RBFSVMOvR, ZScore | None]:
        """A meta-classifier (and its input scaler) trained on ``Z``, validated on ``Zval`` if given.

        ``cv`` overrides the template's folds. ``final=False``: cross-validated only
        (:meth:`gfun.svm.kernel.RBFSVMOvR.validate`), no final models, as a candidate of ``select`` is compared:
        libsvm tolerance :data:`SELECT_TOL`, no Platt sigmoids.
        """
        scaler = ZScore.fit(Z) if zscore else None
        if scaler is not None:
            Z = scaler.transform(Z)
            Zval = scaler.transform(Zval) if Zval is not None else None
        meta = clone(self.template)
        params: dict[str, Any] = {"n_jobs": self.n_jobs, "random_state": self.random_state, "verbose": self.verbose}
        if cv is not None:
            params["cv"] = cv
        if meta.threshold == "auto":
            params["threshold"] = "validated" if self.validation == "oof" else "zero"
        meta.set_params(**params)
        if not final:
            meta.set_params(tol=SELECT_TOL, probability=False)
        (meta.fit if final else meta.validate)(Z, Y, X_val=Zval, groups=self.groups)
        return meta, scaler


def judged_documents(names: Sequence[str], heldout: Sequence[np.ndarray | None], n: int, cv: int,
                     ) -> np.ndarray | None:
    """The training documents ``select`` judges its candidates on (a boolean mask), or ``None`` for all.

    A view that trains a network on the training documents gives them outputs far better than a new document's
    (a recurrent view's GRU can learn its training documents by heart), out-of-fold mappers or not; judged on
    them, such a view wins every comparison. A view that keeps a part of the training set out of its training
    (``heldout_idx_``, e.g. the early-stopping split of :class:`gfun.views.recurrent.RecurrentView`) is judged
    there: the documents every such view held out. With fewer than :data:`SELECT_MIN_JUDGED` of them per fold, all.
    """
    mask = None
    held = [(name, idx) for name, idx in zip(names, heldout, strict=False) if idx is not None]
    for _, idx in held:
        own = np.zeros(n, dtype=bool)
        own[np.asarray(idx, dtype=np.int64)] = True
        mask = own if mask is None else mask & own
    if mask is None:
        return None
    names = label([name for name, _ in held]).upper()
    if mask.sum() < SELECT_MIN_JUDGED * cv:
        logger.warning("select: view(s) %s held out only %d training documents: the candidates are judged on all "
                       "%d (optimistic for %s)", names, int(mask.sum()), n, names)
        return None
    logger.info("select: candidates judged on the %d training documents view(s) %s did not train on",
                int(mask.sum()), names)
    return mask


def unused_views(branches: Sequence[Branch], selected: Sequence[str], languages: Sequence[str]) -> list[str]:
    """The views ``select`` did not keep that no document can ever need (they are dropped with their mappers).

    A view that ``select`` did not keep serves only the documents of languages no kept view covers. It can be
    dropped when that cannot happen: when a kept view serves any language (B; M with an encoder's word vectors),
    or when it serves only its training languages (X, W), which the kept views cover. An unselected M with word
    vectors for languages without training documents is kept when only X (or W) was: it is then the only way to
    serve them. Predictions are unchanged.
    """
    chosen = set(selected)
    kept = [b.view for b in branches if b.name in chosen]
    serves_any = any(v.language_reach() == "any" for v in kept)
    return [b.name for b in branches if b.name not in chosen and (serves_any or (
        b.view.language_reach() == "training"
        and all(any(k.covers(lang) for k in kept) for lang in languages)))]
