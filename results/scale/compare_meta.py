"""Validate RBFSVMOvR settings on saved meta inputs (``dump_meta_inputs.py``): F1 of out-of-fold and validated scores.

Usage: ``python compare_meta.py META.npz 'C=1.0,approximation=None' 'C=1.0,approximation="nystroem-ls"' ...``
(each argument: comma-separated ``name=value`` pairs, values as Python literals).
"""

import ast
import sys
import time

import numpy as np

from gfun.kernel_svm import RBFSVMOvR
from gfun.metrics import f1_from_counts


def parse_spec(spec: str) -> dict:
    """``'C=1.0,approximation="nystroem-ls"'`` -> ``{"C": 1.0, "approximation": "nystroem-ls"}``."""
    call = ast.parse(f"f({spec})", mode="eval").body
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def f1(dec: np.ndarray, Y: np.ndarray) -> tuple[float, float]:
    """Macro- and micro-F1 of the decisions ``dec > 0``."""
    p = dec > 0
    tp, fp, fn = (p & Y).sum(0), (p & ~Y).sum(0), (~p & Y).sum(0)
    macro = float(f1_from_counts(tp, fp, fn, np.zeros_like(tp)).mean())
    micro = float(f1_from_counts(tp.sum(), fp.sum(), fn.sum()))
    return round(macro, 4), round(micro, 4)


def main() -> None:
    d = np.load(sys.argv[1])
    Z, Zv = d["Z"].astype(np.float64), d["Zv"].astype(np.float64)
    Y, groups = d["Y"].astype(bool), d["groups"]
    for spec in sys.argv[2:]:
        t = time.perf_counter()
        m = RBFSVMOvR(cv=3, threshold="validated", n_jobs=2, random_state=0, **parse_spec(spec))
        m.validate(Z, Y, X_val=Zv, groups=groups)
        print(spec, round(time.perf_counter() - t, 1), "oof", f1(m.oof_decision_ + m.threshold_, Y),
              "validated", f1(m.validated_decision_, Y), "C", np.unique(m.C_, return_counts=True), flush=True)


if __name__ == "__main__":
    main()
