"""The aggregation policies by name: what ``aggregation="<name>"`` builds.

Each policy class carries its name (:attr:`~gfun.funnelling.aggregation.Aggregation.name`); the names themselves are
listed once, in :data:`gfun.funnelling.AGGREGATIONS`, so that the command line lists them without importing the
estimators.
"""

from __future__ import annotations

from sklearn.base import clone

from gfun.funnelling import AGGREGATIONS
from gfun.funnelling.aggregation import Aggregation, Concat, Mean, Stack, WMean
from gfun.funnelling.select import Select

__all__ = ["POLICIES", "make_aggregation"]

#: Every aggregation policy class by its name, in the order of :data:`gfun.funnelling.AGGREGATIONS`.
POLICIES: dict[str, type[Aggregation]] = {
    name: next(cls for cls in (Mean, Concat, Stack, WMean, Select) if cls.name == name) for name in AGGREGATIONS}


def make_aggregation(aggregation: str | Aggregation) -> Aggregation:
    """An unfitted policy: a new one for a name, a clone of a policy object.

    Raises
    ------
    ValueError
        On an unknown name or object.
    """
    if isinstance(aggregation, Aggregation):
        return clone(aggregation)
    if isinstance(aggregation, str) and aggregation in POLICIES:
        return POLICIES[aggregation]()
    raise ValueError(f"aggregation must be one of {AGGREGATIONS} or an Aggregation object, got {aggregation!r}")
