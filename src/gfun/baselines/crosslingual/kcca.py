"""KCCA: Kernel Canonical Correlation Analysis (Vinokourov, Shawe-Taylor & Cristianini 2002, NIPS 15).

Method
------
Given a collection of documents paired across languages (each item described in several languages),
KCCA finds, for each language ``l``, directions ``w_l`` such that the projections of the paired
descriptions are maximally correlated; regularised as in the paper (``K_l^2 + reg K_l`` in the dual, i.e.
``Z_l'Z_l + reg I`` below). Projecting every document of language ``l`` on its ``n_components``
directions gives a language-independent "semantic" space; one-vs-rest linear SVMs trained on the
projected training documents of all languages classify every document (the unit-length projections).

For more than two languages, the multi-view generalisation used by the baselines of Esuli et al. (2019)
(pyrcca's, Bilenko & Gallant 2016) maximises the sum of all pairwise correlations: a generalised
eigenproblem whose left-hand side holds the cross-covariances ``C_lm`` (``l != m``) and whose right-hand side
the regularised covariances ``C_ll + reg I``. Each language's data is centred and scaled so that its largest
kernel eigenvalue is 1, as pyrcca does, so that ``reg`` has the same meaning in every language.

Tractability (a low-rank kernel approximation)
----------------------------------------------
With a linear kernel (as Esuli et al. 2019) ``K_l = A_l A_l'`` for the centred TF-IDF matrix ``A_l`` of the
collection's language-``l`` texts. Instead of the ``n x n`` kernels (an eigenproblem of size
``n_languages * n``: Esuli et al. sampled 2,000 Wikipedia articles to afford it), each kernel is replaced by
its best rank-``rank`` approximation ``Z_l Z_l'`` with ``Z_l = U_l S_l`` from a truncated (randomised) SVD of
``A_l``; the eigenproblem then has size ``n_languages * rank`` whatever the collection's size, and every item
of the collection can be used. This plays the part of the partial Gram-Schmidt orthogonalisation (incomplete
Cholesky decomposition) with which Hardoon, Szedmak & Shawe-Taylor (2004, Neural Computation 16) make KCCA
practical: both replace ``K_l`` by a low-rank factor ``Z_l Z_l'`` and solve in the factor's coordinates; gfun
uses the truncated SVD (Halko, Martinsson & Tropp 2011, see :func:`centered_svd`: a few sparse products and
one thin QR per language, no ``n x n`` matrix) rather than the greedy pivoted Cholesky, because with a linear
kernel it gives the best approximation of a given rank at a similar cost. Only the ``n_components`` leading
eigenpairs of the multi-view problem are computed (``scipy.linalg.eigh(subset_by_index=...)``). Items need
not be described in every language: ``C_lm`` sums over the items
described in both ``l`` and ``m`` (pairwise-complete covariances), ``C_ll`` over those described in ``l``.

Resource and differences from the paper's setup
-----------------------------------------------
Vinokourov et al. use the aligned English-French Hansards; Esuli et al. (2019) 2,000 Wikipedia articles
present in all their languages. gfun uses a :class:`~gfun.baselines.crosslingual.resources.ParallelCollection`; with
``parallel="auto"`` on debtags, every Debian package whose source package is among the training documents'
(its English description and human translations: a truly parallel collection, in-domain, with items
covering 2 to 11 languages); on SIB-200, every training sentence (``index_id``) in each of the paper's eleven
languages and the training languages (their FLORES-200 translations: complete items, no dev or test sentence).
Any language of the collection can be served, also without training documents; one with too few texts to be
placed (fewer than 2 paired texts, no term in ``min_df`` of them, or no two distinct texts: a language of the
collection with 3 documents) is left out with a warning, and its documents are not served.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from functools import partial
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from gfun.baselines.crosslingual.base import CrossLingualClassifier, l2_rows
from gfun.baselines.crosslingual.resources import AUTO, fit_language_tfidf, leave_out, resolve_parallel
from gfun.baselines.parts import LinearSVMs
from gfun.text.tfidf import MultilingualTfidf

__all__ = ["KCCAClassifier", "centered_svd", "fit_kcca"]

logger = logging.getLogger(__name__)


def centered_svd(A: sp.spmatrix | np.ndarray, rank: int, *, n_iter: int = 4,
                 random_state: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Truncated SVD of ``A - 1 mean'`` (the column-centred ``A``) by randomised subspace iteration.

    The range finder of Halko, Martinsson & Tropp (2011, Algorithm 4.4): ``Q`` spans
    ``(Ac Ac')^n_iter Ac Omega`` (``Omega`` Gaussian, ``rank + 10`` columns), computed on the *shorter* side of
    ``Ac`` only, renormalised after each product with ``Ac Ac'`` by an LU factorisation (as scikit-learn's
    ``randomized_svd``: only the span matters until the last step, and LU costs a fraction of a QR), then
    orthonormalised by one thin QR; the small factor ``B = Q' Ac`` is decomposed through the eigenpairs of its
    ``(rank + 10)``-square Gram matrix. The centred matrix is never formed.

    Returns
    -------
    mean : ndarray of shape (n_features,)
    U : ndarray of shape (n_samples, r)
    s : ndarray of shape (r,)
    Vt : ndarray of shape (r, n_features)
        ``r = min(rank, n_samples - 1, n_features)``.
    """
    A = sp.csr_matrix(A, dtype=np.float64) if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    n, d = A.shape
    mean = np.asarray(A.mean(axis=0)).ravel()
    r = max(0, min(rank, n - 1, d))
    if r == 0:
        return mean, np.zeros((n, 0)), np.zeros(0), np.zeros((0, d))
    k = min(r + 10, n, d)

    def sides(dtype: type) -> tuple[Any, Any]:  # Q -> (A - 1 mean') Q and P -> (A - 1 mean')' P, in dtype
        A_, mean_ = (A, mean) if dtype == A.dtype else (A.astype(dtype), mean.astype(dtype))
        At_ = A_.T

        def right(Q: np.ndarray) -> np.ndarray:
            return np.asarray(A_ @ Q) - (mean_ @ Q)[None, :]

        def left(P: np.ndarray) -> np.ndarray:
            return np.asarray(At_ @ P) - np.outer(mean_, P.sum(axis=0))

        # iterate on the shorter side: Q spans the column space of Ac (n <= d) or of Ac' (n > d)
        return (right, left) if n <= d else (left, right)

    # the power iterations in float32 (they only find a subspace; single precision halves the memory traffic of
    # the sparse products and the cost of LU), the final basis and factorisation in float64
    fwd, back = sides(np.float32)
    Q = fwd(np.random.default_rng(random_state).standard_normal((d if n <= d else n, k), dtype=np.float32))
    for _ in range(n_iter):  # the span only matters until the last step: LU, much cheaper than QR, keeps it stable
        Q = fwd(back(sla.lu(Q, permute_l=True, overwrite_a=True, check_finite=False)[0]))
    Q = sla.qr(Q.astype(np.float64), mode="economic", overwrite_a=True, check_finite=False)[0]
    fwd, back = sides(np.float64)
    Bt = back(Q)  # B' where B = Q' Ac (n <= d), or B = Q' Ac' (n > d)
    w, W = np.linalg.eigh(Bt.T @ Bt)
    w, W = w[::-1], W[:, ::-1]
    s = np.sqrt(np.clip(w, 0.0, None))
    ok = s > s[0] * 1e-7 if s[0] > 0 else np.zeros_like(s, dtype=bool)
    Other = (Bt @ W[:, ok]) / s[ok]  # the other side's singular vectors
    Qside = Q @ W[:, ok]
    U, Vt = (Qside, Other.T) if n <= d else (Other, Qside.T)
    s = s[ok]
    # a deterministic sign: the largest entry of each right singular vector is positive
    sign = np.sign(Vt[np.arange(Vt.shape[0]), np.argmax(np.abs(Vt), axis=1)])
    sign[sign == 0] = 1.0
    r = min(r, s.size)
    return mean, (U * sign)[:, :r], s[:r], (Vt * sign[:, None])[:r]


