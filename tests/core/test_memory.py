"""Returning freed memory to the operating system between the phases of a fit (``gfun.core.memory``)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import gfun.core.memory
import gfun.funnelling.branch
from gfun.funnelling.generalized import GeneralizedFunnelling
from tests.synthetic_vectors import make_corpus


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_release_free_memory_trims_the_glibc_heap() -> None:
    assert gfun.core.memory._malloc_trim() is not None
    blocks = [bytearray(64 * 1024) for _ in range(200)]  # heap-sized blocks (below the mmap threshold)
    del blocks
    assert gfun.core.memory.release_free_memory() is True


def test_release_free_memory_is_a_no_op_without_glibc(monkeypatch) -> None:
    monkeypatch.setattr(gfun.core.memory, "_malloc_trim", lambda: None)
    assert gfun.core.memory.release_free_memory() is False


def test_fit_and_transform_release_memory_after_each_view(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(gfun.funnelling.branch, "release_free_memory", lambda: calls.append(1) or True)
    texts, langs, Y = make_corpus(["en", "it"], 20, seed=0)
    gf = GeneralizedFunnelling(views="xw", aggregation="mean", random_state=0).fit(texts, Y, langs=langs)
    assert len(calls) == 3  # after X's fit, after W's fit, after W's mapper (X needs none)
    calls.clear()
    gf.predict(texts[:5], langs=np.asarray(langs[:5]))
    assert len(calls) == 2  # after each view's transform


_FAULTS_SCRIPT = """
import json, resource
import gfun.core.memory as memory

def faults(n=3, mb=64):
    # minor page faults of allocating, filling and freeing n blocks of mb MB one after the other (bytearrays:
    # numpy would ask for huge pages, which fault 512 pages at a time)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        block = bytearray(mb * 2**20)  # zero-filled: every page touched
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

mapped = faults()
with memory.freed_blocks_reused() as active:
    reused = faults()
print(json.dumps({"mapped": mapped, "reused": reused, "active": active, "after": faults()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_freed_blocks_reused_spares_the_page_faults_of_fresh_blocks() -> None:
    # in a fresh interpreter on glibc's own malloc: what the process has allocated and freed before (the rest of
    # the suite) and an allocator preloaded by the environment would decide where a 64 MB block comes from
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    run = subprocess.run([sys.executable, "-c", _FAULTS_SCRIPT], capture_output=True, text=True, env=env, check=True)
    faults = json.loads(run.stdout.strip().splitlines()[-1])
    pages = 64 * 2**20 // 4096
    if faults["mapped"] < 2.5 * pages:
        pytest.skip(f"this system's malloc does not map a 64 MB block afresh each time (page faults {faults})")
    assert faults["active"] is True
    assert faults["reused"] <= 1.5 * pages, faults  # the first block's pages serve the next two
    assert faults["after"] >= 2.5 * pages, faults  # glibc's own thresholds are back on exit


def test_freed_blocks_reused_is_a_no_op_without_glibc(monkeypatch) -> None:
    monkeypatch.setattr(gfun.core.memory, "_mallopt", lambda: None)
    with gfun.core.memory.freed_blocks_reused() as active:
        assert active is False


def test_released_as_they_shrink_returns_memory_each_time_the_batches_halve(monkeypatch) -> None:
    widths = [256, 250, 130, 128, 100, 64, 40, 10]
    seen: list = []
    monkeypatch.setattr(gfun.core.memory, "release_free_memory", lambda: seen.append("release") or True)
    for width in gfun.core.memory.released_as_they_shrink(widths, lambda w: w):
        seen.append(width)
    assert seen == [256, 250, 130, "release", 128, 100, "release", 64, 40, "release", 10]
