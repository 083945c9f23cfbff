"""What a view built on words says about the words of one document, for explanations.

Two readings, one per kind of view:

* :class:`LinearTerms`, for the views whose per-class score is linear in the document's TF-IDF weights (the
  Posteriors view X and the pooled view P: ``score_j = sum_t w_jt * x_t + b_j``): each term's share
  ``w_jt * x_t`` of the score, the terms' shares and the intercept adding up to the score;
* :class:`TermOcclusion`, for the views that pass the TF-IDF weights through something nonlinear (the word-embedding
  view M, the word-class-embedding view W): the view of the document and its view with each term removed, from
  which the change a term makes is read further on (:mod:`gfun.funnelling.explanation`).

:func:`term_words` names the words of the text behind each term (a stem's surface forms).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["LinearTerms", "TermOcclusion", "linear_terms", "term_words"]

_WORD = re.compile(r"\w+")


@dataclass
class LinearTerms:
    """The terms of one document and their shares of a linear view's per-class scores.

    Attributes
    ----------
    terms : list of str
        The document's terms in the view's vocabulary (stems for the X view), in column order.
    words : list of list of str
        For each term, the words of the text it comes from (lower-cased, first occurrence first).
    values : ndarray (n_terms, n_classes)
        ``w_jt * x_t``: the term's weight in the class's linear SVM times its TF-IDF weight in the document.
    intercept : ndarray (n_classes,)
        The SVMs' intercepts ``b_j``.
    scores : ndarray (n_classes,)
        The view's decision scores of the document (``values.sum(0) + intercept``, up to float32 rounding: the
        view computes them in float32), which its Platt sigmoids turn into its posteriors.
    """

    terms: list[str]
    words: list[list[str]]
    values: np.ndarray
    intercept: np.ndarray
    scores: np.ndarray


@dataclass
class TermOcclusion:
    """The view of one document and its view with each of the document's terms removed.

    Attributes
    ----------
    terms : list of str
        The document's terms the view weighs (those of its vocabulary; every term for a language the view has no
        training documents of).
    words : list of list of str
        For each term, the words of the text it comes from.
    views : ndarray (1 + n_terms, dim)
        Row 0: the document's view (as :meth:`~gfun.views.base.ViewGenerator.transform` gives it); row ``1 + t``:
        the view of the document without term ``t`` (every occurrence removed, the other terms' weights unchanged).
    """

    terms: list[str]
    words: list[list[str]]
    views: np.ndarray


def term_words(text: str, terms: Sequence[str], tokenize: Callable[[str], list[str]],
               analyze: Callable[[str], list[str]]) -> list[list[str]]:
    """The words of ``text`` behind each of ``terms``, as the text spells them: the runs of word characters whose
    analysis (``analyze``: normalisation, stop words, stemming) gives the term, else the analyser's own tokens
    (``tokenize``, normalised: lower-cased) that give it, else the term itself (a bigram)."""
    wanted: dict[str, list[str]] = {t: [] for t in terms}
    for tokens in (_WORD.findall(text), tokenize(text)):
        for token in tokens:
            for term in analyze(token):
                found = wanted.get(term)
                if found is not None and token not in found:
                    found.append(token)
        if all(wanted.values()):
            break
    return [wanted[t] or [t] for t in terms]


def linear_terms(row: sp.spmatrix, coef: np.ndarray, intercept: np.ndarray, vocabulary: Sequence[str],
                 words: Callable[[list[str]], list[list[str]]]) -> LinearTerms:
    """:class:`LinearTerms` of one document's TF-IDF ``row`` (1 x n_terms) under the linear SVMs ``coef``
    (n_classes x n_terms) and ``intercept``; ``vocabulary`` names the columns, ``words(terms)`` gives their words."""
    row = sp.csr_matrix(row)
    row.sum_duplicates()
    cols = row.indices
    x = row.data.astype(np.float64)
    values = (np.asarray(coef[:, cols], dtype=np.float64) * x).T
    scores = np.asarray(row @ coef.T, dtype=np.float64).ravel() + intercept
    terms = [str(vocabulary[j]) for j in cols]
    return LinearTerms(terms, words(terms), values, np.asarray(intercept, dtype=np.float64), scores)
