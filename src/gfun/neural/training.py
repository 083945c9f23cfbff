"""What the neural views (B, R) and the fine-tuned transformer baseline share: presets, devices, the training loop,
the torch network classes built on first use, text checks, training epochs and batched inference.

The training loop (:func:`train_early_stopping`) is the paper's protocol for both neural VGFs (sections 4.3 and
5): minimise binary cross-entropy on the training split, measure macro-F1 (threshold 0.5 on the sigmoid) on a
held-out split after every epoch, stop after ``patience`` epochs without improvement, restore the weights of
the best epoch and, optionally, train one last epoch on the held-out split.

Nothing here imports torch at module import time; functions that need it import it lazily through
:func:`gfun.core.optional.import_optional`, so a missing ``torch`` extra gives an install hint.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from gfun.core.optional import import_optional
from gfun.core.progress import format_duration, progress_bar

__all__ = ["batched_inference", "bce_epoch", "check_texts", "device_preset", "lazy_classes", "loading_device",
           "resolve_device",
           "resolve_preset", "split_holdout", "state_from_arrays", "state_to_arrays", "torch_module_class",
           "torch_seed", "train_early_stopping"]

logger = logging.getLogger(__name__)


def _torch(purpose: str) -> Any:
    return import_optional("torch", purpose=purpose)


def torch_module_class(module: str, purpose: str) -> Callable[[Callable[[Any], type]], Callable[[], type]]:
    """Decorate ``build(torch) -> class``: the class is built once, on first call, with torch imported then.

    The class is named ``<module>.<its name>``, so that pickle finds it (by reference) through the module-level
    ``__getattr__`` of :func:`lazy_classes`; importing the module needs no torch.

    Parameters
    ----------
    module : str
        The module that serves the class (its ``__name__``).
    purpose : str
        What needs torch, for the install hint when it is missing.
    """
    def wrap(build: Callable[[Any], type]) -> Callable[[], type]:
        @functools.cache
        def get() -> type:
            cls = build(_torch(purpose))
            cls.__module__ = module
            cls.__qualname__ = cls.__name__
            return cls

        return get

    return wrap


def lazy_classes(module: str, classes: Mapping[str, Callable[[], type]]) -> Callable[[str], type]:
    """A module-level ``__getattr__`` serving the classes of :func:`torch_module_class` (name -> factory)."""
    def __getattr__(name: str) -> type:
        if name in classes:
            return classes[name]()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def check_texts(texts: Sequence[str], what: str) -> list[str]:
    """``texts`` as a list, checked to hold strings (a single string is refused); ``what`` names the caller."""
    if isinstance(texts, str):
        raise TypeError(f"{what}: expected a list of texts, got a single string")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{what}: text {i} is a {type(t).__name__}, expected str")
    return texts


def resolve_preset(presets: Mapping[str, Mapping[str, Any]], preset: str, overrides: Mapping[str, Any],
                   owner: str) -> dict[str, Any]:
    """The training settings of ``preset`` with every explicitly given (non-``None``) value of ``overrides`` applied.

    Raises
    ------
    ValueError
        On an unknown preset name.
    """
    if preset not in presets:
        raise ValueError(f"{owner}: unknown preset {preset!r}; choose one of {sorted(presets)}")
    out = dict(presets[preset])
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out


def device_preset(preset: str, device: Any = "auto") -> str:
    """``preset`` itself, or for ``"auto"`` the preset of the device: ``"gpu"`` on CUDA, ``"cpu"`` otherwise."""
    if preset != "auto":
        return preset
    return "gpu" if getattr(resolve_device(device), "type", "cpu") == "cuda" else "cpu"


def resolve_device(device: Any = "auto") -> Any:
    """A ``torch.device`` from ``"auto"`` (CUDA when available, else CPU), a name such as ``"cuda:1"``, or a device."""
    torch = _torch("choosing a torch device")
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def loading_device(device: Any = "auto", *, cpu_only: bool = False, what: str = "the network") -> Any:
    """The device a saved network runs on where it is loaded: ``device`` (:func:`resolve_device`), or the CPU when
    that is a CUDA device this machine does not have (a model trained on a GPU, loaded on a machine without one),
    or when the network can only run on a CPU (``cpu_only``: an int8 frozen part)."""
    torch = _torch("choosing a torch device")
    found = resolve_device(device)
    if found.type != "cuda":
        return found
    if cpu_only:
        logger.info("%s has an int8 frozen part, which runs on the CPU only: running on the CPU, not %s", what, found)
        return torch.device("cpu")
    if not torch.cuda.is_available() or (found.index or 0) >= torch.cuda.device_count():
        logger.warning("%s was saved to run on %s, which this machine does not have: running on the CPU", what,
                       found)
        return torch.device("cpu")
    return found


@contextlib.contextmanager
def torch_seed(seed: int | None, device: Any) -> Iterator[None]:
    """Seed torch inside the block only (the global RNG state is restored on exit: no global seeding)."""
    torch = _torch("seeding torch")
    devices = [device] if getattr(device, "type", "cpu") == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        if seed is not None:
            torch.manual_seed(int(seed))
        yield


def split_holdout(n: int, val_size: float, random_state: int | None, *, min_val: int = 2,
                  min_train: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Random (train, validation) index split; an empty validation part when there are too few documents."""
    rng = np.random.RandomState(random_state)
    perm = rng.permutation(n)
    n_val = int(round(val_size * n)) if val_size else 0
    if n_val < min_val or n - n_val < min_train:
        if val_size:
            logger.warning("only %d training documents: no held-out split, no early stopping", n)
        return np.sort(perm), np.zeros(0, dtype=np.int64)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def macro_f1(Y: np.ndarray, logits: np.ndarray) -> float:
    """Macro-F1 (equation 4) of the predictions ``logits > 0`` (sigmoid > 0.5)."""
    from gfun.metrics.measures import f1_score

    return float(f1_score(np.asarray(Y, dtype=np.int8), (logits > 0).astype(np.int8), average="macro"))


