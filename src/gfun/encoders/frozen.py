"""A transformer encoder split in two: frozen lower layers computed once per document, trainable top layers.

Partial fine-tuning on a CPU: the embeddings and the lower ``n_layers - k`` layers of a BERT-like
encoder are frozen, so their output for a document never changes during training. :class:`FrozenPass` computes
it once per document (token states kept in float16, unpadded: one ``(length, hidden)`` array per document) and
:func:`run_top` runs the ``k`` trainable layers on top, batch by batch, with gradients. Test-time extraction runs
the same two halves, so a document's vector is the same whether its lower states came from the cache or not.

The frozen part can be dynamically quantised to int8 (``torch.ao.quantization.quantize_dynamic``), which trades a
little accuracy for speed on CPUs (:data:`INT8_SCHEME`): every Linear layer but each layer's feed-forward output
projection gets int8 weights, one scale per output channel. The feed-forward output projection reads the 4 x wider
GELU activations, whose outlier features one int8 scale per batch cannot hold; it computes in bfloat16 instead
(:class:`gfun.encoders.bfloat16.BFloat16Linear`), whose 8-bit exponent keeps the outliers' range. On a CPU with
bfloat16 dot products (AVX512-BF16, AMX) that product runs about 3.8 times faster than in float32; a CPU without
them computes the same roundings in float32, at float32's speed, so the scheme is the same on every machine (the
vectors of the two differ where a sum rounds the other way, which int8 dynamic quantisation amplifies: mean cosine
.9987 on 100 debtags documents). The scheme's cost in accuracy and its speed: RESULTS.md, "The frozen encoder on a
CPU".

On a Dask cluster (``joblib.parallel_config(backend="dask")``) the pass runs on the workers when the encoder's spec
is known (``source``): each worker loads the encoder from that spec once (:func:`_worker_pass`), and jobs of
:data:`BATCHES_PER_JOB` batches (the batches of the local pass) send token ids out and float16 states back. The
states are the same bits as the local pass's.

Nothing here imports torch at module import time.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gfun.core.optional import import_optional

__all__ = ["BATCHES_PER_JOB", "FLOAT_LINEARS", "INT8_SCHEME", "FrozenPass", "encoder_layers", "frozen_fingerprint",
           "frozen_names", "layer_index", "pad_ids", "pad_states", "precision_label", "run_layers",
           "weights_fingerprint"]

logger = logging.getLogger(__name__)

#: Batches of documents per job of a frozen pass on a Dask cluster (a few seconds of a worker's core each).
BATCHES_PER_JOB = 4
#: What ``quantize=True`` does to the frozen layers (:func:`_quantized`); part of every cache key of quantised states
#: or vectors, so that states of another scheme are never read back.
INT8_SCHEME = "int8-channel-ffn-out-bf16"
#: The module names, inside one encoder layer, of the Linear layers that are not quantised to int8 but compute in
#: bfloat16 (:class:`gfun.encoders.bfloat16.BFloat16Linear`): the feed-forward output projection of BERT-like layers,
#: ``output.dense`` (the attention's is ``attention.output.dense``).
FLOAT_LINEARS = ("output.dense",)


def _torch() -> Any:
    return import_optional("torch", purpose="the frozen pass of a transformer")


def encoder_layers(encoder: Any) -> Any:
    """The ``nn.ModuleList`` of transformer layers of a BERT-like encoder (BERT, XLM-R, DistilBERT...)."""
    for path in ("encoder.layer", "transformer.layer", "layers", "encoder.layers"):
        obj = encoder
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return obj
    raise ValueError(f"cannot find the transformer layers of a {type(encoder).__name__}: partial fine-tuning "
                     "supports BERT-like encoders (encoder.layer)")


def attention_mask_for(encoder: Any, mask: Any, states: Any) -> Any:
    """The attention mask a layer of ``encoder`` expects (its attention implementation's format), from a 0/1 mask."""
    try:
        from transformers.masking_utils import create_bidirectional_mask
    except ImportError:  # older transformers: the additive extended mask
        return encoder.get_extended_attention_mask(mask, mask.shape, dtype=states.dtype)
    return create_bidirectional_mask(config=encoder.config, inputs_embeds=states, attention_mask=mask)


def run_layers(encoder: Any, layers: Sequence[Any], states: Any, mask: Any) -> Any:
    """Run ``layers`` (modules of ``encoder``) on token states ``(batch, width, hidden)`` under a 0/1 ``mask``."""
    if not len(layers):
        return states
    attn = attention_mask_for(encoder, mask, states)
    for layer in layers:
        out = layer(states, attn)
        states = out[0] if isinstance(out, tuple) else out
    return states


def pad_ids(seqs: Sequence[np.ndarray], pad_id: int, device: Any) -> tuple[Any, Any]:
    """Token id sequences padded to the longest (``pad_id``) as a tensor, and their 0/1 attention mask."""
    torch = _torch()
    width = max(1, max(len(s) for s in seqs))
    input_ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=np.int64)
    for r, s in enumerate(seqs):
        input_ids[r, :len(s)] = s
        mask[r, :len(s)] = 1
    return torch.from_numpy(input_ids).to(device), torch.from_numpy(mask).to(device)


