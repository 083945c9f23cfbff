"""Benchmark: are two fits with the same seed identical, for any ``--n-jobs``, and what does ``--n-jobs 2`` save?

Builds debtags run 0 (``gfun datasets build``), then, for every configuration and every ``--n-jobs`` value, runs
``gfun train --seed 0`` and ``gfun predict`` ``--repeats`` times, each in a fresh process, and compares the
prediction files byte for byte (and the saved arrays, array by array): within one ``--n-jobs`` value (repeatable
fits) and across them (``--n-jobs`` changes the speed, never the model). Prints one row per fit: the fit time
``gfun train`` reports, the process's wall time, and the SHA-256 of the predictions; then, per configuration, the
speed-up of each ``--n-jobs`` over the first one, and the macro-F1 of the predictions (``gfun evaluate``).

Usage::

    python benchmarks/bench_determinism.py [--run 0] [--data-dir ../shared/data/debtags]
        [--configs x,xp] [--n-jobs 1,2] [--repeats 2] [--meta-C 1] [--keep DIR]

Exit status 1 if any two fits of a configuration differ. Run it on an otherwise idle machine for the timings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GFUN = [sys.executable, "-c", "import sys; from gfun.cli.main import main; sys.exit(main())"]


def gfun(*args: str | Path) -> tuple[str, float]:
    """Run ``gfun ARGS`` in a fresh process: (stdout, wall seconds); raises on failure."""
    t0 = time.perf_counter()
    out = subprocess.run([*GFUN, *map(str, args)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.stderr.write(out.stderr[-5000:])
        raise RuntimeError(f"gfun {' '.join(map(str, args))} failed (exit {out.returncode})")
    return out.stdout, wall


def saved_arrays(model: Path) -> dict[str, str]:
    """SHA-256 of every array of a saved model (the current version's ``arrays.npz``), by name."""
    import numpy as np

    version = json.loads((model / "CURRENT").read_text(encoding="utf-8"))["version"]
    with np.load(model / version / "arrays.npz") as arrays:
        return {name: hashlib.sha256(np.ascontiguousarray(arrays[name]).tobytes()).hexdigest()
                for name in arrays.files}


def one_fit(data: Path, work: Path, config: str, n_jobs: int, rep: int, meta_C: str) -> dict:
    """Train, predict and evaluate one configuration once; the figures and fingerprints of the fit."""
    model, pred = work / f"{config}-j{n_jobs}-{rep}", work / f"{config}-j{n_jobs}-{rep}.jsonl"
    out, wall = gfun("-q", "train", "--train", data / "train.jsonl", "--classes", data / "classes.json",
                     "--model", model, "--views", config, "--meta-C", meta_C, "--n-jobs", str(n_jobs),
                     "--seed", "0")
    fitted = re.search(r"fitted in ([0-9.]+) s", out)
    gfun("-q", "predict", "--model", model, "--input", data / "test.jsonl", "--output", pred)
    return {"config": config, "n_jobs": n_jobs, "rep": rep, "fit_s": float(fitted.group(1)) if fitted else None,
            "train_wall_s": wall, "predict_sha": hashlib.sha256(pred.read_bytes()).hexdigest(),
            "arrays": saved_arrays(model), "model": model}


def macro_f1(data: Path, model: Path) -> float:
    out, _ = gfun("-q", "evaluate", "--model", model, "--test", data / "test.jsonl", "--json")
    scores = json.loads(out)
    average = scores["average"] if "average" in scores else scores
    return float(average["F1_macro"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--configs", default="x,xp", help="comma-separated view letters (gfun train --views)")
    ap.add_argument("--n-jobs", default="1,2", help="comma-separated --n-jobs values")
    ap.add_argument("--repeats", type=int, default=2, help="fits per configuration and --n-jobs value")
    ap.add_argument("--meta-C", default="1", help="gfun train --meta-C (1: the fit the issue timed; cv)")
    ap.add_argument("--keep", default=None, help="keep the run files, models and predictions in this folder")
    args = ap.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    jobs = [int(j) for j in args.n_jobs.split(",") if j]
    if args.repeats < 1 or not configs or not jobs:
        ap.error("--repeats must be >= 1, --configs and --n-jobs not empty")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gfun-determinism-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    if not (data / "train.jsonl").exists():
        gfun("-q", "datasets", "build", "debtags", "--data-dir", args.data_dir, "--run", str(args.run), "--out", data)
    rows, ok = [], True
    print(f"{'config':8s} {'n_jobs':>6s} {'rep':>3s} {'fit_s':>7s} {'wall_s':>7s}  predictions (sha256)")
    for config in configs:
        for n_jobs in jobs:
            for rep in range(args.repeats):
                row = one_fit(data, work, config, n_jobs, rep, args.meta_C)
                rows.append(row)
                fit = f"{row['fit_s']:7.1f}" if row["fit_s"] is not None else f"{'?':>7s}"
                print(f"{config:8s} {n_jobs:6d} {rep:3d} {fit} {row['train_wall_s']:7.1f}  {row['predict_sha'][:16]}",
                      flush=True)
    print()
    for config in configs:
        mine = [r for r in rows if r["config"] == config]
        first = mine[0]
        same_pred = all(r["predict_sha"] == first["predict_sha"] for r in mine)
        differing = sorted({name for r in mine for name, h in r["arrays"].items() if first["arrays"].get(name) != h}
                           | {name for r in mine for name in set(r["arrays"]) ^ set(first["arrays"])})
        within = all(len({r["predict_sha"] for r in mine if r["n_jobs"] == j}) == 1 for j in jobs)
        ok &= same_pred and not differing
        fit = {j: statistics.median(r["fit_s"] or r["train_wall_s"] for r in mine if r["n_jobs"] == j) for j in jobs}
        speed = ", ".join(f"n_jobs={j}: {fit[jobs[0]] / fit[j]:.2f}x" for j in jobs[1:])
        print(f"{config}: predictions identical within each n_jobs: {within}; across all fits: {same_pred}; "
              f"saved arrays that differ: {differing or 'none'}; fit speed-up over n_jobs={jobs[0]}: {speed or '-'}; "
              f"F1 macro {macro_f1(data, first['model']):.4f}")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
