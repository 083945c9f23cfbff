"""The cluster cost model of docs/benchmarks.md ("Running on a cluster"), fitted on a measured curve.

Reads the CSVs of ``bench_dask.py`` runs of one configuration on several worker counts (``--modes dask --workers
N``, one thread per worker), at one or more sizes, splits each phase into its parallel work ``W`` (the seconds its
jobs computed on the workers) and its serial part ``S = wall - W / workers``, and prints:

1. per size and worker count, the measured fit beside the model's ``T(N) = sum over phases of S + W / N``;
2. with two or more sizes, ``S(n) = a + b n`` per phase, fitted by least squares on the sizes' medians: the part
   of the serial time that does not grow with the documents and the part that does;
3. the fit the model predicts for ``N`` machines of ``--cores`` cores at larger sizes (``--sizes``), from the
   largest measured size, with the X view's work growing as ``n^--x-exponent`` (1.17 on debtags), the
   meta-classifier's as ``n``, the bytes sent as ``--bytes-per-doc`` at ``--bandwidth`` Gbit/s between machines,
   and the largest job of the X view as a floor of that phase: the merge of the largest language's TF-IDF
   (``--largest-share`` of the documents), whose texts a cluster counts in blocks, ``--merge-share`` of that
   language's one-pass TF-IDF (``bench_tfidf_blocks.py``; ``--merge-share 1`` models one job per language), or, where
   the CSV has them, the merge jobs' own measured seconds (``fit_counted``). The
   table gives ``S`` constant (a lower bound), ``S`` as fitted (two or more sizes) and ``S`` growing as ``n`` (an
   upper bound).

A worker count of 1 is left out of the fit: joblib runs the jobs of a one-worker cluster in the calling process
(its sequential backend), so that point measures one process, not one worker.

Usage::

    python benchmarks/scaling_model.py results/scale/dask-curve-40k-16cores.csv \
        results/scale/dask-curve-100k-16cores.csv [--plot curve.png]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

PHASES = ("view_x", "meta")


def split_phases(df: pd.DataFrame) -> pd.DataFrame:
    """Per dask point with two or more workers and per phase: its size, wall seconds, work ``W`` and serial part
    ``S``; where the CSV has the busiest worker's seconds (``bench_dask.py`` writes them), ``S`` split into
    ``idle`` (no worker computing: the calling process's work, sending, waiting) and ``imbalance`` (the busiest
    worker beyond the mean)."""
    rows = []
    for _, r in df[(df["mode"] == "dask") & (df["workers"] >= 2)].iterrows():
        for p in PHASES:
            work = float(r.get(f"workers_{p}_s", np.nan))
            row = {"n": int(r["n_train"]), "workers": int(r["workers"]), "phase": p, "wall": float(r[f"{p}_s"]),
                   "W": work, "S": float(r[f"{p}_s"]) - work / int(r["workers"])}
            busiest = float(r.get(f"busiest_worker_{p}_s", np.nan))
            if not np.isnan(busiest):  # S = the time no worker computed + the busiest worker's excess
                row["idle"] = row["wall"] - busiest
                row["imbalance"] = busiest - work / int(r["workers"])
            rows.append(row)
    return pd.DataFrame(rows)


def fit_serial(parts: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """``S(n) = a + b n`` per phase, least squares on each size's median ``S`` (``b = 0`` with one size; ``a`` and
    ``b`` kept at 0 or above)."""
    out = {}
    for p in PHASES:
        med = parts[parts.phase == p].groupby("n")["S"].median()
        n, S = med.index.to_numpy(dtype=float), med.to_numpy(dtype=float)
        if len(n) < 2:
            out[p] = (float(S[0]), 0.0)
            continue
        b, a = np.polyfit(n, S, 1)
        if a < 0:  # through the origin
            a, b = 0.0, float(n @ S / (n @ n))
        out[p] = (float(a), max(0.0, float(b)))
    return out


def model_fit(n_workers: int, S: dict[str, float], W: dict[str, float]) -> float:
    """``T(N)``: the serial parts plus the work shared by ``n_workers``."""
    return sum(S[p] + W[p] / n_workers for p in PHASES)


def extrapolate(n: float, n0: float, machines: int, cores: int, S: dict[str, float], W: dict[str, float],
                x_exponent: float, largest_share: float, vectorizer_s: float, bytes_per_doc: float,
                bandwidth_gbit: float, serial: str | dict[str, tuple[float, float]], merge_share: float = 1.0
                ) -> float:
    """The model's fit at ``n`` documents on ``machines`` machines of ``cores`` cores, from ``S`` and ``W``
    measured at ``n0``; ``serial``: ``"constant"``, ``"linear"`` (``S`` grows as ``n``) or the fitted
    ``(a, b)`` of each phase."""
    ratio = n / n0
    grow = {"view_x": ratio ** x_exponent, "meta": ratio}
    total = 0.0
    for p in PHASES:
        if isinstance(serial, dict):
            a, b = serial[p]
            part = a + b * n
        else:
            part = S[p] * (ratio if serial == "linear" else 1.0)
        parallel = W[p] * grow[p] / (machines * cores)
        if p == "view_x":  # the merge of the largest language's TF-IDF is one job, linear in its documents
            parallel = max(parallel, vectorizer_s * largest_share * merge_share * ratio)
        total += part + parallel
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
    serial = fit_serial(parts)
    n0 = float(parts["n"].max())  # the model extrapolates from the largest measured size
    top = parts[parts.n == n0]
    S = top.groupby("phase")["S"].median().to_dict()
    W = top.groupby("phase")["W"].median().to_dict()
    jobs = df[(df["mode"] == "dask") & (df["workers"] >= 2) & (df["n_train"] == n0)]["jobs"].iloc[0]
    kinds = json.loads(jobs)
    if "fit_counted" in kinds:  # counted in blocks: the merges are the one-job part, measured
        vectorizer_s, merge_share = float(kinds["fit_counted"]["compute_s"]), 1.0
    else:  # one TF-IDF job per language: the merge is --merge-share of it
        vectorizer_s, merge_share = float(kinds.get("fit_vectorizer", {}).get("compute_s", 0.0)), args.merge_share

    for n, sub in parts.groupby("n"):
        Sn = sub.groupby("phase")["S"].median().to_dict()
        Wn = sub.groupby("phase")["W"].median().to_dict()
        print(f"\n{n:,} training documents; per phase, median over {sub.workers.nunique()} worker counts: "
              + "; ".join(f"{p}: W = {Wn[p]:.1f} core-s, S = {Sn[p]:.1f} s" for p in PHASES))
        print("worker phases (wall s, W core-s, S s):")
        with pd.option_context("display.width", 200, "display.float_format", "{:.1f}".format):
            values = ["wall", "W", "S"] + [c for c in ("idle", "imbalance") if c in sub and sub[c].notna().any()]
            print(sub.pivot(index="workers", columns="phase", values=values).to_string())
        print("\n| workers | measured fit s | model s | speed-up measured over 2 workers | model |")
        print("|---|---|---|---|---|")
        curve = df[(df["mode"] == "dask") & (df["n_train"] == n)].sort_values("workers")
        base = curve[curve.workers == 2]["fit_s"]
        for _, r in curve.iterrows():
            w = int(r["workers"])
            model = model_fit(w, Sn, Wn)
            note = " (in-process: see above)" if w == 1 else ""
            speed = f"{float(base.iloc[0]) / r['fit_s']:.2f}" if len(base) else ""
            print(f"| {w}{note} | {r['fit_s']:.1f} | {model:.1f} | {speed} | {model_fit(2, Sn, Wn) / model:.2f} |")
        for _, r in df[(df["mode"] == "local") & (df["n_train"] == n)].iterrows():
            print(f"| one process, {int(r['n_jobs'])} threads | {r['fit_s']:.1f} | | | |")
    fitted = parts.n.nunique() >= 2
    if fitted:
        print("\nserial part S(n) = a + b n, fitted on the sizes' medians: " + "; ".join(
            f"{p}: a = {serial[p][0]:.2f} s, b = {serial[p][1] * 1e6:.1f} s per 10^6 documents" for p in PHASES))

    machines = [int(m) for m in args.machines.split(",")]
    modes: list[tuple[str, str | dict]] = [("S constant", "constant")]
    if fitted:
        modes.append(("S fitted", serial))
    modes.append(("S grows as n", "linear"))
    for size in (float(s) for s in args.sizes.split(",")):
        print(f"\n{int(size):,} documents, machines of {args.cores} cores, {args.bandwidth:g} Gbit/s, from "
              f"{int(n0):,}:")
        print("| machines | " + " | ".join(f"fit s, {name} | speed-up" for name, _ in modes) + " |")
        print("|---|" + "---|---|" * len(modes))

        def at(m: int, how: str | dict, size: float = size) -> float:
            return extrapolate(size, n0, m, args.cores, S, W, args.x_exponent, args.largest_share, vectorizer_s,
                               args.bytes_per_doc, args.bandwidth, how, merge_share)

        one = [at(1, how) for _, how in modes]
        for m in machines:
            cells = [f"{at(m, how):,.0f} | {base_t / at(m, how):.1f}x"
                     for (_, how), base_t in zip(modes, one, strict=True)]
            print(f"| {m} | " + " | ".join(cells) + " |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for n, sub in parts.groupby("n"):
            Sn = sub.groupby("phase")["S"].median().to_dict()
            Wn = sub.groupby("phase")["W"].median().to_dict()
            pts = df[(df["mode"] == "dask") & (df["n_train"] == n) & (df["workers"] >= 2)].sort_values("workers")
            line, = ax.plot(pts.workers, pts.fit_s, "o-", label=f"{n:,} docs, measured")
            grid = np.array(sorted(set(pts.workers)))
            ax.plot(grid, [model_fit(int(w), Sn, Wn) for w in grid], "s--", color=line.get_color(),
                    label=f"{n:,} docs, model S + W/N")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("single-thread workers")
        ax.set_ylabel("fit seconds")
        ax.set_title("gFun-X on debtags, LocalCluster")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
