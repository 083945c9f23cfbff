"""Normalisation steps of section 3.6: L2 rows and column z-scoring with training statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ZScore", "l2_normalize"]


def l2_normalize(Z: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm; an all-zero row stays zero (never NaN)."""
    Z = np.asarray(Z, dtype=np.float32)
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return np.divide(Z, norms, out=np.zeros_like(Z), where=norms > 0)


@dataclass
class ZScore:
    """Column standardisation ``(z - mean) / scale`` with statistics of the training data.

    A constant column gets scale 1 (it becomes 0), so the output is never NaN.
    """

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, Z: np.ndarray) -> ZScore:
        Z = np.asarray(Z, dtype=np.float64)
        mean = Z.mean(axis=0)
        std = Z.std(axis=0)
        return cls(mean, np.where(std > 1e-12, std, 1.0))

    def transform(self, Z: np.ndarray) -> np.ndarray:
        return ((np.asarray(Z, dtype=np.float64) - self.mean) / self.scale).astype(np.float32)
