"""gFun-XMB (the B view's ``cpu`` preset) end to end as a user runs it: ``gfun train`` + ``gfun evaluate`` as whole
processes on debtags run 0, with their wall time, CPU time and peak memory.

Each row runs, in fresh processes (start-up and imports included)::

    gfun -v train --train RUN/train.jsonl --classes RUN/classes.json --views xmb --word-vectors e5-subword --model DIR
    gfun evaluate --model DIR --test RUN/test.jsonl --json

and reads each process's own resource usage when it ends (``os.wait4``): wall seconds, CPU seconds (user +
system, both cores together) and peak resident memory. The table gives them per process and for the two
together, with the test scores (F1M, F1µ, KM, Kµ averaged over languages, as ``gfun evaluate`` prints them).
Below it, the phases ``gfun -v train`` logs (views, mappers, the B view's frozen pass, epochs and extraction,
``select``) with their seconds; ``--logs DIR`` keeps both processes' logs.

The acceptance: train + evaluate within 600 s on 2 cores, F1M >= .53 and F1µ >= .64, peak memory within 3 GB.
Wall seconds mean something only on a quiet machine (nothing else running on its cores); on a busy one the CPU
seconds are inflated too (torch's threads spin while they wait for a core).

Usage::

    GFUN_DATA=../shared/data gfun datasets build debtags --run 0 --out run0
    python benchmarks/bench_xmb.py --run-dir run0 [--repeat 1] [--out results/bench-xmb.csv] [--logs DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Log lines of ``gfun -v train`` worth a row under the table (the phases of the fit).
PHASES = re.compile(r"(view \(.*\): fitted|frozen pass|epoch \d+/\d+|extraction|output layer refitted|select: "
                    r"(validated|kept|dropped)|fitted in|saved )")
SCORES = ("F1_macro", "F1_micro", "K_macro", "K_micro")


def gfun_command() -> list[str]:
    """The ``gfun`` command of this Python environment (its console script, as a user types it)."""
    script = Path(sys.executable).with_name("gfun")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from gfun.cli.main import main; main()"]


def run_process(cmd: list[str], log: Path | None) -> dict[str, Any]:
    """Run one whole process; its wall and CPU seconds, peak RSS (MB), standard output and error."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if log is not None:
        log.write_text(stderr + stdout, encoding="utf-8")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(stderr[-5000:])
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {code})")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "stdout": stdout, "stderr": stderr}


def run_once(run_dir: Path, model: Path, logs: Path | None, tag: str) -> tuple[dict[str, Any], list[str]]:
    """``gfun train`` + ``gfun evaluate`` of gFun-XMB: one row of figures, and the fit's phase lines."""
    gfun = gfun_command()
    train = run_process([*gfun, "-v", "train", "--train", str(run_dir / "train.jsonl"), "--classes",
                         str(run_dir / "classes.json"), "--views", "xmb", "--word-vectors", "e5-subword", "--model",
                         str(model)], logs / f"train-{tag}.log" if logs else None)
    evaluate = run_process([*gfun, "evaluate", "--model", str(model), "--test", str(run_dir / "test.jsonl"),
                            "--json"], logs / f"evaluate-{tag}.log" if logs else None)
    average = json.loads(evaluate["stdout"])["average"]
    row: dict[str, Any] = {"run": tag}
    for name, figures in (("train", train), ("evaluate", evaluate)):
        for key in ("wall_s", "cpu_s", "sys_s", "peak_mb"):
            row[f"{name}_{key}"] = round(figures[key], 1)
    row["total_wall_s"] = round(train["wall_s"] + evaluate["wall_s"], 1)
    row["total_cpu_s"] = round(train["cpu_s"] + evaluate["cpu_s"], 1)
    row["peak_mb"] = round(max(train["peak_mb"], evaluate["peak_mb"]))
    row.update({m: round(float(average[m]), 4) for m in SCORES})
    phases = [line.split(" ", 2)[-1] for line in train["stderr"].replace("\r", "\n").splitlines()
              if PHASES.search(line) and ("INFO" in line or "DEBUG" in line)]
    return row, phases


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the table the module docstring describes."""
    head = ("| run | train wall s | train CPU s | train peak MB | evaluate wall s | evaluate CPU s | evaluate peak MB "
            "| total wall s | total CPU s | F1M | F1µ | KM | Kµ |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(f"| {r['run']} | {r['train_wall_s']:.1f} | {r['train_cpu_s']:.1f} | {r['train_peak_mb']:,.0f} | "
                     f"{r['evaluate_wall_s']:.1f} | {r['evaluate_cpu_s']:.1f} | {r['evaluate_peak_mb']:,.0f} | "
                     f"{r['total_wall_s']:.1f} | {r['total_cpu_s']:.1f} | "
                     + " | ".join(f"{r[m]:.3f}" for m in SCORES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", required=True, type=Path,
                   help="debtags run 0 (gfun datasets build debtags --run 0 --out DIR)")
    p.add_argument("--repeat", type=int, default=1, help="runs of train + evaluate (one row each)")
    p.add_argument("--out", type=Path, default=None, help="CSV of the rows")
    p.add_argument("--logs", type=Path, default=None, help="folder for the processes' logs")
    args = p.parse_args(argv)
    for name in ("train.jsonl", "test.jsonl", "classes.json"):
        if not (args.run_dir / name).is_file():
            p.error(f"--run-dir {args.run_dir}: no {name} (gfun datasets build debtags --run 0 --out DIR)")
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-xmb-") as tmp:
        for i in range(args.repeat):
            row, phases = run_once(args.run_dir, Path(tmp) / f"model-{i}", args.logs, str(i + 1))
            rows.append(row)
            print(table(rows[-1:]).splitlines()[-1] if i else table(rows), flush=True)
            for line in phases:
                print(f"    {line}", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print()
    print(table(rows))
    print(f"\n{os.cpu_count()} CPU cores; acceptance: total wall <= 600 s, F1M >= .53, F1µ >= .64, peak <= 3,072 MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
