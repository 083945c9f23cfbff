"""The transformer view (B): a multilingual transformer fine-tuned end-to-end, its last-layer document vector.

Section 3.4 and 4.3 of the paper. A linear output layer is put on the pooled last-layer vector ([CLS], or the
mean of the token states under the attention mask) and the whole network is fine-tuned with binary
cross-entropy on the training documents of all languages at once. The view of a document is then the pooled
vector (the output layer is dropped); gFun maps it to calibrated posteriors (``mean`` aggregation) or
concatenates it (``concat``) like any other non-posterior view. The tokenizer is multilingual, so the view
covers every language, including languages without training documents (zero-shot).

The same fine-tuned network used directly as the classifier (sigmoid of the output layer, threshold 0.5) is the
paper's mBERT baseline: :class:`gfun.baselines.transformer.FineTunedTransformerClassifier`. Both use
:class:`gfun.neural.fine_tuning.TransformerFineTuner`, the one implementation of the fine-tuning.

Presets (:data:`TRANSFORMER_PRESETS`; any explicitly given parameter overrides the preset's value):

``"paper"``
    The paper's settings: AdamW, learning rate 1e-5 (output layer too), weight decay 0.01 (not on biases and
    LayerNorm weights), StepLR(step 25, gamma 0.1) stepped per epoch, batch 4, maximum length 512, up to 50
    epochs, early stopping after 5 epochs without macro-F1 improvement on a 20% held-out split, best epoch
    restored, then one last epoch on the held-out split.
``"gpu"``
    A cheaper GPU setting: encoder learning rate 2e-5 and output layer 1e-3, batch 16, maximum length 256,
    length-bucketed batches, up to 10 epochs, patience 2.
``"cpu"``
    Partial fine-tuning, practical on a few CPU cores: the
    embeddings and the lower 11 layers are frozen and computed ONCE per document (token states kept in float16,
    unpadded; :class:`gfun.encoders.frozen.FrozenPass`), their Linear layers dynamically quantised to int8;
    only the top ``trainable_layers=1`` layer and the output layer train (encoder learning rate 5e-5, output
    layer 1e-3), batch 32, maximum length 256, length-bucketed batches, 6 epochs, no held-out split, then 30
    epochs of the output layer alone on the final vectors (for the ``bert`` baseline's classifier). On CPUs with
    bfloat16 instructions (AVX512-BF16, AMX) the trainable layer and the output layer run in bfloat16 autocast
    (``amp="auto"``; ``amp=False``: float32). Test-time extraction runs the same two halves.
    ``trainable_layers=0`` is the frozen encoder's pooled vector.

The default preset ``"auto"`` follows the device: ``"gpu"`` on CUDA, ``"cpu"`` otherwise; ``"paper"`` only when
asked for. ``trainable_layers`` (partial fine-tuning on a cached frozen pass) works with every preset and device.

Every preset pads batches dynamically (to the longest document of the batch), always passes the attention
mask, and extracts views in batches of documents sorted by length, without gradients: a document's vector
does not depend on the other documents of its batch beyond rounding (on some CPUs matrix products of other
shapes round differently: up to ~5e-4 seen, in bfloat16 on a Xeon with AMX).

Saved state: the weights fine-tuning changed as numpy arrays and the model configuration. The weights it did not
change (frozen layers, a frozen embedding table) and the tokenizer are stored by reference to the base encoder
(its spec and a SHA-256 of those weights), loaded from the local copy (never downloaded) and refused when they
differ; ``self_contained=True`` stores every weight and the tokenizer (``tokenizer.json`` as bytes) instead, so
that a loaded view needs neither the network nor the original model folder.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from gfun.core.state import prefixed, sub_arrays
from gfun.encoders.pooling import default_pooling
from gfun.neural.fine_tuning import TransformerFineTuner, _net_class, resolve_amp
from gfun.neural.training import check_texts, device_preset, lazy_classes, resolve_device, resolve_preset
from gfun.views.base import LanguageReach, ViewGenerator

__all__ = ["TRANSFORMER_PRESETS", "TransformerFineTuner", "TransformerView"]

logger = logging.getLogger(__name__)

#: Training settings by preset name (see the module docstring).
TRANSFORMER_PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"lr": 1e-5, "head_lr": None, "weight_decay": 0.01, "step_size": 25, "gamma": 0.1, "batch_size": 4,
              "max_length": 512, "max_epochs": 50, "patience": 5, "val_size": 0.2, "final_val_epoch": True,
              "freeze_embeddings": False, "bucket": False, "max_grad_norm": None, "trainable_layers": None,
              "quantize": False, "head_epochs": 0},
    "gpu": {"lr": 2e-5, "head_lr": 1e-3, "weight_decay": 0.01, "step_size": 25, "gamma": 0.1, "batch_size": 16,
            "max_length": 256, "max_epochs": 10, "patience": 2, "val_size": 0.2, "final_val_epoch": True,
            "freeze_embeddings": False, "bucket": True, "max_grad_norm": 1.0, "trainable_layers": None,
            "quantize": False, "head_epochs": 0},
    "cpu": {"lr": 5e-5, "head_lr": 1e-3, "weight_decay": 0.01, "step_size": 25, "gamma": 0.1, "batch_size": 32,
            "max_length": 256, "max_epochs": 6, "patience": 1, "val_size": 0.0, "final_val_epoch": False,
            "freeze_embeddings": True, "bucket": True, "max_grad_norm": 1.0, "trainable_layers": 1,
            "quantize": True, "head_epochs": 30},
}
_SETTINGS = tuple(TRANSFORMER_PRESETS["paper"])
_POOLINGS = ("auto", "cls", "mean")

#: ``TransformerNet`` (defined in :mod:`gfun.neural.fine_tuning`) is also served here, so that pickles naming it under
#: this module (a joblib cache of a fitted view) load.
__getattr__ = lazy_classes(__name__, {"TransformerNet": _net_class})


class _TransformerParams:
    """Parameters shared by the B view and the fine-tuned transformer baseline (one ``__init__`` for both)."""

    #: What log lines and progress bars call the estimator.
    _log_name = "B view"

    def __init__(self, model: str = "multilingual-e5-small", pooling: Literal["auto", "cls", "mean"] = "auto",
                 preset: str = "auto", lr: float | None = None, head_lr: float | None = None,
                 weight_decay: float | None = None, step_size: int | None = None, gamma: float | None = None,
                 batch_size: int | None = None, max_length: int | None = None, max_epochs: int | None = None,
                 patience: int | None = None, val_size: float | None = None, final_val_epoch: bool | None = None,
                 freeze_embeddings: bool | None = None, bucket: bool | None = None,
                 max_grad_norm: float | None = None, trainable_layers: int | None = None,
                 quantize: bool | None = None, head_epochs: int | None = None, dropout: float = 0.1,
                 prefix: str = "",
                 eval_batch_size: int = 64, amp: bool | str = "auto", save_dtype: str | None = None,
                 self_contained: bool = False, frozen_cache: str | None = None, device: str = "auto",
                 random_state: int | None = None, progress: bool = False) -> None:
        self.model = model
        self.pooling = pooling
        self.preset = preset
        self.lr = lr
        self.head_lr = head_lr
        self.weight_decay = weight_decay
        self.step_size = step_size
        self.gamma = gamma
        self.batch_size = batch_size
        self.max_length = max_length
        self.max_epochs = max_epochs
        self.patience = patience
        self.val_size = val_size
        self.final_val_epoch = final_val_epoch
        self.freeze_embeddings = freeze_embeddings
        self.bucket = bucket
        self.max_grad_norm = max_grad_norm
        self.trainable_layers = trainable_layers
        self.quantize = quantize
        self.head_epochs = head_epochs
        self.dropout = dropout
        self.prefix = prefix
        self.eval_batch_size = eval_batch_size
        self.amp = amp
        self.save_dtype = save_dtype
        self.self_contained = self_contained
        self.frozen_cache = frozen_cache
        self.device = device
        self.random_state = random_state
        self.progress = progress

    def training_settings(self) -> dict[str, Any]:
        """The preset's settings with the explicitly given parameters applied.

        A preset's int8 quantisation of the frozen layers (``"cpu"``) is dropped on a CUDA device, where those
        kernels do not run; ``quantize=True`` given explicitly there is an error (at fit)."""
        settings = resolve_preset(TRANSFORMER_PRESETS, device_preset(self.preset, self.device),
                                  {k: getattr(self, k) for k in _SETTINGS}, type(self).__name__)
        if settings.get("quantize") and self.quantize is None and device_preset("auto", self.device) == "gpu":
            settings["quantize"] = False
        return settings

    def _pooling(self) -> str:
        if self.pooling not in _POOLINGS:
            raise ValueError(f"pooling must be one of {_POOLINGS}, got {self.pooling!r}")
        return default_pooling(self.model) if self.pooling == "auto" else self.pooling

    def _tuner(self) -> TransformerFineTuner:
        settings = self.training_settings()
        pooling = self._pooling()
        if self.save_dtype not in (None, "float32", "float16"):
            raise ValueError(f"save_dtype must be None, 'float32' or 'float16', got {self.save_dtype!r}")
        return TransformerFineTuner(self.model, pooling, settings, dropout=self.dropout, prefix=self.prefix,
                                    eval_batch_size=self.eval_batch_size, amp=self.amp, device=self.device,
                                    random_state=self.random_state, progress=self.progress,
                                    frozen_cache=self.frozen_cache, name=self._log_name)

    def _fit_tuner(self, texts: list[str], Y: Any, *, features: bool) -> tuple[TransformerFineTuner, np.ndarray | None]:
        """Fine-tune on ``texts`` and ``Y``, or reuse the network fine-tuned before with the same inputs.

        With ``frozen_cache`` and a ``random_state``, the fine-tuned network and the vectors of its training
        documents are stored in ``<frozen_cache>/fine-tuned/``, keyed by everything that determines them (encoder,
        pooling, training settings, dropout, prefix, extraction batch, autocast, device, seed, texts, labels): the
        ``b`` view and the ``bert`` baseline of an experiment run, the same network by construction, fine-tune
        once.

        Returns
        -------
        tuner : TransformerFineTuner
        features : ndarray or None
            The training documents' vectors (``None`` when not asked for and not cached).
        """
        import joblib

        tuner = self._tuner()
        path = self._fine_tuned_path(tuner, texts, Y)
        if path is not None and path.is_file():
            tuner, Z = joblib.load(path)
            tuner.name = self._log_name  # fine-tuned by the other estimator, maybe
            logger.info("%s: fine-tuned network reused from %s", type(self).__name__, path)
            return tuner, Z
        tuner.fit(texts, Y)
        ids = tuner.__dict__.pop("_train_ids")
        states = tuner.__dict__.pop("_train_states", None)  # the frozen pass of training, reused
        Z = tuner.__dict__.pop("_train_features", None)
        if Z is None and (features or path is not None):
            Z = tuner._run(ids, np.arange(len(ids)), "features", states)
        if path is not None:
            import os

            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            joblib.dump((tuner, Z), tmp)
            os.replace(tmp, path)
        return tuner, Z

    def _fine_tuned_path(self, tuner: TransformerFineTuner, texts: list[str], Y: Any) -> Any:
        """Where :meth:`_fit_tuner` keeps the network fine-tuned on ``texts`` (``None``: not kept)."""
        if not self.frozen_cache or self.random_state is None:
            return None
        from pathlib import Path

        import joblib

        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float32)
        device = resolve_device(tuner.device)
        key = {"version": 2, "model": str(tuner.model), "pooling": tuner.pooling, "settings": tuner.settings,
               "dropout": tuner.dropout, "prefix": tuner.prefix, "eval_batch_size": tuner.eval_batch_size,
               "amp": resolve_amp(tuner.amp, device), "device": str(device), "random_state": tuner.random_state,
               "texts": list(texts), "Y": Y}
        return Path(self.frozen_cache) / "fine-tuned" / f"{joblib.hash(key)}.joblib"

    def _state_params(self) -> dict:
        params = self.get_params()  # type: ignore[attr-defined]
        params["model"] = str(params["model"])
        params["frozen_cache"] = None  # a cache location belongs to the machine that fitted, not to the model
        return params

    def _tuner_from_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> TransformerFineTuner:
        return self._tuner().load_state(meta, arrays)


class TransformerView(_TransformerParams, ViewGenerator):
    """Transformer VGF (letter B): a multilingual transformer fine-tuned by BCE, its pooled last-layer vector.

    Parameters
    ----------
    model : str or path-like
        Encoder spec for :func:`gfun.encoders.resolver.load_encoder`: ``"multilingual-e5-small"`` (default, offline), a
        local ``save_pretrained`` folder, or a Hugging Face id already in the local cache (e.g.
        ``"bert-base-multilingual-cased"``, the paper's model). Nothing is downloaded.
    pooling : {"auto", "cls", "mean"}
        Document vector: the first token's ([CLS]) last-layer state, or the mean of the token states under the
        attention mask. ``"auto"``: mean for multilingual-e5 (trained that way), [CLS] otherwise.
    preset : {"auto", "paper", "gpu", "cpu"}
        Training settings (see the module docstring; ``"auto"``: ``"gpu"`` on CUDA, ``"cpu"`` otherwise). Every
        parameter below left to ``None`` takes the preset's
        value; an explicit value overrides it.
    lr, head_lr : float, optional
        AdamW learning rate of the encoder and of the output layer (``head_lr=None``: same as ``lr``).
    weight_decay : float, optional
        Not applied to biases and LayerNorm weights.
    step_size, gamma : optional
        StepLR schedule, stepped once per epoch.
    batch_size, max_length, max_epochs, patience : int, optional
    val_size : float, optional
        Held-out share for early stopping on macro-F1 (0: no early stopping, ``max_epochs`` epochs).
    final_val_epoch : bool, optional
        After restoring the best epoch, train one last epoch on the held-out split.
    freeze_embeddings : bool, optional
        Do not train the (input) word-embedding table.
    bucket : bool, optional
        Batches of documents of similar length (less padding), in shuffled order.
    max_grad_norm : float, optional
        Gradient clipping (``None``: none).
    trainable_layers : int, optional
        Fine-tune only the top ``k`` transformer layers and the output layer; the rest is frozen and computed once
        per document (``0``: the frozen encoder's pooled vector). ``None`` (with a preset that says so): the
        whole network.
    quantize : bool, optional
        Dynamic int8 quantisation of the frozen layers' Linear modules (CPU; a document's vector then moves
        slightly, ~1e-3, with the other documents of its batch).
    head_epochs : int, optional
        After fine-tuning, train the output layer alone for this many more epochs on the final document vectors
        (cheap: computed once). Changes only the classifier (the ``bert`` baseline), not the view's vectors.
    dropout : float
        Dropout before the output layer during training.
    prefix : str
        Prepended to every text (e5 models were trained with ``"query: "``/``"passage: "``).
    eval_batch_size : int
        Batch size of the (no-gradient) extraction of views.
    amp : bool or "auto"
        bfloat16 autocast; ``"auto"``: on CUDA devices that support it, and on CPUs with bfloat16 instructions
        (AVX512-BF16, AMX), where the trainable layers and the output layer run in bfloat16 (int8 frozen layers stay
        int8); ``False``: float32 everywhere. Resolved when fitting and saved with the network.
    save_dtype : {None, "float32", "float16"}
        Precision of the weights in the saved state (``float16`` halves its size).
    self_contained : bool
        Save every weight and the tokenizer (default: those fine-tuning did not change are referred to by the
        SHA-256 of the base encoder's weights).
    frozen_cache : str, optional
        Folder of a disk cache of the frozen pass, shared by estimators with the same encoder and documents (the
        experiments point it at the run's view cache), and, with a ``random_state``, of the fine-tuned network: an
        estimator with the same settings, seed and training documents (the ``bert`` baseline of a B view) reuses
        it instead of fine-tuning again. Not saved with the model.
    device : str
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``, ``"cuda:1"``...
    random_state : int, optional
        Seeds the output layer's initialisation, dropout, the held-out split and the batch order.
    progress : bool
        tqdm progress bars over batches.

    Attributes
    ----------
    tuner_ : TransformerFineTuner
        The fine-tuned network.
    languages_ : list of str
        Training languages (every language is covered).
    n_features_out_ : int
        Hidden size of the encoder.
    history_ : list of dict
        Per epoch: ``epoch``, ``phase`` (``train`` or ``held-out``), ``train_loss``, ``val_f1``, ``seconds``, ``lr``.
    best_epoch_ : int
    epoch_seconds_ : list of float
        Seconds of each epoch.
    """

    letter = "b"
    trains_network = True
    output = "features"
    description = "transformer"

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        texts = check_texts(texts, "B view")
        langs = np.asarray(langs, dtype=object)
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        self.tuner_, features = self._fit_tuner(texts, Y, features=True)
        self.languages_ = sorted(set(langs.tolist()))
        self._set_fitted()
        return features

    def _set_fitted(self) -> None:
        self.n_features_out_ = int(self.tuner_.net_.head.in_features)
        self.history_ = self.tuner_.history_
        self.best_epoch_ = self.tuner_.best_epoch_
        self.epoch_seconds_ = [float(h["seconds"]) for h in self.history_]

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        texts = check_texts(texts, "B view")
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        if not hasattr(self, "tuner_"):
            raise ValueError("this TransformerView is not fitted yet")
        return self.tuner_.encode(texts)

    def covers(self, lang: str) -> bool:
        return hasattr(self, "tuner_")

    def language_reach(self) -> LanguageReach:
        return "any"

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        tmeta, tarrays = self.tuner_.get_state(self.save_dtype, self.self_contained)
        meta = {"params": self._state_params(), "languages_": self.languages_, "tuner": tmeta}
        return meta, prefixed(tarrays, "tuner/")

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TransformerView:
        obj = cls(**meta["params"])
        obj.tuner_ = obj._tuner_from_state(meta["tuner"], sub_arrays(arrays, "tuner/"))
        obj.languages_ = list(meta["languages_"])
        obj._set_fitted()
        return obj

