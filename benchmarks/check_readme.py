"""Check that the numbers of README.md and docs/benchmarks.md reproduce: rerun the command behind each and diff.

Checks (the document and section, then the command rerun):

* the ``make demo`` table (Naive, Pooled, Fun, gFun-X, gFun-XP), by ``gfun demo --n-jobs 1`` (about 10 s);
* with ``--full``, also its ``(make demo-full)`` rows (gFun-XW, gFun-XMW, gFun-XMP), by
  ``gfun demo --full --n-jobs 1`` (needs ``gfun[torch]``; about a minute once the encoder is converted);
* docs/benchmarks.md's "Unknown labels on the demo" figures: gFun-X trained on the 20 most frequent of the 30
  demo tags, evaluated on the demo test set with ``gfun evaluate --unknown-labels ignore`` and ``count`` (a few
  seconds).

Scores must match to the 3 decimals the README prints (the runs are deterministic); fit times depend on the
machine and are reported, not compared. Exit status 1 with a unified diff (README lines ``-``, reproduced lines
``+``) when something does not reproduce; ``--write`` puts the reproduced demo rows (fit times included) into the
README instead.

Usage::

    python benchmarks/check_readme.py [--full] [--write] [--readme README.md] [--figures docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[1] / "README.md"
#: The document holding the unknown-labels figures.
FIGURES = README.parent / "docs" / "benchmarks.md"
MEASURES = ("F1_macro", "F1_micro", "K_macro", "K_micro")
#: A row of the demo table: ``gFun-X    0.361  0.495  0.387  0.500   0.855      (make demo-full)``.
ROW = re.compile(r"^(?P<name>\S+)\s+(?P<scores>(?:\d\.\d{3}\s+){4})(?P<fit>\d+\.\d{3})"
                 r"(?P<tail>\s+\(make demo-full\))?$")
#: docs/benchmarks.md's sentence: ``... reads F1M .444 / KM .409 ignoring the 186 unknown occurrences, .309 /
#: .286 counting them``.
UNKNOWN = re.compile(r"F1M (\.\d{3}) / KM (\.\d{3}) ignoring the (\d+) unknown occurrences, "
                     r"(-?\.\d{3}) / (-?\.\d{3}) counting them")


def demo_rows(text: str) -> dict[str, dict[str, Any]]:
    """The README's demo table: method -> {"scores": [4 strings], "fit": str, "line": str, "full": bool}."""
    block = text.split("prints a table like:", 1)[1].split("```", 2)[1]
    rows = {}
    for line in block.splitlines():
        m = ROW.match(line.strip())
        if m:
            rows[m["name"]] = {"scores": m["scores"].split(), "fit": m["fit"], "line": line,
                               "full": bool(m["tail"])}
    if not rows:
        raise ValueError("no demo table found after 'prints a table like:' in the README")
    return rows


def run_demo_table(full: bool) -> dict[str, dict[str, Any]]:
    """``gfun demo [--full] --n-jobs 1``'s table, as the README prints it (any ``--n-jobs`` gives the same scores:
    see the user guide's "Repeatable fits"; one job keeps the fit times comparable with the README's)."""
    from gfun.cli.demo import run_demo

    df = run_demo(seed=0, n_jobs=1, full=full)
    return {name: {"scores": [f"{row[m]:.3f}" for m in MEASURES], "fit": f"{row['fit_s']:.3f}"}
            for name, row in df.iterrows()}


def _score_line(name: str, scores: list[str]) -> str:
    return f"{name:<9} " + "  ".join(scores)


def compare_demo(readme: dict[str, dict[str, Any]], measured: dict[str, dict[str, Any]]) -> list[str]:
    """Unified diff of the rows ``measured`` has (scores only; empty when the README is right)."""
    names = [n for n in readme if n in measured] + [n for n in measured if n not in readme]
    old = [_score_line(n, readme[n]["scores"]) if n in readme else f"{n:<9} (missing)" for n in names]
    new = [_score_line(n, measured[n]["scores"]) for n in names]
    if old == new:
        return []
    return list(difflib.unified_diff(old, new, "README.md", "reproduced", lineterm=""))


def write_demo(text: str, readme: dict[str, dict[str, Any]], measured: dict[str, dict[str, Any]]) -> str:
    """``text`` with the reproduced scores and fit times in the demo rows (their layout kept)."""
    for name, row in readme.items():
        if name not in measured:
            continue
        m = measured[name]
        line = row["line"]
        new = line.replace(line.strip().split("(make")[0].rstrip(),
                           f"{name:<8}  " + "  ".join(m["scores"]) + f"  {m['fit']:>6}", 1)
        text = text.replace(line, new, 1)
    return text


def unknown_labels_check(text: str) -> list[str]:
    """Rerun the unknown-labels demo figures of ``text`` (docs/benchmarks.md); the diff of the sentence (empty when
    it reproduces)."""
    import numpy as np

    from gfun.configuration import build_estimator
    from gfun.datasets.demo import load_demo
    from gfun.metrics.evaluation import evaluate_model

    found = UNKNOWN.search(text)
    if found is None:
        return ["docs/benchmarks.md: the unknown-labels sentence ('F1M .xxx / KM .xxx ignoring the N unknown "
                "occurrences') is gone"]
    train, test = load_demo()
    counts = np.asarray(train.Y.sum(axis=0)).ravel()
    top = [train.classes[j] for j in np.argsort(-counts, kind="stable")[:20]]
    known = set(top)
    model = build_estimator("x", random_state=0).fit(train.with_classes(top))
    ignore = evaluate_model(model, test, unknown_labels="ignore").loc["average"]
    count = evaluate_model(model, test, unknown_labels="count").loc["average"]
    n_unknown = sum(1 for labels in test.labels for lab in labels if lab not in known)
    new = (f"F1M {ignore['F1_macro']:.3f} / KM {ignore['K_macro']:.3f} ignoring the {n_unknown} unknown "
           f"occurrences, {count['F1_macro']:.3f} / {count['K_macro']:.3f} counting them").replace("0.", ".")
    if new == found.group(0):
        return []
    return list(difflib.unified_diff([found.group(0)], [new], "docs/benchmarks.md", "reproduced", lineterm=""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="also the make demo-full rows (needs gfun[torch])")
    parser.add_argument("--write", action="store_true", help="write the reproduced demo rows into the README")
    parser.add_argument("--readme", type=Path, default=README, help="the README to check")
    parser.add_argument("--figures", type=Path, default=FIGURES, help="the document with the unknown-labels figures")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    readme = demo_rows(text)
    if not args.full:
        readme = {k: v for k, v in readme.items() if not v["full"]}
    measured = run_demo_table(args.full)
    diff = compare_demo(readme, measured)
    times = ", ".join(f"{n} {readme[n]['fit'] if n in readme else '-'} -> {m['fit']}" for n, m in measured.items())
    print(f"demo table{' (with demo-full rows)' if args.full else ''}: "
          f"{'reproduces' if not diff else 'DOES NOT reproduce'}; fit seconds README -> now: {times}")
    unknown = unknown_labels_check(args.figures.read_text(encoding="utf-8"))
    print(f"unknown-labels figures: {'reproduce' if not unknown else 'DO NOT reproduce'}")
    diff += unknown
    if args.write:
        args.readme.write_text(write_demo(text, readme, measured), encoding="utf-8")
        print(f"{args.readme}: demo rows rewritten")
        return 0
    if diff:
        print("\n".join(diff))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
