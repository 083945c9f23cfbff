"""The ``gfun`` command line.

:mod:`gfun.cli.main` (the entry point: train, predict, evaluate, info, serve, ...), :mod:`gfun.cli.options` (options
shared by the commands), :mod:`gfun.cli.output` (where ``gfun predict`` writes), :mod:`gfun.cli.demo`,
:mod:`gfun.cli.datasets`, :mod:`gfun.cli.embeddings`, :mod:`gfun.cli.experiment` and :mod:`gfun.cli.plot` (one
sub-command each).
"""
