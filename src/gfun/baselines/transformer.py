"""The fine-tuned transformer baseline (the paper's mBERT row, section 4.4).

The multilingual transformer of the B view, fine-tuned in exactly the same way
(:class:`gfun.neural.fine_tuning.TransformerFineTuner`), used directly as the classifier: a linear output layer on
the pooled document vector, a sigmoid, threshold 0.5. It serves every language its tokenizer can read, including
languages without training documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gfun.core.state import prefixed, sub_arrays
from gfun.corpus.inputs import training_data, unpack
from gfun.estimator import LabelPredictionsMixin, check_finite
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.views.transformer import _TransformerParams

__all__ = ["FineTunedTransformerClassifier"]


class FineTunedTransformerClassifier(_TransformerParams, LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin,
                                     BaseEstimator):
    """A multilingual transformer fine-tuned by BCE on all languages, used as the classifier (sigmoid > 0.5).

    Parameters
    ----------
    model, pooling, preset, lr, head_lr, weight_decay, step_size, gamma, batch_size, max_length, max_epochs, \
patience, val_size, final_val_epoch, freeze_embeddings, bucket, max_grad_norm, trainable_layers, quantize, \
head_epochs, dropout, prefix, eval_batch_size, amp, save_dtype, self_contained, frozen_cache, device, random_state, \
progress
        As for :class:`gfun.views.transformer.TransformerView` (same defaults, same presets).

    Attributes
    ----------
    classes_ : list of str
    languages_ : list of str
        Training languages (every language is served).
    tuner_ : TransformerFineTuner
    history_ : list of dict
    best_epoch_ : int
    epoch_seconds_ : list of float
    """

    _log_name = "bert baseline"

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> FineTunedTransformerClassifier:
        """Fine-tune on labelled documents (same inputs as :meth:`gfun.GeneralizedFunnelling.fit`)."""
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if not texts:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        self.tuner_, _ = self._fit_tuner(texts, Y, features=False)  # shared with a B view fitted alike
        self._set_fitted()
        return self

    def _set_fitted(self) -> None:
        self.history_ = self.tuner_.history_
        self.best_epoch_ = self.tuner_.best_epoch_
        self.epoch_seconds_ = [float(h["seconds"]) for h in self.history_]

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Output-layer scores (n_docs, n_classes); positive means predicted (sigmoid > 0.5)."""
        check_is_fitted(self, "tuner_")
        texts, _ = unpack(X, langs)
        return check_finite(self.tuner_.logits(texts), f"the {type(self).__name__}")

    def predict_proba(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Sigmoid of the output layer (n_docs, n_classes)."""
        z = self.decision_function(X, langs=langs).astype(np.float64)
        return 1.0 / (1.0 + np.exp(-z))

    def transform(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Pooled last-layer document vectors (what the B view outputs)."""
        check_is_fitted(self, "tuner_")
        texts, _ = unpack(X, langs)
        return self.tuner_.encode(texts)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "tuner_")
        tmeta, tarrays = self.tuner_.get_state(self.save_dtype, self.self_contained)
        meta = {"params": self._state_params(), "classes_": self.classes_, "languages_": self.languages_,
                "tuner": tmeta}
        return meta, prefixed(tarrays, "tuner/")

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> FineTunedTransformerClassifier:
        obj = cls(**meta["params"])
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.tuner_ = obj._tuner_from_state(meta["tuner"], sub_arrays(arrays, "tuner/"))
        obj._set_fitted()
        return obj
