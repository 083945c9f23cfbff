"""One vector per document from a frozen multilingual encoder, computed once per text.

:class:`DocumentEncoder` runs a BERT-like encoder (by default the offline multilingual-e5-small) over each text,
pools the last layer's token states under the attention mask (mean pooling for e5, which was trained that way) and
L2-normalises the result: what a practitioner calls "the sentence embedding of the document". Nothing is trained.

On a CPU the encoder's Linear layers can be dynamically quantised to int8 (``quantize``), the frozen pass of the B
view's ``cpu`` preset. Documents are batched by token length, so that batches pad little.

With a ``cache_dir`` each text's vector is kept on disk, keyed by the encoder's weights, the settings that change a
vector (prefix, pooling, truncation, quantisation) and the SHA-256 of the text: a text met again (another
configuration, another run of an experiment, the test documents of a model fitted before) is read, not encoded.
The cache is a folder of shards (``.npz``, one per call that encoded something), written atomically, so concurrent
processes and a crash mid-write leave it readable. The key is remembered beside them (``keys/``) under the encoder
folder's file list, so texts that are all cached are read without loading the encoder (:meth:`DocumentEncoder.key`).

Nothing here imports torch at module import time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gfun.core.optional import import_optional
from gfun.encoders.frozen import INT8_SCHEME

__all__ = ["AUTO_MAX_LENGTH", "DocumentEncoder", "precision_key", "text_digests"]

logger = logging.getLogger(__name__)

#: Documents encoded between two writes to the disk cache.
CHUNK = 1024
#: Bumped when what a cached vector means changes, so that old shards are not read.
CACHE_VERSION = 1
#: ``max_length="auto"``: the tokens read per document on a GPU (e5's limit) and on a CPU, where the frozen pass is
#: the cost of a first fit (debtags, 2 cores with bfloat16 products: 128 tokens through int8 layers take 17.4 CPU
#: seconds per 1,000 documents, 512 in float32 74.5; RESULTS.md, "The frozen encoder on a CPU").
AUTO_MAX_LENGTH = {"cuda": 512, "cpu": 128}


def _read_key(path: Path) -> str | None:
    """The key remembered in ``path`` (``None`` when it is missing or unreadable)."""
    try:
        key = json.loads(path.read_text(encoding="utf-8"))["key"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return key if isinstance(key, str) else None


def _write_key(path: Path, key: str) -> None:
    """Remember ``key`` in ``path``, atomically (a reader sees the old file or the new one)."""
    from gfun.core.atomic import write_bytes_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, json.dumps({"key": key}).encode("utf-8"), follow_symlinks=False)


def precision_key(quantize: bool) -> bool | str:
    """What a key of vectors (the disk cache, a cache of fitted views) says of the precision: ``False`` (float32), or
    the int8 scheme's name (one document a batch)."""
    return f"{INT8_SCHEME}-one-document-batches" if quantize else False


def text_digests(texts: Sequence[str]) -> np.ndarray:
    """SHA-256 of each text (UTF-8), as an array of 32-byte strings."""
    return np.array([hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts], dtype="S32")


