"""The recurrent view (R): one GRU over aligned word vectors (optionally with word-class embeddings), trained by BCE.

Section 5 of the paper. Every document is a sequence of its terms (the project's per-language analyser), each
term a row of one embedding table shared by all languages, initialised with the aligned word vector of the term
(the M view's source, :func:`gfun.views.embeddings.build_source`) and, with ``wce=True``, concatenated with the
term's word-class embedding (the W view's :func:`gfun.views.wce.word_class_embeddings`, from the training
documents of its language). The embeddings are not frozen. A single GRU reads the documents of all languages;
its last hidden state goes through a linear output layer and the network is trained end-to-end with binary
cross-entropy. Once trained, the output layer is dropped: the view of a document is the GRU's last hidden state,
which gFun maps to calibrated posteriors like the other non-posterior views. Configuration letters of the paper:
R_M (``wce=False``) and R_MW (``wce=True``).

Presets (:data:`RECURRENT_PRESETS`; explicit parameters override them):

``"paper"``
    GRU of 512 units, Adam, learning rate 1e-3, no weight decay, StepLR(step 25, gamma 0.5), batch 256, up to 250
    epochs, early stopping after 25 epochs without macro-F1 improvement on a 20% held-out split, best epoch
    restored.
``"gpu"``
    Same as ``"paper"``.
``"cpu"``
    GRU of 256 units, batches of 32 at learning rate 2e-3, up to 30 epochs, patience 5 (the rest as ``"paper"``).
    Why: a CPU affords only a few epochs, and at the paper's batch of 256 they make too few parameter updates for
    the GRU to learn (fewer units alone make epochs cheaper but learn as slowly); batches of 32 at a higher
    learning rate make eight times as many updates an epoch.

The held-out split is the one part of the training set the network never trains on (``heldout_idx_``); ``select``
judges its candidates there (:func:`gfun.funnelling.select.judged_documents`), since the GRU's outputs for the
documents it trained on are far better than for new ones.

Training batches are cut to the average length of their documents (longer documents truncated, shorter padded:
the paper's per-batch maximum length). Views are extracted with a fixed maximum length (``max_length``) and
packed sequences, so a document's view does not depend on the other documents of its batch.

Zero-shot and out-of-vocabulary words: a term absent from the training vocabulary of its language (or any term
of a language without training documents) gets its vector from the word-vector source when it has one (not
fine-tuned; zero WCE part), and the unknown-word row otherwise. The view covers the languages its source covers.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gfun.core.optional import import_optional
from gfun.core.state import load_state, prefixed, put_states, sub_arrays
from gfun.neural.training import (
    batched_inference,
    bce_epoch,
    check_texts,
    device_preset,
    lazy_classes,
    loading_device,
    resolve_device,
    resolve_preset,
    split_holdout,
    state_from_arrays,
    state_to_arrays,
    torch_module_class,
    torch_seed,
    train_early_stopping,
)
from gfun.text.analysis import Analyzer
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer
from gfun.views.base import LanguageCoverage, LanguageReach, ViewGenerator
from gfun.views.embeddings import _encoder_source, build_source, source_covers
from gfun.views.wce import word_class_embeddings

__all__ = ["RECURRENT_PRESETS", "RecurrentView"]

logger = logging.getLogger(__name__)

#: Training settings by preset name (see the module docstring).
RECURRENT_PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"hidden_size": 512, "lr": 1e-3, "step_size": 25, "gamma": 0.5, "batch_size": 256, "max_epochs": 250,
              "patience": 25, "val_size": 0.2, "final_val_epoch": False},
    "cpu": {"hidden_size": 256, "lr": 2e-3, "step_size": 25, "gamma": 0.5, "batch_size": 32, "max_epochs": 30,
            "patience": 5, "val_size": 0.2, "final_val_epoch": False},
}
RECURRENT_PRESETS["gpu"] = dict(RECURRENT_PRESETS["paper"])  # the paper's settings are affordable on a GPU
_SETTINGS = tuple(RECURRENT_PRESETS["paper"])
PAD, UNK = 0, 1


@torch_module_class(__name__, purpose="the recurrent view")
def _net_class(torch: Any) -> type:
    """The torch module (embedding table -> GRU -> dropout -> linear), built on first use."""

    class RecurrentNet(torch.nn.Module):
        def __init__(self, n_rows: int, dim: int, hidden: int, n_classes: int, dropout: float) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(n_rows, dim, padding_idx=PAD)
            self.gru = torch.nn.GRU(dim, hidden, batch_first=True)
            self.dropout = torch.nn.Dropout(dropout)
            self.head = torch.nn.Linear(hidden, n_classes)

        def features(self, ids: Any, lengths: Any, extra: Any = None) -> Any:
            weight = self.embedding.weight if extra is None else torch.cat([self.embedding.weight, extra])
            emb = torch.nn.functional.embedding(ids, weight, padding_idx=PAD)
            packed = torch.nn.utils.rnn.pack_padded_sequence(emb, lengths.cpu(), batch_first=True,
                                                             enforce_sorted=False)
            _, h = self.gru(packed)
            return h[-1]

        def forward(self, ids: Any, lengths: Any) -> Any:
            return self.head(self.dropout(self.features(ids, lengths)))

    return RecurrentNet


#: ``RecurrentNet`` (the torch module class) is built on first access, so that importing needs no torch.
__getattr__ = lazy_classes(__name__, {"RecurrentNet": _net_class})


class RecurrentView(ViewGenerator):
    """Recurrent VGF (letter R): a GRU for all languages over aligned word vectors (R_M) [+ WCEs (R_MW)].

    Parameters
    ----------
    source : str, path-like or dict
        Aligned word vectors, as for the M view (:func:`gfun.views.embeddings.build_source`): ``"e5"``,
        ``"vec:/data/muse"``, ``{"spec": ..., **options}``.
    wce : bool
        Concatenate word-class embeddings to the word vectors (R_MW); ``False`` gives R_M.
    hidden_size : int, optional
        GRU hidden size = the view's dimensionality (``None``: the preset's, 512 or 256 on a CPU).
    dropout : float
        Dropout before the output layer during training.
    min_df : int
        Minimum document frequency of a training term (rarer terms read as the unknown word).
    stopwords, stem : bool
        Analyser options (word vectors are looked up by surface form: no stemming by default; word order
        matters to the GRU: stop words kept by default).
    preset : {"auto", "paper", "gpu", "cpu"}
        Training settings (``"auto"``: ``"gpu"`` on CUDA, ``"cpu"`` otherwise); every parameter below left to
        ``None`` takes the preset's value.
    lr, step_size, gamma, batch_size, max_epochs, patience, val_size, final_val_epoch : optional
        Adam learning rate, StepLR schedule (per epoch), batch size, epochs, early-stopping patience,
        held-out share, and whether to train one last epoch on the held-out split.
    max_length : int
        Maximum number of terms read when extracting views (training batches use their average length).
    eval_batch_size : int
    oov : {"source", "unk"}
        Terms outside the training vocabulary: their source vector when it has one, or the unknown-word row.
    device : str
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``...
    random_state : int, optional
    progress : bool

    Attributes
    ----------
    languages_ : list of str
    vectorizers_ : dict of str to TfidfVectorizer
        Per training language: the analyser and vocabulary (and the TF-IDF used for the WCEs).
    offsets_ : dict of str to int
        First embedding row of each training language's vocabulary.
    n_features_out_ : int
    hidden_size_ : int
        The GRU's hidden size used (``hidden_size`` or the preset's).
    heldout_idx_ : ndarray or None
        Training documents the network never trained on (the early-stopping split; ``None`` when there is none or
        ``final_val_epoch`` trained on it too).
    word_dim_ : int
        Dimensionality of the word vectors (the WCE part, if any, follows).
    history_ : list of dict
    best_epoch_ : int
    epoch_seconds_ : list of float
    net_ : torch.nn.Module
    """

    letter = "r"
    trains_network = True
    output = "features"
    description = "recurrent network"

    def __init__(self, source: Any = "e5", wce: bool = False, hidden_size: int | None = None, dropout: float = 0.2,
                 min_df: int = 1, stopwords: bool = False, stem: bool = False, preset: str = "auto",
                 lr: float | None = None, step_size: int | None = None, gamma: float | None = None,
                 batch_size: int | None = None, max_epochs: int | None = None, patience: int | None = None,
                 val_size: float | None = None, final_val_epoch: bool | None = None, max_length: int = 500,
                 eval_batch_size: int = 256, oov: str = "source", device: str = "auto",
                 random_state: int | None = None, progress: bool = False) -> None:
        self.source = source
        self.wce = wce
        self.hidden_size = hidden_size
        self.dropout = dropout
        self.min_df = min_df
        self.stopwords = stopwords
        self.stem = stem
        self.preset = preset
        self.lr = lr
        self.step_size = step_size
        self.gamma = gamma
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.val_size = val_size
        self.final_val_epoch = final_val_epoch
        self.max_length = max_length
        self.eval_batch_size = eval_batch_size
        self.oov = oov
        self.device = device
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ helpers
    def training_settings(self) -> dict[str, Any]:
        """The preset's settings with the explicitly given parameters applied."""
        return resolve_preset(RECURRENT_PRESETS, device_preset(self.preset, self.device),
                              {k: getattr(self, k) for k in _SETTINGS}, "RecurrentView")

    def _torch(self) -> Any:
        return import_optional("torch", purpose="the recurrent view")

    def _get_source(self) -> Any:
        if getattr(self, "source_", None) is None:
            self.source_ = build_source(self.source)
        return self.source_

    def _ids(self, texts: Sequence[str], langs: np.ndarray) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Row ids of each document's terms; rows past the trained table come with their vectors (``extra``)."""
        out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(texts)
        n_rows = int(self.net_.embedding.num_embeddings)
        extra_vecs: list[np.ndarray] = []
        n_extra = 0
        for lang in sorted(set(langs.tolist())):
            idx = np.flatnonzero(langs == lang)
            vec = self.vectorizers_.get(lang)
            if vec is not None:
                analyze, vocab, offset = vec.analyzer_, vec.vocabulary_, self.offsets_[lang]
            else:
                analyze, vocab, offset = Analyzer(lang, stopwords=self.stopwords, stem=self.stem), {}, 0
            docs = [analyze(texts[i]) for i in idx]
            new_terms: dict[str, int] = {}
            if self.oov == "source" and self._source_usable():
                for terms in docs:
                    for t in terms:
                        if t not in vocab and t not in new_terms:
                            new_terms[t] = len(new_terms)
            new_rows = np.full(len(new_terms), UNK, dtype=np.int64)
            if new_terms:
                mat = np.asarray(self._get_source().vectors(lang, list(new_terms)), dtype=np.float32)
                found = np.flatnonzero(np.any(mat != 0, axis=1))
                if found.size:
                    full = np.zeros((found.size, self.embedding_dim_), dtype=np.float32)
                    full[:, :self.word_dim_] = mat[found]
                    extra_vecs.append(full)
                    new_rows[found] = n_rows + n_extra + np.arange(found.size)
                    n_extra += found.size
            for i, terms in zip(idx, docs, strict=True):
                ids = [offset + vocab[t] if t in vocab else (new_rows[new_terms[t]] if t in new_terms else UNK)
                       for t in terms]
                out[i] = np.asarray(ids, dtype=np.int64)
        extra = np.concatenate(extra_vecs) if extra_vecs else None
        return out, extra

    def _source_usable(self) -> bool:
        try:
            self._get_source()
        except (ImportError, OSError, ValueError) as exc:
            if not getattr(self, "_warned_source", False):
                logger.warning("R view: word-vector source %r unavailable (%s): unknown words read as <unk>",
                               self.source, exc)
                self._warned_source = True
            return False
        return True

    def _collate(self, ids: list[np.ndarray], batch: np.ndarray, cap: int) -> tuple[Any, Any]:
        torch = self._torch()
        seqs = [ids[i][:cap] for i in batch]
        lengths = np.asarray([max(1, len(s)) for s in seqs], dtype=np.int64)
        arr = np.full((len(seqs), int(lengths.max())), PAD, dtype=np.int64)
        for r, s in enumerate(seqs):
            if len(s):
                arr[r, :len(s)] = s
            else:
                arr[r, 0] = UNK  # an empty document reads as one unknown word
        return torch.from_numpy(arr).to(self.device_), torch.from_numpy(lengths)

    def _run(self, ids: list[np.ndarray], idx: np.ndarray, what: str, extra: np.ndarray | None = None
             ) -> np.ndarray:
        torch = self._torch()
        net = self.net_
        dim = net.head.out_features if what == "logits" else net.head.in_features
        extra_t = None if extra is None else torch.from_numpy(extra).to(self.device_)

        def forward(pos: np.ndarray) -> Any:
            x, lengths = self._collate(ids, idx[pos], int(self.max_length))
            feats = net.features(x, lengths, extra_t)
            return net.head(feats) if what == "logits" else feats

        return batched_inference(net, np.asarray([len(ids[i]) for i in idx]), dim, int(self.eval_batch_size), forward)

    def _check(self, texts: Sequence[str], langs: Any) -> tuple[list[str], np.ndarray]:
        texts = check_texts(texts, "R view")
        langs = np.asarray(langs, dtype=object)
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        return texts, langs

    # ------------------------------------------------------------------ ViewGenerator
    def release(self) -> None:
        """Drop the word-vector source (possibly an encoder): it is rebuilt on demand, never stored."""
        self.source_ = None

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        torch = self._torch()
        texts, langs = self._check(texts, langs)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float32)
        if not texts:
            raise ValueError("no training documents")
        if Y.ndim != 2 or Y.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but a label matrix of shape {Y.shape}")
        if self.oov not in ("source", "unk"):
            raise ValueError(f"oov must be 'source' or 'unk', got {self.oov!r}")
        s = self.training_settings()
        self.source_ = None
        source = self._get_source()
        t_start = time.perf_counter()
        self.languages_ = sorted(set(langs.tolist()))
        self.vectorizers_: dict[str, TfidfVectorizer] = {}
        self.offsets_: dict[str, int] = {}
        blocks: list[np.ndarray] = []
        row = 2
        tfidf = MultilingualTfidf(min_df=self.min_df, stopwords=self.stopwords, stem=self.stem)
        for lang, (idx, X) in tfidf.fit_transform(texts, langs).items():
            vec = tfidf.vectorizers_[lang]
            terms = vec.get_feature_names_out().tolist()
            wv = np.asarray(source.vectors(lang, terms), dtype=np.float32)
            if wv.shape[0] != len(terms):
                raise ValueError(f"the word-vector source returned {wv.shape[0]} rows for {len(terms)} terms")
            parts = [wv]
            if self.wce:
                parts.append(word_class_embeddings(X, Y[idx]))
            blocks.append(np.hstack(parts))
            self.vectorizers_[lang] = vec
            self.offsets_[lang] = row
            row += len(terms)
            logger.info("R view [%s]: %d terms, %.1f%% without a word vector", lang, len(terms),
                        100 * (1 - np.any(wv != 0, axis=1).mean()) if terms else 0.0)
        self.word_dim_ = int(blocks[0].shape[1] - (Y.shape[1] if self.wce else 0))
        self.embedding_dim_ = int(blocks[0].shape[1])
        table = np.vstack([np.zeros((2, self.embedding_dim_), dtype=np.float32)] + blocks)
        self.device_ = resolve_device(self.device)
        ids, _ = self._ids_training(texts, langs)
        with torch_seed(self.random_state, self.device_):
            self.hidden_size_ = int(s["hidden_size"])
            net = _net_class()(table.shape[0], self.embedding_dim_, self.hidden_size_, Y.shape[1],
                               float(self.dropout))
            with torch.no_grad():
                net.embedding.weight.copy_(torch.from_numpy(table))
            self.net_ = net.to(self.device_)
            del table
            opt = torch.optim.Adam(self.net_.parameters(), lr=float(s["lr"]))
            scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=int(s["step_size"]), gamma=float(s["gamma"]))
            Yt = torch.from_numpy(Y).to(self.device_)
            rng = np.random.RandomState(self.random_state)
            lengths = np.asarray([len(x) for x in ids])

            def logits_of(batch: np.ndarray) -> Any:
                cap = max(1, math.ceil(lengths[batch].mean()))  # the batch's average length
                return self.net_(*self._collate(ids, batch, cap))

            def run_epoch(idx: np.ndarray, epoch: int) -> float:
                perm = rng.permutation(idx)
                bs = int(s["batch_size"])
                return bce_epoch(self.net_, [perm[start:start + bs] for start in range(0, len(perm), bs)], logits_of,
                                 Yt, opt, progress=self.progress, desc=f"R epoch {epoch}")

            train_idx, val_idx = split_holdout(len(texts), float(s["val_size"]), self.random_state)
            logger.info("R view: GRU %d -> %d over %d embedding rows on %s; %d training + %d held-out documents",
                        self.embedding_dim_, self.hidden_size_, self.net_.embedding.num_embeddings, self.device_,
                        len(train_idx), len(val_idx))
            self.history_, self.best_epoch_ = train_early_stopping(
                self.net_, run_epoch=run_epoch, predict_logits=lambda idx: self._run(ids, idx, "logits"), Y=Y,
                train_idx=train_idx, val_idx=val_idx, scheduler=scheduler, max_epochs=int(s["max_epochs"]),
                patience=int(s["patience"]), final_val_epoch=bool(s["final_val_epoch"]), name="R view")
        self.net_.eval()
        self.heldout_idx_ = val_idx if val_idx.size and not bool(s["final_val_epoch"]) else None
        self.fit_seconds_ = time.perf_counter() - t_start
        self._set_fitted()
        return self._run(ids, np.arange(len(ids)), "features")

    def _ids_training(self, texts: list[str], langs: np.ndarray) -> tuple[list[np.ndarray], None]:
        out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(texts)
        for lang in self.languages_:
            vec, offset = self.vectorizers_[lang], self.offsets_[lang]
            vocab, analyze = vec.vocabulary_, vec.analyzer_
            for i in np.flatnonzero(langs == lang):
                out[i] = np.asarray([offset + vocab[t] if t in vocab else UNK for t in analyze(texts[i])],
                                    dtype=np.int64)
        return out, None

    def _set_fitted(self) -> None:
        self.n_features_out_ = int(self.hidden_size_)
        self.epoch_seconds_ = [float(h["seconds"]) for h in self.history_]

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        texts, langs = self._check(texts, langs)
        if not hasattr(self, "net_"):
            raise ValueError("this RecurrentView is not fitted yet")
        self._check_languages(langs)
        ids, extra = self._ids(texts, langs)
        return self._run(ids, np.arange(len(ids)), "features", extra)

    def covers(self, lang: str) -> bool:
        if not hasattr(self, "vectorizers_"):
            return False
        if lang in self.vectorizers_:
            return True
        if self.oov != "source" or not self._source_usable():
            return False
        return source_covers(self._get_source(), lang)

    def language_reach(self) -> LanguageReach:
        if self.oov != "source":
            return "training"
        return "any" if _encoder_source(self.source) else "some"

    def language_coverage(self) -> LanguageCoverage:
        return replace(super().language_coverage(), others="the other languages its word vectors cover")

    # ------------------------------------------------------------------ persistence
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        params = self.get_params()
        if not isinstance(params["source"], str | os.PathLike | Mapping):
            raise ValueError("a RecurrentView built with a source object cannot be saved: pass the source as a spec")
        if isinstance(params["source"], os.PathLike):
            params["source"] = os.fspath(params["source"])
        meta: dict = {"params": params, "languages_": self.languages_, "offsets_": self.offsets_,
                      "word_dim_": self.word_dim_, "embedding_dim_": self.embedding_dim_,
                      "hidden_size_": self.hidden_size_,
                      "n_rows": int(self.net_.embedding.num_embeddings), "n_classes": int(self.net_.head.out_features),
                      "history_": self.history_, "best_epoch_": self.best_epoch_, "fit_seconds_": self.fit_seconds_,
                      "vectorizers": {}}
        arrays = prefixed(state_to_arrays(self.net_), "net/")
        meta["vectorizers"] = put_states(self.vectorizers_, "{}/vec/", arrays)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> RecurrentView:
        obj = cls(**meta["params"])
        obj.languages_ = list(meta["languages_"])
        obj.offsets_ = {k: int(v) for k, v in meta["offsets_"].items()}
        obj.word_dim_ = int(meta["word_dim_"])
        obj.embedding_dim_ = int(meta["embedding_dim_"])
        obj.history_ = list(meta["history_"])
        obj.best_epoch_ = int(meta["best_epoch_"])
        obj.fit_seconds_ = float(meta["fit_seconds_"])
        obj.vectorizers_ = {lang: load_state(TfidfVectorizer, meta["vectorizers"][lang], arrays, f"{lang}/vec/")
                            for lang in obj.languages_}
        obj.device_ = loading_device(obj.device, what="the R network")
        obj.hidden_size_ = int(meta["hidden_size_"])
        obj.heldout_idx_ = None  # only the fit needs it
        net = _net_class()(int(meta["n_rows"]), obj.embedding_dim_, obj.hidden_size_, int(meta["n_classes"]),
                           float(obj.dropout))
        state_from_arrays(net, sub_arrays(arrays, "net/"))
        obj.net_ = net.to(obj.device_).eval()
        obj._set_fitted()
        return obj
