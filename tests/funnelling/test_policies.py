"""gfun.funnelling.policies: the aggregation policies by name, from the one list of names."""

from __future__ import annotations

import pytest

from gfun.funnelling import AGGREGATIONS, DEFAULT_AGGREGATION
from gfun.funnelling.aggregation import Mean, WMean
from gfun.funnelling.policies import POLICIES, make_aggregation
from gfun.funnelling.select import Select


def test_every_name_has_its_policy_in_order() -> None:
    assert tuple(POLICIES) == AGGREGATIONS and DEFAULT_AGGREGATION in POLICIES
    assert all(cls.name == name for name, cls in POLICIES.items())
    assert POLICIES["select"] is Select and POLICIES["wmean"] is WMean


def test_make_aggregation_builds_or_clones() -> None:
    assert isinstance(make_aggregation("mean"), Mean)
    given = Select(cv=4)
    made = make_aggregation(given)
    assert made is not given and made.cv == 4
    for bad in ("median", 3):
        with pytest.raises(ValueError, match="aggregation must be one of"):
            make_aggregation(bad)