class DocumentEncoder:
    """A frozen encoder's pooled, L2-normalised vector of each document.

    Parameters
    ----------
    model : str or path-like
        Encoder spec for :func:`gfun.encoders.resolver.load_encoder` (``"multilingual-e5-small"``: offline).
    prefix : str
        Prepended to every text (e5 models expect ``"passage: "`` for documents).
    pooling : {"auto", "mean", "cls"}
        ``"auto"``: mean for e5 models, the first token's state otherwise.
    max_length : int or "auto"
        Tokens kept per document (the rest is truncated); 512 is e5's limit. ``"auto"``: as
        :data:`AUTO_MAX_LENGTH` says for the device (512 on a GPU, 128 on a CPU).
    quantize : bool or "auto"
        int8 dynamic quantisation of the frozen layers (:data:`gfun.encoders.frozen.INT8_SCHEME`); ``"auto"``: on a
        CPU.
    batch_size : int
        Documents per batch in float32. With int8 layers every batch is one document: their activations are
        quantised with one scale per batch, which would make a document's vector depend on the documents beside it
        (multilingual-e5-small, batches of 32 against batches of one: cosine down to .994), at the same speed.
    cache_dir : path-like, "auto" or None
        Folder of the per-text disk cache (see the module docstring); ``"auto"``: gfun's cache folder
        (``$GFUN_CACHE``, else ``~/.cache/gfun``), where the word vectors are kept too; ``None``: no cache (every
        call encodes).
    device : str
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``...
    n_jobs : int, optional
        On a CPU, batches encoded side by side in threads (``-1``: one per CPU); each batch runs on one torch
        thread, so the vectors are the same bits for any ``n_jobs``.
    progress : bool
        A progress bar over the batches.
    """

    def __init__(self, model: str | os.PathLike[str] = "multilingual-e5-small", *, prefix: str = "passage: ",
                 pooling: str = "auto", max_length: int | str = 512, quantize: bool | str = False, batch_size: int = 32,
                 cache_dir: str | os.PathLike[str] | None = None, device: str = "auto", n_jobs: int | None = None,
                 progress: bool = False) -> None:
        self.model = model
        self.prefix = prefix
        self.pooling = pooling
        self.max_length = max_length
        self.quantize = quantize
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self.device = device
        self.n_jobs = n_jobs
        self.progress = progress
        self._loaded: tuple[Any, Any, Any, Any] | None = None
        self._key: str | None = None

    # ------------------------------------------------------------------ loading
    def _load(self) -> tuple[Any, Any, Any, Any]:
        """(encoder, tokenizer, frozen pass, device), loaded on first use."""
        if self._loaded is None:
            from gfun.encoders.frozen import FrozenPass, encoder_layers
            from gfun.encoders.resolver import load_encoder

            torch = import_optional("torch", purpose="encoding documents with a transformer")
            device = torch.device(self._device_name())
            encoder, tokenizer = load_encoder(self.model, device=device)
            _, quantize = self._settings(device.type)
            frozen = FrozenPass(encoder, len(encoder_layers(encoder)), pad_id=int(tokenizer.pad_token_id or 0),
                                device=device, quantize=quantize, batch_size=1 if quantize else self.batch_size)
            self._loaded = (encoder, tokenizer, frozen, device)
        return self._loaded

    def _settings(self, device_type: str) -> tuple[int, bool]:
        """``(max_length, quantize)`` on a device of type ``device_type`` (``"auto"`` resolved)."""
        quantize = self.quantize
        if quantize == "auto":
            quantize = device_type == "cpu"
        elif not isinstance(quantize, bool):
            raise ValueError(f"quantize must be True, False or 'auto', got {quantize!r}")
        max_length = self.max_length
        if max_length == "auto":
            max_length = AUTO_MAX_LENGTH["cpu" if device_type == "cpu" else "cuda"]
        elif isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) or max_length < 1:
            raise ValueError(f"max_length must be a positive number of tokens or 'auto', got {max_length!r}")
        return int(max_length), bool(quantize)

    def resolved_settings(self) -> tuple[int, bool]:
        """``(max_length, quantize)`` with ``"auto"`` resolved for the device the encoder runs on (torch is imported
        to see whether CUDA is available, the encoder is not loaded)."""
        if self._loaded is not None:
            return self._settings(self._loaded[3].type)
        return self._settings(self._device_name().split(":")[0])

    def _device_name(self) -> str:
        """``device``, with ``"auto"`` resolved: CUDA when torch sees it, else the CPU."""
        if self.device not in (None, "auto"):
            return str(self.device)
        torch = import_optional("torch", purpose="encoding documents with a transformer")
        return "cuda" if torch.cuda.is_available() else "cpu"

    def resolved_max_length(self) -> int:
        """The tokens read per document (``"auto"`` resolved on the encoder's device)."""
        return self.resolved_settings()[0]

    def resolved_pooling(self) -> str:
        """The pooling ``"auto"`` stands for with this encoder."""
        from gfun.encoders.pooling import default_pooling

        if self.pooling not in ("auto", "mean", "cls"):
            raise ValueError(f"pooling must be 'auto', 'mean' or 'cls', got {self.pooling!r}")
        return default_pooling(self.model) if self.pooling == "auto" else self.pooling

    def hidden_size(self) -> int:
        """Length of a document vector."""
        return int(self._load()[0].config.hidden_size)

    def key(self) -> str:
        """Identifies what a vector of this encoder means: its weights, its tokenizer and every setting that changes a
        vector.

        Computing it loads the encoder (seconds: torch, transformers and the weights). With a ``cache_dir`` it is
        also remembered under the encoder folder's file list (names, sizes, modification times) and the settings,
        so that a later process whose vectors are all cached reads them without loading the encoder; a folder whose
        files changed is loaded and hashed again.
        """
        if self._key is None:
            memo = self._key_memo()
            self._key = _read_key(memo) if memo is not None else None
            if self._key is None:
                self._key = self._computed_key()
                if memo is not None:
                    _write_key(memo, self._key)
        return self._key

    def _key_memo(self) -> Path | None:
        """The file that remembers :meth:`key` for this encoder folder and these settings (``None`` without a
        cache). Settings ``"auto"`` on ``device="auto"`` import torch to be resolved (the encoder is not loaded)."""
        root = self._cache_root()
        if root is None:
            return None
        max_length, quantize = self.resolved_settings()
        from gfun.encoders.resolver import resolve_encoder

        folder = resolve_encoder(self.model).resolve()
        files = sorted((str(p.relative_to(folder)), st.st_size, st.st_mtime_ns)
                       for p in folder.rglob("*") if p.is_file() for st in (p.stat(),))
        spec = {"version": CACHE_VERSION, "folder": str(folder), "files": files, "prefix": self.prefix,
                "pooling": self.pooling, "max_length": max_length, "quantize": precision_key(quantize)}
        name = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]
        return root / "document-vectors" / "keys" / f"{name}.json"

    def _computed_key(self) -> str:
        """:meth:`key`, computed from the loaded encoder's weights and tokenizer."""
        from gfun.encoders.frozen import frozen_fingerprint

        encoder, tokenizer, frozen, _ = self._load()
        names = [name for name, _ in encoder.named_parameters()]
        backend = getattr(tokenizer, "backend_tokenizer", None)
        vocab = backend.to_str() if backend is not None else json.dumps(sorted(tokenizer.get_vocab().items()))
        spec = {"version": CACHE_VERSION, "weights": frozen_fingerprint(encoder, names)[:24],
                "tokenizer": hashlib.sha256(vocab.encode()).hexdigest()[:24],
                "prefix": self.prefix, "pooling": self.resolved_pooling(), "max_length": self.resolved_max_length(),
                "quantize": precision_key(frozen.quantize)}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]

    # ------------------------------------------------------------------ encoding
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of ``texts``, ``(len(texts), hidden)`` float32, each of unit L2 norm (zero for a text with no
        token)."""
        texts = [str(t) for t in texts]
        digests = text_digests(texts)
        cached = self._read_cache(digests)
        missing = [i for i, d in enumerate(digests) if d not in cached]
        width = len(next(iter(cached.values()))) if cached else self.hidden_size()
        out = np.zeros((len(texts), width), dtype=np.float32)
        for i, d in enumerate(digests):
            if d in cached:
                out[i] = cached[d]
        # in chunks, each written to the cache once encoded: an interrupted pass resumes where it stopped
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start:start + CHUNK]
            out[chunk] = self._encode([texts[i] for i in chunk])
            self._write_cache(digests[chunk], out[chunk])
        if cached:
            logger.info("document vectors: %d of %d read from the cache", len(texts) - len(missing), len(texts))
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        from gfun.core.progress import progress_bar
        from gfun.encoders.frozen import pad_ids

        torch = import_optional("torch", purpose="encoding documents with a transformer")
        encoder, tokenizer, frozen, device = self._load()
        t0 = time.perf_counter()
        enc = tokenizer([self.prefix + t for t in texts], truncation=True, max_length=self.resolved_max_length(),
                        add_special_tokens=True)
        ids = [np.asarray(x, dtype=np.int64) for x in enc["input_ids"]]
        pooling = self.resolved_pooling()
        out = np.zeros((len(texts), int(encoder.config.hidden_size)), dtype=np.float32)
        batches = frozen.batches(ids)

        def run(batch: np.ndarray) -> None:
            input_ids, mask = pad_ids([ids[i] for i in batch], frozen.pad_id, device)
            states = frozen.forward(input_ids, mask).float()
            if pooling == "mean":
                m = mask.unsqueeze(-1).to(states.dtype)
                vec = (states * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
            else:
                vec = states[:, 0]
            out[batch] = torch.nn.functional.normalize(vec, dim=-1).cpu().numpy()

        threads = self._threads(device)
        on_cpu = getattr(device, "type", "cpu") == "cpu"
        before = torch.get_num_threads()
        if on_cpu:  # one torch thread per batch, whatever n_jobs: the same bits for any n_jobs
            torch.set_num_threads(1)
        try:
            if threads == 1:
                for batch in progress_bar(batches, enabled=self.progress, desc="document vectors",
                                          total=len(batches)):
                    run(batch)
            else:  # batches side by side: small matrices use one core each far better than one batch two
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(threads) as pool:
                    for _ in progress_bar(pool.map(run, batches), enabled=self.progress, desc="document vectors",
                                          total=len(batches)):
                        pass
        finally:
            torch.set_num_threads(before)
        logger.info("document vectors: %d documents encoded in %.1f s", len(texts), time.perf_counter() - t0)
        return out

    def _threads(self, device: Any) -> int:
        """Batches encoded side by side: ``n_jobs`` (``None``: 1, ``-1``: every CPU) on a CPU, one on a GPU."""
        if getattr(device, "type", "cpu") != "cpu" or self.n_jobs in (None, 0, 1):
            return 1
        cpus = os.cpu_count() or 1
        return max(1, min(cpus if self.n_jobs < 0 else int(self.n_jobs), cpus))

    # ------------------------------------------------------------------ disk cache
    def _cache_root(self) -> Path | None:
        if not self.cache_dir:
            return None
        from gfun.encoders._cache import gfun_cache_dir

        return gfun_cache_dir() if self.cache_dir == "auto" else Path(self.cache_dir)

    def _cache_folder(self) -> Path | None:
        root = self._cache_root()
        return None if root is None else root / "document-vectors" / self.key()

    def _read_cache(self, digests: np.ndarray) -> dict[bytes, np.ndarray]:
        folder = self._cache_folder()
        if folder is None or not folder.is_dir():
            return {}
        wanted = set(digests.tolist())
        found: dict[bytes, np.ndarray] = {}
        for shard in sorted(folder.glob("*.npz")):
            try:
                with np.load(shard) as z:
                    keys, vectors = z["digests"], z["vectors"]
            except (OSError, ValueError, KeyError) as exc:  # a shard another process is writing, or damaged
                logger.warning("document vectors: cache shard %s skipped (%s)", shard, exc)
                continue
            for j, d in enumerate(keys.tolist()):
                if d in wanted and d not in found:
                    found[d] = vectors[j]
            if len(found) == len(wanted):
                break
        return found

    def _write_cache(self, digests: np.ndarray, vectors: np.ndarray) -> None:
        folder = self._cache_folder()
        if folder is None or not len(digests):
            return
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(digests.tobytes()).hexdigest()[:24]
        path = folder / f"{name}.npz"
        tmp = folder / f".{name}.{os.getpid()}.tmp.npz"
        np.savez(tmp, digests=digests, vectors=vectors.astype(np.float32))
        os.replace(tmp, path)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_loaded"] = None  # the encoder is loaded again where it is needed
        return state
