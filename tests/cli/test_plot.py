"""``gfun plot wce`` without the plots extra: one line naming it, before any W view is fitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from gfun.cli.main import main
from tests.missing_modules import hide_modules


def test_plot_without_matplotlib_is_one_line_before_anything_is_read(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture) -> None:
    hide_modules(monkeypatch, "matplotlib")
    code = main(["plot", "wce", "--train", str(tmp_path / "never-read.jsonl"), "--out", str(tmp_path / "f.png")])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "gfun plot: error:" in err and "pip install 'gfun[plots]'" in err and not (tmp_path / "f.png").exists()


def test_plot_writes_exactly_where_it_says_and_never_into_a_model(tmp_path: Path, capsys) -> None:
    """--out mplot/CURRENT said it wrote mplot/CURRENT and wrote mplot/CURRENT.png (beside a model's pointer)."""
    pytest.importorskip("matplotlib")
    import numpy as np

    from gfun.datasets.demo import load_demo

    train, _ = load_demo()
    idx = np.concatenate([ix[:40] for lang, ix in train.by_language().items() if lang in ("de", "en")])
    train.subset(np.sort(idx)).to_jsonl(tmp_path / "train.jsonl")
    target = tmp_path / "plots" / "CURRENT"
    code = main(["-q", "plot", "wce", "--train", str(tmp_path / "train.jsonl"), "--out", str(target)])
    out = capsys.readouterr().out
    assert code == 0 and f"written to {target}" in out
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "plots" / "CURRENT.png").exists()
    model = tmp_path / "model"
    assert main(["-q", "train", "--train", str(tmp_path / "train.jsonl"), "--views", "x", "--meta-C", "1",
                 "--model", str(model)]) == 0
    pointer = (model / "CURRENT").read_bytes()
    capsys.readouterr()
    code = main(["-q", "plot", "wce", "--train", str(tmp_path / "train.jsonl"), "--out", str(model / "CURRENT")])
    err = capsys.readouterr().err
    assert code == 1 and "--out" in err and "lies inside the gfun model directory" in err, err
    assert (model / "CURRENT").read_bytes() == pointer and not (model / "CURRENT.png").exists()
