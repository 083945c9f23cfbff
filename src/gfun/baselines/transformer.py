"""The fine-tuned transformer baselines (the paper's mBERT row, section 4.4, and the same network with tuned
thresholds).

The multilingual transformer of the B view, fine-tuned in exactly the same way
(:class:`gfun.neural.fine_tuning.TransformerFineTuner`), used directly as the classifier: a linear output layer on
the pooled document vector, a sigmoid, threshold 0.5 (:class:`FineTunedTransformerClassifier`, configuration
``bert``). It serves every language its tokenizer can read, including languages without training documents.

:class:`TunedTransformerClassifier` (configuration ``bert-tuned``) is what a practitioner does next with that
network on imbalanced multilabel data: one decision threshold per class, the one that maximises the class's F1 on
out-of-fold scores of the training documents (:func:`gfun.svm.thresholds.f1_thresholds`). The scores come from
output layers cross-fitted on the fine-tuned network's vectors of the training documents
(:meth:`~gfun.neural.fine_tuning.TransformerFineTuner.cross_fitted_logits`): seconds, not another fine-tuning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gfun.core.state import prefixed, sub_arrays
from gfun.corpus.inputs import training_data, unpack
from gfun.estimator import LabelPredictionsMixin, check_finite
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.thresholds import f1_thresholds
from gfun.views.transformer import _TransformerParams

__all__ = ["FineTunedTransformerClassifier", "TunedTransformerClassifier"]

logger = logging.getLogger(__name__)


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


class TunedTransformerClassifier(FineTunedTransformerClassifier):
    """The fine-tuned transformer with one decision threshold per class, tuned on out-of-fold scores (``bert-tuned``).

    The network, its fine-tuning and its output layer are those of :class:`FineTunedTransformerClassifier` (with a
    shared ``frozen_cache``, the very same network). Then, on the fixed vectors of the training documents, ``cv``
    fresh output layers are trained as the network's own was refitted (``head_epochs`` epochs, 30 for presets that
    refit none), each scoring the documents it did not see; each class's threshold is the one that maximises its
    F1 on those out-of-fold scores (left at 0, the sigmoid's 0.5, for a class with fewer than 10 positives).
    ``decision_function`` is the output layer's score minus the class's threshold (``predict_proba``, its sigmoid, is
    above 0.5 exactly where a class is predicted). The parameters are those of :class:`FineTunedTransformerClassifier`.

    Attributes
    ----------
    thresholds_ : ndarray of shape (n_classes,)
        Per class, the output-layer score above which it is predicted.
    classes_, languages_, tuner_, history_, best_epoch_, epoch_seconds_
        As for :class:`FineTunedTransformerClassifier`.
    """

    _log_name = "bert-tuned baseline"
    #: Folds of the cross-fitted output layers whose scores the thresholds are tuned on.
    cv = 3
    #: Epochs of each cross-fitted output layer when the preset refits none (``head_epochs=0``).
    default_head_epochs = 30

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> TunedTransformerClassifier:
        """Fine-tune on labelled documents, then tune the per-class thresholds (same inputs as ``fit`` of
        :class:`gfun.GeneralizedFunnelling`)."""
        from gfun.svm.linear import make_folds

        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if not texts:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        self.tuner_, features = self._fit_tuner(texts, Y, features=True)
        Yd = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float32)
        epochs = int(self.tuner_.settings.get("head_epochs") or 0) or self.default_head_epochs
        folds = make_folds(len(Yd), self.cv, self.random_state)
        if len(folds) < 2:
            raise ValueError(f"{len(Yd)} training documents are too few to tune thresholds by {self.cv}-fold "
                             "cross-fitting")
        oof = self.tuner_.cross_fitted_logits(features, Yd, folds, epochs)
        self.thresholds_ = f1_thresholds(oof, Yd.astype(bool))
        logger.info("%s: thresholds tuned on %d-fold out-of-fold scores (%d of %d classes moved)", self._log_name,
                    len(folds), int(np.count_nonzero(self.thresholds_)), len(classes))
        self._set_fitted()
        return self

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Output-layer scores minus each class's threshold (n_docs, n_classes); positive means predicted."""
        check_is_fitted(self, "thresholds_")
        return super().decision_function(X, langs=langs) - self.thresholds_

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta, arrays = super().get_state()
        arrays["thresholds"] = np.asarray(self.thresholds_, dtype=np.float64)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TunedTransformerClassifier:
        obj = super().from_state(meta, {k: v for k, v in arrays.items() if k != "thresholds"})
        obj.thresholds_ = np.asarray(arrays["thresholds"], dtype=np.float64)
        return obj
