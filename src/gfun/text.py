"""Language-aware text analysis and the per-language TF-IDF of the Posteriors view.

Three pieces, from the bottom up:

:class:`Analyzer`
    ``text -> list[str]``: Unicode NFKC normalisation, case folding, tokenisation, stop-word
    removal (lists of the ``stop-words`` package) and Snowball stemming (``snowballstemmer``).
    Languages without a stemmer or a stop list are only tokenised.
:class:`TfidfVectorizer`
    One language's bag of words, weighted exactly as equations 1-3 of the gFun paper:
    ``tf = 1 + ln(count)``, ``idf = ln(|Tr| / df)``, ``w = tf * idf`` followed by cosine
    normalisation of each document.
:class:`MultilingualTfidf`
    One :class:`TfidfVectorizer` per language of the training set.

Tokenisation rules (the same for every language)
------------------------------------------------
* The text is NFKC-normalised (ligatures such as ``ﬁ`` become ``fi``, full-width letters become
  ASCII, decomposed accents are composed), case-folded with :meth:`str.casefold` (``ß -> ss``)
  and normalised again; the dotted capital ``İ`` (which case-folds to ``i`` + U+0307) becomes
  plain ``i``.
* A token is a maximal run of Unicode letters and digits (``str.isalnum``), starting with a
  letter or digit; combining marks (categories ``Mn``, ``Mc``, ``Me``: Indic vowel signs,
  accents that have no precomposed form) and the zero-width (non-)joiners U+200C/U+200D are
  kept inside a token.
* Everything else separates tokens: white space, punctuation, **hyphens** (``state-of-the-art``
  gives four tokens), **apostrophes** of any kind (``l'uomo`` gives ``l`` and ``uomo``, so the
  French and Italian elisions come apart; English ``don't`` gives ``don`` and ``t``) and
  **underscores** (``foo_bar`` gives ``foo`` and ``bar``).
* Tokens shorter than ``min_len`` characters are dropped (before stemming).
* **Pure numbers** (tokens made only of decimal digits, in any script) are dropped unless
  ``keep_numbers=True``; tokens mixing letters and digits (``mp3``, ``x11``, ``utf8``) are kept.
* Stop words are matched on the case-folded surface token, before stemming. Each entry of the
  stop list is passed through the same normalisation and tokenisation, so ``don't`` in the
  English list also removes the fragments ``don`` and ``t``.
* Scripts written without spaces between words are cut into **character n-grams**, found by the
  Unicode script of each character (not by the language code, so Chinese quoted inside an English
  text is cut too): Han, Hiragana, Katakana and Yi give character unigrams and bigrams (a Chinese
  or Japanese word is mostly one or two characters); Thai, Lao, Khmer and Myanmar give bigrams and
  trigrams of grapheme clusters (a base letter with its combining vowel and tone marks), since
  their letters are an alphabet. Hangul is written with spaces, but between words that carry their
  particles and endings (``터키는`` = ``터키`` + ``는``), so its words are cut into syllable unigrams
  and bigrams as well (SIB-200, gFun-X: Korean macro-F1 .55 with words, .78 with n-grams). Letters
  and digits of other scripts inside the same run (``iPhone手机``) stay one token. N-grams are exempt
  from ``min_len``; stop words still apply (the Chinese list holds single characters). See
  :data:`UNSPACED_NGRAMS`. ``segment=False`` keeps such runs whole (the
  behaviour of gfun before this rule, and what a sub-word encoder wants: the M view with an ``e5``
  source passes it, because the encoder's own sub-word pieces of a whole run carry more meaning
  than the mean of the pieces of a two-letter fragment).
* A language whose text still looks unsegmented when its TF-IDF is fitted (more than 80% of the
  token occurrences are of terms found in a single document, as when whole clauses of a script
  without spaces that is not in the table above become tokens; 13-61% for the 20 languages of
  SIB-200) is reported by a ``logging`` warning: gfun cannot tokenise that script.

Nothing is downloaded at run time: the stop lists ship inside the ``stop-words`` package and
the stemmers inside ``snowballstemmer`` (which uses the C extension of PyStemmer when that
package is installed).
"""

from __future__ import annotations

import functools
import logging
import re
import sys
import unicodedata
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from gfun.errors import UnknownLanguageError  # noqa: F401 - re-exported

