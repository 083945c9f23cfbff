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

__all__ = ["SELECT_DIRECT_UP_TO", "SELECT_MIN_JUDGED", "SELECT_TOL", "SELECT_DIRECT_TOL", "MetaTrainer",
           "comparison_C", "compares_directly", "default_mapper", "default_meta", "judged_documents", "unused_views"]

logger = logging.getLogger("gfun.funnelling.generalized")

#: libsvm stopping tolerance of the cross-validation models with which ``aggregation="select"`` compares many
#: candidates (more than :data:`SELECT_DIRECT_UP_TO`; libsvm's default is 1e-3); the kept one is validated again at
#: the meta-classifier's own tolerance. A looser tolerance makes the comparison markedly cheaper and moves the
#: validated scores far less than the folds differ from one another (the measurements are in docs/select.md).
SELECT_TOL = 0.1
#: ``select`` compares up to this many candidates (a single view's two forms, normalised and raw) directly: at
#: :data:`SELECT_DIRECT_TOL`, the winner's validation being the kept one's (its thresholds and sigmoids; with
#: ``C="cv"``, its held-out decisions at the comparison's C), where a coarse comparison and a second validation would
#: cost more.
SELECT_DIRECT_UP_TO = 3
#: libsvm tolerance of a direct comparison (:data:`SELECT_DIRECT_UP_TO`) and, with ``C="cv"``, of the kept
#: candidate's search of C; the final models are trained at the meta-classifier's own ``tol`` (libsvm's 1e-3 by
#: default). On debtags run 0 the thresholds it gives score as those of a validation at 1e-3 (within .001), for 60%
#: of its cost.
SELECT_DIRECT_TOL = 0.05
#: ``select`` judges its candidates on the documents a neural view held out of its training only when there are at
#: least this many per cross-validation fold (else on all training documents, with a warning).
SELECT_MIN_JUDGED = 20


def comparison_C(template: RBFSVMOvR) -> float:
    """The C at which ``select`` compares its candidates: the meta-classifier's own, or with ``C="cv"`` the value of
    its grid nearest 1 (on a log scale; 1, gfun's default, in the paper's grid). C is then chosen by
    cross-validation over the whole grid for the kept candidate only."""
    if isinstance(template.C, str):
        return min(sorted(float(c) for c in template.C_grid), key=lambda c: abs(np.log(c)))
    return float(template.C)


def compares_directly(n_candidates: int) -> bool:
    """Whether ``select`` compares ``n_candidates`` directly, at :data:`SELECT_DIRECT_TOL` (at most
    :data:`SELECT_DIRECT_UP_TO`), rather than at :data:`SELECT_TOL` with a second validation of the kept one."""
    return n_candidates <= SELECT_DIRECT_UP_TO


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
        scaler, Z, Zval = self._scaled(Z, Zval, zscore)
        meta = self._clone(cv)
        meta.fit(Z, Y, X_val=Zval, groups=self.groups)
        return meta, scaler

    def compare(self, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int,
                direct: bool) -> RBFSVMOvR:
        """The cross-validation of a candidate of ``select`` (:meth:`gfun.svm.kernel.RBFSVMOvR.validate`: no final
        models, no sigmoids) at :func:`comparison_C`: at :data:`SELECT_DIRECT_TOL` when ``direct`` (the kept
        candidate's validation is then this one: :meth:`keep`), else at :data:`SELECT_TOL`."""
        _, Z, Zval = self._scaled(Z, Zval, zscore)
        meta = self._clone(cv, C=comparison_C(self.template), probability=False,
                           tol=SELECT_DIRECT_TOL if direct else SELECT_TOL)
        return meta.validate(Z, Y, X_val=Zval, groups=self.groups)

    def keep(self, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int,
             compared: RBFSVMOvR | None = None) -> tuple[RBFSVMOvR, ZScore | None]:
        """The meta-classifier (and its input scaler) of the candidate ``select`` keeps, trained at the template's
        ``tol``.

        ``compared``: its :meth:`compare` when the comparison was direct. Its validation is then the model's at a
        fixed C; with ``C="cv"`` the kept candidate is validated over the template's grid at
        :data:`SELECT_DIRECT_TOL`, ``compared``'s held-out decisions standing for :func:`comparison_C`. Without it
        (a coarse comparison), the kept candidate is validated again at the template's ``tol`` (over its grid with
        ``C="cv"``).
        """
        scaler, Z, Zval = self._scaled(Z, Zval, zscore)
        reusable = compared is not None and compared.oof_decision_ is not None  # None: too few documents to validate
        if reusable and not isinstance(self.template.C, str):
            meta = compared.set_params(probability=self.template.probability).calibrate(Y)
        else:
            meta = self._clone(cv, tol=SELECT_DIRECT_TOL if compared is not None else self.template.tol)
            meta.validate(Z, Y, X_val=Zval, groups=self.groups, known=compared if reusable else None)
        meta.set_params(tol=self.template.tol)
        return meta.finish(Z, Y), scaler

    @staticmethod
    def _scaled(Z: np.ndarray, Zval: np.ndarray | None, zscore: bool
                ) -> tuple[ZScore | None, np.ndarray, np.ndarray | None]:
        scaler = ZScore.fit(Z) if zscore else None
        if scaler is None:
            return None, Z, Zval
        return scaler, scaler.transform(Z), (scaler.transform(Zval) if Zval is not None else None)

    def _clone(self, cv: int | None, **params: Any) -> RBFSVMOvR:
        """A clone of the template with the folds, seed and parallelism of this trainer (and ``params``)."""
        meta = clone(self.template)
        params = {"n_jobs": self.n_jobs, "random_state": self.random_state, "verbose": self.verbose, **params}
        if cv is not None:
            params["cv"] = cv
        if meta.threshold == "auto":
            params["threshold"] = "validated" if self.validation == "oof" else "zero"
        return meta.set_params(**params)


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
