"""Evaluation: the paper's measures, per language, their significance, and how they are printed.

:mod:`gfun.metrics.measures` (F1 and K, micro- and macro-averaged), :mod:`gfun.metrics.evaluation` (every measure per
language and averaged), :mod:`gfun.metrics.significance` (the paired t-test), :mod:`gfun.metrics.formatting`
(plain-text tables), :mod:`gfun.metrics.columns` (what their columns mean) and :mod:`gfun.metrics.scoring`
(``score`` = macro-F1, what model selection maximises).
"""