__all__ = [
    "Analyzer",
    "MultilingualTfidf",
    "TfidfVectorizer",
    "UnknownLanguageError",
    "resolve_language",
]

logger = logging.getLogger(__name__)

STATE_VERSION = 1
#: Version of the tokenisation rules; part of the key of cached views, so that a change refits them
#: (2: character n-grams for scripts without spaces and Hangul).
ANALYZER_VERSION = 2

# Language names used by snowballstemmer and stop-words, with the codes that map to them
# (ISO 639-1, ISO 639-2/B and /T, ISO 639-3).
_LANGUAGE_CODES: dict[str, tuple[str, ...]] = {
    "arabic": ("ar", "ara", "arb"),
    "armenian": ("hy", "hye", "arm"),
    "basque": ("eu", "eus", "baq"),
    "bulgarian": ("bg", "bul"),
    "catalan": ("ca", "cat"),
    "chinese": ("zh", "zho", "chi", "cmn"),
    "czech": ("cs", "ces", "cze"),
    "danish": ("da", "dan"),
    "dutch": ("nl", "nld", "dut"),
    "english": ("en", "eng"),
    "esperanto": ("eo", "epo"),
    "estonian": ("et", "est", "ekk"),
    "finnish": ("fi", "fin"),
    "french": ("fr", "fra", "fre"),
    "german": ("de", "deu", "ger"),
    "greek": ("el", "ell", "gre"),
    "gujarati": ("gu", "guj"),
    "hebrew": ("he", "heb"),
    "hindi": ("hi", "hin"),
    "hungarian": ("hu", "hun"),
    "indonesian": ("id", "ind"),
    "irish": ("ga", "gle"),
    "italian": ("it", "ita"),
    "japanese": ("ja", "jpn"),
    "korean": ("ko", "kor"),
    "lithuanian": ("lt", "lit"),
    "malaysian": ("ms", "msa", "may", "zsm"),
    "nepali": ("ne", "nep", "npi"),
    "norwegian": ("no", "nb", "nn", "nor", "nob", "nno"),
    "persian": ("fa", "fas", "per", "pes"),
    "polish": ("pl", "pol"),
    "portuguese": ("pt", "por"),
    "romanian": ("ro", "ron", "rum"),
    "russian": ("ru", "rus"),
    "serbian": ("sr", "srp"),
    "sesotho": ("st", "sot"),
    "slovak": ("sk", "slk", "slo"),
    "spanish": ("es", "spa"),
    "swedish": ("sv", "swe"),
    "tamil": ("ta", "tam"),
    "turkish": ("tr", "tur"),
    "ukrainian": ("uk", "ukr"),
    "vietnamese": ("vi", "vie"),
    "yiddish": ("yi", "yid", "ydd"),
}
_CODE_TO_NAME: dict[str, str] = {code: name for name, codes in _LANGUAGE_CODES.items() for code in codes}

#: Unicode ranges of scripts written without spaces between words (and of Hangul, see the module
#: docstring), with the n-gram orders (over characters, or grapheme clusters for the Brahmic scripts)
#: their runs are cut into.
UNSPACED_NGRAMS: dict[str, tuple[tuple[tuple[int, int], ...], tuple[int, int]]] = {
    "han": (((0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029), (0x3038, 0x303B), (0x3400, 0x4DBF),
             (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)), (1, 2)),
    "kana": (((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)), (1, 2)),
    "yi": (((0xA000, 0xA4CF),), (1, 2)),
    "hangul": (((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF)), (1, 2)),
    "thai": (((0x0E00, 0x0E7F),), (2, 3)),
    "lao": (((0x0E80, 0x0EFF),), (2, 3)),
    "myanmar": (((0x1000, 0x109F), (0xAA60, 0xAA7F), (0xA9E0, 0xA9FF)), (2, 3)),
    "khmer": (((0x1780, 0x17FF), (0x19E0, 0x19FF)), (2, 3)),
}

# A language looks unsegmented when more than this share of its token occurrences are of terms found in
# one training document only (with at least _UNSEGMENTED_MIN_DOCS documents).
_UNSEGMENTED_HAPAX_SHARE = 0.8
_UNSEGMENTED_MIN_DOCS = 20

