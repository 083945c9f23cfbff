"""Figures of the experiments (matplotlib, imported lazily; Agg canvases, no pyplot).

Pure functions of result frames, each writing a PNG to ``savepath`` when given and returning the
:class:`matplotlib.figure.Figure`:

* :func:`zero_shot_heatmaps`: Fun, gFun and gFun − Fun grids (rows: iterations, columns: target
  languages; the paper's Figures 5-6);
* :func:`averages_by_training_languages`: means over many-shot and zero-shot cells by number of training
  languages (Figure 7);
* :func:`learning_curves`: a measure against the share of the target language's training documents
  (Figure 8);
* :func:`relative_improvement_bars`: per-language relative improvement over Naive (Figure 4).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from gfun.experiments.wce_plot import _new_figure, _save_figure

__all__ = ["averages_by_training_languages", "learning_curves", "relative_improvement_bars", "zero_shot_heatmaps"]

logger = logging.getLogger(__name__)

_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _save(fig: Any, savepath: str | os.PathLike | None, dpi: int, what: str) -> None:
    if savepath is not None:
        _save_figure(fig, savepath, dpi)
        logger.info("%s written to %s", what, savepath)


def _heatmap(fig: Any, ax: Any, grid: pd.DataFrame, *, cmap: str, vmin: float, vmax: float, title: str,
             many_shot: np.ndarray | None, cbar_label: str) -> None:
    values = grid.to_numpy(dtype=float)
    masked = np.ma.masked_invalid(values)
    import matplotlib

    cm = matplotlib.colormaps[cmap].with_extremes(bad="#d9d9d9")
    image = ax.imshow(masked, cmap=cm, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(values.shape[1]), labels=[str(c) for c in grid.columns])
    ax.set_yticks(np.arange(values.shape[0]), labels=[str(i) for i in grid.index])
    ax.set_xlabel("target language")
    ax.set_ylabel("training languages (added in order)")
    ax.set_title(title)
    small = values.shape[0] * values.shape[1] <= 200
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = values[i, j]
            if many_shot is not None and many_shot[i, j]:
                ax.add_patch(_rect(j, i))
            if small:
                text = "n/a" if np.isnan(v) else f"{v:.2f}"
                shade = 0.5 if np.isnan(v) else (v - vmin) / (vmax - vmin or 1)
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="dimgray" if np.isnan(v) else
                        "white" if cmap == "viridis" and shade < 0.55 else "black")
    bar = fig.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label(cbar_label)


def _rect(j: int, i: int) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.2)


def zero_shot_heatmaps(fun: pd.DataFrame, gfun: pd.DataFrame, savepath: str | os.PathLike | None = None, *,
                       measure: str = "F1M", names: tuple[str, str] = ("Fun", "gFun"),
                       many_shot: np.ndarray | None = None, title: str | None = None, dpi: int = 150) -> Any:
    """Three heat maps side by side: ``fun``, ``gfun`` and their difference ``gfun - fun``.

    Parameters
    ----------
    fun, gfun : pandas.DataFrame
        Grids of the same shape: one row per iteration (index: a label such as ``"1: +da"``), one column
        per target language; NaN for cells a method cannot serve (drawn grey, written ``n/a``).
    savepath : path-like, optional
    measure : str
        Measure name for the colour bars.
    names : (str, str)
        Names of the two methods.
    many_shot : bool array of the grids' shape, optional
        Cells whose target language is among the training languages (outlined).
    title : str, optional
    dpi : int

    Returns
    -------
    matplotlib.figure.Figure
    """
    if fun.shape != gfun.shape:
        raise ValueError(f"grids of different shapes: {fun.shape} and {gfun.shape}")
    gfun = gfun.loc[fun.index, fun.columns]
    diff = gfun - fun
    n_rows, n_cols = fun.shape
    width = 3 * max(3.2, 1.2 + 0.55 * n_cols) + 1.0
    height = max(3.0, 1.6 + 0.42 * n_rows)
    fig = _new_figure((width, height))
    axes = fig.subplots(1, 3)
    both = np.concatenate([fun.to_numpy(float).ravel(), gfun.to_numpy(float).ravel()])
    lo = float(np.nanmin(both)) if np.isfinite(both).any() else 0.0
    hi = float(np.nanmax(both)) if np.isfinite(both).any() else 1.0
    lo, hi = min(lo, 0.0) if lo < 0 else lo, hi if hi > lo else lo + 1e-6
    _heatmap(fig, axes[0], fun, cmap="viridis", vmin=lo, vmax=hi, title=names[0], many_shot=many_shot,
             cbar_label=measure)
    _heatmap(fig, axes[1], gfun, cmap="viridis", vmin=lo, vmax=hi, title=names[1], many_shot=many_shot,
             cbar_label=measure)
    d = diff.to_numpy(float)
    span = float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else 1.0
    _heatmap(fig, axes[2], diff, cmap="RdBu", vmin=-(span or 1e-6), vmax=span or 1e-6,
             title=f"{names[1]} − {names[0]}", many_shot=many_shot, cbar_label=f"Δ {measure}")
    for ax in axes[1:]:
        ax.set_ylabel("")
    if title:
        fig.suptitle(title)
    _save(fig, savepath, dpi, "zero-shot heat maps")
    return fig


def averages_by_training_languages(frame: pd.DataFrame, savepath: str | os.PathLike | None = None, *,
                                   measure: str = "F1M", title: str | None = None, dpi: int = 150) -> Any:
    """Mean score by number of training languages, many-shot and zero-shot cells apart (Figure 7).

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``method``, ``setting`` (``"many-shot"`` or ``"zero-shot"``), ``n_languages`` and ``value``.
    """
    fig = _new_figure((6.4, 4.2))
    ax = fig.add_subplot()
    methods = list(dict.fromkeys(frame["method"]))
    for k, method in enumerate(methods):
        for setting, style in (("many-shot", "-"), ("zero-shot", "--")):
            sub = frame[(frame["method"] == method) & (frame["setting"] == setting)].dropna(subset=["value"])
            if sub.empty:
                continue
            sub = sub.sort_values("n_languages")
            ax.plot(sub["n_languages"], sub["value"], linestyle=style, marker=_MARKERS[k % len(_MARKERS)],
                    color=f"C{k}", label=f"{method} ({setting})")
    ax.set_xlabel("number of training languages")
    ax.set_ylabel(measure)
    ns = sorted(frame["n_languages"].unique())
    ax.set_xticks(ns)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or f"{measure} by number of training languages")
    _save(fig, savepath, dpi, "averages by number of training languages")
    return fig


def learning_curves(frame: pd.DataFrame, savepath: str | os.PathLike | None = None, *,
                    measures: Sequence[str] | None = None, title: str | None = None, dpi: int = 150) -> Any:
    """A measure against the percentage of the target language's training documents, one line per method.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``method``, ``fraction`` (percent) and one column per measure (display names), plus
        optional ``<measure>_std`` columns drawn as bands.
    measures : sequence of str, optional
        Columns to draw, one panel each (default: every non-key, non-std column).
    """
    if measures is None:
        measures = [c for c in frame.columns if c not in ("method", "fraction") and not c.endswith("_std")]
    ncols = min(2, len(measures))
    nrows = -(-len(measures) // ncols)
    fig = _new_figure((4.6 * ncols, 3.4 * nrows))
    axes = np.atleast_1d(fig.subplots(nrows, ncols)).ravel()
    for ax in axes[len(measures):]:
        ax.set_visible(False)
    axes = axes[:len(measures)]
    methods = list(dict.fromkeys(frame["method"]))
    for ax, measure in zip(axes, measures, strict=True):
        for k, method in enumerate(methods):
            sub = frame[frame["method"] == method].sort_values("fraction")
            ax.plot(sub["fraction"], sub[measure], marker=_MARKERS[k % len(_MARKERS)], color=f"C{k}", label=method)
            if f"{measure}_std" in sub:
                ax.fill_between(sub["fraction"], sub[measure] - sub[f"{measure}_std"],
                                sub[measure] + sub[f"{measure}_std"], color=f"C{k}", alpha=0.15)
        ax.set_xlabel("% of the target language's training documents")
        ax.set_ylabel(measure)
        ax.set_xticks(sorted(frame["fraction"].unique()))
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    _save(fig, savepath, dpi, "learning curves")
    return fig


def relative_improvement_bars(frame: pd.DataFrame, savepath: str | os.PathLike | None = None, *,
                              measure: str = "F1M", title: str | None = None, dpi: int = 150) -> Any:
    """Grouped bars of relative improvement (%) over Naive: languages on the x axis, one bar per method.

    Parameters
    ----------
    frame : pandas.DataFrame
        Index: languages (e.g. with an ``average`` row); columns: methods; values: percent.
    """
    langs = [str(i) for i in frame.index]
    methods = list(frame.columns)
    fig = _new_figure((max(5.0, 1.0 + 0.25 * len(langs) * max(len(methods), 2)), 4.0))
    ax = fig.add_subplot()
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(langs))
    for k, method in enumerate(methods):
        ax.bar(x - 0.4 + width * (k + 0.5), frame[method].to_numpy(float), width, label=str(method), color=f"C{k}")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, labels=langs)
    ax.set_xlabel("language")
    ax.set_ylabel(f"relative improvement in {measure} over Naive (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or f"Relative improvement over Naive ({measure})")
    _save(fig, savepath, dpi, "relative improvement bars")
    return fig
