"""The memory budget of the kernel SVMs: sizes such as ``"2GB"`` read, and the peak memory of the exact path.

:class:`gfun.svm.kernel.RBFSVMOvR` is exact while :func:`exact_memory` fits in its ``max_memory``
(:func:`parse_memory`), and approximate beyond it.
"""

from __future__ import annotations

import numbers
import re

__all__ = ["DEFAULT_MAX_MEMORY", "LIBSVM_CACHE_MB", "exact_memory", "parse_memory"]

#: Default memory budget of one exact kernel SVM: what a small machine can give the meta-classifier besides the rest
#: of a fit (the exact path up to about 14,000 training vectors).
DEFAULT_MAX_MEMORY = "2GB"
#: Cache of libsvm per binary problem (MB) on a precomputed kernel.
LIBSVM_CACHE_MB = 200.0
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "M": 2**20, "MB": 2**20, "G": 2**30, "GB": 2**30, "T": 2**40,
          "TB": 2**40}


def parse_memory(value: int | float | str) -> float:
    """Bytes of a memory size: a number of bytes, or a string such as ``"2GB"``, ``"512M"`` (powers of 1024)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value <= 0:
            raise ValueError(f"memory size must be positive, got {value!r}")
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?B?)\s*", value.upper())
        if m and float(m.group(1)) > 0:
            return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError(f"memory size must be a positive number of bytes or a string like '2GB', got {value!r}")


def exact_memory(n_samples: int, n_classes: int, n_grid: int = 1, n_jobs: int | None = 1) -> float:
    """Bytes the exact path of :class:`gfun.svm.kernel.RBFSVMOvR` holds at its peak for ``n_samples`` training vectors.

    The Gram matrix of the final fit (``8 n^2``: larger than a fold's blocks, ``8 n^2 (1 - 1/cv)``), the
    out-of-fold scores of every C (``8 n_grid n n_classes``) and libsvm's kernel cache in each thread.
    """
    threads = max(1, n_jobs if n_jobs is not None and n_jobs > 0 else 1)
    return 8.0 * n_samples * n_samples + 8.0 * n_grid * n_samples * n_classes + threads * LIBSVM_CACHE_MB * 2**20
