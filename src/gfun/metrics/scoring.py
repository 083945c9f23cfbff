"""``score`` of gfun's estimators: macro-F1 on a corpus, what scikit-learn's model selection maximises.

scikit-learn's ``ClassifierMixin.score`` is subset accuracy and needs ``y``; gfun's estimators score by the paper's
headline measure instead, macro-averaged F1 (the measure by which gfun's own cross-validation chooses
``meta_C``), and take the labels from the corpus when ``y`` is not given. So ``GridSearchCV(model, grid)
.fit(corpus)`` and ``cross_val_score(model, corpus)`` work without a ``scoring`` argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gfun.corpus.inputs import as_label_matrix, unpack
from gfun.metrics.measures import f1_from_counts

__all__ = ["MacroF1ScoreMixin", "macro_f1"]


def macro_f1(Y_true: np.ndarray, Y_pred: np.ndarray) -> float:
    """Mean over classes of F1 (1 for a class with no positive and none predicted, as in
    :mod:`gfun.metrics.measures`)."""
    t, p = np.asarray(Y_true, dtype=bool), np.asarray(Y_pred, dtype=bool)
    return float(np.mean(f1_from_counts((t & p).sum(0), (~t & p).sum(0), (t & ~p).sum(0))))


class MacroF1ScoreMixin:
    """Adds :meth:`score` (macro-F1) to a gfun estimator; list it before ``ClassifierMixin``."""

    def score(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None,
              sample_weight: Any = None) -> float:
        """Macro-averaged F1 of the predictions of ``X``.

        Parameters
        ----------
        X : MultilingualCorpus, DataFrame with ``text`` and ``lang`` columns, or list of str
            Documents; a labelled corpus carries its labels (in any class order: they are matched by name).
        y : array-like (n_docs, n_classes) binary, or list of label lists, optional
            Labels, columns in the order of :attr:`classes_`; taken from ``X`` when omitted.
        langs : list of str, optional
            Language of each text when ``X`` is a list of texts.
        sample_weight : None
            Not supported (a ValueError if given).
        """
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight")
        pred = self.predict(X, langs=langs)  # NotFittedError first
        if y is None:
            if not getattr(X, "labelled", False):
                raise ValueError("no labels to score against: pass y, or a labelled MultilingualCorpus")
            same = tuple(X.classes) == tuple(self.classes_)
            Y = np.asarray((X if same else X.with_classes(list(self.classes_))).Y.toarray())
        else:
            Y, _ = as_label_matrix(y, len(unpack(X, langs)[0]), list(self.classes_))
        if Y.shape != pred.shape:
            raise ValueError(f"labels of shape {Y.shape} for predictions of shape {pred.shape}")
        return macro_f1(Y, pred)
