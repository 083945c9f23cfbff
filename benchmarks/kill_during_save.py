"""SIGKILL ``gfun train`` at random moments while another process loads the model in a loop.

Every load must find a complete model (the old one or the new one): the script counts the loads, the
failures and where each kill landed (before the save, during it, after the pointer swap), prints a table
and exits 1 if any load failed. Half of the kills fall anywhere in the run (imports, reading, fitting,
saving); the other half right after the fit, within the few milliseconds the save takes.

Usage::

    flock /tmp/gfun-heavy.lock python benchmarks/kill_during_save.py --kills 50 [--workdir DIR] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRAIN = [sys.executable, "-c", "import sys\nfrom gfun.cli.main import main\nsys.exit(main())"]


def _reader(model: str, stop_file: str, report: str) -> None:
    """Load ``model`` in a loop until ``stop_file`` exists; write the counts to ``report``."""
    from gfun.persistence.loading import load_model

    ok, errors = 0, []
    while not os.path.exists(stop_file):
        try:
            load_model(model)
            ok += 1
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
            errors.append(f"{type(exc).__name__}: {exc}")
    Path(report).write_text(json.dumps({"loads_ok": ok, "load_errors": errors}), encoding="utf-8")


def _versions(model: Path) -> tuple[str | None, list[str]]:
    try:
        current = json.loads((model / "CURRENT").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        current = None
    return current, sorted(p.name for p in model.iterdir() if p.name.startswith("v-"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default=None, help="folder for the training file and the model (default: a temp dir)")
    ap.add_argument("--reader", nargs=3, metavar=("MODEL", "STOP", "REPORT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reader:
        _reader(*args.reader)
        return 0

    from gfun.datasets.demo import load_demo
    from gfun.persistence.loading import load_model

    rng = random.Random(args.seed)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="gfun-kill-"))
    work.mkdir(parents=True, exist_ok=True)
    train, _ = load_demo()
    idx = [i for lang, ix in train.by_language().items() if lang in ("de", "en", "it") for i in ix[:40]]
    train.subset(sorted(idx)).to_jsonl(work / "train.jsonl")
    model = work / "model"
    cmd = [*TRAIN, "train", "--train", str(work / "train.jsonl"), "--views", "x", "--meta-C", "1",
           "--model", str(model)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    full_run = time.perf_counter() - t0
    print(f"one complete `gfun train` run: {full_run:.2f} s; model in {model}")

    stop, report = work / "stop-reader", work / "reader.json"
    stop.unlink(missing_ok=True)
    reader = subprocess.Popen([sys.executable, __file__, "--reader", str(model), str(stop), str(report)])
    landed = {"before the save": 0, "during the save (old model kept)": 0, "after the swap (new model)": 0}
    checks_ok, check_errors = 0, []
    for k in range(args.kills):
        before, folders_before = _versions(model)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if k % 2 == 0:  # anywhere in the run
            time.sleep(rng.uniform(0.0, full_run))
        else:  # right after the fit: inside the save
            for line in proc.stderr:
                if "fitted in" in line:
                    break
            time.sleep(rng.uniform(0.0, 0.02))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        after, folders = _versions(model)
        if after != before:
            landed["after the swap (new model)"] += 1
        elif set(folders) - set(folders_before):  # a version folder was started but CURRENT not replaced
            landed["during the save (old model kept)"] += 1
        else:
            landed["before the save"] += 1
        try:
            load_model(model)
            checks_ok += 1
        except Exception as exc:  # noqa: BLE001
            check_errors.append(f"kill {k}: {type(exc).__name__}: {exc}")
    stop.touch()
    reader.wait(timeout=120)
    counts = json.loads(report.read_text(encoding="utf-8"))
    print(f"\n{args.kills} SIGKILLs of `gfun train` (seed {args.seed})")
    for where, n in landed.items():
        print(f"  killed {where:35s} {n:4d}")
    print(f"loads by the concurrent reader:  {counts['loads_ok']} complete, {len(counts['load_errors'])} failed")
    print(f"loads right after each kill:     {checks_ok} complete, {len(check_errors)} failed")
    for err in (counts["load_errors"] + check_errors)[:10]:
        print("  FAILED:", err)
    return 0 if not counts["load_errors"] and not check_errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