def fit_kcca(views: Mapping[str, tuple[np.ndarray, sp.spmatrix | np.ndarray]], n_items: int, *,
             n_components: int, rank: int, reg: float, random_state: int | None = None,
             optional: Collection[str] = ()
             ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Multi-view linear-kernel CCA through low-rank kernels (see the module docstring).

    Parameters
    ----------
    views : mapping of str to (item indices, data matrix)
        For each view (language): which items (``0 <= i < n_items``) it describes, and their vectors (rows).
    n_items : int
    n_components : int
    rank : int
        Rank of each view's kernel approximation.
    reg : float
        Regularisation (relative to each view's largest kernel eigenvalue, scaled to 1).
    optional : collection of str
        Views that may be left out, with a warning, when they have fewer than 2 distinct items (the others raise).

    Returns
    -------
    projections : dict of str to (mean, P)
        A new vector ``x`` of a view maps to ``(x - mean) @ P`` (``n_components`` canonical variates).
    correlations : ndarray of shape (n_components,)
        The eigenvalues of the multi-view problem (the sum of pairwise correlations, up to scale).
    """
    names = []
    # per view: item indices, Z (Z'Z + reg I)^-1/2 with Z = U S / s_max, the diagonal of Z'Z + reg I, V' / s_max,
    # the mean
    parts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for v in sorted(views):
        items, X = views[v]
        mean, U, s, Vt = centered_svd(X, rank, random_state=random_state)
        if s.size == 0 or s[0] <= 0:
            if v in optional:
                leave_out("KCCA", v, len(items), "fewer than 2 distinct texts")
                continue
            raise ValueError(f"KCCA: view {v!r} has fewer than 2 distinct items")
        names.append(v)
        scale = s[0]
        diag = (s / scale) ** 2 + reg
        U *= s / scale / np.sqrt(diag)  # in place: Z (Z'Z + reg I)^-1/2, Z'Z being diagonal
        Vt /= scale
        parts[v] = (np.asarray(items), U, diag, Vt, mean)
    offsets = np.cumsum([0] + [parts[v][1].shape[1] for v in names])
    M = np.zeros((offsets[-1], offsets[-1]))
    rows = {v: np.full(n_items, -1, dtype=np.int64) for v in names}
    for v in names:
        rows[v][parts[v][0]] = np.arange(parts[v][0].size)
    for a, va in enumerate(names):
        for b in range(a + 1, len(names)):
            vb = names[b]
            common = np.flatnonzero((rows[va] >= 0) & (rows[vb] >= 0))
            if not common.size:
                continue
            block = parts[va][1][rows[va][common]].T @ parts[vb][1][rows[vb][common]]
            M[offsets[a]:offsets[a + 1], offsets[b]:offsets[b + 1]] = block
            M[offsets[b]:offsets[b + 1], offsets[a]:offsets[a + 1]] = block.T
    k = min(n_components, M.shape[0])
    vals, vecs = sla.eigh(M, subset_by_index=[M.shape[0] - k, M.shape[0] - 1])
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    vecs = vecs * np.where(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(k)] < 0, -1.0, 1.0)
    out = {}
    for a, v in enumerate(names):
        beta = vecs[offsets[a]:offsets[a + 1]] / np.sqrt(parts[v][2])[:, None]
        out[v] = (parts[v][4], parts[v][3].T @ beta)
    return out, vals


class KCCAClassifier(CrossLingualClassifier):
    """Kernel CCA baseline (linear kernel, low-rank kernel approximation; see the module docstring).

    Parameters
    ----------
    parallel : ParallelCollection, mapping, path or "auto"
        The paired documents (see :func:`gfun.baselines.crosslingual.resources.resolve_parallel`).
    data_dir : str, optional
        The dataset folder that ``parallel="auto"`` reads (the ``debtags`` or ``sib200`` folder the training
        corpus was built from); default ``$GFUN_DATA/<dataset>``. The experiments pass their ``--data-dir``.
    n_components : int
        Dimensions of the shared space (canonical variates).
    rank : int
        Rank of each language's kernel approximation.
    reg : float
        Regularisation, relative to each language's largest kernel eigenvalue.
    max_items : int, optional
        Use at most this many items of the collection (a random sample); ``None``: all.
    tfidf : MultilingualTfidf, optional
        The per-language vectorizers (``None``: ``MultilingualTfidf(min_df=2)``: the projection matrices have one
        row per term).
    classifier, n_jobs, random_state, kernel
        See :class:`gfun.baselines.crosslingual.base.CrossLingualClassifier`.

    Attributes
    ----------
    projections_ : dict of str to (mean, P)
        ``(tfidf - mean) @ P`` is a document's vector before scaling to unit length.
    correlations_ : ndarray of shape (n_components,)
    """

    _name = "KCCA"
    _resource_params = ("parallel",)
    parts = {"tfidf": partial(MultilingualTfidf, min_df=2), "classifier": LinearSVMs}

    def __init__(self, parallel: Any = AUTO, n_components: int = 300, rank: int = 500, reg: float = 0.1,
                 max_items: int | None = None, tfidf: MultilingualTfidf | None = None,
                 classifier: LinearSVMs | None = None, n_jobs: int | None = None,
                 random_state: int | None = None, kernel: str = "linear",
                 data_dir: str | None = None) -> None:
        self.parallel = parallel
        self.data_dir = data_dir
        self.n_components = n_components
        self.rank = rank
        self.reg = reg
        self.max_items = max_items
        self.kernel = kernel
        super().__init__(tfidf, classifier, n_jobs, random_state)

    def _fit_space(self, texts: dict[str, list[str]], Y: dict[str, np.ndarray], X: Any) -> None:
        coll = resolve_parallel(self.parallel, X, self.data_dir)
        langs = sorted(set(texts) | set(coll.languages))
        cover = np.sum([coll.present(lang) for lang in langs], axis=0)
        keep = np.flatnonzero(cover >= 2)
        if self.max_items and keep.size > self.max_items:
            keep = np.sort(np.random.RandomState(self.random_state).choice(keep, self.max_items, replace=False))
        coll = coll.subset(keep)
        views = {}
        described = {}
        for lang in langs:
            items = np.flatnonzero(coll.present(lang))
            if items.size < 2:
                if lang in texts:
                    raise ValueError(f"KCCA: the parallel collection pairs fewer than 2 {lang!r} texts with "
                                     "another language; it cannot place that training language")
                if items.size:
                    leave_out("KCCA", lang, int(items.size), "fewer than 2 texts paired with another language")
                continue
            described[lang] = items, [coll.texts[lang][i] for i in items]
        own = {lang: texts.get(lang, []) for lang in described}
        vectorizers, mats = fit_language_tfidf(
            self._tfidf, {lang: own[lang] + desc for lang, (_, desc) in described.items()}, texts, "KCCA")
        for lang, (items, _) in described.items():
            if lang in mats:
                views[lang] = (items, mats[lang][len(own[lang]):])  # the descriptions' rows
        self.projections_, self.correlations_ = fit_kcca(
            views, len(coll), n_components=self.n_components, rank=self.rank, reg=self.reg,
            random_state=self.random_state, optional=set(views) - set(texts))
        self.projections_ = {lang: (m.astype(np.float64), P.astype(np.float32))
                             for lang, (m, P) in self.projections_.items()}
        self.vectorizers_ = {lang: vectorizers[lang] for lang in self.projections_}
        self.languages_ = sorted(self.vectorizers_)
        logger.info("KCCA: %d items, languages %s, top correlations %s", len(coll), self.languages_,
                    np.round(self.correlations_[:5], 3).tolist())

    def _project(self, lang: str, Xl: sp.csr_matrix) -> np.ndarray:
        mean, P = self.projections_[lang]
        P64 = P.astype(np.float64)
        return l2_rows(np.asarray(Xl @ P64) - (mean @ P64)[None, :])

    def _space_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {"correlations": self.correlations_}
        for lang, (mean, P) in self.projections_.items():
            arrays[f"{lang}/mean"] = mean
            arrays[f"{lang}/P"] = P
        return {}, arrays

    def _load_space(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.correlations_ = np.asarray(arrays["correlations"])
        self.projections_ = {lang: (np.asarray(arrays[f"{lang}/mean"]), np.asarray(arrays[f"{lang}/P"]))
                             for lang in self.languages_}
