"""Views on a frozen multilingual encoder's document vector: E (the vector alone) and F (the vector beside P's
pooled TF-IDF space, early fusion).

Both embed each document once with a frozen encoder (:class:`gfun.encoders.document_vectors.DocumentEncoder`: by
default the offline multilingual-e5-small, ``"passage: "`` prefix, mean pooling, the first 512 tokens in float32 on
a GPU and the first 128 with int8 layers on a CPU, nothing trained), standardise the vector on the training
documents, and train one linear classifier per class on the documents of every language at once (E: ridge regression
in closed form, :mod:`gfun.svm.ridge`; F: a class-balanced linear SVM); Platt sigmoids fitted on out-of-fold scores
turn the classifiers' scores into calibrated posteriors, and the training documents' views are out-of-fold by
default, as for P. The encoder is multilingual, so both views serve any language, seen in training or not.

- **E** (:class:`EncoderPosteriorsView`) learns on the vector alone: what the encoder knows about a document's
  topic, in any language, with no vocabulary.
- **F** (:class:`FusedPosteriorsView`) learns on ``[pooled TF-IDF row, weight * standardised vector / sqrt(d)]``:
  one linear model that weighs the words a class shares across languages (package names, technical terms) and the
  encoder's semantics together, the "frozen embeddings beside a pooled vocabulary" classifier a practitioner
  writes, as a view whose posteriors the meta-classifier combines with the others.

The encoder is not part of the saved model: a loaded model loads it again from its spec (``model``) on first use
and checks that its weights are those the view was trained with (:meth:`DocumentEncoder.key`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from gfun.corpus.inputs import check_C
from gfun.svm.calibration import platt_posteriors
from gfun.svm.linear import LinearOvR
from gfun.svm.ridge import RIDGE_ALPHAS, ridge_scores
from gfun.text.pooled import PooledTfidf
from gfun.views.base import LanguageReach, ViewGenerator
from gfun.views.pooled import VIEW_TOL, calibrated_scores, pooled_scores

__all__ = ["FUSED_CV", "EncoderPosteriorsView", "FusedPosteriorsView"]

logger = logging.getLogger(__name__)

#: Folds of the F view's out-of-fold scores. Each of its class-balanced SVMs reads the encoder's dense vector on every
#: document, so F is the dearest view to fit; with 3 folds instead of 5 its fit on debtags run 0 takes 19 s instead of
#: 41 (quiet, 2 jobs), and no score of gFun-XPEF moved significantly over 10 runs of debtags (many-shot and
#: zero-shot), debtags-rare and EXCEPTIUS and 3 of SIB-200 (RESULTS.md, "The frozen encoder on a CPU").
FUSED_CV = 3


class _EncoderParams(ViewGenerator):
    """What E and F share: the frozen encoder, the standardisation of its vectors, the linear SVMs and their
    calibration."""

    output = "posteriors"
    _name = "E view"

    def _encoder(self) -> Any:
        from gfun.encoders.document_vectors import DocumentEncoder

        settings = getattr(self, "encoder_settings_", None)
        if settings is None:  # fitting: the parameters, "auto" resolved for the device
            max_length, quantize, device = self.max_length, self.quantize, self.device
        else:  # fitted: the settings its vectors were learnt with, whatever the device here (int8 runs on a CPU)
            max_length, quantize = int(settings["max_length"]), bool(settings["quantize"])
            device = "cpu" if quantize and self.device in (None, "auto") else self.device
        enc = getattr(self, "_document_encoder", None)
        if (enc is None or enc.model != self.model or enc.cache_dir != self.cache_dir
                or (settings is not None and enc.resolved_settings() != (max_length, quantize))):
            enc = DocumentEncoder(self.model, prefix=self.prefix, max_length=max_length, quantize=quantize,
                                  batch_size=self.batch_size, cache_dir=self.cache_dir, device=device,
                                  n_jobs=self.n_jobs, progress=self.progress)
            self._document_encoder = enc
        return enc

    def resolved_params(self) -> dict[str, Any]:
        """The parameters with ``max_length`` and ``quantize`` as this machine resolves them (the int8 scheme's name
        for ``quantize=True``): a view fitted on a GPU and one fitted on a CPU are not the same view."""
        from gfun.encoders.document_vectors import precision_key

        max_length, quantize = self._encoder().resolved_settings()
        return {**self.get_params(), "max_length": max_length, "quantize": precision_key(quantize)}

    def _vectors(self, texts: Sequence[str], *, fit: bool) -> np.ndarray:
        """Standardised encoder vectors of ``texts`` (statistics learnt when ``fit``), scaled to unit mean norm."""
        enc = self._encoder()
        V = enc.encode(list(texts)).astype(np.float64)
        if fit:
            self.encoder_key_ = enc.key()
            max_length, quantize = enc.resolved_settings()
            self.encoder_settings_ = {"max_length": max_length, "quantize": quantize}
            self.vector_mean_ = V.mean(axis=0)
            std = V.std(axis=0)
            self.vector_scale_ = np.where(std > 0, std, 1.0) * np.sqrt(V.shape[1])
        elif enc.key() != self.encoder_key_:
            raise ValueError(f"{self._name}: the encoder {self.model!r} found here is not the one the view was trained "
                             f"with (its weights or settings differ: {enc.key()} against {self.encoder_key_}); load "
                             "the model where the same encoder is available")
        return (V - self.vector_mean_) / self.vector_scale_

    def _fit_posteriors(self, X: Any, Y: np.ndarray, langs: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
        if self.train_posteriors not in ("in-sample", "cv"):
            raise ValueError(f"train_posteriors must be 'in-sample' or 'cv', got {self.train_posteriors!r}")
        self.svm_, in_sample, held_out = self._fit_scores(X, Y, groups)
        self.platt_A_, self.platt_B_, held_out = calibrated_scores(in_sample, held_out, Y, self._name)
        self.languages_ = sorted({str(lang) for lang in np.asarray(langs, dtype=object)})
        self.n_classes_ = Y.shape[1]
        oof = platt_posteriors(held_out, self.platt_A_, self.platt_B_).astype(np.float32)
        if self.train_posteriors == "cv":
            return oof
        self.train_oof_ = oof  # transient: handed over once by pop_training_oof
        return platt_posteriors(in_sample, self.platt_A_, self.platt_B_).astype(np.float32)

    def _fit_scores(self, X: Any, Y: np.ndarray, groups: np.ndarray | None
                    ) -> tuple[LinearOvR, np.ndarray, np.ndarray | None]:
        """The linear models, their in-sample and their out-of-fold scores: class-balanced linear SVMs."""
        return pooled_scores(X, Y, C=self.C, class_weight=self.class_weight, cv=self.cv,
                             random_state=self.random_state, n_jobs=self.n_jobs, groups=groups, tol=self.tol)

    def _posteriors(self, X: Any) -> np.ndarray:
        return platt_posteriors(self.svm_.decision_function(X), self.platt_A_, self.platt_B_).astype(np.float32)

    def covers(self, lang: str) -> bool:
        return hasattr(self, "svm_")

    def language_reach(self) -> LanguageReach:
        return "any"

    def release(self) -> None:
        self._document_encoder = None  # the loaded encoder (hundreds of MB) is loaded again where needed

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_document_encoder", None)
        return state

    # ------------------------------------------------------------------ state
    _ARRAYS = ("vector_mean_", "vector_scale_", "platt_A_", "platt_B_")

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        params = self.get_params()
        params["model"] = str(params["model"])
        # a cache folder belongs to the machine that fitted, not to the model: where it is loaded, gfun's own
        params["cache_dir"] = None if params["cache_dir"] is None else "auto"
        meta = {"params": params, "languages_": self.languages_, "n_classes_": self.n_classes_,
                "encoder_key_": self.encoder_key_, "encoder_settings_": self.encoder_settings_}
        arrays = {name.rstrip("_"): getattr(self, name) for name in self._ARRAYS}
        arrays.update({"coef": self.svm_.coef, "intercept": self.svm_.intercept})
        return meta, arrays

    def _restore(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        for name in self._ARRAYS:
            setattr(self, name, arrays[name.rstrip("_")])
        self.svm_ = LinearOvR(arrays["coef"], arrays["intercept"])
        self.languages_ = list(meta["languages_"])
        self.n_classes_ = int(meta["n_classes_"])
        self.encoder_key_ = str(meta["encoder_key_"])
        # saved before the settings were recorded: the parameters were the settings (512 tokens, float32 by default)
        self.encoder_settings_ = meta.get("encoder_settings_") or {
            "max_length": meta["params"].get("max_length", 512), "quantize": meta["params"].get("quantize") is True}


_SHARED_DOC = """    model : str or path-like
        Encoder spec (:func:`gfun.encoders.resolver.load_encoder`): ``"multilingual-e5-small"`` (offline), a local
        ``save_pretrained`` folder, or a Hugging Face id already in the local cache. Nothing is downloaded.
    prefix : str
        Prepended to every document (e5 models expect ``"passage: "``).
    max_length : int or "auto"
        Tokens of a document the encoder reads (the rest is cut); ``"auto"``: 512 on a GPU, 128 on a CPU
        (:data:`gfun.encoders.document_vectors.AUTO_MAX_LENGTH`).
    quantize : bool or "auto"
        int8 dynamic quantisation of the encoder's layers (:data:`gfun.encoders.frozen.INT8_SCHEME`; ``"auto"``: on
        a CPU). With both ``"auto"``, a CPU's frozen pass takes 4.3 times fewer CPU seconds than 512 float32
        tokens where the CPU has bfloat16 products (2.6 times with that product emulated), at scores within .008 of
        them but for debtags' zero-shot Kµ (-.011, not significant; RESULTS.md, "The frozen encoder on a CPU").
    batch_size : int
        Documents per batch of the encoder (float32; int8 layers encode one document a batch, so that its vector
        does not depend on the documents beside it).
    cache_dir : str, "auto" or None
        Folder of a disk cache of the document vectors, shared by every estimator with the same encoder (see
        :class:`~gfun.encoders.document_vectors.DocumentEncoder`); ``"auto"``: gfun's cache folder (``$GFUN_CACHE``,
        else ``~/.cache/gfun``); ``None``: none. A refit on documents met before reads their vectors. Not saved
        with the model.
    device : str
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``...
    C : float
        Regularisation of the linear SVMs.
    class_weight : {"balanced", None}
        Class weights of the linear SVMs (balanced: a rare class weighs as much as a common one).
    cv : int
        Folds of the out-of-fold scores (Platt sigmoids, out-of-fold training views): 5 for E, :data:`FUSED_CV` for F.
    train_posteriors : {"cv", "in-sample"}
        The training documents' views: out-of-fold (the default) or from the classifiers trained on them.
    tol : float
        liblinear's stopping tolerance (:data:`gfun.views.pooled.VIEW_TOL`, as P's).
    n_jobs : int, optional
        Classes (E by ridge: fits) fitted in parallel, and the encoder's batches encoded side by side on a CPU (the
        same vectors).
    random_state : int, optional
        Seed of the folds and of liblinear.
    progress : bool
        A progress bar over the encoder's batches."""


