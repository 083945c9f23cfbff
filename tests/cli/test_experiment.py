"""The ``gfun experiment`` command's options: --sample and the zero-shot test options."""

from __future__ import annotations

import argparse

import pytest

from gfun.cli.experiment import add_experiment_parser

pytest.importorskip("matplotlib")


def test_cli_sample_and_zero_shot_test_options():
    from gfun.cli.experiment import settings_from_args

    parser = argparse.ArgumentParser(prog="gfun")
    add_experiment_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", "many-shot", "--dataset", "debtags", "--sample", "150,50,7",
                              "--zero-shot-test"])
    assert settings_from_args(args).sample == (150, 50, 7) and args.zero_shot_test
    assert settings_from_args(parser.parse_args(["experiment", "many-shot", "--quick"])).sample == (60, 30, 3)
    with pytest.raises(ValueError, match="TRAIN,TEST,LANGUAGES"):
        settings_from_args(parser.parse_args(["experiment", "many-shot", "--dataset", "d", "--sample", "150,50"]))
    with pytest.raises(SystemExit):  # the zero-shot experiment has its own zero-shot cells
        parser.parse_args(["experiment", "zero-shot", "--quick", "--zero-shot-test"])
