"""Language identification for documents that come without a language code.

gfun needs the language of every document (tier 1 is per language). When a corpus lacks it,
:func:`detect_languages` finds it with ``py3langid`` (a maintained fork of langid.py: a naive
Bayes classifier over byte n-grams, 140 languages). The model ships inside the package as
plain numeric arrays (``npz``, no pickle) and nothing is downloaded at run time. It is an
optional dependency: ``pip install 'gfun[langid]'``.

Detection reports what it found (``logging`` at INFO) and refuses, with a
:class:`LanguageDetectionError` that names the document and the best guesses, when the
posterior probability of the best language is below ``min_confidence`` or when the text has no
letters at all. Restricting the candidates (for instance to the languages a model was trained
on) makes detection of short texts much more reliable.

Why py3langid: on whole sentences and on short prefixes of SIB-200 it is as accurate as the best
alternative (lingua-language-detector) and more accurate than langid.py and pycld2; its probabilities
are calibrated, so ``min_confidence`` means what it says; and it is a small install that loads at once,
where lingua is many times larger and slow to load all its models.

Examples
--------
>>> detect_languages(["Das ist ein kleines Haus.", "This is a small house."])  # doctest: +SKIP
['de', 'en']
>>> detect_languages(["una casa"], candidates=["it", "es"], min_confidence=0.9)  # doctest: +SKIP
Traceback (most recent call last):
LanguageDetectionError: cannot detect the language of document 0 ...
"""

from __future__ import annotations

import copy
import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from gfun.errors import LanguageDetectionError
from gfun.text.analysis import _LANGUAGE_CODES, resolve_language

__all__ = ["LanguageDetectionError", "detect_languages", "fill_missing_languages", "supported_languages"]

logger = logging.getLogger(__name__)

#: The detector's label for text with no linguistic content; never reported as a language.
_NO_LANGUAGE = "zxx"

#: How many guesses an error message lists.
_N_GUESSES = 3


# ---------------------------------------------------------------------------------------------- the detector
@functools.lru_cache(maxsize=1)
def _base_identifier() -> Any:
    """py3langid's identifier over all its languages, with normalised probabilities (loaded once)."""
    from gfun.core.optional import import_optional

    langid = import_optional("py3langid.langid", extra="langid", purpose="language identification")
    ident = langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)
    logger.debug("py3langid model loaded (%d languages)", len(set(ident.nb_classes)))
    return ident


@functools.lru_cache(maxsize=16)
def _identifier(codes: tuple[str, ...] | None) -> Any:
    """An identifier restricted to ``codes`` (detector codes), or over every language for ``None``."""
    base = _base_identifier()
    if codes is None:
        return base
    ident = copy.copy(base)  # shares the model arrays; set_languages rebinds, never mutates them
    ident.set_languages(list(codes))
    return ident


def supported_languages() -> list[str]:
    """The codes the detector can report (mostly ISO 639-1, e.g. ``"en"``), sorted."""
    return sorted(set(_base_identifier().nb_classes) - {_NO_LANGUAGE})


def _detector_code(code: str, known: Iterable[str]) -> str | None:
    """The detector's code for a user's language code (``"eng"``, ``"pt-BR"``, ``"english"``), if any."""
    known = set(known)
    key = str(code).strip().lower()
    base = re.split(r"[_\-]", key, maxsplit=1)[0]
    for k in (key, base):
        if k in known and k != _NO_LANGUAGE:
            return k
    name = resolve_language(key)
    if name is not None:
        for alias in _LANGUAGE_CODES[name]:
            if alias in known:
                return alias
    return None


def _resolve_candidates(candidates: Iterable[str] | None) -> tuple[tuple[str, ...] | None, dict[str, str]]:
    """Detector codes to restrict to, and the map from detector code back to the caller's spelling."""
    if candidates is None:
        return None, {}
    if isinstance(candidates, str):
        raise TypeError(f"candidates must be a list of language codes, got the single string {candidates!r}")
    wanted = list(dict.fromkeys(str(c) for c in candidates))
    if not wanted:
        raise ValueError("candidates is empty: give at least one language code, or None for every language")
    known = supported_languages()
    back: dict[str, str] = {}
    unknown = []
    for code in wanted:
        det = _detector_code(code, known)
        if det is None:
            unknown.append(code)
        elif det in back:
            raise ValueError(f"candidates {back[det]!r} and {code!r} are the same language for the detector ({det!r})")
        else:
            back[det] = code
    if unknown:
        raise ValueError(f"the language detector does not know the candidate language(s) {unknown}; it knows "
                         f"{', '.join(known)}")
    return tuple(sorted(back)), back


def _snippet(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[:width] + "...")


