"""Predictions as records: what ``gfun predict`` writes and ``gfun serve`` answers for each document.

Both accept the same documents (:func:`complete_records`): a document without an ``id`` is numbered by its
position, one without a ``lang`` has its language detected (with the ``langid`` extra), preferring the model's
languages (:data:`PREFER_CONFIDENCE`). A prediction record holds
the document's ``id`` and ``lang``, whether that language was detected (``lang_detected``), its predicted
``labels`` (class names in class order) and, when the model is calibrated, the ``probabilities`` of every class
(6 decimals, > 0.5 exactly for the predicted labels).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["PREFER_CONFIDENCE", "complete_records", "has_probabilities", "prediction_records",
           "rounded_probabilities"]

logger = logging.getLogger(__name__)

#: How sure language detection restricted to a model's languages must be to replace what detection among every
#: language found (a language the model was not trained on, or none at all).
PREFER_CONFIDENCE = 0.9


def _missing(value: Any) -> bool:
    return value is None or not str(value).strip()


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _prefer_languages(records: list[Any], todo: Sequence[int], languages: Sequence[str]) -> list[Any]:
    """The records with the language of those of ``todo`` (documents without one) chosen among ``languages`` where
    detection among every language finds a language not among them, or none, and detection among them alone is at
    least :data:`PREFER_CONFIDENCE` sure (Danish detected as ``no`` for a model trained on ``da``); the others are
    left for :func:`gfun.text.langid.fill_missing_languages`. A log line says how many were given a language so."""
    from gfun.errors import LanguageDetectionError
    from gfun.text.langid import detect_languages

    known = {str(lang).strip().lower() for lang in languages}
    out = list(records)
    changed: dict[tuple[str, str], int] = {}
    for i in todo:
        text = out[i]["text"]
        try:
            found: str | None = detect_languages([text])[0]
        except LanguageDetectionError:
            found = None
        if found is not None and found.lower() in known:
            continue
        try:
            preferred = detect_languages([text], candidates=languages, min_confidence=PREFER_CONFIDENCE)[0]
        except (LanguageDetectionError, ValueError):  # not sure enough, or a code the detector does not know
            continue
        out[i] = {**out[i], "lang": preferred}
        changed[(found or "none", preferred)] = changed.get((found or "none", preferred), 0) + 1
    if changed:
        logger.info("language detection preferred the model's languages: %s", ", ".join(
            f"{_plural(n, 'document')} detected as {a!r} -> {b!r}" for (a, b), n in sorted(changed.items())))
    return out


def complete_records(records: Sequence[dict[str, Any]], *, languages: Sequence[str] = (),
                     path: str | None = None) -> tuple[list[dict[str, Any]], list[bool]]:
    """Fill in what a document to label may lack, as ``gfun predict`` and ``gfun serve`` both do: a record without
    an ``id`` (absent or null) gets its position (``"0"``, ``"1"``...), one without a ``lang`` (absent, null or
    blank) the language detected from its text (:func:`gfun.text.langid.fill_missing_languages`, written as
    ``languages`` spell it: a model's training languages).

    Detection prefers ``languages``: a text whose language, detected among every language, is not one of them
    (Danish detected as ``no`` for a model trained on ``da``) or is none (no language confident enough) gets the
    one of ``languages`` it is in when detection among those alone is at least :data:`PREFER_CONFIDENCE` sure; a
    log line says how many.

    Parameters
    ----------
    records : sequence of dict
        Documents in the JSONL schema; ``"__line__"`` (the line of the file, or the document's position + 1)
        locates them in error messages.
    languages : sequence of str
        The model's languages: detection prefers them, and a detected language takes their spelling.
    path : str, optional
        The file the records come from, named in error messages.

    Returns
    -------
    records : list of dict
        New dicts where something was filled in, the others as given.
    detected : list of bool
        Whether each record's language was detected.

    Raises
    ------
    CorpusFormatError
        A record without a language where the ``langid`` extra is not installed (naming the first such record and
        the extra), or whose language cannot be detected confidently (:class:`gfun.errors.LanguageDetectionError`).
    """
    out = [{**rec, "id": str(i)} if isinstance(rec, dict) and rec.get("id") is None else rec
           for i, rec in enumerate(records)]
    detected = [isinstance(rec, dict) and _missing(rec.get("lang")) and isinstance(rec.get("text"), str)
                for rec in out]
    if not any(detected):
        return out, detected
    from gfun.core.optional import has_optional

    if not has_optional("py3langid"):
        from gfun.errors import CorpusFormatError

        first = out[detected.index(True)]
        raise CorpusFormatError(f"document {first['id']!r} has no 'lang', and detecting its language needs the "
                                "optional dependency 'py3langid': pip install 'gfun[langid]' (or give every "
                                "document its 'lang')", path=path, line=first.get("__line__"), field="lang")
    from gfun.text.langid import fill_missing_languages

    if languages:
        out = _prefer_languages(out, [i for i, d in enumerate(detected) if d], [str(lang) for lang in languages])
    return fill_missing_languages(out, spellings=languages, path=path), detected


def has_probabilities(model: Any) -> bool:
    """Whether ``model`` gives calibrated per-class probabilities (a gFun model saved without Platt sigmoids
    does not)."""
    return hasattr(model, "predict_proba") and (
        not hasattr(model, "meta_") or getattr(model.meta_, "platt_A_", None) is not None)


def rounded_probabilities(labels: np.ndarray, proba: np.ndarray, classes: list[str]) -> dict[str, float]:
    """The written probabilities of one document: 6 decimals, and > 0.5 exactly for its predicted labels.

    The model's probabilities already agree with its labels (sigmoids through 0.5 at decision 0); this keeps
    rounding (0.5000004 -> 0.5) and models saved before that rule from writing a contradiction.
    """
    out = {}
    for c, lab, p in zip(classes, labels, proba, strict=True):
        p = round(float(p), 6)
        out[c] = max(p, 0.500001) if lab else min(p, 0.5)
    return out


def prediction_records(model: Any, docs: Any, *, probabilities: bool = True,
                       detected: Sequence[bool] | None = None) -> list[dict[str, Any]]:
    """One record per document of the corpus ``docs``: ``id``, ``lang``, ``lang_detected`` (when ``detected``, as
    :func:`complete_records` returns it, is given), ``labels`` and (when ``probabilities`` and the model has them)
    ``probabilities``.

    Raises whatever the model's ``predict`` raises (e.g. :class:`gfun.errors.UnseenLanguageError`, or
    :class:`gfun.errors.NonFiniteError` naming the view that gave NaN), and :class:`gfun.errors.NonFiniteError` for
    NaN or infinite probabilities: a record holds finite numbers only, so that it is JSON.
    """
    classes = list(model.classes_)
    proba = None
    if probabilities and has_probabilities(model) and hasattr(model, "predict_with_proba"):
        pred, proba = model.predict_with_proba(docs)  # one pass instead of two
    else:
        pred = model.predict(docs)
        if probabilities and has_probabilities(model):
            proba = model.predict_proba(docs)
    if proba is not None and not np.isfinite(proba).all():
        from gfun.errors import NonFiniteError

        first = int(np.flatnonzero(~np.isfinite(proba).all(axis=1))[0])
        source = f"the probabilities of {type(model).__name__}"
        raise NonFiniteError(f"{source} are NaN or infinite, first for document {first} ({docs.langs[first]})",
                             source=source)
    out = []
    for i in range(len(docs)):
        rec: dict[str, Any] = {"id": docs.ids[i], "lang": docs.langs[i]}
        if detected is not None:
            rec["lang_detected"] = bool(detected[i])
        rec["labels"] = [classes[j] for j in np.flatnonzero(pred[i])]
        if proba is not None:
            rec["probabilities"] = rounded_probabilities(pred[i], proba[i], classes)
        out.append(rec)
    return out
