"""What every gfun estimator has from its ``decision_function`` and ``classes_``: labels and saving."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["LabelPredictionsMixin"]


class LabelPredictionsMixin:
    """``predict``, ``predict_labels`` and ``save`` of a gfun estimator from its ``decision_function`` (label where the
    score is above 0) and its ``classes_``."""

    def predict(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Binary label matrix (n_docs, n_classes), int8, columns in the order of :attr:`classes_`: score > 0."""
        return (self.decision_function(X, langs=langs) > 0).astype(np.int8)

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
