"""The paper's experiments as resumable runs: many-shot tables, zero-shot grids, learning curves, aggregation.

See :mod:`gfun.experiments.many_shot`, :mod:`~gfun.experiments.zero_shot`,
:mod:`~gfun.experiments.learning_curve`, :mod:`~gfun.experiments.aggregation`; the command line is
``gfun experiment many-shot|zero-shot|learning-curve|aggregation`` (:mod:`gfun.experiments.cli`).
"""

from gfun.experiments.aggregation import run_aggregation
from gfun.experiments.configs import Config, parse_configs
from gfun.experiments.learning_curve import run_learning_curve
from gfun.experiments.many_shot import run_many_shot
from gfun.experiments.runner import CellStore, ExperimentSettings
from gfun.experiments.zero_shot import run_zero_shot

__all__ = ["CellStore", "Config", "ExperimentSettings", "parse_configs", "run_aggregation", "run_learning_curve",
           "run_many_shot", "run_zero_shot"]
