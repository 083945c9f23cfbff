"""What every gfun estimator has from its ``decision_function`` and ``classes_``: labels and saving."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["LabelPredictionsMixin", "check_finite"]


def check_finite(values: Any, source: str, langs: Sequence[str] | None = None) -> Any:
    """``values`` (scores or views, one row per document), or :class:`~gfun.errors.NonFiniteError` naming
    ``source`` when they hold NaN or infinite values (which would become NaN probabilities and empty label sets).

    ``langs`` (the documents' languages) lets the message name the language of the first bad document.
    """
    import scipy.sparse as sp

    from gfun.errors import NonFiniteError

    data = values.data if sp.issparse(values) else np.asarray(values)
    if data.dtype.kind not in "fc" or np.isfinite(data).all():
        return values
    if sp.issparse(values):
        coo = values.tocoo()
        rows = np.unique(coo.row[~np.isfinite(coo.data)])
    else:
        rows = np.flatnonzero(~np.isfinite(data.reshape(data.shape[0], -1) if data.ndim else data.reshape(1, 1)
                                           ).all(axis=1))
    n = values.shape[0] if data.ndim else 1
    first = int(rows[0])
    where = f"document {first}" + (f" ({langs[first]})" if langs is not None and first < len(langs) else "")
    raise NonFiniteError(f"{source} gave NaN or infinite values for {len(rows)} of {n} document(s), first "
                         f"{where}", source=source)


class LabelPredictionsMixin:
    """``predict``, ``predict_labels`` and ``save`` of a gfun estimator from its ``decision_function`` (label where the
    score is above 0) and its ``classes_``."""

    def predict(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Binary label matrix (n_docs, n_classes), int8, columns in the order of :attr:`classes_`: score > 0
        (:class:`~gfun.errors.NonFiniteError` for a NaN or infinite score)."""
        scores = check_finite(self.decision_function(X, langs=langs), type(self).__name__)
        return (scores > 0).astype(np.int8)

    def predict_labels(self, X: Any, *, langs: Sequence[str] | None = None) -> list[list[str]]:
        """Predicted class names of each document."""
        return [[self.classes_[j] for j in np.flatnonzero(row)] for row in self.predict(X, langs=langs)]

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags (read by scikit-learn >= 1.6): the input is texts (with their languages), not a
        numeric matrix, and the target is a multilabel indicator matrix."""
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_label = True
        if hasattr(self, "transform") and tags.transformer_tags is None:
            from sklearn.utils import TransformerTags

            tags.transformer_tags = TransformerTags(preserves_dtype=[])
        return tags

    def save(self, path: str) -> None:
        """Save the fitted model to directory ``path`` (see :mod:`gfun.persistence`)."""
        from gfun.persistence.saving import save_model

        save_model(self, path)
