"""The practitioner's next try: a frozen multilingual encoder's document vectors, beside a pooled vocabulary or alone,
in one class-balanced one-vs-rest logistic regression.

Each document is embedded once by a frozen encoder (:class:`gfun.encoders.document_vectors.DocumentEncoder`: by
default the offline multilingual-e5-small, ``"passage: "`` prefix, mean pooling, the first 512 tokens, L2-normalised,
nothing trained). ``features="tfidf+encoder"`` (``gfun train --method encoder-tfidf``) concatenates the vector with
the document's row of one TF-IDF vocabulary over all languages (:class:`gfun.text.pooled.PooledTfidf`, as the
pooled baseline); ``features="encoder"`` (``--method encoder-lr``) uses the vector alone. One logistic regression per
class with class weights inversely proportional to class frequency; one C for all classes chosen by cross-validation
on the training documents only (folds keep a text's translations together; the mean of macro- and micro-F1 of the
out-of-fold predictions; ties to the smaller C). Documents of any language are classified.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gfun.baselines.pooled import choose_C
from gfun.corpus.inputs import check_C, document_groups, training_data, unpack
from gfun.estimator import LabelPredictionsMixin
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.linear import LinearOvR, fit_linear_ovr
from gfun.text.pooled import PooledTfidf

__all__ = ["ENCODER_C_GRID", "ENCODER_FEATURES", "EncoderLinearClassifier"]

logger = logging.getLogger(__name__)

#: The values of C the cross-validation chooses from.
ENCODER_C_GRID: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0)
#: What the classifier learns on.
ENCODER_FEATURES: tuple[str, ...] = ("tfidf+encoder", "encoder")


class EncoderLinearClassifier(LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin, BaseEstimator):
    """Frozen encoder vectors (beside a pooled TF-IDF vocabulary, or alone) -> one balanced logistic regression per
    class (``gfun train --method encoder-tfidf`` / ``encoder-lr``).

    Parameters
    ----------
    features : {"tfidf+encoder", "encoder"}
        The encoder's vector concatenated with the pooled TF-IDF row, or alone.
    C : float or "cv"
        Inverse regularisation; ``"cv"`` chooses one C from ``C_grid`` by ``cv``-fold cross-validation.
    C_grid : sequence of float
    cv : int
    class_weight : {"balanced", None}
    loss : {"log", "squared_hinge"}
        Logistic regression (the default) or a linear SVM.
    ngram_range : (int, int)
        Word n-grams of the pooled vocabulary.
    min_df : int
        Minimum number of training documents a term occurs in.
    model, prefix, max_length, quantize, batch_size, cache_dir, device
        The frozen encoder (see :class:`gfun.encoders.document_vectors.DocumentEncoder`; ``cache_dir="auto"``:
        gfun's cache folder, ``None``: no cache). A cache folder is not saved with the model.
    n_jobs : int, optional
        Classes fitted in parallel.
    random_state : int, optional
        Seed of the folds and of liblinear.

    Attributes
    ----------
    classes_, languages_ : list of str
    tfidf_ : PooledTfidf or None
    clf_ : LinearOvR
    C_ : float
    cv_scores_ : dict of float to float
        The validated mean of macro- and micro-F1 of each C of the grid (empty when C is given).
    encoder_key_ : str
        Identifies the encoder's weights and settings.
    """

    def __init__(self, features: str = "tfidf+encoder", C: float | str = "cv",
                 C_grid: Sequence[float] = ENCODER_C_GRID, cv: int = 3, class_weight: str | None = "balanced",
                 loss: str = "log", ngram_range: tuple[int, int] = (1, 2), min_df: int = 2,
                 model: str = "multilingual-e5-small", prefix: str = "passage: ", max_length: int = 512,
                 quantize: bool | str = False, batch_size: int = 32, cache_dir: str | None = "auto",
                 device: str = "auto", n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.features = features
        self.C = C
        self.C_grid = C_grid
        self.cv = cv
        self.class_weight = class_weight
        self.loss = loss
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.model = model
        self.prefix = prefix
        self.max_length = max_length
        self.quantize = quantize
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _encoder(self) -> Any:
        from gfun.encoders.document_vectors import DocumentEncoder

        enc = getattr(self, "_document_encoder", None)
        if enc is None:
            enc = self._document_encoder = DocumentEncoder(
                self.model, prefix=self.prefix, max_length=self.max_length, quantize=self.quantize,
                batch_size=self.batch_size, cache_dir=self.cache_dir, device=self.device, n_jobs=self.n_jobs)
        return enc

    def _rows(self, texts: list[str], *, fit: bool) -> Any:
        enc = self._encoder()
        V = enc.encode(texts).astype(np.float64)
        if fit:
            self.encoder_key_ = enc.key()
        elif enc.key() != self.encoder_key_:
            raise ValueError(f"the encoder {self.model!r} found here is not the one the classifier was trained with "
                             f"({enc.key()} against {self.encoder_key_})")
        if self.tfidf_ is None:
            return V
        T = self.tfidf_.fit_transform(texts) if fit else self.tfidf_.transform(texts)
        return sp.hstack([T, sp.csr_matrix(V)], format="csr")

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> EncoderLinearClassifier:
        """Embed the training documents, fit the vocabulary (with TF-IDF) and the classifiers."""
        if self.features not in ENCODER_FEATURES:
            raise ValueError(f"features must be one of {ENCODER_FEATURES}, got {self.features!r}")
        if self.loss not in ("log", "squared_hinge"):
            raise ValueError(f"loss must be 'log' or 'squared_hinge', got {self.loss!r}")
        check_C(self.C, "C")
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if len(texts) == 0:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        Y = np.asarray(Y, dtype=np.int8)
        self.tfidf_ = (PooledTfidf(ngram_range=tuple(self.ngram_range), min_df=self.min_df)
                       if self.features == "tfidf+encoder" else None)
        Xs = self._rows(list(texts), fit=True)
        fit_kw = {"loss": self.loss, "class_weight": self.class_weight, "random_state": self.random_state,
                  "n_jobs": self.n_jobs}
        self.C_, self.cv_scores_ = choose_C(Xs, Y, self.C, self.C_grid, self.cv, document_groups(X, len(texts), "auto"),
                                            self.features, random_state=self.random_state, fit_kw=fit_kw)
        self.clf_ = fit_linear_ovr(Xs, Y, self.C_, **fit_kw)
        return self

    def language_reach(self) -> str:
        """``"any"``: a multilingual encoder (and a shared vocabulary) classify documents of any language."""
        return "any"

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Decision scores (n_docs, n_classes) of documents of any language."""
        check_is_fitted(self, "clf_")
        texts, _ = unpack(X, langs)
        return self.clf_.decision_function(self._rows(list(texts), fit=False))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_document_encoder", None)
        return state

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "clf_")
        params = self.get_params()
        params["C_grid"] = list(params["C_grid"])
        params["ngram_range"] = list(params["ngram_range"])
        params["model"] = str(params["model"])
        # a cache folder belongs to the machine that fitted, not to the model: where it is loaded, gfun's own
        params["cache_dir"] = None if params["cache_dir"] is None else "auto"
        meta = {"params": params, "classes_": self.classes_, "languages_": self.languages_, "C_": self.C_,
                "cv_scores_": [[c, s] for c, s in self.cv_scores_.items()], "encoder_key_": self.encoder_key_,
                "tfidf": None}
        arrays = {"coef": self.clf_.coef, "intercept": self.clf_.intercept}
        if self.tfidf_ is not None:
            tfidf_meta, tfidf_arrays = self.tfidf_.get_state()
            meta["tfidf"] = tfidf_meta
            arrays.update({f"tfidf/{k}": v for k, v in tfidf_arrays.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> EncoderLinearClassifier:
        params = dict(meta["params"])
        params["C_grid"] = tuple(params["C_grid"])
        params["ngram_range"] = tuple(params["ngram_range"])
        obj = cls(**params)
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.C_ = float(meta["C_"])
        obj.cv_scores_ = {float(c): float(s) for c, s in meta.get("cv_scores_", [])}
        obj.encoder_key_ = str(meta["encoder_key_"])
        obj.tfidf_ = None if meta["tfidf"] is None else PooledTfidf.from_state(
            meta["tfidf"], {k[len("tfidf/"):]: v for k, v in arrays.items() if k.startswith("tfidf/")})
        obj.clf_ = LinearOvR(arrays["coef"], arrays["intercept"])
        return obj
