"""The per-language TF-IDF of gfun, on the :class:`~gfun.text.analysis.Analyzer`'s terms.

:class:`TfidfVectorizer`
    One language's bag of words, weighted exactly as equations 1-3 of the gFun paper:
    ``tf = 1 + ln(count)``, ``idf = ln(|Tr| / df)``, ``w = tf * idf`` followed by cosine
    normalisation of each document.
:class:`MultilingualTfidf`
    One :class:`TfidfVectorizer` per language of the training set (what every per-language model of gfun
    fits: the X view, the TF-IDF projection views, the Naive baseline, the cross-lingual baselines).

The saved states are tagged with the format names ``gfun.text.TfidfVectorizer`` and
``gfun.text.MultilingualTfidf``: identifiers recorded in saved models (not import paths), so they must not change
for those models to keep loading.
"""

from __future__ import annotations

import logging
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import delayed
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from gfun.core.parallel import document_blocks, on_dask_cluster, run_parallel
from gfun.core.state import checked_array, load_state, put_states
from gfun.errors import UnknownLanguageError
from gfun.text.analysis import UNSPACED_NGRAMS, Analyzer

__all__ = ["MultilingualTfidf", "TermCounts", "TfidfVectorizer", "merge_term_counts"]

logger = logging.getLogger("gfun.text")

STATE_VERSION = 1

# A language looks unsegmented (written without spaces, in a script the analyser does not cut) when, on at
# least _UNSEGMENTED_MIN_DOCS training documents, all three hold:
# - its text has few spaces: at least _UNSEGMENTED_CHARS_PER_WORD characters per whitespace-separated word
#   (50 SIB-200 documents: 4.2 to 7.6 in the 17 languages written with spaces, 18.7 to 50.8 in Chinese, Thai
#   and Japanese);
# - the analyser's tokens are long: at least _UNSEGMENTED_TOKEN_LEN characters on average (5.7 in English, at
#   most 6.9; about 1.5 to 3 once Chinese, Japanese and Thai are cut into n-grams, 10 to 40 when they are not);
# - more than _UNSEGMENTED_HAPAX_SHARE of its token occurrences are of terms found in one document only (alone,
#   this says little: small corpora of languages written with spaces reach 0.8 to 0.9).
_UNSEGMENTED_HAPAX_SHARE = 0.8
_UNSEGMENTED_CHARS_PER_WORD = 15.0
_UNSEGMENTED_TOKEN_LEN = 8.0
_UNSEGMENTED_MIN_DOCS = 20


def _check_texts(texts: Any) -> Iterable[str]:
    if isinstance(texts, str | bytes):
        raise TypeError("expected an iterable of texts, got a single string")
    return texts


def _tally_spacing(texts: Iterable[str], tally: list[int]) -> Iterable[str]:
    """Yield ``texts``, adding to ``tally`` their characters other than white space and their words."""
    for text in texts:
        words = text.split() if isinstance(text, str) else []
        tally[0] += sum(map(len, words))
        tally[1] += len(words)
        yield text


class TermCounts(NamedTuple):
    """The raw term counts of consecutive training texts of one language (:meth:`TfidfVectorizer.count_block`)."""

    #: float64 CSR (texts x terms), each row's columns sorted.
    counts: sp.csr_matrix
    #: The terms of the columns, in the order they first occur in the texts.
    terms: list[str]
    #: Characters other than white space and whitespace-separated words of the texts (the unsegmented-script check).
    spacing: list[int]


def _row_ids(indptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))


def _index_dtype(*maxima: int) -> type:
    return np.int32 if max(maxima) < np.iinfo(np.int32).max else np.int64


def _analyzer_params(est: Any) -> dict[str, Any]:
    return {"stopwords": est.stopwords, "stem": est.stem, "lowercase": est.lowercase,
            "min_len": est.min_len, "keep_numbers": est.keep_numbers, "segment": est.segment}