# Languages already reported as lacking a stemmer / stop list (reported once per process).
_REPORTED: set[tuple[str, str]] = set()

# The per-instance token cache is cleared when it grows past this many entries.
_MAX_CACHE = 2_000_000


def resolve_language(lang: str) -> str | None:
    """Map a language code or name to the name used by ``snowballstemmer`` and ``stop-words``.

    Parameters
    ----------
    lang : str
        An ISO 639-1 code (``"en"``), an ISO 639-2/3 code (``"eng"``), a code with a region or
        script suffix (``"pt-BR"``, ``"eng_Latn"``) or an English language name (``"english"``).

    Returns
    -------
    str or None
        The lower-case English name (``"english"``), or ``None`` when the language is not known.
    """
    key = lang.strip().lower()
    if key in _LANGUAGE_CODES:
        return key
    if key in _CODE_TO_NAME:
        return _CODE_TO_NAME[key]
    base = re.split(r"[_\-]", key, maxsplit=1)[0]
    if base in _LANGUAGE_CODES:
        return base
    return _CODE_TO_NAME.get(base)


def _report_once(lang: str, what: str, message: str) -> None:
    if (lang, what) not in _REPORTED:
        _REPORTED.add((lang, what))
        logger.info(message)


def _class_body(codepoints: list[int]) -> str:
    """Regex character-class body (``\\Uxxxxxxxx`` ranges) matching exactly ``codepoints`` (sorted)."""
    parts = []
    start = prev = codepoints[0]
    for c in [*codepoints[1:], sys.maxunicode + 2]:
        if c != prev + 1:
            parts.append(f"\\U{start:08x}" if start == prev else f"\\U{start:08x}-\\U{prev:08x}")
            start = c
        prev = c
    return "".join(parts)


@functools.lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """The token regex (built on first use: scanning the Unicode tables takes a few tens of ms).

    Underscores are replaced by spaces before matching, so ``[^\\W_]`` means a letter or digit.
    A token is a run of letters/digits, continued through combining marks and ZWNJ/ZWJ. The
    marks of the BMP and those of planes 1 and 14 are two classes: a class that only holds BMP
    characters compiles to a bitmap (constant time), and the astral class is only tried after a
    single range check, so the usual case (a token ended by a space or punctuation) stays cheap.
    """
    category = unicodedata.category
    bmp = [c for c in range(0x10000) if category(chr(c))[0] == "M"] + [0x200C, 0x200D]
    astral = [c for c in [*range(0x10000, 0x20000), *range(0xE0000, 0xE1000)] if category(chr(c))[0] == "M"]
    marks = rf"(?:[{_class_body(sorted(bmp))}]|(?=[\U00010000-\U000E0FFF])[{_class_body(astral)}])"
    return re.compile(rf"[^\W_]+(?:{marks}+[^\W_]*)*+")


@functools.lru_cache(maxsize=1)
def _unspaced_pattern() -> re.Pattern[str]:
    """Regex matching one character of a script of :data:`UNSPACED_NGRAMS`."""
    body = "".join(f"\\U{a:08x}-\\U{b:08x}" for ranges, _ in UNSPACED_NGRAMS.values() for a, b in ranges)
    return re.compile(f"[{body}]")


def _ngram_orders(ch: str) -> tuple[int, int]:
    code = ord(ch)
    for ranges, orders in UNSPACED_NGRAMS.values():
        if any(a <= code <= b for a, b in ranges):
            return orders
    raise ValueError(f"{ch!r} is not in a script of UNSPACED_NGRAMS")


