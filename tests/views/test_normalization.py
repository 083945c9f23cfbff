"""Normalisation of views: L2 rows and column z-scoring with training statistics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gfun.views.normalization import ZScore, l2_normalize

_values = st.one_of(st.just(0.0), st.floats(1e-3, 1e3), st.floats(-1e3, -1e-3))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 6)), elements=_values))
def test_l2_rows_unit_norm_zero_rows_zero(Z: np.ndarray) -> None:
    out = l2_normalize(Z)
    assert out.dtype == np.float32 and out.shape == Z.shape
    assert np.isfinite(out).all()
    zero = ~Z.any(axis=1)
    assert not out[zero].any()
    np.testing.assert_allclose(np.linalg.norm(out[~zero], axis=1), 1.0, rtol=1e-5)
    # same direction: the row is a positive multiple of the input
    nz = ~zero
    np.testing.assert_allclose(out[nz] * np.linalg.norm(Z[nz], axis=1, keepdims=True), Z[nz], rtol=1e-4, atol=1e-3)


def test_l2_does_not_modify_its_input_and_handles_an_all_zero_matrix() -> None:
    Z = np.array([[3.0, 4.0], [0.0, 0.0]])
    out = l2_normalize(Z)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert Z.tolist() == [[3.0, 4.0], [0.0, 0.0]]
    np.testing.assert_array_equal(l2_normalize(np.zeros((3, 4))), np.zeros((3, 4)))


def test_zscore_uses_training_statistics() -> None:
    rng = np.random.RandomState(0)
    train = rng.randn(50, 4) * [1.0, 10.0, 0.1, 3.0] + [0.0, 5.0, -2.0, 1.0]
    test = rng.randn(20, 4)
    sc = ZScore.fit(train)
    out = sc.transform(train)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.std(axis=0), 1.0, rtol=1e-5)
    np.testing.assert_allclose(sc.transform(test), (test - train.mean(axis=0)) / train.std(axis=0), rtol=1e-5,
                               atol=1e-5)


def test_zscore_constant_columns_become_zero_without_nan() -> None:
    train = np.array([[1.0, 7.0, 0.0], [2.0, 7.0, 0.0], [3.0, 7.0, 0.0]])
    sc = ZScore.fit(train)
    out = sc.transform(train)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out[:, 1:], 0.0)
    assert sc.scale[1] == 1.0 and sc.scale[2] == 1.0
    # on new data a constant column is only centred
    np.testing.assert_allclose(sc.transform(np.array([[2.0, 9.0, -1.0]])), [[0.0, 2.0, -1.0]])
    single = ZScore.fit(np.array([[5.0, -3.0]]))
    np.testing.assert_array_equal(single.transform(np.array([[5.0, -3.0]])), [[0.0, 0.0]])


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 10), st.integers(1, 5)), elements=_values))
def test_zscore_never_nan(Z: np.ndarray) -> None:
    out = ZScore.fit(Z).transform(Z)
    assert np.isfinite(out).all()
    assert np.abs(out).max() <= np.sqrt(Z.shape[0]) + 1e-3  # |z| <= sqrt(n) for population statistics


# ------------------------------------------------------------------------------------------------ normalisation
_wide = st.one_of(st.just(0.0), st.floats(1e-30, 1e30), st.floats(-1e30, -1e-30))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)), elements=_wide),
       st.floats(1e-6, 1e6))
def test_l2_unit_norm_and_scale_invariant_at_any_magnitude(Z: np.ndarray, c: float) -> None:
    """Rows of huge or tiny values still get unit norm (no overflow to inf, no underflow to zero)."""
    out = l2_normalize(Z)
    assert out.dtype == np.float32 and np.isfinite(out).all()
    zero = ~Z.any(axis=1)
    assert not out[zero].any()
    np.testing.assert_allclose(np.linalg.norm(out[~zero], axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(l2_normalize(Z * c), out, atol=1e-6)
    np.testing.assert_allclose(l2_normalize(out), out, atol=1e-6)  # idempotent


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 4)),
              elements=st.floats(-1e6, 1e6, allow_subnormal=False)), st.randoms(use_true_random=False))
def test_zscore_standardises_training_columns_and_ignores_row_order(Z: np.ndarray, rnd) -> None:
    sc = ZScore.fit(Z)
    out = sc.transform(Z)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-3)
    std = out.std(axis=0)
    assert np.all((np.abs(std - 1.0) < 1e-3) | (std < 1e-3))  # 1, or 0 for a (numerically) constant column
    perm = list(range(len(Z)))
    rnd.shuffle(perm)
    sc2 = ZScore.fit(Z[perm])
    np.testing.assert_allclose(sc2.mean, sc.mean, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(sc2.scale, sc.scale, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_normalisation_refuses_non_finite_values(bad: float) -> None:
    """A NaN view is a bug upstream: refused with the row, never turned into zeros or propagated."""
    Z = np.ones((3, 2))
    Z[1, 0] = bad
    with pytest.raises(ValueError, match="row 1"):
        l2_normalize(Z)
    with pytest.raises(ValueError, match="row 1"):
        ZScore.fit(Z)
    with pytest.raises(ValueError, match="row 1"):
        ZScore.fit(np.ones((3, 2))).transform(Z)
