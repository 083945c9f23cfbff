"""Word-translation retrieval: precision@1 with cosine and with CSLS.

For each held-out source word, the nearest target word (among a candidate target vocabulary) is
retrieved; it is correct when it is one of the word's gold translations.  CSLS (Conneau et al.,
2018) corrects for hubness: ``csls(x, y) = 2 cos(x, y) - r_T(x) - r_S(y)`` with ``r_T(x)`` the
mean cosine of ``x`` to its ``k`` nearest target vectors and ``r_S(y)`` that of ``y`` to its
``k`` nearest source vectors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from gfun.wordvectors.base import WordVectorSource
from gfun.wordvectors.dictionaries import split_pairs
from gfun.wordvectors.procrustes import ProcrustesAligned

__all__ = ["AlignmentReport", "evaluate_alignment", "translation_precision"]

logger = logging.getLogger(__name__)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _mean_topk(queries: np.ndarray, keys: np.ndarray, k: int, chunk: int = 2048) -> np.ndarray:
    """Mean of the ``k`` largest cosines of each query row against the key rows."""
    k = max(1, min(k, len(keys)))
    out = np.empty(len(queries), dtype=np.float32)
    for start in range(0, len(queries), chunk):
        sims = queries[start : start + chunk] @ keys.T
        top = np.partition(sims, -k, axis=1)[:, -k:]
        out[start : start + chunk] = top.mean(axis=1)
    return out


def translation_precision(
    src_vectors: np.ndarray,
    tgt_vectors: np.ndarray,
    gold: Sequence[set[int]],
    *,
    csls_k: int = 10,
    src_background: np.ndarray | None = None,
) -> dict[str, float]:
    """Precision@1 of nearest-neighbour translation, by cosine and by CSLS.

    Parameters
    ----------
    src_vectors : numpy.ndarray
        ``(n_queries, dim)``, one row per test source word (zero rows count as misses).
    tgt_vectors : numpy.ndarray
        ``(n_candidates, dim)``, the candidate target vocabulary (zero rows are never retrieved).
    gold : sequence of set of int
        For each query, the candidate rows that are correct translations.
    csls_k : int
        Neighbourhood size of CSLS.
    src_background : numpy.ndarray, optional
        Source vectors over which ``r_S`` is computed (default: the queries themselves).

    Returns
    -------
    dict
        ``p1_cosine``, ``p1_csls`` (in [0, 1]) and ``n`` (number of queries).
    """
    q = _unit(np.asarray(src_vectors, dtype=np.float32))
    t = _unit(np.asarray(tgt_vectors, dtype=np.float32))
    bg = q if src_background is None else _unit(np.asarray(src_background, dtype=np.float32))
    valid_q = np.linalg.norm(src_vectors, axis=1) > 0
    valid_t = np.linalg.norm(tgt_vectors, axis=1) > 0
    t_valid = t[valid_t]
    bg = bg[np.linalg.norm(bg, axis=1) > 0]
    r_t = _mean_topk(q, t_valid, csls_k)
    r_s = np.zeros(len(t), dtype=np.float32)
    r_s[valid_t] = _mean_topk(t_valid, bg, csls_k)
    hits_cos = hits_csls = 0
    for start in range(0, len(q), 1024):
        sims = q[start : start + 1024] @ t.T
        sims[:, ~valid_t] = -np.inf
        best_cos = sims.argmax(axis=1)
        csls = 2 * sims - r_t[start : start + 1024, None] - r_s[None, :]
        best_csls = csls.argmax(axis=1)
        for j in range(len(best_cos)):
            i = start + j
            if not valid_q[i]:
                continue
            hits_cos += int(best_cos[j] in gold[i])
            hits_csls += int(best_csls[j] in gold[i])
    n = len(q)
    return {"p1_cosine": hits_cos / n if n else 0.0, "p1_csls": hits_csls / n if n else 0.0, "n": n}


@dataclass
class AlignmentReport:
    """Result of :func:`evaluate_alignment` (precisions in [0, 1])."""

    source: str
    src: str
    tgt: str
    procrustes: bool
    n_test: int
    n_candidates: int
    n_train_pairs: int
    coverage: float
    p1_cosine: float
    p1_csls: float
    seconds: float

    def as_dict(self) -> dict[str, object]:
        """The report as a plain dictionary."""
        return asdict(self)


def evaluate_alignment(
    source: WordVectorSource,
    pairs: Sequence[tuple[str, str]],
    *,
    src: str,
    tgt: str,
    n_test: int = 1000,
    max_candidates: int | None = 20000,
    use_procrustes: bool = False,
    n_train: int | None = 5000,
    csls_k: int = 10,
    seed: int = 0,
) -> AlignmentReport:
    """Measure word-translation P@1 of a source on held-out dictionary pairs.

    Parameters
    ----------
    source : WordVectorSource
        The vectors to evaluate (unrefined).
    pairs : sequence of (str, str)
        ``(src word, tgt word)`` dictionary pairs.
    src, tgt : str
        Languages.  With ``use_procrustes`` the target language is mapped onto ``src`` (the pivot,
        English in gfun's use) using training pairs only.
    n_test : int
        Number of held-out source words.
    max_candidates : int, optional
        Cap on the candidate target vocabulary: all gold translations of the test words plus a
        random sample of the other dictionary target words.
    use_procrustes : bool
        Refine with Procrustes fitted on pairs whose source word is not held out.
    n_train : int, optional
        Fit Procrustes on the pairs of at most this many (random) training source words, as
        MUSE's 5,000-word training dictionaries.
    csls_k : int
        CSLS neighbourhood size.
    seed : int
        Seed of the test split and of the candidate sample.

    Returns
    -------
    AlignmentReport
    """
    started = time.perf_counter()
    train, test = split_pairs(pairs, n_test, seed=seed)
    test_words = list(dict.fromkeys(a for a, _ in test))
    gold_words = {b for _, b in test}
    others = sorted({b for _, b in pairs} - gold_words)
    if max_candidates is not None and len(gold_words) + len(others) > max_candidates:
        rng = np.random.default_rng(seed + 1)
        keep = max(0, max_candidates - len(gold_words))
        others = [others[i] for i in sorted(rng.choice(len(others), size=keep, replace=False))]
    candidates = sorted(gold_words) + others
    row = {w: i for i, w in enumerate(candidates)}
    gold: dict[str, set[int]] = {}
    for a, b in test:
        gold.setdefault(a, set()).add(row[b])
    evaluated: WordVectorSource = source
    if n_train is not None:
        train_words = sorted({a for a, _ in train})
        if len(train_words) > n_train:
            rng = np.random.default_rng(seed + 2)
            kept = {train_words[i] for i in rng.choice(len(train_words), size=n_train, replace=False)}
            train = [p for p in train if p[0] in kept]
    if use_procrustes:
        evaluated = ProcrustesAligned(source, {tgt: [(b, a) for a, b in train]}, pivot=src)
    src_mat, src_found = evaluated.lookup(src, test_words)
    tgt_mat, _ = evaluated.lookup(tgt, candidates)
    scores = translation_precision(src_mat, tgt_mat, [gold[w] for w in test_words], csls_k=csls_k)
    report = AlignmentReport(
        source=source.name,
        src=src,
        tgt=tgt,
        procrustes=use_procrustes,
        n_test=len(test_words),
        n_candidates=len(candidates),
        n_train_pairs=len(train),
        coverage=float(src_found.mean()) if len(src_found) else 0.0,
        p1_cosine=float(scores["p1_cosine"]),
        p1_csls=float(scores["p1_csls"]),
        seconds=time.perf_counter() - started,
    )
    logger.info("%s", report)
    return report