def pad_states(states: Sequence[np.ndarray], device: Any) -> tuple[Any, Any]:
    """Pad per-document float16 states into a float32 ``(batch, width, hidden)`` tensor and its 0/1 mask."""
    torch = _torch()
    width = max(1, max(len(s) for s in states))
    hidden = states[0].shape[1]
    out = np.zeros((len(states), width, hidden), dtype=np.float32)
    mask = np.zeros((len(states), width), dtype=np.int64)
    for r, s in enumerate(states):
        out[r, :len(s)] = s
        mask[r, :len(s)] = 1
    return torch.from_numpy(out).to(device), torch.from_numpy(mask).to(device)


def weights_fingerprint(tensors: Sequence[tuple[str, Any]]) -> str:
    """SHA-256 of named tensors (names, shapes, float32 bytes): identifies the weights a model refers to."""
    h = hashlib.sha256()
    for name, t in tensors:
        arr = np.ascontiguousarray(t.detach().to("cpu").float().numpy())
        h.update(name.encode("utf-8"))
        h.update(str(arr.shape).encode("ascii"))
        h.update(memoryview(arr).cast("B"))  # no copy of a (possibly large) embedding table
    return h.hexdigest()


def frozen_fingerprint(module: Any, names: Sequence[str]) -> str:
    """:func:`weights_fingerprint` of the parameters ``names`` of ``module`` (in the given order)."""
    params = dict(module.named_parameters())
    missing = [n for n in names if n not in params]
    if missing:
        raise ValueError(f"the base encoder lacks the weights {missing[:3]}")
    return weights_fingerprint([(n, params[n]) for n in names])


