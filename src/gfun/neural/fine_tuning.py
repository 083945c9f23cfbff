"""Fine-tuning a transformer encoder with a linear output layer by binary cross-entropy (the B view's engine).

:class:`TransformerFineTuner` is the one implementation behind :class:`gfun.views.transformer.TransformerView`
(its pooled vectors are the view) and :class:`gfun.baselines.transformer.FineTunedTransformerClassifier` (its
output layer is the classifier); the training settings are the presets of :mod:`gfun.views.transformer`.
Partial fine-tuning runs the frozen lower layers once (:class:`gfun.encoders.frozen.FrozenPass`).

Saved state: the weights fine-tuning changed as numpy arrays and the model configuration. The weights it did not
change (frozen layers, a frozen embedding table) and the tokenizer are stored by reference to the base encoder
(its spec and a SHA-256 of those weights), loaded from the local copy (never downloaded) and refused when they
differ; ``self_contained=True`` stores every weight and the tokenizer (``tokenizer.json`` as bytes) instead.

Importing this module needs no torch (the network class is built on first use).
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from gfun.core.memory import large_blocks_mapped, release_free_memory
from gfun.core.optional import import_optional
from gfun.core.state import prefixed, sub_arrays
from gfun.neural.training import (
    batched_inference,
    bce_epoch,
    check_texts,
    lazy_classes,
    loading_device,
    resolve_device,
    split_holdout,
    state_from_arrays,
    state_to_arrays,
    torch_module_class,
    torch_seed,
    train_early_stopping,
)

__all__ = ["TransformerFineTuner", "cpu_has_bfloat16", "resolve_amp"]

logger = logging.getLogger(__name__)


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

    The shared implementation behind :class:`gfun.views.transformer.TransformerView` and
    :class:`gfun.baselines.transformer.FineTunedTransformerClassifier` (not an estimator itself: the two wrappers
    hold the parameters).

    Parameters
    ----------
    model : str or path-like
        Spec for :func:`gfun.encoders.resolver.load_encoder`.
    pooling : {"cls", "mean"}
    settings : dict
        Training settings (keys of :data:`gfun.views.transformer.TRANSFORMER_PRESETS`).
    dropout : float
        Dropout before the output layer.
    prefix : str
        Prepended to every text.
    eval_batch_size : int
    amp : bool or "auto"
        bfloat16 autocast (``"auto"``: on CUDA devices that support it, and on CPUs with bfloat16 instructions,
        AVX512-BF16 or AMX; int8 frozen layers stay int8 under it). Resolved when fitting (``amp_``) and saved with
        the network, so that a loaded network extracts in the precision it was trained in.
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

    def _resolve_amp(self, *, cpu: bool = True) -> bool:
        return resolve_amp(self.amp, self.device_, cpu=cpu)

    def _autocast(self) -> Any:
        torch = self._torch()
        import contextlib

        if not self._amp_of_fit():
            return contextlib.nullcontext()
        if self.device_.type == "cpu":
            limit_onednn_cache()
        return torch.autocast(device_type=self.device_.type, dtype=torch.bfloat16)

    def _tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        tok = self.tokenizer_
        if tok is None:  # released after tokenising the training documents: built again from its JSON
            tok = self.tokenizer_ = import_optional("tokenizers", purpose="the transformer view").Tokenizer.from_str(
                self.tokenizer_json_)
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
        from gfun.encoders.resolver import load_encoder

        texts = check_texts(texts, "transformer view")
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float32)
        if not texts:
            raise ValueError("no training documents")
        if Y.ndim != 2 or Y.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but a label matrix of shape {Y.shape}")
        s = self.settings
        self.device_ = resolve_device(self.device)
        self.amp_ = self._resolve_amp()
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
            # a large vocabulary holds memory that training does not use: built again when texts come
            self.tokenizer_ = None
            release_free_memory()
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
            with large_blocks_mapped():  # the epochs' transient tensors go back to the system when freed
                self.history_, self.best_epoch_ = train_early_stopping(
                    self.net_, run_epoch=run_epoch, predict_logits=lambda idx: self._run(ids, idx, "logits", states),
                    Y=Y, train_idx=train_idx, val_idx=val_idx, scheduler=scheduler, max_epochs=int(s["max_epochs"]),
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
        loss = self._train_head(self.net_.head, features, Y, epochs)
        logger.info("%s: output layer refitted for %d epochs on the final vectors, loss %.4f", self.name, epochs, loss)

    def _train_head(self, head: Any, features: np.ndarray, Y: np.ndarray, epochs: int) -> float:
        """Train the linear layer ``head`` on fixed ``features`` by BCE for ``epochs`` epochs (AdamW at the output
        layer's learning rate, shuffled batches drawn from ``random_state``); the last batch's loss."""
        torch = self._torch()
        X = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(self.device_)
        Yt = torch.from_numpy(np.asarray(Y, dtype=np.float32)).to(self.device_)
        s = self.settings
        lr = s["head_lr"] if s["head_lr"] is not None else s["lr"]
        opt = torch.optim.AdamW(head.parameters(), lr=float(lr), weight_decay=float(s["weight_decay"]))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        rng = np.random.RandomState(self.random_state)
        bs = max(int(s["batch_size"]), 32)
        loss = torch.zeros(())
        for _ in range(epochs):
            perm = torch.from_numpy(rng.permutation(len(X))).to(self.device_)
            for start in range(0, len(X), bs):
                batch = perm[start:start + bs]
                loss = loss_fn(head(X[batch]), Yt[batch])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return float(loss.detach())

    def cross_fitted_logits(self, features: np.ndarray, Y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                            epochs: int) -> np.ndarray:
        """Out-of-fold output-layer scores of the training documents: for each fold, a fresh output layer trained
        as :meth:`_refit_head` trains the network's (``epochs`` epochs on the fixed ``features``) on the other
        folds' documents scores the fold's. What the network's own output layer would give documents it was not
        trained on, at the cost of a few seconds (the vectors are fixed)."""
        torch = self._torch()
        head = self.net_.head
        out = np.zeros((len(features), head.out_features), dtype=np.float64)
        X = np.ascontiguousarray(features, dtype=np.float32)
        with torch_seed(self.random_state, self.device_):
            for train, test in folds:
                layer = torch.nn.Linear(head.in_features, head.out_features).to(self.device_)
                self._train_head(layer, X[train], np.asarray(Y)[train], epochs)
                with torch.no_grad():
                    out[test] = layer(torch.from_numpy(X[test]).to(self.device_)).float().cpu().numpy()
        return out

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
        # memory-mapped embedding table (of which training reads the rows of the tokens seen) into memory
        self.base_fingerprint_ = fingerprint
        self.top_layers_ = layers[cut:]
        self.frozen_ = FrozenPass(encoder, cut, pad_id=self.pad_id_, device=self.device_,
                                  quantize=bool(self.settings.get("quantize")), batch_size=self.eval_batch_size,
                                  cache_dir=self.frozen_cache, fingerprint=self.base_fingerprint_,
                                  progress=self.progress,
                                  source=self.model if isinstance(self.model, str | os.PathLike) else None)

    def _setup_tokenizer(self, hf_tokenizer: Any, config: Any) -> None:
        backend = getattr(hf_tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise ValueError(f"the tokenizer of {self.model!r} is not a fast (tokenizers) tokenizer")
        self.tokenizer_json_ = backend.to_str()  # as loaded, before _tokenize sets truncation and padding
        # the freshly loaded backend itself, not a copy: a large vocabulary is costly to copy
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

    def _amp_of_fit(self) -> bool:
        """``amp_``: resolved by fit or read from the saved state; for a network unpickled from before it existed,
        ``amp`` read as then (``"auto"``: CUDA only)."""
        if getattr(self, "amp_", None) is None:
            self.amp_ = self._resolve_amp(cpu=False)
        return self.amp_

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
                "trainable_layers": getattr(self, "trainable_layers_", None), "amp": bool(self._amp_of_fit())}
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
        arrays = prefixed(arrays, "net/")
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

        base = meta.get("base")
        quantized = bool(self.settings.get("quantize")) and meta.get("trainable_layers") is not None
        self.device_ = loading_device(self.device, cpu_only=quantized, what=f"the {self._short_name()} network")
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
        # the precision it was trained in (a state saved before gfun recorded it: "auto" read as CUDA only)
        self.amp_ = bool(meta["amp"]) if "amp" in meta else self._resolve_amp(cpu=False)
        # the base's freshly loaded backend tokenizer itself (no copy), or the saved one
        self.tokenizer_ = backend if base is not None else tokenizers.Tokenizer.from_str(self.tokenizer_json_)
        known = base["sha256"] if base is not None and meta.get("trainable_layers") is not None else None
        self._setup_frozen(meta.get("trainable_layers"), known)  # the base was checked against that fingerprint
        if base is not None and meta.get("trainable_layers") is None:
            for name, p in self.net_.encoder.named_parameters():
                p.requires_grad_(name not in set(base["frozen"]))
        return self

    def _load_base(self, base: dict) -> tuple[Any, Any]:
        """The base encoder a state refers to and its backend tokenizer, checked against their fingerprints."""
        from gfun.encoders.frozen import frozen_fingerprint
        from gfun.encoders.resolver import load_encoder

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


def resolve_amp(amp: bool | str, device: Any, *, cpu: bool = True) -> bool:
    """Whether ``amp`` (``True``, ``False`` or ``"auto"``) means bfloat16 autocast on ``device`` (a torch device).

    ``"auto"``: on CUDA devices that support bfloat16, and (``cpu``) on CPUs with bfloat16 instructions;
    ``cpu=False`` reads it as networks saved before CPUs were considered did, CUDA only.
    """
    torch = import_optional("torch", purpose="the transformer view")
    use = amp
    if use == "auto":
        if device.type == "cuda":
            use = torch.cuda.is_bf16_supported()
        else:
            use = cpu and device.type == "cpu" and cpu_has_bfloat16()
    return bool(use) and device.type in ("cuda", "cpu")


def cpu_has_bfloat16() -> bool:
    """Whether this CPU has bfloat16 instructions (AVX512-BF16 or AMX-BF16), where bfloat16 matrix products run
    at several times the float32 speed (elsewhere they are emulated, slower than float32)."""
    torch = import_optional("torch", purpose="the transformer view")
    probe = getattr(getattr(torch._C, "_cpu", None), "_get_cpu_capability", None)
    try:
        caps = probe() if probe is not None else {}
    except Exception:  # noqa: BLE001 - a private probe: no answer means no
        return False
    return bool(isinstance(caps, dict) and (caps.get("avx512_bf16") or caps.get("amx_bf16")))


#: oneDNN primitives kept in its cache (its default is 1,024): bfloat16 matrix products of batches of every width
#: fill a large cache with primitives of shapes that rarely come back.
ONEDNN_CACHE_CAPACITY = 16


@functools.cache
def limit_onednn_cache() -> None:
    """Cap oneDNN's primitive cache at :data:`ONEDNN_CACHE_CAPACITY` unless the environment sets its size.

    oneDNN reads ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` when it first builds a primitive, so this holds when the
    process has not run a oneDNN (bfloat16) product yet.
    """
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(ONEDNN_CACHE_CAPACITY))


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()
