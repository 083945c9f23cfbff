"""Give the memory a phase of the fit has freed back to the operating system.

glibc's ``malloc`` keeps freed blocks of its heap for later reuse instead of returning them: the transient
tensors of a transformer's forward and backward passes (tens of MB each, below glibc's dynamic mmap threshold)
leave the heap of a B view fit on debtags run 0 holding ~1 GB that no live object uses, pinned by small
long-lived blocks allocated in between. The next phase (the kernel SVMs' Gram matrices, allocated with
``mmap``) cannot reuse it, so it stays in the resident set until the process ends. :func:`release_free_memory`
returns such free pages (``malloc_trim``) at the end of each heavy phase; it costs milliseconds.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from collections.abc import Callable

__all__ = ["release_free_memory"]

logger = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` on another C library or platform."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # musl, or no symbol table to look into
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the free pages of the C heap to the operating system; ``False`` where this is not possible.

    Only memory no object uses any more is released: nothing changes but the resident set.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    released = bool(trim(0))
    logger.debug("malloc_trim: %s", "memory returned to the system" if released else "nothing to return")
    return True
