"""What the neural views share (``gfun.neural.training``): batched inference."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.neural.training import batched_inference

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_batched_inference_runs_the_longest_batch_first_with_rows_in_document_order(monkeypatch):
    import contextlib

    import gfun.core.memory

    lengths = np.array([5, 1, 9, 3, 7, 2, 8, 4, 6])
    net = torch.nn.Linear(1, 2)
    seen, inside = [], []

    @contextlib.contextmanager
    def recorded():
        inside.append(True)
        yield True
        inside.append(False)

    monkeypatch.setattr(gfun.core.memory, "freed_blocks_reused", recorded)

    def forward(pos: np.ndarray):
        seen.append((sorted(lengths[pos].tolist()), inside[-1]))
        return torch.from_numpy(np.stack([lengths[pos], -lengths[pos]], axis=1).astype(np.float32))

    out = batched_inference(net, lengths, 2, 4, forward)
    # the same batches as documents sorted by length, the longest one first, all while freed memory is reused
    assert seen == [([9], True), ([5, 6, 7, 8], True), ([1, 2, 3, 4], True)] and inside[-1] is False
    np.testing.assert_array_equal(out, np.stack([lengths, -lengths], axis=1))
    assert net.training  # back in its former mode
