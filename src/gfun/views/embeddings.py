"""The word-embeddings view (M): TF-IDF-weighted averages of aligned multilingual word vectors.

For a language ``L`` with TF-IDF matrix ``X_L`` (documents x the language's vocabulary, the
weighting of equations 1-3) and aligned word-vector matrix ``E_L`` (one row per vocabulary term,
a zero row for a term the source has no vector for), the view of the documents is::

    Z = l2(sif(X_L @ E_L))

where ``sif`` removes the first principal component fitted on the training views (see
:mod:`gfun.views.sif`) and ``l2`` scales each row to unit norm (an all-zero row stays zero).
Because the word vectors of all languages live in one space, so do the views.

Zero-shot: a language without training documents is covered whenever the word-vector source has
vectors for it. Its documents are weighted by a fixed rule, each on its own: sublinear term frequency
``1 + ln(count)`` with idf 1 (no statistic of the language can be learned at fit time, and one learned
from the documents being transformed, as the paper's footnote 7 suggests, would make a document's view
depend on the other documents of its batch: a served prediction must not), cosine-normalised, every
term of the document kept (``min_df`` does not apply). The common component removed from such views is
the one fitted on the training views of all languages: test documents never change each other's views.

:class:`_TfidfProjectionView` holds what the M and W views (:mod:`gfun.views.wce`) share.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from gfun.core.state import checked_array, load_state, put_state, put_states
from gfun.errors import ReferenceMismatchError
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer
from gfun.views.base import LanguageCoverage, LanguageReach, ViewGenerator
from gfun.views.normalization import l2_normalize
from gfun.views.sif import CommonComponents, SIFMode
from gfun.views.words import TermOcclusion, term_words

__all__ = ["WordEmbeddingView", "build_source", "oov_token_share", "source_covers"]

logger = logging.getLogger(__name__)

#: Spec of a word-vector source: see :func:`build_source`.
SourceSpec = str | os.PathLike | Mapping[str, Any]

_SPEC_KINDS = ("e5", "e5-subword", "encoder", "encoder-subword", "vec")


def build_source(spec: Any) -> Any:
    """Build a :class:`gfun.wordvectors.base.WordVectorSource` from a JSON-able spec.

    Parameters
    ----------
    spec : str, path-like, dict or WordVectorSource
        * a string understood by :func:`gfun.wordvectors.make_source`: ``"e5"`` (vectors derived
          from the offline multilingual-e5-small, each word encoded in isolation), ``"e5-subword"``,
          ``"encoder:<model>"``, ``"encoder-subword:<model>"``, ``"vec:<folder or template>"``;
        * a folder of ``.vec`` files (``wiki.multi.<lang>.vec``, ``<lang>.vec``) or a path template
          containing ``{lang}`` (same as ``"vec:<path>"``);
        * a dict ``{"spec": <one of the above>, **options}``, options going to the source's
          constructor (e.g. ``{"spec": "vec:/data/muse", "max_rows": 200000, "cache": False}``), or
          ``{"files": {lang: path, ...}, **options}`` for one explicit ``.vec`` file per language;
        * an already built source, returned as is (such a view cannot be saved).

    Returns
    -------
    WordVectorSource
    """
    from gfun.wordvectors import make_source
    from gfun.wordvectors.base import WordVectorSource
    from gfun.wordvectors.vecfile import VecFileSource

    if isinstance(spec, WordVectorSource):
        return spec
    if isinstance(spec, Mapping):
        options = dict(spec)
        if "files" in options:
            return VecFileSource(options.pop("files"), **options)
        if "spec" not in options:
            raise ValueError(f"a source given as a dict needs a 'spec' or a 'files' entry, got keys {sorted(options)}")
        inner = options.pop("spec")
        text = os.fspath(inner)
        if text.partition(":")[0] not in _SPEC_KINDS:
            text = f"vec:{text}"
        return make_source(text, **options)
    if isinstance(spec, str | os.PathLike):
        text = os.fspath(spec)
        if text.partition(":")[0] in _SPEC_KINDS:
            return make_source(text)
        if "{lang}" in text or Path(text).is_dir():
            return make_source(f"vec:{text}")
        raise ValueError(f"word-vector source {text!r} is neither a known spec ({', '.join(_SPEC_KINDS)}) nor a "
                         "folder of .vec files nor a template with '{lang}'")
    raise TypeError(f"cannot build a word-vector source from a {type(spec).__name__}")


def _encoder_source(spec: Any) -> bool:
    """Whether a source spec derives its vectors from a sub-word encoder (``e5``, ``encoder:...``)."""
    from gfun.wordvectors.encoder import EncoderWordVectors

    if isinstance(spec, Mapping):
        spec = spec.get("spec")
    if isinstance(spec, str | os.PathLike):
        return os.fspath(spec).partition(":")[0] in ("e5", "e5-subword", "encoder", "encoder-subword")
    return isinstance(spec, EncoderWordVectors)


def _subword_source(spec: Any) -> bool:
    """Whether a source spec gives sub-word means of an encoder's input embeddings (``e5-subword``,
    ``encoder-subword:<model>``): vectors that are a cheap, deterministic function of a local encoder."""
    if isinstance(spec, Mapping):
        if "files" in spec:
            return False
        spec = spec.get("spec")
    return isinstance(spec, str | os.PathLike) and os.fspath(spec).partition(":")[0] in ("e5-subword",
                                                                                          "encoder-subword")


def matrix_sha256(matrix: np.ndarray) -> str:
    """SHA-256 of a float32 word-vector matrix (its shape and bytes): identifies what a loaded view recomputes."""
    arr = np.ascontiguousarray(matrix, dtype=np.float32)
    h = hashlib.sha256(str(arr.shape).encode("ascii"))
    h.update(memoryview(arr).cast("B"))
    return h.hexdigest()


def source_covers(source: Any, lang: str) -> bool:
    """Whether a word-vector source can give vectors for ``lang``.

    A source with a ``covers(lang)`` method is asked; a ``.vec`` source covers the languages it
    finds a file for; a wrapper (Procrustes refinement) covers what its base source covers; any
    other source (vectors derived from an encoder) covers every language.
    """
    covers = getattr(source, "covers", None)
    if callable(covers):
        return bool(covers(lang))
    inner = getattr(source, "source", None)
    if inner is not None and hasattr(inner, "lookup"):
        return source_covers(inner, lang)
    path_for = getattr(source, "path_for", None)
    if callable(path_for):
        try:
            path_for(lang)
        except FileNotFoundError:
            return False
        return True
    return True


def oov_token_share(vectorizer: TfidfVectorizer, texts: Sequence[str], found: np.ndarray) -> float:
    """Share of the tokens of ``texts`` (terms of the vectorizer's vocabulary) that have no word vector.

    Tokens that the analyser drops (stop words, short tokens) or that are outside the TF-IDF
    vocabulary do not count.
    """
    analyze = vectorizer.analyzer_
    vocab = vectorizer.vocabulary_
    total = oov = 0
    for text in texts:
        for term in analyze(text):
            j = vocab.get(term)
            if j is not None:
                total += 1
                oov += not found[j]
    return oov / total if total else 0.0


class _TfidfProjectionView(ViewGenerator):
    """Shared machinery: per-language TF-IDF, projection ``X_L @ M_L``, SIF, L2.

    Subclasses define :meth:`_vectorizer_params`, :meth:`_fit_matrix` and optionally
    :meth:`_training_views` and :meth:`_unseen_views`, and carry a ``sif`` parameter.
    """

    sif: SIFMode

    # -- hooks -------------------------------------------------------------------------------
    def _vectorizer_params(self) -> dict:
        raise NotImplementedError

    def _fit_matrix(self, lang: str, vectorizer: TfidfVectorizer, X: sp.csr_matrix, texts: list[str],
                    Y: np.ndarray) -> np.ndarray:
        """The (n_terms, dim) matrix of ``lang`` projected on by its TF-IDF."""
        raise NotImplementedError

    def _training_views(self, lang: str, X: sp.csr_matrix, Y: np.ndarray, matrix: np.ndarray) -> np.ndarray:
        """Raw (before SIF and L2) views of the training documents of ``lang``."""
        return np.asarray(X @ matrix, dtype=np.float64)

    def _unseen_views(self, lang: str, texts: list[str]) -> np.ndarray:
        """Raw views of documents of a language without training documents."""
        raise NotImplementedError

    def _unseen_rows(self, lang: str, texts: list[str]) -> tuple[TfidfVectorizer, sp.csr_matrix, np.ndarray] | None:
        """The weighting of documents of a language without training documents: the vectorizer, the documents'
        rows and the matrix they are projected on (``None`` when the documents contain no term)."""
        raise NotImplementedError

    def _matrix(self, lang: str) -> np.ndarray:
        return self.matrices_[lang]

    def _check_fit_params(self) -> None:
        CommonComponents(self.sif)  # validates the mode

    # -- ViewGenerator -----------------------------------------------------------------------
    def release(self) -> None:
        """Drop the word-vector source (possibly an encoder): it is rebuilt on demand, never stored."""
        self.source_ = None

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        self._check_fit_params()
        langs = np.asarray(langs, dtype=object)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int8)
        if len(texts) != len(langs) or len(texts) != Y.shape[0]:
            raise ValueError(f"{len(texts)} texts, {len(langs)} languages and {Y.shape[0]} label rows")
        tfidf = MultilingualTfidf(**self._vectorizer_params())
        matrices = tfidf.fit_transform(texts, langs)
        groups = {lang: rows for lang, (rows, _) in matrices.items()}
        self.vectorizers_: dict[str, TfidfVectorizer] = tfidf.vectorizers_
        self.matrices_: dict[str, np.ndarray] = {}
        raw: dict[str, np.ndarray] = {}
        for lang, (idx, X) in matrices.items():
            sub = [texts[i] for i in idx]
            matrix = np.asarray(self._fit_matrix(lang, self.vectorizers_[lang], X, sub, Y[idx]), dtype=np.float32)
            self.matrices_[lang] = matrix
            raw[lang] = self._training_views(lang, X, Y[idx], matrix)
        del matrices
        self.languages_ = list(groups)
        self.n_classes_ = int(Y.shape[1])
        self.n_features_out_ = int(next(iter(raw.values())).shape[1])
        self.sif_ = CommonComponents(self.sif).fit(raw)
        out = np.zeros((len(texts), self.n_features_out_), dtype=np.float32)
        for lang, idx in groups.items():
            out[idx] = l2_normalize(self.sif_.transform(raw[lang], lang))
        return out

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        langs = np.asarray(langs, dtype=object)
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        self._check_languages(langs)
        out = np.zeros((len(texts), self.n_features_out_), dtype=np.float32)
        for lang in np.unique(langs):
            idx = np.flatnonzero(langs == lang)
            sub = [texts[i] for i in idx]
            if lang in self.vectorizers_:
                Z = np.asarray(self.vectorizers_[lang].transform(sub) @ self._matrix(lang), dtype=np.float64)
            else:
                Z = self._unseen_views(str(lang), sub)
            out[idx] = l2_normalize(self.sif_.transform(Z, str(lang)))
        return out

    def term_occlusion(self, text: str, lang: str) -> TermOcclusion:
        """The view of one document of ``lang`` and its view without each of its terms (every occurrence of the
        term removed, the other terms' TF-IDF weights unchanged): see :class:`gfun.views.words.TermOcclusion`."""
        lang = str(lang)
        self._check_languages(np.asarray([lang], dtype=object))
        if lang in self.vectorizers_:
            vec = self.vectorizers_[lang]
            weighted: tuple | None = (vec, vec.transform([text]), self._matrix(lang))
        else:
            weighted = self._unseen_rows(lang, [text])
        if weighted is None or weighted[1].nnz == 0:  # no term: the view of an empty document
            return TermOcclusion([], [], self.transform([text], np.asarray([lang], dtype=object)))
        vec, row, matrix = weighted
        row = sp.csr_matrix(row)
        row.sum_duplicates()
        n = row.nnz
        keep = np.vstack([np.ones((1, n), dtype=bool), ~np.eye(n, dtype=bool)])
        data, cols = (np.broadcast_to(a, keep.shape)[keep] for a in (row.data, row.indices))
        rows = sp.csr_matrix((data, cols, np.concatenate([[0], np.cumsum(keep.sum(axis=1))])),
                             shape=(n + 1, row.shape[1]))
        views = l2_normalize(self.sif_.transform(np.asarray(rows @ matrix, dtype=np.float64), lang))
        names = vec.get_feature_names_out()
        terms = [str(names[j]) for j in row.indices]
        analyzer = vec.analyzer_
        return TermOcclusion(terms, term_words(text, terms, analyzer.tokenize, analyzer), views)

    # -- persistence -------------------------------------------------------------------------
    def _state_params(self) -> dict:
        return self.get_params()

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        smeta = put_state(self.sif_, "sif/", arrays)
        meta: dict = {"params": self._state_params(), "languages_": self.languages_, "n_classes_": self.n_classes_,
                      "n_features_out_": self.n_features_out_, "vectorizers": {}, "sif": smeta,
                      "matrices": sorted(self.matrices_)}
        meta["vectorizers"] = put_states(self.vectorizers_, "{}/vec/", arrays)
        for lang, matrix in self.matrices_.items():
            arrays[f"{lang}/matrix"] = matrix
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> _TfidfProjectionView:
        obj = cls(**meta["params"])
        obj.languages_ = list(meta["languages_"])
        obj.n_classes_ = int(meta["n_classes_"])
        obj.n_features_out_ = int(meta["n_features_out_"])
        obj.vectorizers_ = {lang: load_state(TfidfVectorizer, meta["vectorizers"][lang], arrays, f"{lang}/vec/")
                            for lang in obj.languages_}
        d = obj.n_features_out_
        obj.matrices_ = {}
        for lang in meta["matrices"]:
            matrix = checked_array(arrays, f"{lang}/matrix", (len(obj.vectorizers_[lang].vocabulary_), d),
                                   what="a row per term of the vocabulary, n_features_out_ columns")
            obj.matrices_[lang] = np.asarray(matrix, dtype=np.float32)
        for key in [k for k in arrays if k.startswith("sif/")]:  # the common components live in the view's space
            checked_array(arrays, key, (d,), what="n_features_out_ values")
        obj.sif_ = load_state(CommonComponents, meta["sif"], arrays, "sif/")
        return obj


class WordEmbeddingView(_TfidfProjectionView):
    """Word-embeddings VGF (letter M): TF-IDF x aligned word vectors -> SIF -> L2.

    Parameters
    ----------
    source : str, path-like or dict
        Where the aligned word vectors come from, as a JSON-able spec (see :func:`build_source`):
        ``"e5"`` (default: vectors derived from the offline multilingual-e5-small, every word covered),
        ``"vec:/data/muse"`` or ``"/data/muse"`` (a folder of MUSE/fastText ``wiki.multi.<lang>.vec``
        files), ``{"spec": "vec:/data/muse", "max_rows": 200000}``. The source is built in ``fit`` (or
        on first need after loading) and is not part of the saved state. A built source object is
        accepted too, but then the view cannot be saved.
    min_df : int
        Minimum document frequency of a term, per language.
    stopwords : bool
        Drop stop words before weighting.
    stem : bool
        Stem terms. Off by default: word vectors are looked up by surface form, and a stem such as
        ``comput`` has none.
    sif : {"language", "global", "none"}
        Common-component removal (see :class:`gfun.views.sif.CommonComponents`): one component per
        training language (default), one for all languages, or none. Zero-shot languages use the
        component fitted on all training languages.
    store_vectors : bool or "auto"
        Whether the saved state holds the word-vector matrix of every training language (vocabulary size x
        dimensions float32 values per language: megabytes each with e5's 384 dimensions). ``True``: stored, so
        that a loaded model needs the source only for zero-shot languages. ``False``: stored by reference: the
        state keeps the vocabulary (it does anyway), the source spec and the SHA-256 of each matrix, and loading
        recomputes the matrices from the source (never downloading) and refuses, with
        :class:`gfun.errors.ReferenceMismatchError`, vectors that differ. ``"auto"`` (default): by
        reference for the sub-word sources (``e5-subword``, ``encoder-subword:<model>``: a table lookup in
        the local encoder, cheap to recompute), stored for the others (``.vec`` files, ``e5``,
        which runs the encoder once per word). ``gfun train --self-contained`` stores them.

    Attributes
    ----------
    languages_ : list of str
        Training languages.
    n_features_out_ : int
        Dimensionality of the word vectors (and of the view).
    vectorizers_ : dict of str to TfidfVectorizer
    matrices_ : dict of str to ndarray of shape (n_terms, dim)
        Word-vector matrix of each training language (rows: TF-IDF vocabulary; zero rows: OOV).
    oov_token_share_ : dict of str to float
        Per training language, the share of training tokens without a word vector.
    sif_ : CommonComponents
    source_ : WordVectorSource
        The built source (not saved).
    """

    letter = "m"
    output = "features"
    description = "word embeddings"

    def __init__(self, source: SourceSpec | Any = "e5", min_df: int = 1, stopwords: bool = True, stem: bool = False,
                 sif: SIFMode = "language", store_vectors: bool | str = "auto") -> None:
        self.source = source
        self.min_df = min_df
        self.stopwords = stopwords
        self.stem = stem
        self.sif = sif
        self.store_vectors = store_vectors

    def _vectorizer_params(self) -> dict:
        # A sub-word encoder segments whole runs of Chinese, Japanese or Thai better than the mean of the pieces
        # of character n-grams: its own pieces of a whole run carry meaning, those of a two-letter fragment little.
        return {"min_df": self.min_df, "stopwords": self.stopwords, "stem": self.stem,
                "segment": not _encoder_source(self.source)}

    def _get_source(self) -> Any:
        if getattr(self, "source_", None) is None:
            self.source_ = build_source(self.source)
        return self.source_

    def _vectors(self, lang: str, vectorizer: TfidfVectorizer, texts: list[str]) -> np.ndarray:
        """Word vectors of the vocabulary of ``vectorizer`` (and the OOV token share, logged)."""
        source = self._get_source()
        terms = vectorizer.get_feature_names_out().tolist()
        matrix = np.asarray(source.vectors(lang, terms), dtype=np.float32)
        if matrix.shape[0] != len(terms):
            raise ValueError(f"the word-vector source returned {matrix.shape[0]} rows for {len(terms)} terms")
        found = np.any(matrix != 0, axis=1)
        share = oov_token_share(vectorizer, texts, found)
        logger.info("M view [%s]: %d terms, %.1f%% without a vector; %.1f%% of the tokens out of vocabulary",
                    lang, len(terms), 100 * (1 - found.mean()) if len(terms) else 0.0, 100 * share)
        if not hasattr(self, "oov_token_share_"):
            self.oov_token_share_ = {}
        self.oov_token_share_[lang] = share
        return matrix

    def _fit_matrix(self, lang: str, vectorizer: TfidfVectorizer, X: sp.csr_matrix, texts: list[str],
                    Y: np.ndarray) -> np.ndarray:
        return self._vectors(lang, vectorizer, texts)

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        self.source_ = None
        self.oov_token_share_ = {}
        return super().fit_transform(texts, langs, Y)

    def _matrix(self, lang: str) -> np.ndarray:
        if lang not in self.matrices_:  # loaded with store_vectors=False
            vec = self.vectorizers_[lang]
            self.matrices_[lang] = np.asarray(
                self._get_source().vectors(lang, vec.get_feature_names_out().tolist()), dtype=np.float32)
        return self.matrices_[lang]

    def _unseen_views(self, lang: str, texts: list[str]) -> np.ndarray:
        """Raw views of documents of a language without training documents, each weighted on its own (sublinear
        tf, idf 1, see the module docstring): the same row for a document alone or in any batch."""
        weighted = self._unseen_rows(lang, texts)
        if weighted is None:
            logger.warning("M view [%s]: the %d document(s) of this unseen language contain no term", lang,
                           len(texts))
            return np.zeros((len(texts), self.n_features_out_))
        _, X, matrix = weighted
        logger.debug("M view [%s]: zero-shot, %d documents weighted by sublinear tf (idf 1)", lang, len(texts))
        return np.asarray(X @ matrix, dtype=np.float64)

    def _unseen_rows(self, lang: str, texts: list[str]) -> tuple[TfidfVectorizer, sp.csr_matrix, np.ndarray] | None:
        vec = TfidfVectorizer(lang, **{**self._vectorizer_params(), "min_df": 1})
        try:
            vec.fit(texts)  # only to collect the terms of these documents: every one is kept, the idf is replaced
        except ValueError:  # no term at all in these documents
            return None
        vec.idf_ = np.ones_like(vec.idf_)
        X = vec.transform(texts)
        terms = vec.get_feature_names_out().tolist()
        matrix = np.asarray(self._get_source().vectors(lang, terms), dtype=np.float32)
        if matrix.shape != (len(terms), self.n_features_out_):
            raise ValueError(f"word vectors of {lang!r} have shape {matrix.shape}, the view was fitted with "
                             f"{self.n_features_out_} dimensions for {len(terms)} terms")
        return vec, X, matrix

    def covers(self, lang: str) -> bool:
        if not hasattr(self, "vectorizers_"):
            return False
        if lang in self.vectorizers_:
            return True
        try:
            source = self._get_source()
        except (ImportError, OSError, ValueError) as exc:
            logger.warning("M view: word-vector source %r unavailable (%s): language %r not covered",
                           self.source, exc, lang)
            return False
        return source_covers(source, lang)

    def language_reach(self) -> LanguageReach:
        # a sub-word encoder has a vector for any word of any language; .vec files only for their languages
        return "any" if _encoder_source(self.source) else "some"

    def language_coverage(self) -> LanguageCoverage:
        return replace(super().language_coverage(), others="the other languages its word vectors cover")

    def _state_params(self) -> dict:
        params = self.get_params()
        spec = params["source"]
        if not isinstance(spec, str | os.PathLike | Mapping):
            raise ValueError("a WordEmbeddingView built with a source object cannot be saved: pass the source as a "
                             "spec (e.g. 'e5', 'vec:/data/muse' or {'spec': ..., **options})")
        if isinstance(spec, os.PathLike):
            params["source"] = os.fspath(spec)
        return params

    def _by_reference(self) -> bool:
        """Whether the saved state refers to the source for the word vectors instead of holding them."""
        if self.store_vectors == "auto":
            return _subword_source(self.source)
        if not isinstance(self.store_vectors, bool | np.bool_):
            raise ValueError(f"store_vectors must be True, False or 'auto', got {self.store_vectors!r}")
        return not self.store_vectors

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta, arrays = super().get_state()
        if self._by_reference():
            meta["vectors_sha256"] = {lang: matrix_sha256(self._matrix(lang)) for lang in self.vectorizers_}
            meta["matrices"] = []
            arrays = {k: v for k, v in arrays.items() if not k.endswith("/matrix")}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> WordEmbeddingView:
        obj = super().from_state(meta, arrays)
        expected = meta.get("vectors_sha256")
        if expected:  # stored by reference (states saved before the checksums were recorded: fetched when needed)
            obj._recompute_vectors(dict(expected))
        return obj

    def _recompute_vectors(self, expected: dict[str, str]) -> None:
        """The word-vector matrices of a state saved by reference, from the source, checked against their SHA-256."""
        started = time.perf_counter()
        source = self._get_source()
        for lang, sha in expected.items():
            terms = self.vectorizers_[lang].get_feature_names_out().tolist()
            matrix = np.asarray(source.vectors(lang, terms), dtype=np.float32)
            found = matrix_sha256(matrix)
            if found != sha:
                raise ReferenceMismatchError(
                    f"the M view refers to the word-vector source {self.source!r} for its {lang!r} vectors, but the "
                    f"{len(terms)} vectors recomputed here differ from those it was trained with (SHA-256 "
                    f"{found[:12]}..., expected {sha[:12]}...): another version of that encoder (or of its "
                    "word-vector cache) is installed. Load it where the same encoder is installed, or save a "
                    "self-contained model (`gfun train --self-contained`, or store_vectors=True).")
            self.matrices_[lang] = matrix
        self.source_ = None  # the encoder is not kept in memory; zero-shot languages build it again when needed
        logger.info("M view: word vectors of %d language(s) recomputed from %s in %.1f s", len(expected),
                    self.source, time.perf_counter() - started)