def _bce(logits: np.ndarray, Y: np.ndarray) -> float:
    """Mean binary cross-entropy of logits against 0/1 labels (numerically stable)."""
    y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float64)
    return float(np.mean(np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits)))))


def train_early_stopping(module: Any, *, run_epoch: Callable[[np.ndarray, int], float],
                         predict_logits: Callable[[np.ndarray], np.ndarray], Y: np.ndarray,
                         train_idx: np.ndarray, val_idx: np.ndarray, scheduler: Any, max_epochs: int,
                         patience: int, final_val_epoch: bool, name: str) -> tuple[list[dict], int]:
    """Train ``module`` epoch by epoch with early stopping on held-out macro-F1.

    Parameters
    ----------
    module : torch.nn.Module
        Its ``state_dict`` is snapshotted at the best epoch and restored at the end.
    run_epoch : callable (indices, epoch) -> float
        Trains one epoch on the documents ``indices``; returns the mean training loss.
    predict_logits : callable (indices) -> ndarray
        Logits (n, |Y|) of the documents ``indices`` (module in eval mode, no gradient).
    Y : ndarray (n_docs, n_classes)
    train_idx, val_idx : ndarray
        The two splits; with an empty ``val_idx`` the module trains ``max_epochs`` epochs, no early stopping.
    scheduler : torch LR scheduler or None
        Stepped once per epoch.
    max_epochs, patience : int
    final_val_epoch : bool
        After restoring the best epoch, train one more epoch on the held-out split (the paper's B view).
    name : str
        For log messages.

    Returns
    -------
    (history, best_epoch)
        ``history``: one dict per epoch (``epoch``, ``train_loss``, ``val_f1`` and ``val_loss`` or NaN,
        ``seconds``, ``lr``; the final held-out epoch has ``phase="held-out"``); ``best_epoch`` is 1-based (0 when
        no epoch ran).
    """
    torch = _torch("training a neural view")
    history: list[dict] = []
    best_f1, best_loss, best_epoch, best_state, bad = -np.inf, np.inf, 0, None, 0
    # frozen weights (e.g. an embedding table) never change: the best-epoch snapshot leaves them out
    frozen = {name for name, p in module.named_parameters() if not p.requires_grad}
    for epoch in range(1, max_epochs + 1):
        t0 = time.perf_counter()
        lr = scheduler.get_last_lr()[0] if scheduler is not None else float("nan")
        loss = float(run_epoch(train_idx, epoch))
        if scheduler is not None:
            scheduler.step()
        val_f1 = val_loss = float("nan")
        if val_idx.size:
            logits = np.asarray(predict_logits(val_idx), dtype=np.float64)
            val_f1 = macro_f1(Y[val_idx], logits)
            val_loss = _bce(logits, Y[val_idx])
        seconds = time.perf_counter() - t0
        history.append({"epoch": epoch, "phase": "train", "train_loss": loss, "val_f1": val_f1, "val_loss": val_loss,
                        "seconds": seconds, "lr": lr})
        # what is left at most: the remaining epochs (early stopping may end sooner) at the mean pace so far
        left = (max_epochs - epoch) * float(np.mean([h["seconds"] for h in history]))
        logger.info("%s: epoch %d/%d, loss %.4f, held-out macro-F1 %.4f, %.1f s%s", name, epoch, max_epochs, loss,
                    val_f1, seconds, f"; at most about {format_duration(left)} left" if epoch < max_epochs else "")
        if not val_idx.size:
            best_epoch = epoch
            continue
        # macro-F1 decides; on a tie (early in training every epoch may score 0: no logit above the threshold
        # yet) the held-out loss does, so that a slowly starting network is not stopped for lack of progress
        if val_f1 > best_f1 + 1e-9 or (abs(val_f1 - best_f1) <= 1e-9 and val_loss < best_loss):
            best_f1, best_loss, best_epoch, bad = val_f1, val_loss, epoch, 0
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()
                          if k not in frozen}
        else:
            bad += 1
            if bad >= patience:
                if epoch < max_epochs:
                    logger.info("%s: early stop after epoch %d (best epoch %d, macro-F1 %.4f)", name, epoch,
                                best_epoch, best_f1)
                break
    if best_state is not None and best_epoch != len(history):
        module.load_state_dict(best_state, strict=not frozen)
        logger.info("%s: restored the weights of epoch %d", name, best_epoch)
    del best_state
    if final_val_epoch and val_idx.size:
        t0 = time.perf_counter()
        loss = float(run_epoch(val_idx, len(history) + 1))
        history.append({"epoch": len(history) + 1, "phase": "held-out", "train_loss": loss, "val_f1": float("nan"),
                        "seconds": time.perf_counter() - t0, "lr": float("nan")})
        logger.info("%s: one last epoch on the held-out split, loss %.4f", name, loss)
    if getattr(torch, "cuda", None) is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
    return history, best_epoch


