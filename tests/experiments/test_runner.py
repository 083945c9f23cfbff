"""A long run killed mid-way resumes from its completed cells and ends with the same tables."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CONFIGS = "naive,fun,x"


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "gfun.cli.main", "-q", "experiment", "many-shot", "--quick", "--configs", CONFIGS,
            "--no-plots", "--out", str(out)]


def _tables(out: Path) -> dict[str, str]:
    # every result file; the wall-time log naturally differs between two runs
    files = sorted(p for p in out.glob("many-shot-*")
                   if p.suffix in (".md", ".csv", ".tex") and "timings" not in p.name)
    assert files, f"no tables written in {out}"
    return {p.name: p.read_text() for p in files}


@pytest.mark.parametrize("sig", [signal.SIGKILL])
def test_killed_experiment_resumes_to_identical_tables(tmp_path: Path, sig: signal.Signals) -> None:
    reference = tmp_path / "uninterrupted"
    subprocess.run(_command(reference), check=True, timeout=600)
    expected = _tables(reference)

    out = tmp_path / "interrupted"
    cells = out / "cells" / "many-shot"
    proc = subprocess.Popen(_command(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if cells.is_dir() and any(cells.glob("*.csv")):
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before any cell was written: nothing was interrupted"
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    done_before = {p.name for p in cells.glob("*.csv")}
    assert 0 < len(done_before) < 2 * len(CONFIGS.split(","))  # killed mid-way, after at least one cell
    assert not any(out.glob("many-shot-*.md")), "the tables must not exist before all cells are done"

    subprocess.run(_command(out), check=True, timeout=600)
    assert _tables(out) == expected
    # completed cells were reused, not recomputed
    assert done_before <= {p.name for p in cells.glob("*.csv")}
