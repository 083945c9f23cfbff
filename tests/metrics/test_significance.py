"""The paired t-test (gfun.metrics.significance) on known values and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gfun.metrics.significance import paired_ttest


def test_paired_ttest_known_value() -> None:
    # differences d = [1, 3]: mean 2, sd sqrt(2), se sqrt(2)/sqrt(2) = 1 -> t = 2 with 1 df.
    # Student's t with 1 df is Cauchy: two-tailed p = 1 - (2/pi) * arctan(2) = 0.2951672...
    p = paired_ttest([1.0, 3.0], [0.0, 0.0])
    assert p == pytest.approx(1 - 2 / math.pi * math.atan(2))
    assert paired_ttest([0.0, 0.0], [1.0, 3.0]) == pytest.approx(p)  # two-tailed: symmetric


def test_paired_ttest_edge_cases() -> None:
    assert paired_ttest([0.5, 0.6, 0.7], [0.5, 0.6, 0.7]) == 1.0  # all differences zero
    assert paired_ttest([0.5, 0.6], [0.5 + 1e-15, 0.6]) == 1.0  # float noise counts as zero
    assert paired_ttest([0.6, 0.7, 0.8], [0.5, 0.6, 0.7]) == 0.0  # constant non-zero difference
    with pytest.raises(ValueError, match="at least 2"):
        paired_ttest([0.5], [0.4])
    with pytest.raises(ValueError, match="at least 2"):
        paired_ttest([], [])
    with pytest.raises(ValueError, match="same number"):
        paired_ttest([0.5, 0.6], [0.5, 0.6, 0.7])
    with pytest.raises(ValueError, match="finite"):
        paired_ttest([0.5, np.nan], [0.5, 0.6])
    with pytest.raises(ValueError, match="1-D"):
        paired_ttest([[0.5, 0.6]], [[0.5, 0.6]])


def test_paired_ttest_range() -> None:
    p = paired_ttest([0.41, 0.43, 0.40, 0.45], [0.40, 0.44, 0.38, 0.41])
    assert 0.0 < p < 1.0
