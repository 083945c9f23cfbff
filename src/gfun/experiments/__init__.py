"""The paper's experiments as resumable runs: many-shot tables, zero-shot grids, learning curves, aggregation.

See :mod:`gfun.experiments.many_shot`, :mod:`~gfun.experiments.zero_shot`,
:mod:`~gfun.experiments.learning_curve`, :mod:`~gfun.experiments.aggregation`; the command line is
``gfun experiment many-shot|zero-shot|learning-curve|aggregation|recurrent`` (:mod:`gfun.experiments.cli`);
:mod:`~gfun.experiments.recurrent` gives the recurrent-view tables (the paper's Tables 6-7).
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use, so that ``gfun --help`` (which registers ``gfun experiment``) stays fast.
_LAZY = {
    "run_aggregation": "gfun.experiments.aggregation",
    "Config": "gfun.configuration",
    "parse_configs": "gfun.configuration",
    "run_learning_curve": "gfun.experiments.learning_curve",
    "run_many_shot": "gfun.experiments.many_shot",
    "run_recurrent": "gfun.experiments.recurrent",
    "CellStore": "gfun.experiments.runner",
    "ExperimentSettings": "gfun.experiments.runner",
    "run_zero_shot": "gfun.experiments.zero_shot",
}

__all__ = ["CellStore", "Config", "ExperimentSettings", "parse_configs", "run_aggregation", "run_learning_curve",
           "run_many_shot", "run_recurrent", "run_zero_shot"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gfun.experiments' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
