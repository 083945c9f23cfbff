"""gFun-X end to end as a user runs it: ``gfun train`` + ``gfun evaluate`` as whole processes, at meta C = 1 and with
C by cross-validation, against the authors' code.

Each row runs ``gfun -q train --train TRAIN --model DIR --views x --meta-C C --n-jobs N`` and then
``gfun -q evaluate --model DIR --test TEST --json`` in fresh processes, start-up and imports included (the fit time
``gfun train`` reports is shown too). ``--repeat R`` runs each row R times and keeps the fastest (the scores do not
move). The table gives the seconds of each process, their total, the scores and the speed-up over the authors'
``main.py -x`` on the same run: measured in the same session with ``--authors-cmd`` (a shell command run as a whole
process, timed, whose ``Averages:`` line gives its F1M and F1µ), else the reference ``--reference-s`` (186 s: the
authors' gFun-X on debtags run 0, 2 cores, measured side by side with gfun). Below it, the cost of ``--meta-C cv``
over C = 1 (train processes and fits).

Timings mean something only on a quiet machine: nothing else running on its cores.

Usage::

    python benchmarks/bench_speed.py [--run-dir DIR | --data-dir ../shared/data/debtags --run 0] [--n-jobs 2]
        [--repeat 3] [--authors-cmd "cd ~/gFun && python main.py run0.pickle -x"] [--out speed.csv]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The authors' gFun-X (``main.py -x``, C = 1) on debtags run 0, 2 cores, whole process: measured side by side with
#: gfun's CLI (F1M .380).
REFERENCE_S = 186.0
#: ``gfun train``'s last line: ``model saved to DIR (gfun, ..., fitted in 8.8 s)``.
FITTED = re.compile(r"fitted in ([0-9.]+) s")
#: The authors' ``main.py`` prints ``Averages: MF1, mF1, MK, mK, MP, mP, MR, mR [0.38 0.55 ...]``.
AUTHORS_AVERAGES = re.compile(r"Averages:[^\[]*\[\s*([-0-9.e]+)\s+([-0-9.e]+)")


def gfun_command() -> list[str]:
    """The ``gfun`` command of this Python environment (its console script, as a user types it)."""
    script = Path(sys.executable).with_name("gfun")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from gfun.cli.main import main; main()"]


def timed(cmd: list[str] | str, *, shell: bool = False) -> tuple[float, str]:
    """Seconds and standard output of one whole process; its standard error is shown when it fails."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, shell=shell, check=False)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        sys.stderr.write(out.stderr[-5000:])
        raise RuntimeError(f"{cmd if shell else shlex.join(cmd)} failed (exit {out.returncode})")
    return seconds, out.stdout


def run_gfun(run_dir: Path, meta_C: str, n_jobs: int, model: Path) -> dict[str, Any]:
    """``gfun train`` + ``gfun evaluate`` of gFun-X at ``meta_C``: seconds of each process, fit time, scores."""
    gfun = gfun_command()
    train_s, out = timed([*gfun, "-q", "train", "--train", str(run_dir / "train.jsonl"), "--model", str(model),
                          "--views", "x", "--meta-C", meta_C, "--n-jobs", str(n_jobs)])
    fitted = FITTED.search(out)
    evaluate_s, out = timed([*gfun, "-q", "evaluate", "--model", str(model), "--test", str(run_dir / "test.jsonl"),
                             "--json"])
    average = json.loads(out)["average"]
    return {"train_s": train_s, "fit_s": float(fitted.group(1)) if fitted else float("nan"),
            "evaluate_s": evaluate_s, "total_s": train_s + evaluate_s,
            **{m: average[m] for m in ("F1_macro", "F1_micro", "K_macro", "K_micro")}}


def run_authors(command: str) -> dict[str, Any]:
    """The authors' code as one whole process: its seconds, and its F1M / F1µ when it prints its averages."""
    seconds, out = timed(command, shell=True)
    found = AUTHORS_AVERAGES.search(out)
    nan = float("nan")
    return {"train_s": nan, "fit_s": nan, "evaluate_s": nan, "total_s": seconds,
            "F1_macro": float(found.group(1)) if found else nan, "F1_micro": float(found.group(2)) if found else nan,
            "K_macro": nan, "K_micro": nan}


def build_run(data_dir: str, run: int, into: Path) -> Path:
    """debtags run ``run`` as JSONL files (``gfun datasets build``), in ``into``."""
    timed([*gfun_command(), "-q", "datasets", "build", "debtags", "--data-dir", data_dir, "--run", str(run),
           "--out", str(into)])
    return into


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run-dir", default=None, help="a built debtags run (train.jsonl, test.jsonl); default: built "
                    "from --data-dir into a temporary folder")
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each row; the fastest is kept")
    ap.add_argument("--authors-cmd", default=None, help="shell command running the authors' main.py -x on the same "
                    "run (timed as a whole process)")
    ap.add_argument("--reference-s", type=float, default=REFERENCE_S,
                    help="the authors' seconds when --authors-cmd is not given")
    ap.add_argument("--out", default=None, help="CSV of the table")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="gfun-bench-speed-") as tmp:
        run_dir = Path(args.run_dir) if args.run_dir else build_run(args.data_dir, args.run, Path(tmp) / "run")
        rows: dict[str, dict[str, Any]] = {}
        if args.authors_cmd:
            rows["authors gFun-X"] = min((run_authors(args.authors_cmd) for _ in range(args.repeat)),
                                         key=lambda r: r["total_s"])
        for meta_C in ("1", "cv"):
            name = f"gfun gFun-X C={meta_C}"
            tries = [run_gfun(run_dir, meta_C, args.n_jobs, Path(tmp) / f"model-{meta_C}-{i}")
                     for i in range(args.repeat)]
            rows[name] = min(tries, key=lambda r: r["total_s"])
            best = rows[name]
            sys.stderr.write(f"{name}: train {best['train_s']:.1f} s, evaluate {best['evaluate_s']:.1f} s\n")
    reference = rows["authors gFun-X"]["total_s"] if "authors gFun-X" in rows else args.reference_s
    df = pd.DataFrame(rows).T
    df["speed_up"] = reference / df["total_s"]
    cols = ["train_s", "fit_s", "evaluate_s", "total_s", "F1_macro", "F1_micro", "K_macro", "K_micro", "speed_up"]
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        sys.stdout.write(df[cols].to_string() + "\n")
    one, cv = rows["gfun gFun-X C=1"], rows["gfun gFun-X C=cv"]
    source = "measured here" if "authors gFun-X" in rows else "reference, --reference-s"
    sys.stdout.write(f"\nauthors' gFun-X: {reference:.1f} s ({source}); --n-jobs {args.n_jobs}, fastest of "
                     f"{args.repeat}\n--meta-C cv / C=1: train process {cv['train_s'] / one['train_s']:.2f}x, fit "
                     f"{cv['fit_s'] / one['fit_s']:.2f}x, train + evaluate {cv['total_s'] / one['total_s']:.2f}x\n")
    if args.out:
        df[cols].to_csv(args.out)
        sys.stdout.write(f"written to {args.out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
