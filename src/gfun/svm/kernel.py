"""One-vs-rest RBF SVMs that share one Gram matrix across classes, folds and C values.

This is gFun's meta-classifier (and, with ``probability=True``, the mapper of a view to
calibrated posteriors in the averaging aggregation). Every class of a one-vs-rest RBF SVM
sees the same training vectors, so the kernel matrix is computed once and each binary SVM
is trained by libsvm on the precomputed kernel; cross-validation folds are slices of the
same matrix. C is chosen by k-fold cross-validation (per class, or one C for all classes),
and the out-of-fold decision scores at the chosen C are reused to fit Platt sigmoids, so
posteriors cost no extra training. Each fold's kernel blocks are computed from the vectors when
the fold starts and freed when it ends (the same numbers as slices of the whole Gram matrix,
without holding both); the whole Gram matrix exists only while the final models are trained.

The method follows a memory budget (``max_memory``): exact while the Gram matrix fits, beyond
it (``approximation="auto"``) regularised least squares on Nystroem features of the same kernel,
which solves every class, fold and C value from one pass over the data (memory and time linear in
the number of training vectors). The switch is logged.

This module holds the estimator (its parameters, the choice of path, inference and persistence); each concern of
its fit has its own module: the exact path (:mod:`gfun.svm.kernel_exact`), the Nystroem paths
(:mod:`gfun.svm.nystroem`), the validation (C, thresholds and sigmoids from held-out scores:
:mod:`gfun.svm.kernel_validation`, with the rules of :mod:`gfun.svm.thresholds`), and below them the memory budget
(:mod:`gfun.svm.memory_budget`), the RBF kernel (:mod:`gfun.svm.rbf_kernel`), Platt sigmoids
(:mod:`gfun.svm.calibration`), folds and class weights (:mod:`gfun.svm.linear`).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Sequence

import numpy as np
from joblib import delayed
from sklearn.base import BaseEstimator
from sklearn.utils.extmath import row_norms
from sklearn.utils.validation import check_is_fitted

from gfun.core.parallel import run_parallel
from gfun.core.state import checked_array
from gfun.corpus.inputs import check_C
from gfun.svm.calibration import platt_posteriors
from gfun.svm.kernel_exact import ExactPathMixin
from gfun.svm.kernel_validation import ValidationMixin, _as_dense_labels
from gfun.svm.memory_budget import DEFAULT_MAX_MEMORY, exact_memory, parse_memory
from gfun.svm.nystroem import NystroemPathMixin, row_blocks
from gfun.svm.rbf_kernel import rbf_kernel_inplace
from gfun.svm.thresholds import THRESHOLD_RULES

__all__ = ["APPROXIMATIONS", "DEFAULT_C_GRID", "RBFSVMOvR"]

logger = logging.getLogger(__name__)

#: Calls of :meth:`RBFSVMOvR.decision_function` on fewer samples keep float32 support vectors widened to float64.
KEEP_WIDE_SUPPORT_BELOW = 256

#: The paper's grid: C = 10^i for i in {-1, ..., 4}.
DEFAULT_C_GRID: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)
#: Values of ``approximation``: ``None`` (exact), ``"auto"`` (exact within ``max_memory``, else ``"nystroem-ls"``),
#: ``"nystroem"`` (linear SVMs on Nystroem features), ``"nystroem-ls"`` (least squares on Nystroem features).
APPROXIMATIONS: tuple[str | None, ...] = (None, "auto", "nystroem", "nystroem-ls")


def _decision_rows(X: np.ndarray, gamma: float, intercept: np.ndarray, sv: np.ndarray | None,
                   sv_norms: np.ndarray | None, dual: np.ndarray | None, components: np.ndarray | None,
                   feature_map: np.ndarray | None, linear_coef: np.ndarray | None, *, batch_size: int
                   ) -> np.ndarray:
    """Decision scores of the rows of ``X``, ``batch_size`` at a time: by the Nystroem features and their linear
    weights (``components`` given), else by the support vectors (float64, with their squared norms) and dual
    coefficients; the intercept alone without either."""
    out = np.empty((X.shape[0], intercept.shape[0]))
    for start in range(0, X.shape[0], batch_size):
        chunk = X[start:start + batch_size]
        if components is not None:
            features = rbf_kernel_inplace(chunk, components, gamma) @ feature_map.T
            out[start:start + batch_size] = features @ linear_coef.T + intercept
        elif sv.shape[0]:
            K = rbf_kernel_inplace(chunk, sv, gamma, Y_norms=sv_norms)
            out[start:start + batch_size] = K @ dual + intercept
        else:
            out[start:start + batch_size] = intercept
    return out


class RBFSVMOvR(ExactPathMixin, NystroemPathMixin, ValidationMixin, BaseEstimator):
    """One-vs-rest RBF-kernel SVMs for multilabel data, sharing one kernel matrix.

    Parameters
    ----------
    C : float or "cv"
        Regularisation. ``"cv"`` chooses it by ``cv``-fold cross-validation over ``C_grid``.
    C_grid : sequence of float
        Candidate values of C (the paper's ``10^-1 ... 10^4`` by default).
    C_selection : {"per-class", "global"}
        ``"per-class"``: each class keeps the C with the best cross-validated F1 (ties to the smaller C);
        ``"global"``: one C for all classes, the one with the best cross-validated macro-F1.
    cv : int
        Number of folds for choosing C and for the out-of-fold scores the Platt sigmoids are fitted on.
    gamma : float or "scale"
        RBF width; ``"scale"`` is ``1 / (n_features * X.var())`` as in scikit-learn.
    probability : bool
        Fit Platt sigmoids on out-of-fold decision scores so that :meth:`predict_proba` works.
    class_weight : {None, "balanced", "sqrt"}
        Weights of each class's negative and positive samples (:data:`gfun.svm.linear.CLASS_WEIGHTS`).
    threshold : {"zero", "f1", "validated", "k"}
        Decision threshold of each class. ``"zero"``: the SVM's own (a positive score predicts the class).
        ``"f1"``: the threshold that maximises the class's F1 on the out-of-fold decision scores of the
        cross-validation (free: those scores are computed anyway), folded into the intercept, so that
        :meth:`decision_function`, :meth:`predict` and the Platt posteriors all use it. ``"validated"``: per
        class, 0 or the F1-optimal threshold, whichever raises the mean of macro- and micro-F1 of cross-fitted
        predictions (see :func:`gfun.svm.thresholds.validated_thresholds`). ``"k"``: the threshold that maximises
        the class's K (true minus false positive rate: recall-aware, for K rather than F1). Meaningful only when the
        training vectors
        look like the test vectors (out-of-fold first-tier outputs).
    tol : float
        libsvm stopping tolerance.
    max_gram_samples : int
        Exact path: largest training set for which the Gram matrix is precomputed (above it libsvm evaluates
        the kernel itself, slower but in little memory).
    approximation : {"auto", None, "nystroem", "nystroem-ls"}
        ``None``: exact. ``"auto"``: exact while :func:`gfun.svm.memory_budget.exact_memory` fits in
        ``max_memory``, else ``"nystroem-ls"`` (logged). ``"nystroem-ls"``: one-vs-rest regularised least
        squares (targets +-1, ridge ``1 / (2 C)``, unpenalised intercept) on ``n_components`` Nystroem features
        of the same RBF kernel: the normal equations of every class, fold and C come from one pass over the
        training vectors in chunks (each fold's are the whole minus the fold's own), so memory is
        ``O(n_components^2)`` besides the inputs and C by cross-validation costs almost nothing.
        ``"nystroem"``: linear SVMs (liblinear, hinge loss) on the same features, one class at a time (slow on
        dense features: far slower than the exact path wherever the exact path fits in memory). C selection,
        thresholds and Platt calibration work as on the exact path.
    n_components : int
        Nystroem landmarks (at most the number of training vectors).
    landmarks : {"kmeans", "random"}
        How the Nystroem landmarks are chosen: k-means centres (k-means++ seeding, a few Lloyd iterations on a
        random sample of at most ``8 * n_components`` vectors), or a uniform sample of the training vectors.
    max_memory : int, float or str
        Memory budget of the exact path, bytes or a string like ``"2GB"`` (see ``approximation="auto"``).
    n_jobs : int, optional
        Threads training binary SVMs in parallel (libsvm releases the GIL; the Gram matrix is shared).
    support_dtype : {"float64", "float32"}
        Precision in which the support vectors are kept (and saved) once fitted: ``"float32"`` halves the largest array
        of a fitted model (``n_support x n_features`` values). The cast happens at the end of :meth:`fit`, so the fitted
        model is the one saved and loaded; decision scores are still computed in float64 (small calls keep the widened
        copy, see :data:`KEEP_WIDE_SUPPORT_BELOW`).
    random_state : int, optional
        Seed of the cross-validation folds.
    verbose : bool
        Log progress.

    Attributes
    ----------
    support_vectors_ : ndarray (n_support, n_features)
        Union of the support vectors of all classes.
    dual_coef_ : ndarray (n_support, n_classes)
    intercept_ : ndarray (n_classes,)
    C_ : ndarray (n_classes,)
        The C used by each class.
    gamma_ : float
    cv_scores_ : ndarray (len(C_grid), n_classes) or None
        Cross-validated F1 of each candidate C.
    platt_A_, platt_B_ : ndarray (n_classes,) or None
    threshold_ : ndarray (n_classes,)
        The decision threshold of each class (folded into ``intercept_``).
    validated_decision_ : ndarray (n_samples, n_classes) or None
        Out-of-fold decision scores minus the threshold each class gets without the sample's fold (transient,
        not persisted): the honest validation of the model and its thresholds.
    """

    def __init__(self, C: float | str = "cv", C_grid: Sequence[float] = DEFAULT_C_GRID,
                 C_selection: str = "per-class", cv: int = 5, gamma: float | str = "scale",
                 probability: bool = True, class_weight: str | None = None, threshold: str = "zero",
                 tol: float = 1e-3,
                 max_gram_samples: int = 30000, approximation: str | None = "auto", n_components: int = 1000,
                 landmarks: str = "kmeans", max_memory: int | float | str = DEFAULT_MAX_MEMORY,
                 support_dtype: str = "float64", n_jobs: int | None = None, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.C = C
        self.C_grid = C_grid
        self.C_selection = C_selection
        self.cv = cv
        self.gamma = gamma
        self.probability = probability
        self.class_weight = class_weight
        self.threshold = threshold
        self.tol = tol
        self.max_gram_samples = max_gram_samples
        self.approximation = approximation
        self.n_components = n_components
        self.landmarks = landmarks
        self.max_memory = max_memory
        self.support_dtype = support_dtype
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _check_params(self) -> list[float]:
        if self.threshold not in THRESHOLD_RULES:
            raise ValueError(f"threshold must be one of {THRESHOLD_RULES}, got {self.threshold!r}")
        if self.C_selection not in ("per-class", "global"):
            raise ValueError(f"C_selection must be 'per-class' or 'global', got {self.C_selection!r}")
        if self.approximation not in APPROXIMATIONS:
            raise ValueError(f"approximation must be one of {APPROXIMATIONS}, got {self.approximation!r}")
        if self.landmarks not in ("kmeans", "random"):
            raise ValueError(f"landmarks must be 'kmeans' or 'random', got {self.landmarks!r}")
        parse_memory(self.max_memory)
        if self.support_dtype not in ("float64", "float32"):
            raise ValueError(f"support_dtype must be 'float64' or 'float32', got {self.support_dtype!r}")
        if isinstance(self.C, str):
            if self.C != "cv":
                raise ValueError(f"C must be a positive number or 'cv', got {self.C!r}")
            grid = sorted(float(check_C(c, "each value of C_grid", allow_cv=False)) for c in self.C_grid)
            if not grid:
                raise ValueError(f"C_grid must hold positive values, got {self.C_grid!r}")
            return grid
        check_C(self.C, "C")
        if self.C_selection not in ("per-class", "global"):
            raise ValueError(f"C_selection must be 'per-class' or 'global', got {self.C_selection!r}")
        return [float(self.C)]

    def _gamma(self, X: np.ndarray) -> float:
        if self.gamma == "scale":
            var = float(X.var())
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if isinstance(self.gamma, numbers.Real) and self.gamma > 0:
            return float(self.gamma)
        raise ValueError(f"gamma must be a positive number or 'scale', got {self.gamma!r}")

    def fit(self, X: np.ndarray, Y: object, X_val: np.ndarray | None = None,
            groups: np.ndarray | None = None) -> RBFSVMOvR:
        """Fit one RBF SVM per column of the binary label matrix ``Y``: :meth:`validate`, then :meth:`finish`.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        Y : array-like or sparse matrix of shape (n_samples, n_classes)
        X_val : ndarray of shape (n_samples, n_features), optional
            Another version of the same training samples, the one the cross-validation scores its held-out
            fold on (the models of each fold are still trained on rows of ``X``). gFun passes the
            out-of-fold first-tier outputs here while training on the in-sample ones: C, the Platt sigmoids
            and the thresholds are then chosen on inputs like those of new documents.
        groups : ndarray of shape (n_samples,), optional
            Samples sharing a value stay in the same cross-validation fold (see
            :func:`gfun.svm.linear.make_folds`).
        """
        self._validate(X, Y, X_val, groups)
        return self.finish(X, Y)

    def validate(self, X: np.ndarray, Y: object, X_val: np.ndarray | None = None,
                 groups: np.ndarray | None = None, *, known: RBFSVMOvR | None = None) -> RBFSVMOvR:
        """The cross-validation part of :meth:`fit` alone: C, thresholds, Platt sigmoids, no final models.

        Sets ``C_``, ``cv_scores_``, ``threshold_``, ``oof_decision_`` and ``validated_decision_`` (the
        out-of-fold decision scores with each fold's thresholds fitted without it: positive means predicted),
        enough to compare inputs by their validated predictions for a fraction of the cost of a fit (the
        folds' models only, no final models). :meth:`finish` then trains the final models of the one kept.
        (With ``approximation`` the final models are trained here already.)

        ``known``: a model this one's settings (folds, seed, tolerance, threshold rule) already validated on the
        same ``X``, ``Y``, ``X_val`` and ``groups`` at a single C of ``C_grid`` (``select`` compares its candidates
        so): its held-out decisions stand for that C's, which is not trained again; the rest of the grid is.
        """
        return self._validate(X, Y, X_val, groups, known)

    def _method(self, n: int, k: int, n_grid: int) -> str | None:
        """The approximation this fit uses (``None``: exact), ``approximation="auto"`` resolved by the budget."""
        if self.approximation != "auto":
            return self.approximation
        need, budget = exact_memory(n, k, n_grid, self.n_jobs), parse_memory(self.max_memory)
        if need <= budget:
            return None
        logger.warning("RBF SVM: the exact kernel of %d training vectors needs %.2f GB, more than max_memory "
                       "(%.2f GB): Nystroem approximation (%d landmarks, least squares) instead", n, need / 2**30,
                       budget / 2**30, min(int(self.n_components), n))
        return "nystroem-ls"

    def _validate(self, X: np.ndarray, Y: object, X_val: np.ndarray | None, groups: np.ndarray | None,
                  known: RBFSVMOvR | None = None) -> RBFSVMOvR:
        grid = self._check_params()
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = _as_dense_labels(Y)
        if X.ndim != 2 or X.shape[0] != Y.shape[0]:
            raise ValueError(f"X has shape {X.shape} but Y has {Y.shape[0]} rows")
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if X_val is not None:
            X_val = np.ascontiguousarray(X_val, dtype=np.float64)
            if X_val.shape != X.shape or not np.isfinite(X_val).all():
                raise ValueError(f"X_val must be finite and of the shape of X {X.shape}, got {X_val.shape}")
        n, k = Y.shape
        self.gamma_ = self._gamma(X)
        self.n_features_in_ = X.shape[1]
        self.method_ = self._method(n, k, len(grid))
        if self.method_ == "nystroem":
            return self._fit_nystroem(X, Y, grid, X_val, groups)
        if self.method_ == "nystroem-ls":
            return self._fit_nystroem_ls(X, Y, grid, X_val, groups)
        return self._validate_exact(X, Y, X_val, groups, grid, known)


    # ------------------------------------------------------------------ inference
    def decision_function(self, X: np.ndarray, batch_size: int = 4096) -> np.ndarray:
        """Decision scores (n_samples, n_classes); positive means the class is predicted.

        Beyond one block of rows (:func:`gfun.svm.nystroem.row_blocks`, whole batches), the blocks are jobs
        (``n_jobs`` threads, or a Dask cluster's workers), each computed with one BLAS thread wherever it runs.
        """
        check_is_fitted(self, "dual_coef_")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got array of shape {X.shape}")
        sv, sv_norms = self._wide_support(keep=X.shape[0] < KEEP_WIDE_SUPPORT_BELOW)
        nystroem = getattr(self, "nystroem_components_", None) is not None
        model = ((None, None, None, self.nystroem_components_, self.nystroem_map_, self.linear_coef_) if nystroem
                 else (sv, sv_norms, self.dual_coef_, None, None, None))
        # whole batches per block: the same batches, so the same numbers, as in one call
        blocks = row_blocks(X.shape[0], multiple_of=batch_size)
        if len(blocks) == 1:
            return _decision_rows(X, self.gamma_, self.intercept_, *model, batch_size=batch_size)
        jobs = (delayed(_decision_rows)(X[b], self.gamma_, self.intercept_, *model, batch_size=batch_size)
                for b in blocks)
        return np.concatenate(run_parallel(jobs, self.n_jobs, blas_threads=1))

    def _wide_support(self, keep: bool) -> tuple[np.ndarray, np.ndarray]:
        """The support vectors in float64 (the kernel is computed in float64) and their squared norms.

        float32 support vectors are widened for the kernel; a call on fewer than :data:`KEEP_WIDE_SUPPORT_BELOW`
        samples (a served request) keeps the widened copy for the next calls, where
        widening at every call would cost more than the kernel itself; a larger call (training, a test set)
        widens once for all its samples and keeps nothing. Never saved, never pickled; the same bits either way.
        """
        sv = self.support_vectors_
        kept = self.__dict__.get("_wide")
        if kept is not None and kept[0] is sv:
            return kept[1], kept[2]
        wide = np.asarray(sv, dtype=np.float64)
        norms = row_norms(wide, squared=True)
        if keep:
            self._wide = (sv, wide, norms)
        return wide, norms

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_wide", None)  # a cache of the support vectors in float64: rebuilt on demand
        return state

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Binary predictions (n_samples, n_classes), int8."""
        return (self.decision_function(X) > 0).astype(np.int8)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Platt-calibrated posteriors P(class | x), shape (n_samples, n_classes)."""
        return self.proba_from_scores(self.decision_function(X))

    def proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """The Platt-calibrated posteriors of decision scores already computed by :meth:`decision_function`."""
        check_is_fitted(self, "dual_coef_")
        if self.platt_A_ is None:
            raise AttributeError("predict_proba needs probability=True at fit time")
        return platt_posteriors(scores, self.platt_A_, self.platt_B_)

    # ------------------------------------------------------------------ persistence
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and numpy arrays describing the fitted model (no pickle)."""
        check_is_fitted(self, "dual_coef_")
        meta = {"params": _jsonable_params(self.get_params()), "gamma_": self.gamma_,
                "n_features_in_": self.n_features_in_, "probability_fitted": self.platt_A_ is not None}
        arrays = {"support_vectors_": self.support_vectors_, "dual_coef_": self.dual_coef_,
                  "intercept_": self.intercept_, "C_": self.C_, "support_": self.support_}
        if self.platt_A_ is not None:
            arrays["platt_A_"] = self.platt_A_
            arrays["platt_B_"] = self.platt_B_
        if self.cv_scores_ is not None:
            arrays["cv_scores_"] = self.cv_scores_
        if getattr(self, "nystroem_components_", None) is not None:
            arrays.update(nystroem_components_=self.nystroem_components_, nystroem_map_=self.nystroem_map_,
                          linear_coef_=self.linear_coef_)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> RBFSVMOvR:
        """Rebuild a fitted model from :meth:`get_state` output."""
        params = dict(meta["params"])
        params["C_grid"] = tuple(params["C_grid"])
        obj = cls(**params)
        obj.gamma_ = float(meta["gamma_"])
        obj.n_features_in_ = d = int(meta["n_features_in_"])
        # every array checked against the others before use (a damaged file fails here, not at predict)
        obj.intercept_ = checked_array(arrays, "intercept_", (None,))
        k = obj.intercept_.shape[0]
        obj.support_vectors_ = checked_array(arrays, "support_vectors_", (None, d), what="n_features_in_ columns")
        n_sv = obj.support_vectors_.shape[0]
        obj.dual_coef_ = checked_array(arrays, "dual_coef_", (n_sv, k), what="a row per support vector, a column per "
                                       "class")
        obj.C_ = checked_array(arrays, "C_", (k,), what="one value per class")
        obj.support_ = checked_array(arrays, "support_", (n_sv,), "iu", what="one per support vector")
        obj.platt_A_ = checked_array(arrays, "platt_A_", (k,), optional=True, what="one value per class")
        obj.platt_B_ = checked_array(arrays, "platt_B_", (k,), optional=obj.platt_A_ is None,
                                     what="one value per class")
        obj.cv_scores_ = arrays.get("cv_scores_")
        obj.nystroem_components_ = checked_array(arrays, "nystroem_components_", (None, d), optional=True,
                                                 what="n_features_in_ columns")
        obj.nystroem_map_ = obj.linear_coef_ = None
        if obj.nystroem_components_ is not None:
            m = obj.nystroem_components_.shape[0]
            obj.nystroem_map_ = checked_array(arrays, "nystroem_map_", (None, m), what="a column per landmark")
            obj.linear_coef_ = checked_array(arrays, "linear_coef_", (k, obj.nystroem_map_.shape[0]),
                                             what="a row per class, a column per Nystroem feature")
        obj.oof_decision_ = None
        return obj


def _jsonable_params(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, tuple | list):
            v = [float(x) if isinstance(x, numbers.Real) else x for x in v]
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out