def _clusters(run: str) -> list[str]:
    """``run`` cut into grapheme clusters: a character with the combining marks that follow it."""
    out: list[str] = []
    for ch in run:
        if out and unicodedata.category(ch)[0] == "M":
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _segment(token: str) -> list[str]:
    """A token cut into character n-grams where it is in a script written without spaces.

    The token is split into maximal runs of one script of :data:`UNSPACED_NGRAMS` and runs of anything
    else; the latter stay whole, the former give their n-grams in text order (for each position, the
    shorter n-gram first). A run shorter than the smallest order is kept whole.
    """
    unspaced = _unspaced_pattern()
    out: list[str] = []
    i = 0
    n = len(token)
    while i < n:
        m = unspaced.search(token, i)
        if m is None:
            out.append(token[i:])
            break
        if m.start() > i:
            out.append(token[i:m.start()])
        orders = _ngram_orders(token[m.start()])
        j = m.start()
        while j < n and (unicodedata.category(token[j])[0] == "M" or (
                unspaced.match(token, j) and _ngram_orders(token[j]) == orders)):
            j += 1
        units = _clusters(token[m.start():j]) if orders[0] > 1 else list(token[m.start():j])
        if len(units) < orders[0]:
            out.append("".join(units))
        for k in range(len(units)):
            for size in range(orders[0], orders[1] + 1):
                if k + size <= len(units):
                    out.append("".join(units[k:k + size]))
        i = j
    return out


def _normalize(text: str, lowercase: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    if lowercase:
        text = text.casefold()
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text).replace("i\u0307", "i")
    return text.replace("_", " ")


@functools.cache
def _stop_set(language: str) -> frozenset[str]:
    """The stop list of ``language`` (a ``stop-words`` name), normalised and tokenised like text."""
    from stop_words import StopWordError, get_stop_words

    try:
        words = get_stop_words(language)
    except StopWordError:
        return frozenset()
    return _prepare_stop_words(words)


def _prepare_stop_words(words: Iterable[str]) -> frozenset[str]:
    """Normalise and tokenise stop words as texts are: each entry and each of its tokens."""
    pattern = _token_pattern()
    out: set[str] = set()
    for word in words:
        norm = _normalize(word, lowercase=True)
        out.add(norm.strip())
        out.update(pattern.findall(norm))
    out.discard("")
    return frozenset(out)


@functools.cache
def _has_stemmer(language: str) -> bool:
    import snowballstemmer

    return language in snowballstemmer.algorithms()


