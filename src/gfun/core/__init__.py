"""Machinery every part of gfun shares, independent of text classification.

:mod:`gfun.core.state` (fitted states as JSON-able metadata plus named arrays), :mod:`gfun.core.atomic` (files
replaced atomically), :mod:`gfun.core.parallel` (threads, processes or Dask without over-subscription),
:mod:`gfun.core.progress` (progress bars and log lines), :mod:`gfun.core.memory` (freed memory handed back to the
operating system) and :mod:`gfun.core.optional` (optional dependencies imported lazily, with install hints).
"""
