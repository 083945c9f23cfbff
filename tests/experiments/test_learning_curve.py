"""The learning-curve experiment (gfun.experiments.learning_curve) on a tiny sample of the bundled demo data."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.configuration import parse_configs
from gfun.experiments.learning_curve import run_learning_curve
from tests.experiments.settings import tiny

pytest.importorskip("matplotlib")


# ---------------------------------------------------------------------------- learning curve, aggregation
def test_learning_curve(tmp_path):
    res = run_learning_curve(tiny(), parse_configs("naive,x"), tmp_path, targets=["de"], fractions=[0, 50, 100])
    summ = res["summary"].set_index(["config", "fraction"])
    assert np.isnan(summ.loc[("naive", 0), "F1_macro"]) and np.isnan(summ.loc[("x", 0), "F1_macro"])
    assert not np.isnan(summ.loc[("x", 50), "F1_macro"])
    assert (tmp_path / "learning-curve-demo-de.png").stat().st_size > 0
    assert "target de" in (tmp_path / "learning-curve-demo.md").read_text()
    with pytest.raises(ValueError, match="no training documents"):
        run_learning_curve(tiny(), parse_configs("x"), tmp_path, targets=["sv"])
