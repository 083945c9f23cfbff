"""The paper's experiments as resumable runs: many-shot tables, zero-shot grids, learning curves, aggregation.

See :mod:`gfun.experiments.many_shot`, :mod:`~gfun.experiments.zero_shot`,
:mod:`~gfun.experiments.learning_curve`, :mod:`~gfun.experiments.aggregation`; the command line is
``gfun experiment many-shot|zero-shot|learning-curve|aggregation|recurrent`` (:mod:`gfun.cli.experiment`);
:mod:`~gfun.experiments.recurrent` gives the recurrent-view tables (the paper's Tables 6-7). Support modules:
:mod:`~gfun.experiments.runner` (run settings, cell store, scoring), :mod:`~gfun.experiments.keys` (cell keys),
:mod:`~gfun.experiments.tables` (results tables with significance marks), :mod:`~gfun.experiments.plots` and
:mod:`~gfun.experiments.wce_plot` (figures).
"""
