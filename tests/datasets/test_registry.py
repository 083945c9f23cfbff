"""The dataset registry (gfun.datasets.registry): names, aliases and the bundled demo dataset."""

from __future__ import annotations

import pytest

from gfun.datasets.registry import DATASETS, load_dataset, resolve_dataset_name


def test_registry_names() -> None:
    assert set(DATASETS) == {"debtags", "debtags-rare", "exceptius", "sib200", "jrc-acquis", "rcv1-rcv2", "demo"}
    assert resolve_dataset_name("JRC_Acquis") == "jrc-acquis"
    assert resolve_dataset_name("rcv") == "rcv1-rcv2"
    with pytest.raises(ValueError, match="known: debtags"):
        load_dataset("imdb")


def test_registry_demo() -> None:
    pytest.importorskip("gfun.datasets.demo")
    s = load_dataset("demo")
    assert s.name == "demo" and len(s.train) > 0 and len(s.test) > 0
    assert s.classes == s.train.classes
