"""Predictions as records: what ``gfun predict`` writes and ``gfun serve`` answers for each document.

A record holds the document's ``id`` and ``lang``, its predicted ``labels`` (class names in class order) and,
when the model is calibrated, the ``probabilities`` of every class (6 decimals, > 0.5 exactly for the predicted
labels).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["has_probabilities", "prediction_records", "rounded_probabilities"]


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


def prediction_records(model: Any, docs: Any, *, probabilities: bool = True) -> list[dict[str, Any]]:
    """One record per document of the corpus ``docs``: ``id``, ``lang``, ``labels`` and (when ``probabilities``
    and the model has them) ``probabilities``.

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
        rec: dict[str, Any] = {"id": docs.ids[i], "lang": docs.langs[i],
                               "labels": [classes[j] for j in np.flatnonzero(pred[i])]}
        if proba is not None:
            rec["probabilities"] = rounded_probabilities(pred[i], proba[i], classes)
        out.append(rec)
    return out
