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
