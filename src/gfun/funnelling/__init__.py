"""Generalized Funnelling: the two-tier ensemble of view-generating functions and a meta-classifier.

:mod:`gfun.funnelling.generalized` (:class:`~gfun.funnelling.generalized.GeneralizedFunnelling`, whose ``fit``
reads top to bottom), :mod:`gfun.funnelling.branch` (a view's path to the meta level: view -> L2 -> z-score ->
mapper), :mod:`gfun.funnelling.aggregation` (the aggregation policies as objects, ``select``'s search with its
policy), :mod:`gfun.funnelling.meta` (how the meta-classifier is trained, which views it needs),
:mod:`gfun.funnelling.state` (the fitted state, written and rebuilt) and
:mod:`gfun.funnelling.view_spec` (the ``views`` parameter: names and parameters).

The names of the aggregation policies are defined here, so that the command line can list them without importing
the estimators.
"""

#: Every aggregation policy, by name.
AGGREGATIONS: tuple[str, ...] = ("mean", "concat", "stack", "wmean", "select")
#: The policy of ``GeneralizedFunnelling()``, ``gfun train`` and of configurations without a suffix.
DEFAULT_AGGREGATION = "select"
