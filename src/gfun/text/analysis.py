"""Language-aware text analysis: language codes, tokenisation, stop words and stemming.

:func:`resolve_language` maps a language code to the name of its stop list and stemmer;
:class:`Analyzer` is ``text -> list[str]``: Unicode NFKC normalisation, case folding, tokenisation,
stop-word removal (lists of the ``stop-words`` package) and Snowball stemming (``snowballstemmer``).
Languages without a stemmer or a stop list are only tokenised. The TF-IDF built on it is in
:mod:`gfun.text.tfidf`.

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
  and bigrams as well (a word with its particles is rarely shared between documents, its stem's
  syllables are). Letters
  and digits of other scripts inside the same run (``iPhone手机``) stay one token. N-grams are exempt
  from ``min_len``; stop words still apply (the Chinese list holds single characters). See
  :data:`UNSPACED_NGRAMS`. ``segment=False`` keeps such runs whole (what analysers saved without
  this option do when loaded, and what a sub-word encoder wants: the M view with an ``e5``
  source passes it, because the encoder's own sub-word pieces of a whole run carry more meaning
  than the mean of the pieces of a two-letter fragment).
* A language whose text still looks unsegmented when its TF-IDF is fitted is reported by a
  ``logging`` warning (gfun cannot tokenise that script): its training documents have few spaces
  (15 characters or more per space-separated word), its tokens are long (8 characters or more on
  average) and more than 80% of the token occurrences are of terms found in a single document, as
  when whole clauses of a script without spaces that is not in the table above become tokens. The
  last share alone says little: a small corpus of a language written with spaces reaches it too.

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
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["ANALYZER_VERSION", "Analyzer", "resolve_language"]

logger = logging.getLogger("gfun.text")

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
