"""Normalisation steps of section 3.6: L2 rows and column z-scoring with training statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ZScore", "l2_normalize"]


def l2_normalize(Z: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32); an all-zero row stays zero (never NaN).

    Each row is first divided by its largest absolute value, so that squaring cannot overflow or
    underflow: rows of very large or very small (but finite, non-zero) values still get unit norm.

    Raises
    ------
    ValueError
        When ``Z`` holds NaN or infinite values (a bug upstream, never hidden by normalising).
    """
    Z = np.asarray(Z)
    if not np.issubdtype(Z.dtype, np.floating):
        Z = Z.astype(np.float64)
    peak = np.abs(Z).max(axis=1, initial=0.0, keepdims=True)
    if not np.isfinite(peak).all():
        bad = np.flatnonzero(~np.isfinite(peak[:, 0]))
        raise ValueError(f"cannot L2-normalise rows with NaN or infinite values ({len(bad)} row(s), e.g. row "
                         f"{bad[0]})")
    scaled = np.divide(Z, peak, out=np.zeros(Z.shape, dtype=np.float32), where=peak > 0, casting="unsafe")
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    return np.divide(scaled, norms, out=scaled, where=norms > 0)


@dataclass
class ZScore:
    """Column standardisation ``(z - mean) / scale`` with statistics of the training data.

    A constant column (spread below 1e-12 of its magnitude) gets scale 1, so it becomes 0 and the output
    is never NaN; NaN or infinite
    input is refused with a ValueError.
    """

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, Z: np.ndarray) -> ZScore:
        Z = _finite(Z)
        mean = Z.mean(axis=0)
        std = Z.std(axis=0)
        # relative to the magnitude: the rounding error of the mean of a constant column of large values
        # would otherwise pass for a spread, and the column would become +-1 instead of 0
        return cls(mean, np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std, 1.0))

    def transform(self, Z: np.ndarray) -> np.ndarray:
        return ((_finite(Z) - self.mean) / self.scale).astype(np.float32)


def _finite(Z: np.ndarray) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if not np.isfinite(Z).all():
        rows = np.flatnonzero(~np.isfinite(Z).all(axis=tuple(range(1, Z.ndim))))
        raise ValueError(f"cannot z-score NaN or infinite values ({len(rows)} row(s), e.g. row {rows[0]})")
    return Z
