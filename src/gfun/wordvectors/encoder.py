"""Word vectors derived from a multilingual transformer encoder, for any vocabulary.

Two methods:

* ``"isolated"``: each word is fed to the encoder on its own (``<s> prefix word </s>``) and its
  token states are mean-pooled (one forward pass per word, batched);
* ``"subword-mean"``: the mean of the input-embedding rows of the word's sub-word pieces (no
  forward pass at all: a table lookup, orders of magnitude faster).

Matrices are cached on disk as ``.npy`` per (model, method, language, vocabulary hash), so a
vocabulary is encoded once.
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
from gfun.encoders._cache import gfun_cache_dir
from gfun.wordvectors.base import WordVectorSource, vocabulary_hash

__all__ = ["METHODS", "EncoderWordVectors"]

logger = logging.getLogger(__name__)

METHODS = ("isolated", "subword-mean")
_METASPACE = "▁"


def _model_fingerprint(path: Path) -> str:
    """Identify a saved model folder by its config and the size/time of its weight files."""
    h = hashlib.sha1(usedforsecurity=False)
    h.update(str(path.resolve()).encode())
    for name in sorted(os.listdir(path)):
        if name == "config.json" or name.endswith((".safetensors", ".bin", ".json")):
            stat = (path / name).stat()
            h.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:12]


class EncoderWordVectors(WordVectorSource):
    """Vectors of arbitrary words from a multilingual encoder (every word is covered).

    Parameters
    ----------
    model : str, path-like or (model, tokenizer)
        A spec for :func:`gfun.encoders.resolver.load_encoder` (default the offline
        ``"multilingual-e5-small"``), or an already loaded pair.
    method : {"isolated", "subword-mean"}
        See the module docstring.
    prefix : str
        Prepended to each word by ``"isolated"``.  e5 models were trained with ``"query: "``, but
        for words in isolation it does not change word-translation precision measurably and costs two
        more tokens per word, so the default is none.
    layer : int
        Hidden layer pooled by ``"isolated"`` (``-1`` = last).
    batch_size : int
        Words per forward pass.
    max_length : int
        Token cap per word (long compounds are truncated).
    normalize : bool
        L2-normalise each vector.
    cache : bool
        Keep matrices as ``.npy`` under ``<gfun cache>/wordvectors``.
    cache_dir : path-like, optional
        gfun cache root.
    cache_key : str, optional
        Identifies a model passed as a loaded pair (caching is off for such a pair without it).
    device : str, optional
        Torch device for the forward passes.
    progress : bool or callable, optional
        Progress of the encoding of a vocabulary (``"isolated"``: one forward pass per batch of words, slow for
        large vocabularies on a CPU): ``True``, a tqdm bar on a terminal; a callable, called as
        ``progress(done, total)`` after every batch of words.
        Without a bar, a log line every 10 s gives the count and the time left (see :mod:`gfun.core.progress`).

    Notes
    -----
    An instance also remembers, in memory, the vector of every word it has encoded (a word's
    vector does not depend on the language), so overlapping vocabularies are encoded once.
    """

    def __init__(
        self,
        model: Any = "multilingual-e5-small",
        *,
        method: str = "isolated",
        prefix: str = "",
        layer: int = -1,
        batch_size: int = 256,
        max_length: int = 32,
        normalize: bool = True,
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        cache_key: str | None = None,
        device: str | None = None,
        progress: Any = None,
    ) -> None:
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.model = model
        self.method = method
        self.prefix = prefix
        self.layer = layer
        self.batch_size = batch_size
        self.max_length = max_length
        self.normalize = normalize
        self.cache = cache
        self.cache_dir = cache_dir
        self.cache_key = cache_key
        self.device = device
        self.progress = progress
        self._loaded: tuple[Any, Any] | None = None
        self._key: str | None = None
        self._memo: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:  # type: ignore[override]
        label = self.model if isinstance(self.model, str | os.PathLike) else "model"
        return f"encoder:{os.fspath(label)}:{self.method}"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if not isinstance(self.model, str | os.PathLike):
            raise TypeError("an EncoderWordVectors built on a loaded model cannot be pickled; pass a spec")
        state["_loaded"] = None
        state["_memo"] = {}
        state["progress"] = self.progress if isinstance(self.progress, bool) else None  # not a callback
        return state

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            if isinstance(self.model, tuple):
                self._loaded = self.model
            else:
                from gfun.encoders.resolver import load_encoder

                self._loaded = load_encoder(self.model, cache_dir=self.cache_dir, device=self.device)
        return self._loaded

    def _model_key(self) -> str | None:
        if self._key is None:
            if isinstance(self.model, tuple):
                if self.cache_key is None:
                    return None
                self._key = self.cache_key
            else:
                from gfun.encoders.resolver import resolve_encoder

                path = resolve_encoder(self.model, cache_dir=self.cache_dir)
                self._key = f"{path.name}-{_model_fingerprint(path)}"
        return self._key

    @property
    def dim(self) -> int:
        model, _ = self._load()
        return int(model.config.hidden_size)

    def _settings_key(self) -> str:
        if self.method == "subword-mean":
            return f"subword-mean-n{int(self.normalize)}"
        prefix = hashlib.sha1(self.prefix.encode(), usedforsecurity=False).hexdigest()[:6]
        return f"isolated-p{prefix}-l{self.layer}-m{self.max_length}-n{int(self.normalize)}"

    def cache_path(self, lang: str, vocabulary: Sequence[str]) -> Path | None:
        """Return the ``.npy`` file that holds (or will hold) a vocabulary's matrix, or None."""
        if not self.cache:
            return None
        key = self._model_key()
        if key is None:
            return None
        folder = gfun_cache_dir(self.cache_dir, subdir="wordvectors")
        return folder / f"{key}-{self._settings_key()}-{lang}-{vocabulary_hash(vocabulary)}.npy"

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        vocabulary = list(vocabulary)
        found = np.array([bool(w.strip()) for w in vocabulary], dtype=bool)
        path = self.cache_path(lang, vocabulary)
        if path is not None and path.is_file():
            matrix = np.load(path)
            if matrix.shape[0] == len(vocabulary):
                return matrix, found
        started = time.perf_counter()
        words = [w for w, ok in zip(vocabulary, found, strict=True) if ok]
        # a word's vector does not depend on the language: reuse those computed by this instance, then those
        # of the word bank (every word this model and these settings ever encoded here, whatever the vocabulary)
        todo = list(dict.fromkeys(w for w in words if w not in self._memo))
        if todo:
            todo = self._from_bank(todo)
        if todo:
            fresh = self._isolated(todo, lang) if self.method == "isolated" else self._subword_mean(todo)
            self._memo.update(zip(todo, fresh, strict=True))
            self._add_to_bank(todo, fresh)
        part = (
            np.stack([self._memo[w] for w in words]) if words else np.zeros((0, self.dim), dtype=np.float32)
        )
        matrix = np.zeros((len(vocabulary), part.shape[1]), dtype=np.float32)
        matrix[found] = part
        logger.info(
            "%s [%s]: %d words (%d new) encoded in %.1f s",
            self.name,
            lang,
            len(words),
            len(todo),
            time.perf_counter() - started,
        )
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, matrix)
            os.replace(tmp, path)
            path.with_suffix(".json").write_text(
                json.dumps(
                    {
                        "model": os.fspath(self.model)
                        if isinstance(self.model, str | os.PathLike)
                        else self.cache_key,
                        "method": self.method,
                        "lang": lang,
                        "n_words": len(vocabulary),
                        "settings": self._settings_key(),
                    }
                ),
                encoding="utf-8",
            )
        return matrix, found

    def bank_path(self) -> Path | None:
        """The word bank: ``.npz`` of every word encoded with this model and these settings (or None)."""
        if not self.cache:
            return None
        key = self._model_key()
        if key is None:
            return None
        return gfun_cache_dir(self.cache_dir, subdir="wordvectors") / f"{key}-{self._settings_key()}-bank.npz"

    def _from_bank(self, todo: list[str]) -> list[str]:
        """Move the words of ``todo`` found in the word bank into the memo; return the others."""
        path = self.bank_path()
        if path is None or not path.is_file():
            return todo
        try:
            with np.load(path, allow_pickle=False) as bank:
                index = {w: i for i, w in enumerate(bank["words"].tolist())}
                rows = [index.get(w) for w in todo]
                hit = [i for i, r in enumerate(rows) if r is not None]
                if hit:
                    vectors = bank["vectors"][[rows[i] for i in hit]]
                    self._memo.update(zip((todo[i] for i in hit), vectors, strict=True))
        except (OSError, ValueError, KeyError) as exc:  # a damaged bank is ignored (and rewritten), never fatal
            logger.warning("%s: word bank %s unreadable (%s): ignored", self.name, path, exc)
            return todo
        return [w for w in todo if w not in self._memo]

    def _add_to_bank(self, words: list[str], vectors: np.ndarray) -> None:
        """Append freshly encoded words to the word bank (atomic replace; a concurrent writer may win)."""
        path = self.bank_path()
        if path is None:
            return
        old_words: list[str] = []
        old_vectors = np.zeros((0, vectors.shape[1]), dtype=np.float32)
        if path.is_file():
            try:
                with np.load(path, allow_pickle=False) as bank:
                    old_words, old_vectors = bank["words"].tolist(), bank["vectors"]
            except (OSError, ValueError, KeyError):
                old_words = []
        known = set(old_words)
        new = [i for i, w in enumerate(words) if w not in known]
        if not new:
            return
        all_words = np.asarray(old_words + [words[i] for i in new], dtype=str)
        all_vectors = np.concatenate([old_vectors, np.asarray(vectors, dtype=np.float32)[new]])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, words=all_words, vectors=all_vectors)
        os.replace(tmp, path)

    def _isolated(self, words: list[str], lang: str = "?") -> np.ndarray:
        from gfun.core.progress import Progress
        from gfun.encoders.pooling import encode_texts

        model, tokenizer = self._load()
        with Progress(len(words), f"{self.name} [{lang}]", unit="words", progress=self.progress, log=logger) as p:
            return encode_texts(
                model,
                tokenizer,
                words,
                prefix=self.prefix,
                pooling="mean",
                batch_size=self.batch_size,
                max_length=self.max_length,
                normalize=self.normalize,
                layer=self.layer,
                on_batch=p.update,
            )

    def _subword_mean(self, words: list[str]) -> np.ndarray:
        torch = import_optional("torch", purpose="encoder-derived word vectors")
        model, tokenizer = self._load()
        table = model.get_input_embeddings().weight
        dim = int(table.shape[1])
        out = np.zeros((len(words), dim), dtype=np.float32)
        if not words:
            return out
        encoded = tokenizer(words, add_special_tokens=False)["input_ids"]
        bare = tokenizer.convert_tokens_to_ids(_METASPACE)
        unk = getattr(tokenizer, "unk_token_id", None)
        lengths = np.zeros(len(words), dtype=np.int64)
        flat: list[int] = []
        for i, ids in enumerate(encoded):
            kept = [t for t in ids if t != bare] or list(ids)
            kept = kept[: self.max_length] or ([unk] if unk is not None else [])
            lengths[i] = len(kept)
            flat.extend(kept)
        with torch.inference_mode():
            rows = table[torch.as_tensor(flat, dtype=torch.long)].float()
            segment = torch.as_tensor(np.repeat(np.arange(len(words)), lengths), dtype=torch.long)
            sums = torch.zeros((len(words), dim), dtype=torch.float32).index_add_(0, segment, rows)
            sums /= torch.as_tensor(np.maximum(lengths, 1), dtype=torch.float32)[:, None]
            if self.normalize:
                sums = torch.nn.functional.normalize(sums, dim=-1)
        out[:] = sums.numpy()
        return out