def state_to_arrays(module: Any, dtype: str | None = None) -> dict[str, np.ndarray]:
    """A module's ``state_dict`` as numpy arrays (``dtype`` e.g. ``"float16"`` shrinks floating tensors)."""
    out = {}
    for k, v in module.state_dict().items():
        arr = v.detach().to("cpu").float().numpy() if v.is_floating_point() else v.detach().to("cpu").numpy()
        if dtype is not None and np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(dtype)
        out[k] = arr
    return out


def state_from_arrays(module: Any, arrays: Mapping[str, np.ndarray], *, ignore: Sequence[str] = ()) -> None:
    """Load numpy arrays (from :func:`state_to_arrays`) into ``module``; keys not in ``ignore`` must match."""
    torch = _torch("loading a neural view")
    own = module.state_dict()
    tensors = {}
    for k, ref in own.items():
        if k not in arrays:
            if any(k.startswith(p) for p in ignore):
                continue
            raise ValueError(f"saved state lacks weight {k!r}")
        tensors[k] = torch.from_numpy(np.ascontiguousarray(arrays[k])).to(ref.dtype)
    extra = sorted(set(arrays) - set(own))
    if extra:
        raise ValueError(f"saved state has weights the model does not: {extra[:5]}")
    module.load_state_dict(tensors, strict=False)