class EncoderPosteriorsView(_EncoderParams):
    __doc__ = f"""Encoder VGF (letter E): a frozen encoder's document vector -> ridge classifiers (or class-balanced
    linear SVMs) -> calibrated posteriors; serves any language.

    Parameters
    ----------
    learner : {{"ridge", "svm"}}
        ``"ridge"``: one ridge regression per class in closed form, each class's penalty chosen from ``alphas`` by
        leave-one-out (:mod:`gfun.svm.ridge`: exact, about 1 s where the SVMs take half a minute on debtags, and
        better posteriors there, RESULTS.md); ``"svm"``: class-balanced linear SVMs (liblinear, ``C``,
        ``class_weight``, ``tol``), as F's.
    alphas : sequence of float
        The penalties of ``learner="ridge"`` (:data:`gfun.svm.ridge.RIDGE_ALPHAS`).
{_SHARED_DOC}

    Attributes
    ----------
    svm_ : LinearOvR
        The linear models of the classes (ridge regressions or SVMs, as ``learner`` says).
    platt_A_, platt_B_ : ndarray (n_classes,)
    vector_mean_, vector_scale_ : ndarray (hidden,)
        The standardisation of the vectors.
    encoder_key_ : str
        Identifies the encoder's weights and settings (checked when a loaded view encodes).
    encoder_settings_ : dict
        ``max_length`` and ``quantize`` as the fit resolved them: a loaded view encodes with these on any device
        (int8 layers on the CPU).
    languages_ : list of str
        The training languages (the view serves any language).
    """

    letter = "e"
    description = "encoder posteriors"

    def __init__(self, model: str = "multilingual-e5-small", prefix: str = "passage: ", max_length: int | str = "auto",
                 quantize: bool | str = "auto", batch_size: int = 32, cache_dir: str | None = "auto",
                 device: str = "auto", learner: Literal["ridge", "svm"] = "ridge",
                 alphas: Sequence[float] = RIDGE_ALPHAS, C: float = 0.1, class_weight: str | None = "balanced",
                 cv: int = 5, train_posteriors: Literal["cv", "in-sample"] = "cv", tol: float = VIEW_TOL,
                 n_jobs: int | None = None, random_state: int | None = None, progress: bool = False) -> None:
        self.learner = learner
        self.alphas = alphas
        self.model = model
        self.prefix = prefix
        self.max_length = max_length
        self.quantize = quantize
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self.device = device
        self.C = C
        self.class_weight = class_weight
        self.cv = cv
        self.train_posteriors = train_posteriors
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, *,
                      groups: np.ndarray | None = None) -> np.ndarray:
        """Fit on the training documents of all languages; ``groups`` keeps the translations of one text in one fold."""
        if self.learner not in ("ridge", "svm"):
            raise ValueError(f"learner must be 'ridge' or 'svm', got {self.learner!r}")
        check_C(self.C, "C", allow_cv=False)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int8)
        X = self._vectors(texts, fit=True)
        out = self._fit_posteriors(X, Y, langs, groups)
        logger.info("E view: %d documents of %d language(s), %d dimensions", X.shape[0], len(self.languages_),
                    X.shape[1])
        return out

    def _fit_scores(self, X: Any, Y: np.ndarray, groups: np.ndarray | None
                    ) -> tuple[LinearOvR, np.ndarray, np.ndarray | None]:
        if self.learner == "svm":
            return super()._fit_scores(X, Y, groups)
        return ridge_scores(X, Y, alphas=self.alphas, cv=self.cv, random_state=self.random_state, groups=groups,
                            n_jobs=self.n_jobs)

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        return self._posteriors(self._vectors(texts, fit=False))

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta, arrays = self._state()
        meta["params"]["alphas"] = [float(a) for a in meta["params"]["alphas"]]
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> EncoderPosteriorsView:
        params = dict(meta["params"])
        if "alphas" in params:
            params["alphas"] = tuple(params["alphas"])
        obj = cls(**params)
        obj._restore(meta, arrays)
        return obj


