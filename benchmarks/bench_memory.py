"""Peak resident memory per phase of a ``gfun`` command (train, evaluate, ...), sampled over time.

Runs the command as a child process with ``-v``, samples the resident set (VmRSS) of the process and of its
descendants (joblib/loky workers) every ``--interval`` seconds, and splits the run into phases at the log
lines the command writes: a phase starts at one log line and ends at the next, so the phase named by a line
such as ``view B view_b 211.8s`` is the time *after* that line was written (phases shorter than the sampling
interval are left out). Prints a table (phase start, duration, peak RSS of the main process, peak RSS of the main
process plus its workers) and writes it as CSV.

Example (issue 13's acceptance command on debtags run 0)::

    nice -n 5 flock /tmp/gfun-heavy.lock python benchmarks/bench_memory.py --csv results/memory-train.csv -- \\
        train --train run0/train.jsonl --classes run0/classes.json --views xmb --word-vectors e5-subword \\
        --model /tmp/M
    nice -n 5 flock /tmp/gfun-heavy.lock python benchmarks/bench_memory.py --csv results/memory-evaluate.csv \\
        -- evaluate --model /tmp/M --test run0/test.jsonl

The ``ru_maxrss`` figure printed at the end is the kernel's own peak of the main process (what
``/usr/bin/time -v`` reports); the sampled peaks can miss a spike shorter than the interval.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path


def _rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` in MB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0.0


def _descendants(pid: int) -> list[int]:
    """Process ids of every descendant of ``pid`` (read from /proc/*/stat)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
                parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        frontier += kids
    return found


def run(cmd: list[str], interval: float) -> tuple[list[tuple[float, float, float]], list[tuple[float, str]], int]:
    """Run ``cmd``; return samples (t, main MB, main + descendants MB), timed stderr lines, exit code."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, bufsize=1)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip()))
            sys.stderr.write(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples = []
    while proc.poll() is None:
        main = _rss_mb(proc.pid)
        total = main + sum(_rss_mb(c) for c in _descendants(proc.pid))
        samples.append((time.perf_counter() - t0, main, total))
        time.sleep(interval)
    reader.join()
    return samples, lines, proc.returncode


def phases(samples: list[tuple[float, float, float]], lines: list[tuple[float, str]],
           end: float) -> list[dict[str, object]]:
    """Split the samples at the log lines: one row per phase with its peaks."""
    marks = [(0.0, "(start)")] + [(t, text) for t, text in lines if " INFO " in text or " DEBUG " in text]
    rows = []
    for i, (start, text) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else end
        inside = [s for s in samples if start <= s[0] < stop]
        label = text.split(" INFO ", 1)[-1].split(" DEBUG ", 1)[-1]
        if not inside:  # shorter than the sampling interval: no figure of its own
            continue
        rows.append({"after_log_line": label[:90], "start_s": round(start, 1), "duration_s": round(stop - start, 1),
                     "peak_main_mb": round(max(s[1] for s in inside)),
                     "peak_total_mb": round(max(s[2] for s in inside))})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--interval", type=float, default=0.2, help="sampling interval in seconds")
    parser.add_argument("--csv", type=Path, help="write the per-phase table here")
    parser.add_argument("--gfun", default=str(Path(sys.executable).with_name("gfun")), help="the gfun executable")
    parser.add_argument("gfun_args", nargs=argparse.REMAINDER, help="-- then the gfun subcommand and arguments")
    args = parser.parse_args()
    gfun_args = args.gfun_args[1:] if args.gfun_args[:1] == ["--"] else args.gfun_args
    cmd = [args.gfun, "-v", *gfun_args]
    t0 = time.perf_counter()
    samples, lines, rc = run(cmd, args.interval)
    end = time.perf_counter() - t0
    rows = phases(samples, lines, end)
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"$ {' '.join(cmd)}")
    print(f"{'phase (after log line)':<92}{'start s':>8}{'dur s':>8}{'main MB':>9}{'+workers':>9}")
    for r in rows:
        print(f"{r['after_log_line']:<92}{r['start_s']:>8}{r['duration_s']:>8}{r['peak_main_mb']:>9}"
              f"{r['peak_total_mb']:>9}")
    print(f"wall {end:.1f} s, sampled peak main {max(s[1] for s in samples):.0f} MB, "
          f"main + workers {max(s[2] for s in samples):.0f} MB, ru_maxrss {maxrss:.0f} MB, exit {rc}")
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
            fh.write(f"# {' '.join(cmd)}\n# wall_s={end:.1f} ru_maxrss_mb={maxrss:.0f} exit={rc}\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