class FrozenPass:
    """The frozen lower part of an encoder (embeddings + layers ``[0, cut)``), computed once per document.

    Parameters
    ----------
    encoder : transformers model
        A BERT-like encoder; not modified (with ``quantize`` a quantised copy of the frozen part is used).
    cut : int
        Number of frozen layers (``n_layers - k`` for ``k`` trainable layers).
    pad_id : int
    device : torch.device
    quantize : bool
        Dynamic int8 quantisation of the frozen Linear layers (CPU only).
    batch_size : int
        Documents per batch (batches of documents sorted by length).
    cache_dir : path-like, optional
        Folder of a disk cache of states, keyed by the frozen weights, ``cut``, ``quantize`` and the documents'
        token ids: another estimator with the same encoder and documents (the ``b`` view and the ``bert``
        baseline of an experiment) reads them instead of computing them again.
    fingerprint : str, optional
        :func:`frozen_fingerprint` of the frozen part when already known (else computed for the disk cache).
    progress : bool
        A tqdm bar over the batches.
    source : str or path-like, optional
        The spec ``encoder`` was loaded from (:func:`gfun.encoders.resolver.load_encoder`). With it, a pass on a
        CPU under ``parallel_config(backend="dask")`` runs on the cluster's workers, each loading the encoder from
        this spec (a local folder must then exist at the same path on every worker).
    """

    def __init__(self, encoder: Any, cut: int, *, pad_id: int, device: Any, quantize: bool = False,
                 batch_size: int = 64, cache_dir: str | os.PathLike[str] | None = None,
                 fingerprint: str | None = None, progress: bool = False,
                 source: str | os.PathLike[str] | None = None) -> None:
        self.cut = int(cut)
        self.pad_id = int(pad_id)
        self.device = device
        self.quantize = bool(quantize)
        self.batch_size = int(batch_size)
        self.cache_dir = cache_dir
        self.progress = progress
        self.source = source
        self.encoder = encoder
        self.layers = list(encoder_layers(encoder))[:self.cut]
        self.embeddings = encoder.get_input_embeddings() if not hasattr(encoder, "embeddings") else encoder.embeddings
        if self.quantize:
            if getattr(device, "type", "cpu") != "cpu":
                raise ValueError(f"int8 quantisation of the frozen layers (quantize=True) runs on CPUs only, not on "
                                 f"{device}: set quantize=False or device='cpu' (the 'cpu' preset quantises on a "
                                 "CPU only)")
            self.layers = _quantized(self.layers)
        self._key: str | None = (None if fingerprint is None
                                 else f"{fingerprint[:24]}-cut{self.cut}-{precision_label(quantize)}")

    def forward(self, input_ids: Any, mask: Any) -> Any:
        """Token states after the frozen layers, ``(batch, width, hidden)`` float32 (no gradient).

        The int8 layers run outside any autocast of the caller (their kernels take float32), so that autocast can
        cover the trainable layers above them.
        """
        import contextlib

        torch = _torch()
        self.embeddings.eval()  # frozen: never dropout, whatever mode the surrounding network is in
        for layer in self.layers:
            layer.eval()
        no_autocast = torch.autocast(device_type="cpu", enabled=False) if self.quantize else contextlib.nullcontext()
        with torch.inference_mode(), no_autocast:
            states = self.embeddings(input_ids=input_ids)
            return run_layers(self.encoder, self.layers, states, mask)

    def batches(self, ids: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Batches of document indices sorted by length (the longest first: the slowest batch shows early)."""
        order = np.argsort([-len(x) for x in ids], kind="stable")
        return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]

    def states(self, ids: Sequence[np.ndarray], desc: str = "B frozen pass") -> list[np.ndarray]:
        """Per document, its ``(length, hidden)`` float16 states after the frozen layers."""
        path = self._cache_path(ids)
        if path is not None and path.is_file():
            with np.load(path) as z:
                flat, offsets = z["states"], z["offsets"]
            logger.info("%s: %d documents read from %s", desc, len(ids), path)
            return [flat[offsets[i]:offsets[i + 1]] for i in range(len(ids))]
        from gfun.core.memory import freed_blocks_reused, released_as_they_shrink
        from gfun.core.progress import progress_bar

        if not len(ids):
            return []
        t0 = time.perf_counter()
        # one (total tokens, hidden) buffer that every document's states are a view of, allocated before the
        # batches: thousands of separate arrays, each allocated between two batches' transient tensors, would pin
        # those in the C heap
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(x) for x in ids])
        flat = np.empty((int(offsets[-1]), int(self.encoder.config.hidden_size)), dtype=np.float16)
        batches = self.batches(ids)
        remote = self._on_workers()
        where = " on the Dask workers" if remote else ""
        # the longest batch comes first: every later one reuses the memory it freed (no fresh pages to fault in)
        with freed_blocks_reused():
            pairs = released_as_they_shrink(zip(batches, self._batch_states(ids, batches, remote), strict=True),
                                            lambda pair: pair[1].shape[1])
            for batch, states in progress_bar(pairs, enabled=self.progress, desc=desc, total=len(batches)):
                for r, i in enumerate(batch):
                    flat[offsets[i]:offsets[i + 1]] = states[r, :len(ids[i])]
                del states
        logger.info("%s (embeddings + %d layers): %d documents in %.1f s%s", desc, self.cut, len(ids),
                    time.perf_counter() - t0, where)
        if path is not None:
            self._write_cache(path, flat, offsets)
        return [flat[offsets[i]:offsets[i + 1]] for i in range(len(ids))]

    def _on_workers(self) -> bool:
        """Whether the pass runs on a Dask cluster's workers: a CPU pass whose encoder spec is known, under
        ``parallel_config(backend="dask")``."""
        from gfun.core.parallel import on_dask_cluster

        source = getattr(self, "source", None)  # None in a pass pickled before it had one
        return source is not None and getattr(self.device, "type", "cpu") == "cpu" and on_dask_cluster()

    def _batch_states(self, ids: Sequence[np.ndarray], batches: list[np.ndarray], remote: bool) -> Any:
        """Each batch's padded float16 states ``(batch, width, hidden)``, in the order of ``batches``: here, or
        (``remote``) from jobs of :data:`BATCHES_PER_JOB` batches on the workers, in this thread's autocast."""
        torch = _torch()
        if not remote:
            for batch in batches:
                input_ids, mask = pad_ids([ids[i] for i in batch], self.pad_id, self.device)
                yield self.forward(input_ids, mask).to(dtype=torch.float16, device="cpu").numpy()
            return
        from joblib import delayed

        from gfun.core.parallel import iter_parallel

        autocast = str(torch.get_autocast_dtype("cpu")).removeprefix("torch.") if torch.is_autocast_enabled(
            "cpu") else None
        groups = [batches[i:i + BATCHES_PER_JOB] for i in range(0, len(batches), BATCHES_PER_JOB)]
        jobs = (delayed(_frozen_batches)(str(self.source), self.cut, self.quantize, self.pad_id,
                                         [[ids[i] for i in batch] for batch in group], autocast) for group in groups)
        for states in iter_parallel(jobs, None):
            yield from states

    # ------------------------------------------------------------------ disk cache
    def key(self) -> str:
        """Identifies the frozen computation: weights of the frozen part, ``cut``, quantisation."""
        if self._key is None:
            fingerprint = frozen_fingerprint(self.encoder, frozen_names(self.encoder, self.cut))
            self._key = f"{fingerprint[:24]}-cut{self.cut}-{precision_label(self.quantize)}"
        return self._key

    def _cache_path(self, ids: Sequence[np.ndarray]) -> Path | None:
        if not self.cache_dir:
            return None
        h = hashlib.sha256()
        for x in ids:
            h.update(np.asarray(x, dtype=np.int64).tobytes())
            h.update(b"|")
        return Path(self.cache_dir) / "frozen-pass" / f"{self.key()}-{h.hexdigest()[:24]}.npz"

    @staticmethod
    def _write_cache(path: Path, flat: np.ndarray, offsets: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, states=flat, offsets=offsets)
        os.replace(tmp, path)


_WORKER_PASS: dict[tuple, FrozenPass] = {}
_WORKER_LOCK = threading.Lock()


def _worker_pass(source: str, cut: int, quantize: bool, pad_id: int) -> FrozenPass:
    """The frozen part of the encoder ``source`` in this process (a Dask worker): loaded at the first job, kept for
    the next ones (one encoder at a time, loaded again when the files of its folder change)."""
    from gfun.encoders.resolver import load_encoder, resolve_encoder

    folder = resolve_encoder(source)
    files = tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()))
    key = (source, cut, quantize, pad_id, files)
    with _WORKER_LOCK:
        if key not in _WORKER_PASS:
            encoder, _ = load_encoder(source)
            _WORKER_PASS.clear()
            _WORKER_PASS[key] = FrozenPass(encoder, cut, pad_id=pad_id, device=_torch().device("cpu"),
                                           quantize=quantize)
        return _WORKER_PASS[key]


