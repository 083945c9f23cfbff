"""Recurrent-view experiment (the paper's Tables 6-7): gFun configurations with the R view, R_M and R_MW.

Section 5.2 of the paper runs, many-shot, the configurations with the recurrent view: GRU over aligned word
vectors only (R_M) or over word vectors concatenated with word-class embeddings (R_MW), alone and with the other
views (gFun-R_M, -R_MW, -BR_M, -BR_MW, -XR_MW, -XBR_M, -XBR_MW; :data:`RECURRENT_CONFIGS`), and tests each row
against the best result of the many-shot tables (Tables 3-4). Here the *reference* configurations (by default
``xm``, the best many-shot configuration) are run in the same experiment, on the same runs, and the
daggers of the table compare every row with the best row, reference included.

The R view is trained with the preset of its device unless ``view_params["r"]`` names another: ``cpu`` without
CUDA (a GRU of 256 units, batches of 32 at lr 2e-3, up to 30 epochs, patience 5, see :mod:`gfun.views.recurrent`),
the paper's settings on a GPU. Every other parameter of the view (``hidden_size``, ``max_epochs``...) can be set
in ``view_params["r"]`` (CLI: ``--view-param r.hidden_size=64``).

Outputs: those of :func:`gfun.experiments.many_shot.run_many_shot` with the stem ``recurrent-<dataset>`` and the
cells under ``cells/recurrent/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gfun.configuration import Config, parse_configs
from gfun.experiments.many_shot import run_many_shot
from gfun.experiments.runner import ExperimentSettings

__all__ = ["RECURRENT_CONFIGS", "run_recurrent"]

#: The rows of the paper's Tables 6-7, in the paper's order.
RECURRENT_CONFIGS: tuple[str, ...] = ("r_m", "r_mw", "br_m", "br_mw", "xr_mw", "xbr_m", "xbr_mw")


def run_recurrent(settings: ExperimentSettings, configs: Sequence[Config], out: str | Path, *,
                  reference: str | Sequence[str] | None = ("xm",), plots: bool = True) -> dict[str, Any]:
    """Run (or resume) the recurrent-view experiment and write its tables.

    Parameters
    ----------
    settings : ExperimentSettings
    configs : sequence of Config
        Configurations with the R view (e.g. ``parse_configs(RECURRENT_CONFIGS)``).
    out : path
    reference : str or sequence of str, optional
        Configurations of the many-shot tables run alongside (comma-separated or a sequence); ``None`` or
        ``""``: none.
    plots : bool

    Returns
    -------
    dict
        As :func:`~gfun.experiments.many_shot.run_many_shot`.

    Raises
    ------
    ValueError
        When a configuration of ``configs`` has no R view.
    """
    without = [c.name for c in configs if "r" not in c.views]
    if without:
        raise ValueError(f"the recurrent experiment runs configurations with the R view (e.g. "
                         f"{', '.join(RECURRENT_CONFIGS)}); {', '.join(without)} have none: give them as --reference")
    refs = parse_configs(reference) if reference else []
    names = {c.name for c in configs}
    rows = list(configs) + [c for c in refs if c.name not in names]
    return run_many_shot(settings, rows, out, plots=plots, experiment="recurrent",
                         title="Recurrent-view results (the paper's Tables 6-7)")
