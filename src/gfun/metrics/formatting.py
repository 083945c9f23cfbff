"""Plain-text rendering of results tables, and the short names of the measures in printed tables.

:func:`format_table` prints a table of :func:`gfun.metrics.evaluation.evaluate` (or any data frame) as aligned text, as
``gfun evaluate`` shows it; the paper-style tables of the experiments (mean ± std, significance marks, Markdown
and LaTeX) are :mod:`gfun.experiments.tables`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DISPLAY_NAMES", "count_noun", "format_table"]

DISPLAY_NAMES: dict[str, str] = {
    "F1_macro": "F1M",
    "F1_micro": "F1µ",
    "K_macro": "KM",
    "K_micro": "Kµ",
    "F1_macro_present": "F1M(present)",
    "unlabelled_flagged": "unlabelled",
}
"""Short names used in printed tables (the paper writes F1^M, F1^µ, K^M, K^µ); what each means:
:data:`gfun.metrics.columns.COLUMN_HELP`."""


def count_noun(n: int, noun: str) -> str:
    """``"1 run"``, ``"3 runs"``: a count with its noun, in the plural unless the count is one."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _fmt_cell(value: Any, floatfmt: str) -> str:
    if value is None or (isinstance(value, float | np.floating) and math.isnan(value)):
        return "-"
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return format(float(value), floatfmt)
    return str(value)


def format_table(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """Render a results table (for instance from :func:`evaluate`) as aligned plain text.

    Parameters
    ----------
    df : pandas.DataFrame
        Table to render; measure columns are headed by their :data:`DISPLAY_NAMES`.
    floatfmt : str, default ".3f"
        Format specification for float cells; NaN is shown as ``-``.

    Returns
    -------
    str
        Header line, a dashed rule, then one line per row (no trailing newline). The index
        is the first, left-aligned column; the other columns are right-aligned.
    """
    index_header = str(df.index.name) if df.index.name is not None else ""
    headers = [index_header] + [DISPLAY_NAMES.get(str(c), str(c)) for c in df.columns]
    body = [[str(idx)] + [_fmt_cell(v, floatfmt) for v in row]
            for idx, row in zip(df.index, df.itertuples(index=False, name=None), strict=True)]
    widths = [max(len(h), *(len(r[j]) for r in body)) if body else len(h) for j, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in body)
    return "\n".join(out)
