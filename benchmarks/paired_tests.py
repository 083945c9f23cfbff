"""Paired two-tailed t-tests over runs between chosen pairs of configurations of an experiment.

Reads the ``-scores.csv`` an experiment writes (``run, config, lang, <measures>, setting``), averages each run's
scores over languages (the tables' ``average``), and prints a markdown table of ``A - B`` with its p-value
(:func:`gfun.metrics.significance.paired_ttest`) for each pair, per setting (many-shot, zero-shot)::

    python benchmarks/paired_tests.py results/many-shot-debtags-cpu/many-shot-debtags-scores.csv \
        --pairs xmb:b,xmb:bert,xm:x

A CSV without per-language rows (those of ``bench_pooled.py`` and ``bench_b_addup.py``) holds language averages
already. Names with ``:`` or ``,`` in them (``bench_pooled.py``'s ``xmp:aggregation__forms=both``) are given one
pair at a time: ``--pair "xmp:aggregation__forms=both" xmp``.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from gfun.metrics.measures import MEASURES
from gfun.metrics.significance import paired_ttest


def pair_table(scores: pd.DataFrame, pairs: list[tuple[str, str]]) -> str:
    """Markdown rows ``setting | A vs B | runs | ΔF1M (p) | ...`` for the pairs both measured on >= 2 runs."""
    per_language = "lang" in scores.columns and bool((scores.lang != "average").any())
    rows = scores[scores.lang != "average"] if per_language else scores
    avg = rows.groupby(["run", "config", "setting"], as_index=False)[list(MEASURES)].mean()
    head = "| setting | A vs B | runs | " + " | ".join(f"Δ{m} (p)" for m in MEASURES) + " |"
    lines = [head, "|" + "---|" * (3 + len(MEASURES))]
    for setting, s in avg.groupby("setting"):
        for a, b in pairs:
            A = s[s.config == a].set_index("run")[list(MEASURES)].dropna()
            B = s[s.config == b].set_index("run")[list(MEASURES)].dropna()
            runs = sorted(set(A.index) & set(B.index))
            if len(runs) < 2:
                continue
            cells = [f"{(A.loc[runs, m] - B.loc[runs, m]).mean():+.3f} "
                     f"({paired_ttest(A.loc[runs, m].to_numpy(), B.loc[runs, m].to_numpy()):.2g})" for m in MEASURES]
            lines.append(f"| {setting} | {a} vs {b} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scores", help="an experiment's -scores.csv, or a benchmark's CSV of language averages")
    ap.add_argument("--pairs", help="comma-separated A:B configuration names, e.g. xmb:b,xm:x")
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("A", "B"),
                    help="one pair A B (for names with ':' or ','); repeatable")
    args = ap.parse_args(argv)
    pairs = [tuple(p.split(":", 1)) for p in args.pairs.split(",")] if args.pairs else []
    if any(len(p) != 2 for p in pairs):
        ap.error(f"--pairs: expected A:B items, got {args.pairs!r}")
    pairs += [tuple(p) for p in args.pair]
    if not pairs:
        ap.error("give --pairs or --pair")
    sys.stdout.write(pair_table(pd.read_csv(args.scores), pairs) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