class TfidfVectorizer(BaseEstimator):
    """Bag-of-words TF-IDF for one language, as equations 1-3 of the gFun paper.

    For term ``w`` and document ``x``, with ``#(w, x)`` the count of ``w`` in ``x``, ``|Tr|`` the
    number of training documents and ``#Tr(w)`` the number of training documents containing
    ``w``::

        tf(w, x)    = 1 + ln #(w, x)     if #(w, x) > 0, else 0
        idf(w)      = ln(|Tr| / #Tr(w))  (0 for a term found in every training document)
        tfidf(w, x) = tf(w, x) * idf(w)
        weight      = tfidf / ||tfidf(., x)||_2   (a document whose weights are all 0 stays 0)

    Parameters
    ----------
    lang : str
        Language of the documents (selects stop words and stemmer, see :class:`Analyzer`).
    min_df : int, default 1
        Keep only terms occurring in at least this many training documents. Pruning does not
        change the idf of the terms kept (it is computed on all training documents).
    max_features : int or None, default None
        Keep only the ``max_features`` terms with the highest document frequency (ties broken
        alphabetically).
    dtype : numpy dtype, default np.float32
        Dtype of the returned matrices (computations are done in float64).
    stopwords, stem, lowercase, min_len, keep_numbers, segment
        Passed to :class:`Analyzer`.

    Attributes
    ----------
    vocabulary_ : dict[str, int]
        Term -> column. Columns are in alphabetical order of the terms.
    idf_ : ndarray of shape (n_terms,), float64
        The idf of each column.
    n_docs_ : int
        Number of training documents ``|Tr|``.
    analyzer_ : Analyzer
        The analyser used (its token cache is warm after fitting).

    Notes
    -----
    Terms not seen in training are ignored by :meth:`transform`; a document with no known term
    (or only terms with idf 0) gives an all-zero row.
    """

    def __init__(self, lang: str, *, min_df: int = 1, max_features: int | None = None,
                 dtype: Any = np.float32, stopwords: bool | Iterable[str] = True, stem: bool = True,
                 lowercase: bool = True, min_len: int = 2, keep_numbers: bool = False, segment: bool = True) -> None:
        self.lang = lang
        self.min_df = min_df
        self.max_features = max_features
        self.dtype = dtype
        self.stopwords = stopwords
        self.stem = stem
        self.lowercase = lowercase
        self.min_len = min_len
        self.keep_numbers = keep_numbers
        self.segment = segment

    # -- helpers ---------------------------------------------------------------------------
    def _validate(self) -> None:
        if isinstance(self.min_df, bool) or int(self.min_df) != self.min_df or self.min_df < 1:
            raise ValueError(f"min_df must be an integer >= 1, got {self.min_df!r}")
        if self.max_features is not None and (
            isinstance(self.max_features, bool) or int(self.max_features) != self.max_features
            or self.max_features < 1
        ):
            raise ValueError(f"max_features must be None or an integer >= 1, got {self.max_features!r}")
        if not np.issubdtype(np.dtype(self.dtype), np.floating):
            raise ValueError(f"dtype must be a floating-point dtype, got {self.dtype!r}")

    def _count(self, texts: Iterable[str], vocabulary: dict[str, int] | None, analyzer: Analyzer | None = None,
               ) -> tuple[sp.csr_matrix, dict]:
        """Raw term counts (float64 CSR). With ``vocabulary=None`` the vocabulary is grown, its terms in the order
        they first occur. ``analyzer``: another than ``analyzer_`` (a block of training texts counted as a job)."""
        analyze = self.analyzer_ if analyzer is None else analyzer
        indices = array("q")
        indptr = array("q", [0])
        if vocabulary is None:
            vocab: dict[str, int] = defaultdict()
            vocab.default_factory = vocab.__len__  # type: ignore[attr-defined]
            lookup: Callable[[str], int] = vocab.__getitem__
            for text in _check_texts(texts):
                indices.extend(map(lookup, analyze(text)))
                indptr.append(len(indices))
            vocab = dict(vocab)
        else:
            vocab = vocabulary
            get = vocab.get
            for text in _check_texts(texts):
                indices.extend([j for j in map(get, analyze(text)) if j is not None])
                indptr.append(len(indices))
        n_docs = len(indptr) - 1
        idx_dtype = _index_dtype(len(indices), len(vocab))
        counts = sp.csr_matrix(
            (np.ones(len(indices)), np.frombuffer(indices, dtype=np.int64).astype(idx_dtype),
             np.frombuffer(indptr, dtype=np.int64).astype(idx_dtype)),
            shape=(n_docs, len(vocab)),
        )
        counts.sum_duplicates()
        return counts, vocab

    def _weight(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """Equations 1-3 applied to a count matrix whose columns are the fitted vocabulary."""
        data = (1.0 + np.log(counts.data)) * self.idf_[counts.indices]
        rows = _row_ids(counts.indptr)
        norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=counts.shape[0]))
        norms[norms == 0.0] = 1.0
        data /= norms[rows]
        out = sp.csr_matrix((data.astype(self.dtype, copy=False), counts.indices, counts.indptr),
                            shape=counts.shape)
        out.eliminate_zeros()
        return out

    # -- estimator API ---------------------------------------------------------------------
    def _fit(self, texts: Iterable[str]) -> sp.csr_matrix:
        self._validate()
        self.analyzer_ = Analyzer(self.lang, **_analyzer_params(self))
        spacing = [0, 0]  # characters other than white space, whitespace-separated words
        counts, vocab = self._count(_tally_spacing(_check_texts(texts), spacing), None)
        return self._fit_counts(TermCounts(counts, list(vocab), spacing))

    def count_block(self, texts: Iterable[str]) -> TermCounts:
        """The raw counts of a block of this language's training texts over the block's own terms: what
        :meth:`fit_blocks` merges. It changes nothing in the vectorizer (blocks can be counted at once)."""
        self._validate()
        spacing = [0, 0]
        counts, vocab = self._count(_tally_spacing(_check_texts(texts), spacing), None,
                                    Analyzer(self.lang, **_analyzer_params(self)))
        return TermCounts(counts, list(vocab), spacing)

    def fit_blocks(self, blocks: Sequence[TermCounts]) -> sp.csr_matrix:
        """Fit on the training texts counted in consecutive blocks (:meth:`count_block`, in the texts' order);
        returns their raw counts over the fitted vocabulary. The vocabulary, the idf and the counts are those of
        fitting on all the texts at once, bit for bit: the blocks' terms are merged in the order they first occur,
        as one pass over the texts meets them."""
        self._validate()
        self.analyzer_ = Analyzer(self.lang, **_analyzer_params(self))
        return self._fit_counts(merge_term_counts(blocks))

    def _fit_counts(self, block: TermCounts) -> sp.csr_matrix:
        """The vocabulary (pruned, alphabetical), the idf and the training counts over it, from the raw counts of
        all the training texts."""
        counts, terms, spacing = block
        n_docs = counts.shape[0]
        if n_docs == 0:
            raise ValueError(f"cannot fit the TF-IDF of language {self.lang!r} on zero documents")
        df = np.bincount(counts.indices, minlength=len(terms))
        self._check_segmented(counts, df, terms, spacing[0] / max(spacing[1], 1))
        keep = np.flatnonzero(df >= self.min_df)
        if self.max_features is not None and len(keep) > self.max_features:
            by_df = sorted(keep, key=lambda j: (-df[j], terms[j]))
            keep = np.array(by_df[: self.max_features], dtype=np.int64)
        keep = np.array(sorted(keep, key=terms.__getitem__), dtype=np.int64)
        if len(keep) == 0:
            where = f" occurring in at least min_df={self.min_df} documents" if self.min_df > 1 else ""
            raise ValueError(f"empty vocabulary for language {self.lang!r} ({n_docs} documents): "
                             f"the documents contain no terms{where} (they are empty, or every token is a stop "
                             f"word, a number or shorter than {self.min_len} characters)")
        # Remap the columns to the alphabetical order of the kept terms, dropping the others.
        mapping = np.full(len(terms), -1, dtype=np.int64)
        mapping[keep] = np.arange(len(keep))
        new_cols = mapping[counts.indices]
        mask = new_cols >= 0
        row_counts = np.bincount(_row_ids(counts.indptr)[mask], minlength=n_docs)
        indptr = np.concatenate([[0], np.cumsum(row_counts)])
        idx_dtype = _index_dtype(int(indptr[-1]), len(keep))
        counts = sp.csr_matrix(
            (counts.data[mask], new_cols[mask].astype(idx_dtype), indptr.astype(idx_dtype)),
            shape=(n_docs, len(keep)),
        )
        counts.sort_indices()
        self.vocabulary_ = {terms[j]: i for i, j in enumerate(keep)}
        self.idf_ = np.log(n_docs / df[keep].astype(np.float64))
        self.n_docs_ = int(n_docs)
        logger.debug("TF-IDF %s: %d documents, %d terms (%d before pruning)", self.lang, n_docs, len(keep),
                     len(terms))
        return counts

    def _check_segmented(self, counts: sp.csr_matrix, df: np.ndarray, terms: list[str],
                         chars_per_word: float) -> None:
        """Warn when the text is written without spaces and the analyser could not cut it into terms.

        ``chars_per_word`` is the number of characters (white space excluded) per whitespace-separated word of
        the training documents. The warning needs few spaces, long tokens and mostly single-document terms
        (see ``_UNSEGMENTED_*``); a high share of single-document terms alone is what any small corpus shows.
        """
        n_docs = counts.shape[0]
        total = counts.data.sum()
        if (not self.segment or n_docs < _UNSEGMENTED_MIN_DOCS or total == 0  # segment=False: whole runs wanted
                or chars_per_word < _UNSEGMENTED_CHARS_PER_WORD):
            return
        lengths = np.fromiter(map(len, terms), dtype=np.float64, count=len(terms))
        token_len = float(counts.data @ lengths[counts.indices]) / total
        share = counts.data[df[counts.indices] == 1].sum() / total
        if token_len >= _UNSEGMENTED_TOKEN_LEN and share > _UNSEGMENTED_HAPAX_SHARE:
            longest = sorted(terms, key=len, reverse=True)[:2]
            logger.warning(
                "language %r: its %d training documents have %.0f characters per space-separated word and its "
                "tokens %.0f characters on average, %.0f%% of which occur in one document only (e.g. %s): its "
                "script seems to be written without spaces between words and gfun cannot tokenise it, so its "
                "TF-IDF features are nearly useless (scripts cut into character n-grams: %s)",
                self.lang, n_docs, chars_per_word, token_len, 100 * share,
                ", ".join(repr(t[:30]) for t in longest), ", ".join(UNSPACED_NGRAMS))

    def fit(self, texts: Iterable[str], y: Any = None) -> TfidfVectorizer:
        """Learn the vocabulary and the idf from the training documents of this language.

        Parameters
        ----------
        texts : iterable of str
        y : ignored

        Returns
        -------
        self
        """
        self._fit(texts)
        return self

    def fit_transform(self, texts: Iterable[str], y: Any = None) -> sp.csr_matrix:
        """Fit and return the TF-IDF matrix of the training documents (same as ``fit(t).transform(t)``)."""
        return self._weight(self._fit(texts))

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """TF-IDF matrix of ``texts``, shape ``(n_texts, len(vocabulary_))``, rows of unit L2 norm or zero.

        Parameters
        ----------
        texts : iterable of str

        Returns
        -------
        scipy.sparse.csr_matrix of dtype ``dtype``
        """
        check_is_fitted(self, "vocabulary_")
        counts, _ = self._count(texts, self.vocabulary_)
        counts.sort_indices()
        return self._weight(counts)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The terms, in column order (object array, as scikit-learn does)."""
        check_is_fitted(self, "vocabulary_")
        return np.asarray(self._terms(), dtype=object)

    def _terms(self) -> list[str]:
        terms = [""] * len(self.vocabulary_)
        for term, j in self.vocabulary_.items():
            terms[j] = term
        return terms

    # -- persistence -----------------------------------------------------------------------
    def _params_state(self) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "min_df": int(self.min_df),
            "max_features": None if self.max_features is None else int(self.max_features),
            "dtype": np.dtype(self.dtype).name,
            "stopwords": (bool(self.stopwords) if isinstance(self.stopwords, bool | np.bool_)
                          else [str(w) for w in self.stopwords]),
            "stem": bool(self.stem),
            "lowercase": bool(self.lowercase),
            "min_len": int(self.min_len),
            "keep_numbers": bool(self.keep_numbers),
            "segment": bool(self.segment),
        }

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The fitted state as a JSON-serialisable dict and a dict of numeric arrays (no pickle).

        Returns
        -------
        meta : dict
            ``format``, ``version``, ``params``, ``n_docs`` and ``vocabulary`` (the terms in
            column order).
        arrays : dict[str, ndarray]
            ``idf`` (float64).
        """
        check_is_fitted(self, "vocabulary_")
        meta = {
            "format": "gfun.text.TfidfVectorizer",
            "version": STATE_VERSION,
            "params": self._params_state(),
            "n_docs": self.n_docs_,
            "vocabulary": self._terms(),
        }
        return meta, {"idf": np.asarray(self.idf_, dtype=np.float64)}

    @classmethod
    def from_state(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> TfidfVectorizer:
        """Rebuild a fitted vectorizer from :meth:`get_state`'s output."""
        if meta.get("format") != "gfun.text.TfidfVectorizer":
            raise ValueError(f"not a TfidfVectorizer state (format={meta.get('format')!r})")
        if meta.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported TfidfVectorizer state version {meta.get('version')!r}")
        params = dict(meta["params"])
        params["dtype"] = np.dtype(params["dtype"]).type
        lang = params.pop("lang")
        est = cls(lang, **params)
        vocabulary = list(meta["vocabulary"])
        idf = np.array(checked_array(arrays, "idf", (len(vocabulary),), what="one value per term of the vocabulary"),
                       dtype=np.float64)
        if len(set(vocabulary)) != len(vocabulary):
            raise ValueError("vocabulary contains duplicate terms")
        est._validate()
        est.analyzer_ = Analyzer(lang, **_analyzer_params(est))
        est.vocabulary_ = {term: j for j, term in enumerate(vocabulary)}
        est.idf_ = idf
        est.n_docs_ = int(meta["n_docs"])
        return est


def merge_term_counts(blocks: Sequence[TermCounts]) -> TermCounts:
    """The counts of consecutive blocks of texts as one pass over all of them gives them: each block's columns
    renumbered into the terms of all blocks in the order they first occur, the rows stacked in block order."""
    if not blocks:
        raise ValueError("no block of counts to merge")
    terms: dict[str, int] = {}
    renumbered = []
    for counts, block_terms, _ in blocks:
        ids = np.fromiter((terms.setdefault(t, len(terms)) for t in block_terms), dtype=np.int64,
                          count=len(block_terms))
        renumbered.append((counts, ids))
    n_terms = len(terms)
    parts = [sp.csr_matrix((counts.data, ids[counts.indices], counts.indptr.astype(np.int64)),
                           shape=(counts.shape[0], n_terms)) for counts, ids in renumbered]
    merged = sp.vstack(parts, format="csr")
    merged.sort_indices()
    spacing = [sum(int(b.spacing[0]) for b in blocks), sum(int(b.spacing[1]) for b in blocks)]
    return TermCounts(merged, list(terms), spacing)


def _fit_vectorizer(vec: TfidfVectorizer, texts: Iterable[str], weight: bool,
                    ) -> tuple[TfidfVectorizer, sp.csr_matrix | None]:
    """Fit one language's vectorizer (a job of :class:`MultilingualTfidf`); its training matrix with ``weight``."""
    if weight:
        return vec, vec.fit_transform(texts)
    return vec.fit(texts), None


def _count_block(vec: TfidfVectorizer, texts: list[str]) -> TermCounts:
    """Count a block of one language's training texts (a job of :class:`MultilingualTfidf`)."""
    return vec.count_block(texts)


def _fit_counted(vec: TfidfVectorizer, blocks: list[TermCounts], weight: bool,
                 ) -> tuple[TfidfVectorizer, sp.csr_matrix | None]:
    """Fit one language's vectorizer on its counted blocks (a job of :class:`MultilingualTfidf`)."""
    counts = vec.fit_blocks(blocks)
    return vec, (vec._weight(counts) if weight else None)


class MultilingualTfidf(BaseEstimator):
    """One :class:`TfidfVectorizer` per language, fitted on that language's training documents.

    The one implementation of gfun's per-language TF-IDF: the X view, the TF-IDF projection views (M, W), the
    R view's vocabularies, the Naive and UpperBound baselines and the cross-lingual baselines fit theirs here.
    :meth:`fit_transform` groups texts by their language; :meth:`fit_by_language` and
    :meth:`fit_transform_by_language` take the documents of each language (a language's training documents
    plus, for the cross-lingual baselines, its texts of a parallel collection).

    Parameters
    ----------
    min_df, max_features, dtype, stopwords, stem, lowercase, min_len, keep_numbers, segment
        Passed to every :class:`TfidfVectorizer` (explicit keywords rather than ``**kwargs`` so
        that ``get_params``/``clone`` work).
    n_jobs : int, optional
        Languages fitted in parallel (:func:`gfun.core.parallel.run_parallel`: threads by default; a
        ``joblib.parallel_config`` backend, processes or Dask, takes over). Not part of the saved state.

    Attributes
    ----------
    vectorizers_ : dict[str, TfidfVectorizer]
        The fitted vectorizer of each language.
    languages_ : list of str
        The languages seen in fit, sorted.
    """

    def __init__(self, *, min_df: int = 1, max_features: int | None = None, dtype: Any = np.float32,
                 stopwords: bool | Iterable[str] = True, stem: bool = True, lowercase: bool = True,
                 min_len: int = 2,
                 keep_numbers: bool = False, segment: bool = True, n_jobs: int | None = None) -> None:
        self.min_df = min_df
        self.max_features = max_features
        self.dtype = dtype
        self.stopwords = stopwords
        self.stem = stem
        self.lowercase = lowercase
        self.min_len = min_len
        self.keep_numbers = keep_numbers
        self.segment = segment
        self.n_jobs = n_jobs

    def _vectorizer(self, lang: str) -> TfidfVectorizer:
        return TfidfVectorizer(lang, min_df=self.min_df, max_features=self.max_features, dtype=self.dtype,
                               **_analyzer_params(self))

    @staticmethod
    def _group(texts: Sequence[str], langs: Sequence[str]) -> dict[str, np.ndarray]:
        texts = _check_texts(texts)
        if isinstance(langs, str):
            raise TypeError("langs must be a sequence with one language per text, got a single string")
        if len(texts) != len(langs):
            raise ValueError(f"texts and langs differ in length ({len(texts)} != {len(langs)})")
        groups: dict[str, list[int]] = defaultdict(list)
        for i, lang in enumerate(langs):
            groups[str(lang)].append(i)
        return {lang: np.asarray(groups[lang], dtype=np.int64) for lang in sorted(groups)}

    @staticmethod
    def _take(texts: Sequence[str], rows: np.ndarray) -> list[str]:
        return [texts[i] for i in rows.tolist()]

    def fit(self, texts: Sequence[str], langs: Sequence[str]) -> MultilingualTfidf:
        """Fit one vectorizer per language.

        Parameters
        ----------
        texts : sequence of str
        langs : sequence of str
            The language of each text.

        Returns
        -------
        self
        """
        self.fit_transform(texts, langs)
        return self

    def fit_transform(self, texts: Sequence[str], langs: Sequence[str]) -> dict[str, tuple[np.ndarray,
                                                                                            sp.csr_matrix]]:
        """Fit and return the training matrices, as :meth:`transform` would."""
        texts = list(_check_texts(texts))
        if not texts:
            raise ValueError("cannot fit MultilingualTfidf on zero documents")
        groups = self._group(texts, langs)
        matrices = self.fit_transform_by_language({lang: self._take(texts, rows) for lang, rows in groups.items()})
        return {lang: (rows, matrices[lang]) for lang, rows in groups.items()}

    def fit_by_language(self, docs: Mapping[str, Iterable[str]]) -> MultilingualTfidf:
        """Fit the vectorizer of each language of ``docs`` on its documents (``{lang: texts}``); returns self."""
        self._fit_by_language(docs, weight=False)
        return self

    def fit_transform_by_language(self, docs: Mapping[str, Iterable[str]]) -> dict[str, sp.csr_matrix]:
        """:meth:`fit_by_language`, returning each language's training matrix (``{lang: csr_matrix}``)."""
        return self._fit_by_language(docs, weight=True)

    def _fit_by_language(self, docs: Mapping[str, Iterable[str]], weight: bool) -> dict[str, sp.csr_matrix]:
        if isinstance(docs, str) or not isinstance(docs, Mapping):
            raise TypeError(f"docs must map each language to its texts, got {type(docs).__name__}")
        langs = [str(lang) for lang in docs]
        if on_dask_cluster():  # a language's texts counted in blocks where it has more than the workers' share
            texts = [list(_check_texts(t)) for t in docs.values()]
            n_blocks = document_blocks([len(t) for t in texts], self.n_jobs)
            cuts = [np.array_split(np.arange(len(t)), b) for t, b in zip(texts, n_blocks, strict=True)]
            counted = iter(run_parallel((delayed(_count_block)(self._vectorizer(lang), [t[i] for i in cut.tolist()])
                                         for lang, t, lang_cuts in zip(langs, texts, cuts, strict=True)
                                         for cut in lang_cuts), self.n_jobs))
            blocks = [[next(counted) for _ in lang_cuts] for lang_cuts in cuts]
            results = run_parallel((delayed(_fit_counted)(self._vectorizer(lang), parts, weight)
                                    for lang, parts in zip(langs, blocks, strict=True)), self.n_jobs)
        else:
            results = run_parallel((delayed(_fit_vectorizer)(self._vectorizer(lang), _check_texts(texts), weight)
                                    for lang, texts in zip(langs, docs.values(), strict=True)), self.n_jobs)
        self.vectorizers_ = {lang: vec for lang, (vec, _) in zip(langs, results, strict=True)}
        self.languages_ = sorted(self.vectorizers_)
        return {lang: X for lang, (_, X) in zip(langs, results, strict=True)}

    def transform(self, texts: Sequence[str], langs: Sequence[str]) -> dict[str, tuple[np.ndarray,
                                                                                        sp.csr_matrix]]:
        """TF-IDF matrices of ``texts``, grouped by language.

        Parameters
        ----------
        texts : sequence of str
        langs : sequence of str

        Returns
        -------
        dict[str, tuple[ndarray, csr_matrix]]
            For each language present in ``langs`` (sorted), the indices of its rows in the
            input and their TF-IDF matrix (in the space of that language's vectorizer).

        Raises
        ------
        UnknownLanguageError
            When a language was not seen in :meth:`fit`.
        """
        check_is_fitted(self, "vectorizers_")
        texts = list(_check_texts(texts))
        groups = self._group(texts, langs)
        for lang in groups:
            if lang not in self.vectorizers_:
                raise UnknownLanguageError(lang, self.vectorizers_)
        return {lang: (rows, self.vectorizers_[lang].transform(self._take(texts, rows)))
                for lang, rows in groups.items()}

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The fitted state: a JSON-serialisable dict and numeric arrays keyed ``"<lang>.<name>"``."""
        check_is_fitted(self, "vectorizers_")
        arrays: dict[str, np.ndarray] = {}
        metas = put_states(self.vectorizers_, "{}.", arrays)
        params = {k: v for k, v in self._vectorizer("xx")._params_state().items() if k != "lang"}
        meta = {
            "format": "gfun.text.MultilingualTfidf",
            "version": STATE_VERSION,
            "params": params,
            "languages": list(self.languages_),
            "vectorizers": metas,
        }
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> MultilingualTfidf:
        """Rebuild a fitted :class:`MultilingualTfidf` from :meth:`get_state`'s output."""
        if meta.get("format") != "gfun.text.MultilingualTfidf":
            raise ValueError(f"not a MultilingualTfidf state (format={meta.get('format')!r})")
        if meta.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported MultilingualTfidf state version {meta.get('version')!r}")
        params = {"segment": False, **meta["params"]}
        params["dtype"] = np.dtype(params["dtype"]).type
        est = cls(**params)
        est.vectorizers_ = {lang: load_state(TfidfVectorizer, meta["vectorizers"][lang], arrays, f"{lang}.")
                            for lang in meta["languages"]}
        est.languages_ = list(meta["languages"])
        return est