class Analyzer:
    """Turn a text into a list of terms: normalise, tokenise, drop stop words, stem.

    See the module docstring for the exact tokenisation rules.

    Parameters
    ----------
    lang : str
        Language code or name (see :func:`resolve_language`). A language without a Snowball
        stemmer or a stop list is still tokenised; this is logged once per process at INFO.
    stopwords : bool or iterable of str, default True
        ``True``: remove the words of the ``stop-words`` package's list for the language (note
        that its English list is long, 1,333 entries including ``system``, ``computer``,
        ``information``, ``free``, ``use``); ``False``: keep every word; an iterable of words:
        remove these words instead (normalised and tokenised like the text).
    stem : bool, default True
        Reduce tokens to their Snowball stem.
    lowercase : bool, default True
        Case-fold the text (:meth:`str.casefold`). With ``False`` the case is kept, stop words are
        still matched case-insensitively and stems are computed on the original case.
    min_len : int, default 2
        Drop tokens with fewer characters than this (measured before stemming).
    keep_numbers : bool, default False
        Keep tokens made only of digits.
    segment : bool, default True
        Cut runs of scripts written without spaces into character n-grams (see the module docstring).

    Notes
    -----
    The result of each distinct token (its stem, or nothing for a stop word) is cached on the
    instance, so a repeated token costs one dictionary look-up. The cache and the stemmer are not
    pickled; they are rebuilt on first use after unpickling.

    Examples
    --------
    >>> Analyzer("en")("The cats were running to the gardens!")
    ['cat', 'run', 'garden']
    """

    _PARAMS = ("lang", "stopwords", "stem", "lowercase", "min_len", "keep_numbers", "segment")

    def __init__(self, lang: str, *, stopwords: bool | Iterable[str] = True, stem: bool = True,
                 lowercase: bool = True, min_len: int = 2, keep_numbers: bool = False, segment: bool = True) -> None:
        if not isinstance(lang, str) or not lang.strip():
            raise ValueError(f"lang must be a non-empty string, got {lang!r}")
        if int(min_len) != min_len or min_len < 1:
            raise ValueError(f"min_len must be a positive integer, got {min_len!r}")
        self.lang = lang
        if isinstance(stopwords, str):
            raise TypeError("stopwords must be a bool or an iterable of words, not a single string")
        self.stopwords: bool | tuple[str, ...] = (
            bool(stopwords) if isinstance(stopwords, bool | np.bool_) else tuple(stopwords)
        )
        self.stem = bool(stem)
        self.lowercase = bool(lowercase)
        self.min_len = int(min_len)
        self.keep_numbers = bool(keep_numbers)
        self.segment = bool(segment)
        self._reset()

    # -- lazily built, unpicklable or bulky parts ------------------------------------------
    def _reset(self) -> None:
        self._cache: dict[str, str] = {}
        self._stemmer: Any = None
        self._stops: frozenset[str] | None = None
        self._ready = False

    def _setup(self) -> None:
        language = resolve_language(self.lang)
        stops: frozenset[str] = frozenset()
        if isinstance(self.stopwords, tuple):
            stops = _prepare_stop_words(self.stopwords)
        elif self.stopwords:
            stops = _stop_set(language) if language is not None else frozenset()
            if not stops:
                _report_once(self.lang, "stopwords", f"no stop-word list for language {self.lang!r}: "
                             "stop words are kept")
        stemmer = None
        if self.stem:
            if language is not None and _has_stemmer(language):
                import snowballstemmer

                stemmer = snowballstemmer.stemmer(language)
            else:
                _report_once(self.lang, "stem", f"no Snowball stemmer for language {self.lang!r}: "
                             "tokens are not stemmed")
        self._stops = stops
        self._stemmer = stemmer
        self._ready = True

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._PARAMS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = {"segment": False, **state}  # pickled before segmentation existed
        for name in self._PARAMS:
            setattr(self, name, state[name])
        self._reset()

    def __repr__(self) -> str:
        return (f"Analyzer({self.lang!r}, stopwords={self.stopwords}, stem={self.stem}, "
                f"lowercase={self.lowercase}, min_len={self.min_len}, keep_numbers={self.keep_numbers}, "
                f"segment={self.segment})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Analyzer):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash(tuple(self.__getstate__().values()))

    # -- public API ------------------------------------------------------------------------
    @property
    def language(self) -> str | None:
        """The resolved language name (``"english"``), or ``None`` for an unknown language."""
        return resolve_language(self.lang)

    @property
    def has_stemmer(self) -> bool:
        """Whether tokens are stemmed (``stem=True`` and a Snowball stemmer exists)."""
        if not self._ready:
            self._setup()
        return self._stemmer is not None

    @property
    def has_stopwords(self) -> bool:
        """Whether stop words are removed (``stopwords=True`` and a stop list exists)."""
        if not self._ready:
            self._setup()
        return bool(self._stops)

    def tokenize(self, text: str) -> list[str]:
        """Normalise and split ``text`` into tokens, without filtering or stemming."""
        if not isinstance(text, str):
            raise TypeError(f"expected a str, got {type(text).__name__}")
        norm = _normalize(text, self.lowercase)
        tokens = _token_pattern().findall(norm)
        if not self.segment or norm.isascii() or _unspaced_pattern().search(norm) is None:
            return tokens
        unspaced = _unspaced_pattern().search
        return [gram for token in tokens for gram in (_segment(token) if unspaced(token) else (token,))]

    def _term(self, token: str) -> str:
        """The term for one token, or ``""`` when the token is dropped."""
        if len(token) < self.min_len and not (self.segment and _unspaced_pattern().match(token)):
            return ""
        if not self.keep_numbers and token.isdecimal():
            return ""
        if self._stops and (token if self.lowercase else token.casefold()) in self._stops:
            return ""
        if self._stemmer is not None:
            return self._stemmer.stemWord(token)
        return token

    def __call__(self, text: str) -> list[str]:
        """Analyse one text.

        Parameters
        ----------
        text : str

        Returns
        -------
        list of str
            The terms, in text order (repetitions kept).
        """
        if not self._ready:
            self._setup()
        cache = self._cache
        if len(cache) > _MAX_CACHE:
            cache.clear()
        get = cache.get
        out: list[str] = []
        append = out.append
        for token in self.tokenize(text):
            term = get(token)
            if term is None:
                term = cache[token] = self._term(token)
            if term:
                append(term)
        return out


def _check_texts(texts: Any) -> Iterable[str]:
    if isinstance(texts, str | bytes):
        raise TypeError("expected an iterable of texts, got a single string")
    return texts


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

    def _count(self, texts: Iterable[str], vocabulary: dict[str, int] | None) -> tuple[sp.csr_matrix, dict]:
        """Raw term counts (float64 CSR). With ``vocabulary=None`` the vocabulary is grown."""
        analyze = self.analyzer_
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
        counts, vocab = self._count(texts, None)
        n_docs = counts.shape[0]
        if n_docs == 0:
            raise ValueError(f"cannot fit the TF-IDF of language {self.lang!r} on zero documents")
        terms = list(vocab)
        df = np.bincount(counts.indices, minlength=len(terms))
        self._check_segmented(counts, df, terms)
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

    def _check_segmented(self, counts: sp.csr_matrix, df: np.ndarray, terms: list[str]) -> None:
        """Warn when most token occurrences are of terms seen in one document: text gfun cannot tokenise."""
        n_docs = counts.shape[0]
        total = counts.data.sum()
        if not self.segment or n_docs < _UNSEGMENTED_MIN_DOCS or total == 0:  # segment=False: whole runs wanted
            return
        share = counts.data[df[counts.indices] == 1].sum() / total
        if share > _UNSEGMENTED_HAPAX_SHARE:
            longest = sorted(terms, key=len, reverse=True)[:2]
            logger.warning(
                "language %r: %.0f%% of the tokens of its %d training documents occur in one document only "
                "(e.g. %s): its script seems to be written without spaces between words and gfun cannot "
                "tokenise it, so its TF-IDF features are nearly useless (scripts cut into character n-grams: "
                "%s)", self.lang, 100 * share, n_docs, ", ".join(repr(t[:30]) for t in longest),
                ", ".join(UNSPACED_NGRAMS))

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
        params = {"segment": False, **meta["params"]}  # saved before segmentation existed: runs stay whole
        params["dtype"] = np.dtype(params["dtype"]).type
        lang = params.pop("lang")
        est = cls(lang, **params)
        vocabulary = list(meta["vocabulary"])
        idf = np.array(arrays["idf"], dtype=np.float64)
        if idf.shape != (len(vocabulary),):
            raise ValueError(f"idf has shape {idf.shape}, expected ({len(vocabulary)},)")
        if len(set(vocabulary)) != len(vocabulary):
            raise ValueError("vocabulary contains duplicate terms")
        est._validate()
        est.analyzer_ = Analyzer(lang, **_analyzer_params(est))
        est.vocabulary_ = {term: j for j, term in enumerate(vocabulary)}
        est.idf_ = idf
        est.n_docs_ = int(meta["n_docs"])
        return est


class MultilingualTfidf(BaseEstimator):
    """One :class:`TfidfVectorizer` per language, fitted on that language's training documents.

    Parameters
    ----------
    min_df, max_features, dtype, stopwords, stem, lowercase, min_len, keep_numbers, segment
        Passed to every :class:`TfidfVectorizer` (explicit keywords rather than ``**kwargs`` so
        that ``get_params``/``clone`` work).

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
                 keep_numbers: bool = False, segment: bool = True) -> None:
        self.min_df = min_df
        self.max_features = max_features
        self.dtype = dtype
        self.stopwords = stopwords
        self.stem = stem
        self.lowercase = lowercase
        self.min_len = min_len
        self.keep_numbers = keep_numbers
        self.segment = segment

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
        vectorizers: dict[str, TfidfVectorizer] = {}
        out: dict[str, tuple[np.ndarray, sp.csr_matrix]] = {}
        for lang, rows in groups.items():
            vectorizers[lang] = self._vectorizer(lang)
            out[lang] = rows, vectorizers[lang].fit_transform(self._take(texts, rows))
        self.vectorizers_ = vectorizers
        self.languages_ = list(vectorizers)
        return out

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
        metas: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for lang, vec in self.vectorizers_.items():
            meta, arrs = vec.get_state()
            metas[lang] = meta
            arrays.update({f"{lang}.{name}": arr for name, arr in arrs.items()})
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
        vectorizers = {}
        for lang in meta["languages"]:
            arrs = {"idf": arrays[f"{lang}.idf"]}
            vectorizers[lang] = TfidfVectorizer.from_state(meta["vectorizers"][lang], arrs)
        est.vectorizers_ = vectorizers
        est.languages_ = list(meta["languages"])
        return est
