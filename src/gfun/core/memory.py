"""Give the memory a phase of the fit has freed back to the operating system.

glibc's ``malloc`` keeps freed blocks of its heap for later reuse instead of returning them: the transient
tensors of a transformer's forward and backward passes (tens of MB each, below glibc's dynamic mmap threshold)
leave the heap of a B view fit holding memory that no live object uses, pinned by small long-lived blocks
allocated in between. The next phase (the kernel SVMs' Gram matrices, allocated with ``mmap``) cannot reuse it,
so it stays in the resident set until the process ends. :func:`release_free_memory`
returns such free pages (``malloc_trim``) at the end of each heavy phase; it costs milliseconds.

During fine-tuning itself the heap grows the same way, epoch after epoch: batches of different lengths free and
allocate tensors of every size between 1 and 32 MB (glibc's dynamic mmap threshold rises to the largest block
freed so far, so all of them end up in the heap). :func:`large_blocks_mapped` maps every block from 1 MB up
with ``mmap`` while it is active, so that a freed tensor goes back to the system at once: an epoch's peak
memory drops markedly, at the price of a slower epoch (the pages of each new block are zeroed by the kernel).

A pass over documents in batches sorted longest first (the frozen pass of a transformer, the extraction of its
vectors) allocates the largest blocks first, and every later batch fits in what the first freed. There
:func:`freed_blocks_reused` keeps every freed block in the heap for reuse: no block is mapped and unmapped again
(the kernel's zeroing of fresh pages is a quarter of such a pass's time) and the resident set stays at the first
batch's; the free memory goes back to the system at the end of the block, and along the way each time the
batches have halved (:func:`released_as_they_shrink`), so that what the first batch needed is not held to the end.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["freed_blocks_reused", "large_blocks_mapped", "release_free_memory", "released_as_they_shrink"]

#: ``mallopt`` parameter numbers of the mmap and trim thresholds (glibc's ``malloc.h``).
_M_MMAP_THRESHOLD = -3
_M_TRIM_THRESHOLD = -1
#: glibc's largest dynamic mmap threshold on 64-bit systems, set back when :func:`large_blocks_mapped` exits.
_DYNAMIC_MAX = 32 * 1024 * 1024
#: The trim threshold glibc pairs with it (twice the mmap threshold).
_DYNAMIC_TRIM = 2 * _DYNAMIC_MAX
#: The largest value ``mallopt`` takes for either threshold (an ``int``): every block then comes from the heap.
_NEVER = 2**31 - 1

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


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, or ``None`` on another C library or platform."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


@contextlib.contextmanager
def large_blocks_mapped(threshold: int = 1 << 20) -> Iterator[bool]:
    """Within the block, allocate every C heap block of ``threshold`` bytes or more with ``mmap``.

    Yields whether this is in effect (glibc only). On exit the threshold is set to glibc's dynamic maximum
    (32 MB), which is where it stands in a process that has freed a large block. Numerics are unchanged: only
    where the memory comes from.
    """
    mallopt = _mallopt()
    if mallopt is None or not mallopt(_M_MMAP_THRESHOLD, int(threshold)):
        yield False
        return
    try:
        yield True
    finally:
        mallopt(_M_MMAP_THRESHOLD, _DYNAMIC_MAX)


@contextlib.contextmanager
def freed_blocks_reused() -> Iterator[bool]:
    """Within the block, keep every freed C heap block for reuse: none is mapped with ``mmap`` or trimmed.

    For passes over batches sorted longest first, whose later batches fit in the memory the first one freed: their
    tensors reuse it instead of faulting in fresh pages. Yields whether this is in effect (glibc only). On exit
    the thresholds are set to the values glibc settles on by itself (32 MB, 64 MB) and the free memory is returned
    to the system (:func:`release_free_memory`). Numerics are unchanged: only where the memory comes from.
    """
    mallopt = _mallopt()
    if mallopt is None or not mallopt(_M_MMAP_THRESHOLD, _NEVER):
        yield False
        return
    try:
        mallopt(_M_TRIM_THRESHOLD, _NEVER)
        yield True
    finally:
        mallopt(_M_MMAP_THRESHOLD, _DYNAMIC_MAX)
        mallopt(_M_TRIM_THRESHOLD, _DYNAMIC_TRIM)
        release_free_memory()


def released_as_they_shrink(items: Iterable[T], size: Callable[[T], float]) -> Iterator[T]:
    """Yield ``items`` (batches, largest first), returning the free heap to the system before each one whose
    ``size`` is at most half the size at the last return: the memory the large batches freed is not held through
    the small ones (with :func:`freed_blocks_reused`, a few returns instead of fresh pages for every batch)."""
    mark = None
    for item in items:
        width = size(item)
        if mark is None:
            mark = width
        elif width <= mark / 2:
            release_free_memory()
            mark = width
        yield item