def _frozen_batches(source: str, cut: int, quantize: bool, pad_id: int, batches: list[list[np.ndarray]],
                    autocast: str | None) -> list[np.ndarray]:
    """One job of a frozen pass on a worker: each batch's padded float16 states (see :class:`FrozenPass`), in the
    autocast (a dtype name, ``None``: none) of the process that sent it."""
    import contextlib

    torch = _torch()
    frozen = _worker_pass(source, cut, quantize, pad_id)
    out = []
    with (torch.autocast(device_type="cpu", dtype=getattr(torch, autocast)) if autocast
          else contextlib.nullcontext()):
        for seqs in batches:
            input_ids, mask = pad_ids(seqs, pad_id, frozen.device)
            out.append(frozen.forward(input_ids, mask).to(dtype=torch.float16, device="cpu").numpy())
    return out


def precision_label(quantize: bool) -> str:
    """The part of a cache key that says how the frozen layers computed: ``q0`` (float), or the int8 scheme."""
    return INT8_SCHEME if quantize else "q0"


def _quantized(layers: list[Any], native: bool | None = None) -> list[Any]:
    """Copies of ``layers`` quantised as :data:`INT8_SCHEME` says: int8 dynamic quantisation (``torch.ao``,
    deprecated by torch in favour of ``torchao`` but still shipped) of every Linear layer but :data:`FLOAT_LINEARS`,
    which become :class:`gfun.encoders.bfloat16.BFloat16Linear` (``native``: see there; ``None``: as this CPU
    allows). The float layers themselves when ``torch.ao`` is unavailable."""
    import warnings

    from gfun.encoders.bfloat16 import BFloat16Linear

    torch = _torch()
    quantization = getattr(getattr(torch, "ao", None), "quantization", None)
    quantize_dynamic = getattr(quantization, "quantize_dynamic", None)
    qconfig = getattr(quantization, "per_channel_dynamic_qconfig", None)
    if quantize_dynamic is None or qconfig is None:
        logger.warning("this torch has no torch.ao.quantization.quantize_dynamic: the frozen layers stay float32")
        return layers
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*")
        for layer in layers:
            layer = copy.deepcopy(layer)
            linears = {name: module for name, module in layer.named_modules() if isinstance(module, torch.nn.Linear)}
            spec = {name: qconfig for name in linears if name not in FLOAT_LINEARS}
            layer = quantize_dynamic(layer, spec, dtype=torch.qint8).eval()
            for name in FLOAT_LINEARS:
                if name in linears:
                    parent_name, _, child = name.rpartition(".")
                    parent = layer.get_submodule(parent_name) if parent_name else layer
                    setattr(parent, child, BFloat16Linear.from_linear(linears[name], native=native))
            out.append(layer)
    return out


def layer_index(name: str) -> int | None:
    """The transformer layer a parameter name of a BERT-like encoder belongs to (``None``: outside the layers)."""
    parts = name.split(".")
    for i, p in enumerate(parts[:-1]):
        if p in ("layer", "layers") and parts[i + 1].isdigit():
            return int(parts[i + 1])
    return None


def frozen_names(encoder: Any, cut: int) -> list[str]:
    """Names of the parameters of ``encoder`` that stay frozen when only layers ``>= cut`` train."""
    return [n for n, _ in encoder.named_parameters() if _frozen_name(n, cut)]


def _frozen_name(name: str, cut: int) -> bool:
    """Whether encoder parameter ``name`` is outside the trainable top layers (index >= ``cut``)."""
    index = layer_index(name)
    return index is None or index < cut
