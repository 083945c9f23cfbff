"""The cluster cost model of docs/benchmarks.md ("Running on a cluster"), fitted on a measured curve.

Reads the CSV of ``bench_dask.py`` runs of one configuration at one size on several worker counts (``--modes dask
--workers N``, one thread per worker), splits each phase into its parallel work ``W`` (the seconds its jobs
computed on the workers) and its serial part ``S = wall - W / workers``, and prints:

1. per worker count, the measured fit beside the model's ``T(N) = sum over phases of S + W / N``;
2. the fit the model predicts for ``N`` machines of ``--cores`` cores at larger sizes (``--sizes``), with the X
   view's work growing as ``n^--x-exponent`` (1.17 on debtags), the meta-classifier's as ``n``, the bytes sent as
   ``--bytes-per-doc`` at ``--bandwidth`` Gbit/s between machines, and the largest job of the X view as a floor of
   that phase: the merge of the largest language's TF-IDF (``--largest-share`` of the documents), whose texts a
   cluster counts in blocks, ``--merge-share`` of that language's one-pass TF-IDF (``bench_tfidf_blocks.py``;
   ``--merge-share 1`` models one job per language, as before the blocks). ``S`` is unknown beyond the measured
   size: the table gives both bounds, ``S`` constant and ``S`` growing as ``n``.

A worker count of 1 is left out of the fit: joblib runs the jobs of a one-worker cluster in the calling process
(its sequential backend), so that point measures one process, not one worker.

Usage::

    python benchmarks/scaling_model.py results/scale/dask-curve-40k-16cores.csv [--plot curve.png]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

PHASES = ("view_x", "meta")


def split_phases(df: pd.DataFrame) -> pd.DataFrame:
    """Per dask point with two or more workers and per phase: wall seconds, work ``W`` and serial part ``S``."""
    rows = []
    for _, r in df[(df["mode"] == "dask") & (df["workers"] >= 2)].iterrows():
        for p in PHASES:
            work = float(r.get(f"workers_{p}_s", np.nan))
            rows.append({"workers": int(r["workers"]), "phase": p, "wall": float(r[f"{p}_s"]), "W": work,
                         "S": float(r[f"{p}_s"]) - work / int(r["workers"])})
    return pd.DataFrame(rows)


def model_fit(n_workers: int, S: dict[str, float], W: dict[str, float]) -> float:
    """``T(N)``: the serial parts plus the work shared by ``n_workers``."""
    return sum(S[p] + W[p] / n_workers for p in PHASES)


def extrapolate(n: float, n0: float, machines: int, cores: int, S: dict[str, float], W: dict[str, float],
                x_exponent: float, largest_share: float, vectorizer_s: float, bytes_per_doc: float,
                bandwidth_gbit: float, serial_grows: bool, merge_share: float = 1.0) -> float:
    """The model's fit at ``n`` documents on ``machines`` machines of ``cores`` cores."""
    ratio = n / n0
    grow = {"view_x": ratio ** x_exponent, "meta": ratio}
    total = 0.0
    for p in PHASES:
        serial = S[p] * (ratio if serial_grows else 1.0)
        parallel = W[p] * grow[p] / (machines * cores)
        if p == "view_x":  # the merge of the largest language's TF-IDF is one job, linear in its documents
            parallel = max(parallel, vectorizer_s * largest_share * merge_share * ratio)
        total += serial + parallel
    if machines > 1:
        total += n * bytes_per_doc / (bandwidth_gbit * 1e9 / 8)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", help="bench_dask.py CSV files (dask points of one configuration and size)")
    ap.add_argument("--cores", type=int, default=8, help="cores per machine")
    ap.add_argument("--machines", default="1,2,4,8,16,32,64")
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--x-exponent", type=float, default=1.17, help="growth of the X view's work with n")
    ap.add_argument("--largest-share", type=float, default=0.302,
                    help="share of the documents in the largest language (debtags: English, 30,300 of 100,286)")
    ap.add_argument("--merge-share", type=float, default=0.082,
                    help="the part of a language's one-pass TF-IDF that stays one job when its texts are counted in "
                    "blocks (bench_tfidf_blocks.py: 0.066-0.086 for debtags' English; 1: one job per language)")
    ap.add_argument("--bytes-per-doc", type=float, default=4500.0,
                    help="bytes sent between machines per training document (docs/benchmarks.md: 4.5 GB at 10^6)")
    ap.add_argument("--bandwidth", type=float, default=10.0, help="Gbit/s between machines")
    ap.add_argument("--plot", help="PNG of the measured fit and the model's against the workers")
    args = ap.parse_args(argv)

    df = pd.concat([pd.read_csv(f) for f in args.csv], ignore_index=True)
    parts = split_phases(df)
    if parts.empty:
        sys.exit("no dask point with 2 or more workers in the CSV")
    n0 = float(df["n_train"].iloc[0])
    S = parts.groupby("phase")["S"].median().to_dict()
    W = parts.groupby("phase")["W"].median().to_dict()
    jobs = df[(df["mode"] == "dask") & (df["workers"] >= 2)]["jobs"].iloc[0]
    vectorizer_s = float(pd.read_json(__import__("io").StringIO(jobs)).get("fit_vectorizer", {}).get("compute_s", 0))

    print(f"measured at {int(n0):,} training documents; per phase, median over {parts.workers.nunique()} worker "
          f"counts: " + "; ".join(f"{p}: W = {W[p]:.1f} core-s, S = {S[p]:.1f} s" for p in PHASES)
          + f"; TF-IDF jobs {vectorizer_s:.1f} core-s")
    print("\nworker phases (wall s, W core-s, S s):")
    with pd.option_context("display.width", 200, "display.float_format", "{:.1f}".format):
        print(parts.pivot(index="workers", columns="phase", values=["wall", "W", "S"]).to_string())
    print("\n| workers | measured fit s | model s | speed-up measured over 2 workers | model |")
    print("|---|---|---|---|---|")
    curve = df[df["mode"] == "dask"].sort_values("workers")
    base = curve[curve.workers == 2]["fit_s"]
    for _, r in curve.iterrows():
        w = int(r["workers"])
        model = model_fit(w, S, W)
        note = " (in-process: see above)" if w == 1 else ""
        speed = f"{float(base.iloc[0]) / r['fit_s']:.2f}" if len(base) else ""
        print(f"| {w}{note} | {r['fit_s']:.1f} | {model:.1f} | {speed} | {model_fit(2, S, W) / model:.2f} |")
    for _, r in df[df["mode"] == "local"].iterrows():
        print(f"| one process, {int(r['n_jobs'])} threads | {r['fit_s']:.1f} | | | |")

    machines = [int(m) for m in args.machines.split(",")]
    for size in (float(s) for s in args.sizes.split(",")):
        print(f"\n{int(size):,} documents, machines of {args.cores} cores, {args.bandwidth:g} Gbit/s:")
        print("| machines | fit s, S constant | speed-up | fit s, S grows as n | speed-up |")
        print("|---|---|---|---|---|")
        one = {g: extrapolate(size, n0, 1, args.cores, S, W, args.x_exponent, args.largest_share, vectorizer_s,
                              args.bytes_per_doc, args.bandwidth, g, args.merge_share) for g in (False, True)}
        for m in machines:
            t = {g: extrapolate(size, n0, m, args.cores, S, W, args.x_exponent, args.largest_share, vectorizer_s,
                                args.bytes_per_doc, args.bandwidth, g, args.merge_share) for g in (False, True)}
            print(f"| {m} | {t[False]:,.0f} | {one[False] / t[False]:.1f}x | {t[True]:,.0f} | "
                  f"{one[True] / t[True]:.1f}x |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        pts = curve[curve.workers >= 2]
        ax.plot(pts.workers, pts.fit_s, "o-", label="measured (LocalCluster)")
        grid = np.array(sorted(set(pts.workers)))
        ax.plot(grid, [model_fit(int(w), S, W) for w in grid], "s--", label="model S + W/N")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("single-thread workers")
        ax.set_ylabel("fit seconds")
        ax.set_title(f"gFun-X, {int(n0):,} debtags documents")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