def bce_epoch(net: Any, batches: Sequence[np.ndarray], logits_of: Callable[[np.ndarray], Any], Y: Any,
              optimizer: Any, *, params: Sequence[Any] = (), max_grad_norm: float | None = None,
              autocast: Callable[[], Any] = contextlib.nullcontext, progress: bool = False,
              desc: str = "") -> float:
    """One training epoch of ``net`` by binary cross-entropy; the mean loss per document.

    Parameters
    ----------
    net : torch.nn.Module
        Put in training mode.
    batches : sequence of numpy.ndarray
        Document indices of each batch, in training order.
    logits_of : callable
        ``logits_of(batch)``: the network's output-layer scores of the documents ``batch``.
    Y : torch.Tensor
        Labels of every document (float, on the network's device).
    optimizer : torch.optim.Optimizer
    params, max_grad_norm : optional
        Gradients of ``params`` are clipped to the norm ``max_grad_norm`` when it is given.
    autocast : callable
        Context for the forward pass (mixed precision); none by default.
    progress : bool
    desc : str
        Progress-bar label.
    """
    torch = _torch("training a neural view")
    loss_fn = torch.nn.BCEWithLogitsLoss()
    net.train()
    total, count = 0.0, 0
    for batch in progress_bar(batches, enabled=progress, desc=desc):
        with autocast():
            logits = logits_of(batch)
        loss = loss_fn(logits.float(), Y[torch.from_numpy(batch).to(Y.device)])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if max_grad_norm:
            torch.nn.utils.clip_grad_norm_(params, float(max_grad_norm))
        optimizer.step()
        total += float(loss.detach()) * len(batch)
        count += len(batch)
    return total / max(count, 1)


def batched_inference(net: Any, lengths: np.ndarray, dim: int, batch_size: int,
                      forward: Callable[[np.ndarray], Any], *, autocast: Callable[[], Any] = contextlib.nullcontext,
                      progress: bool = False, desc: str = "") -> np.ndarray:
    """Gradient-free forward passes over documents sorted by length, in batches (the longest first); rows in the
    documents' order.

    Parameters
    ----------
    net : torch.nn.Module
        Put in evaluation mode for the passes, then back in its former mode.
    lengths : numpy.ndarray
        Length of each document (the batches group documents of similar length).
    dim : int
        Width of the output rows.
    batch_size : int
    forward : callable
        ``forward(positions)``: the output rows (a tensor) of the documents at ``positions`` (indices into
        ``lengths``).
    autocast : callable
        Context for the passes (mixed precision); none by default.
    progress : bool
        A progress bar when there is more than one batch.
    desc : str
        Progress-bar label.

    Returns
    -------
    numpy.ndarray of shape (len(lengths), dim), float32
    """
    from gfun.core.memory import freed_blocks_reused, released_as_they_shrink

    torch = _torch("running a neural view")
    out = np.zeros((len(lengths), dim), dtype=np.float32)
    if not len(lengths):
        return out
    order = np.argsort(lengths, kind="stable")
    # the batches of the documents sorted by length, run longest first: every later batch reuses the memory the
    # first one freed (same batches, same vectors, in any order)
    starts = range(0, len(order), batch_size)[::-1]
    was_training = net.training
    net.eval()
    try:
        with torch.inference_mode(), autocast(), freed_blocks_reused():
            shrinking = released_as_they_shrink(starts, lambda start: lengths[order[start:start + batch_size]].max())
            for start in progress_bar(shrinking, enabled=progress and len(order) > batch_size, desc=desc,
                                      total=len(starts)):
                pos = order[start:start + batch_size]
                out[pos] = forward(pos).float().cpu().numpy()
    finally:
        net.train(was_training)
    return out