def detect_languages(texts: Sequence[str], *, candidates: Iterable[str] | None = None,
                     min_confidence: float = 0.5) -> list[str]:
    """Detect the language of each text.

    Parameters
    ----------
    texts : sequence of str
    candidates : iterable of str, optional
        The languages to choose from, in your spelling (``"en"``, ``"eng"``, ``"eng_Latn"`` and
        ``"english"`` all work); the result uses the same spelling. ``None`` chooses among all the
        detector's languages (see :func:`supported_languages`) and reports ISO 639-1 codes where
        they exist (``"en"``, ``"de"``).
    min_confidence : float
        The lowest acceptable posterior probability of the best language (among the candidates).

    Returns
    -------
    list of str
        One language code per text.

    Raises
    ------
    LanguageDetectionError
        When a text has no letters or its best language has probability below ``min_confidence``; the
        message names the (first) document, its best guesses and how many documents failed.
    ImportError
        When py3langid is not installed (``pip install 'gfun[langid]'``).
    ValueError
        For a candidate the detector does not know, or ``min_confidence`` outside [0, 1].
    """
    if isinstance(texts, str | bytes):
        raise TypeError("expected a sequence of texts, got a single string")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text {i} is a {type(text).__name__}, expected str")
    if not 0.0 <= float(min_confidence) <= 1.0:
        raise ValueError(f"min_confidence must be in [0, 1], got {min_confidence!r}")
    codes, back = _resolve_candidates(candidates)
    ident = _identifier(codes)
    out: list[str] = []
    failures: list[tuple[int, list[tuple[str, float]]]] = []
    lowest = 1.0
    for i, text in enumerate(texts):
        if not any(ch.isalpha() for ch in text):
            failures.append((i, []))
            out.append("")
            continue
        ranked = [(lang, float(p)) for lang, p in ident.rank(text)[:_N_GUESSES + 1] if lang != _NO_LANGUAGE]
        best, conf = ranked[0]
        if conf < min_confidence:
            failures.append((i, ranked[:_N_GUESSES]))
            out.append("")
            continue
        lowest = min(lowest, conf)
        out.append(back.get(best, best))
        logger.debug("document %d: %s (%.3f)", i, out[-1], conf)
    if failures:
        index, guesses = failures[0]
        guesses = [(back.get(lang, lang), p) for lang, p in guesses]
        raise LanguageDetectionError(_failure_message(f"document {index}", texts[index], guesses, min_confidence,
                                                      len(failures)),
                                     index=index, guesses=guesses, n_failed=len(failures))
    if out:
        counts = ", ".join(f"{lang}={n}" for lang, n in sorted(Counter(out).items()))
        logger.info("detected the language of %d document(s): %s (lowest confidence %.2f)", len(out), counts, lowest)
    return out


def _failure_message(what: str, text: str, guesses: list[tuple[str, float]], min_confidence: float,
                     n_failed: int) -> str:
    if guesses:
        listed = ", ".join(f"{lang} ({p:.2f})" for lang, p in guesses)
        reason = f"no language reaches confidence {min_confidence:g}; best guesses: {listed}"
    else:
        reason = "the text has no letters"
    more = f" ({n_failed - 1} more document(s) failed too)" if n_failed > 1 else ""
    return (f"cannot detect the language of {what} (text {_snippet(text)}): {reason}{more}. Give its language "
            "explicitly, restrict the candidate languages, or lower min_confidence")


# ---------------------------------------------------------------------------------------------- records
def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or not str(value).strip()


def fill_missing_languages(records: Iterable[dict[str, Any]], *, candidates: Iterable[str] | None = None,
                           min_confidence: float = 0.5, path: str | None = None,
                           spellings: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Fill in the ``lang`` field of the records that lack one (absent, ``None``, NaN or blank).

    Parameters
    ----------
    records : iterable of dict
        Documents in the JSONL schema (``id``, ``lang``, ``text``, ...). Records whose ``text`` is not a
        string are left alone (building the corpus reports them).
    candidates : iterable of str, optional
        Languages to choose from (see :func:`detect_languages`). Without candidates, a detected language
        is written in the spelling that other records already use for it (``"eng"`` when they say
        ``"eng"``), else as the detector's code.
    min_confidence : float
    path : str, optional
        The file the records come from, named in error messages.
    spellings : iterable of str
        Further language codes whose spelling a detected language takes (e.g. a model's languages, so that
        a text detected as ``"de"`` gets the ``"deu"`` the model was trained on); the records' own come first.

    Returns
    -------
    list of dict
        The records (new dicts where a language was filled in, the others as given).

    Raises
    ------
    LanguageDetectionError
        Naming the file, the line (when records carry it) and the id of the first document whose language
        could not be detected.
    """
    recs = list(records)
    todo = [i for i, r in enumerate(recs)
            if isinstance(r, dict) and _missing(r.get("lang")) and isinstance(r.get("text"), str)]
    if not todo:
        return recs
    spelling: dict[str, str] = {}
    if candidates is None:
        present = sorted({str(r["lang"]).strip() for r in recs if isinstance(r, dict) and not _missing(r.get("lang"))})
        present += [str(code).strip() for code in spellings]
        if present:
            known = supported_languages()
            for code in present:
                det = _detector_code(code, known)
                if det is not None:
                    spelling.setdefault(det, code)
    try:
        langs = detect_languages([recs[i]["text"] for i in todo], candidates=candidates,
                                 min_confidence=min_confidence)
    except LanguageDetectionError as exc:
        rec = recs[todo[exc.index]]
        line = rec.get("__line__")
        what = f"document {rec.get('id')!r}" if line is not None else f"record {todo[exc.index]} (id {rec.get('id')!r})"
        raise LanguageDetectionError(_failure_message(what, rec["text"], exc.guesses, min_confidence, exc.n_failed),
                                     index=todo[exc.index], guesses=exc.guesses, n_failed=exc.n_failed,
                                     path=path, line=line) from None
    out = list(recs)
    for i, lang in zip(todo, langs, strict=True):
        out[i] = {**recs[i], "lang": spelling.get(lang, lang)}
    where = f" in {path}" if path is not None else ""
    counts = Counter(out[i]["lang"] for i in todo)
    logger.info("filled in the missing language of %d document(s)%s: %s", len(todo), where,
                ", ".join(f"{lang}={n}" for lang, n in sorted(counts.items())))
    return out