class FusedPosteriorsView(_EncoderParams):
    __doc__ = f"""Fused VGF (letter F): ``[pooled TF-IDF, weight * encoder vector]`` -> class-balanced linear SVMs ->
    calibrated posteriors; serves any language.

    Parameters
    ----------
    weight : float
        Weight of the (standardised, unit mean norm) encoder vector beside the L2-normalised TF-IDF row.
    ngram_range : (int, int)
        Word n-grams of the pooled vocabulary.
    min_df : int
        Minimum number of training documents (of any language) a term occurs in.
{_SHARED_DOC}

    Attributes
    ----------
    tfidf_ : PooledTfidf
    svm_ : LinearOvR
    platt_A_, platt_B_ : ndarray (n_classes,)
    vector_mean_, vector_scale_ : ndarray (hidden,)
    encoder_key_ : str
    languages_ : list of str
    """

    letter = "f"
    description = "fused posteriors"
    _name = "F view"

    def __init__(self, weight: float = 1.0, ngram_range: tuple[int, int] = (1, 2), min_df: int = 2,
                 model: str = "multilingual-e5-small", prefix: str = "passage: ", max_length: int | str = "auto",
                 quantize: bool | str = "auto", batch_size: int = 32, cache_dir: str | None = "auto",
                 device: str = "auto", C: float = 0.3, class_weight: str | None = "balanced", cv: int = FUSED_CV,
                 train_posteriors: Literal["cv", "in-sample"] = "cv", tol: float = VIEW_TOL,
                 n_jobs: int | None = None, random_state: int | None = None, progress: bool = False) -> None:
        self.weight = weight
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.model = model
        self.prefix = prefix
        self.max_length = max_length
        self.quantize = quantize
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self.device = device
        self.C = C
        self.class_weight = class_weight
        self.cv = cv
        self.train_posteriors = train_posteriors
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def _features(self, texts: Sequence[str], *, fit: bool) -> sp.csr_matrix:
        texts = list(texts)
        T = self.tfidf_.fit_transform(texts) if fit else self.tfidf_.transform(texts)
        V = self._vectors(texts, fit=fit) * float(self.weight)
        return sp.hstack([T, sp.csr_matrix(V)], format="csr")

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, *,
                      groups: np.ndarray | None = None) -> np.ndarray:
        """Fit on the training documents of all languages; ``groups`` keeps the translations of one text in one fold."""
        check_C(self.C, "C", allow_cv=False)
        if not np.isfinite(self.weight) or self.weight < 0:
            raise ValueError(f"weight must be a finite number >= 0, got {self.weight!r}")
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int8)
        self.tfidf_ = PooledTfidf(ngram_range=tuple(self.ngram_range), min_df=self.min_df)
        X = self._features(texts, fit=True)
        out = self._fit_posteriors(X, Y, langs, groups)
        logger.info("F view: %d documents of %d language(s), %d terms + %d dimensions", X.shape[0],
                    len(self.languages_), len(self.tfidf_.vocabulary_), len(self.vector_mean_))
        return out

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        return self._posteriors(self._features(texts, fit=False))

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta, arrays = self._state()
        meta["params"]["ngram_range"] = list(meta["params"]["ngram_range"])
        tfidf_meta, tfidf_arrays = self.tfidf_.get_state()
        meta["tfidf"] = tfidf_meta
        arrays.update({f"tfidf/{k}": v for k, v in tfidf_arrays.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> FusedPosteriorsView:
        params = dict(meta["params"])
        params["ngram_range"] = tuple(params["ngram_range"])
        obj = cls(**params)
        obj._restore(meta, arrays)
        obj.tfidf_ = PooledTfidf.from_state(meta["tfidf"], {k[len("tfidf/"):]: v for k, v in arrays.items()
                                                            if k.startswith("tfidf/")})
        return obj
