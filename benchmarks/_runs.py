"""Shared by the benchmark scripts: the runs a ``--runs`` option names."""

from __future__ import annotations

__all__ = ["run_list"]


def run_list(spec: str) -> list[int]:
    """The runs of ``spec``: comma-separated numbers and inclusive ranges (``"0-2,5"`` -> ``[0, 1, 2, 5]``)."""
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out
