"""gfun.configuration: one layer from a configuration name + overrides to an estimator, for the CLI and the
experiments alike."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gfun.baselines.crosslingual import CROSSLINGUAL
from gfun.baselines.naive import NaiveClassifier, UpperBoundClassifier
from gfun.baselines.transformer import FineTunedTransformerClassifier
from gfun.cli.experiment import add_experiment_parser, settings_from_args
from gfun.cli.main import build_parser, main, train_estimator
from gfun.configuration import (
    METHODS,
    build_estimator,
    method_config,
    neural_view_params,
    parse_config,
    parse_configs,
)
from gfun.experiments.runner import experiment_estimator
from gfun.funnelling.generalized import GeneralizedFunnelling
from test_paper_commands import _listed_names  # every name the README, the --configs help and the defaults list

CLASSES = {"naive": NaiveClassifier, "upper": UpperBoundClassifier, "bert": FineTunedTransformerClassifier,
           "fun": GeneralizedFunnelling, "gfun": GeneralizedFunnelling, **CROSSLINGUAL}
#: Overrides of every kind, each applied where the configuration has a use for it.
VIEW_PARAMS = {"m": {"source": "vec:/nowhere"}, "w": {"min_df": 2}, "b": {"max_length": 48},
               "r": {"hidden_size": 8}, "lri": {"n_dimensions": 300}, "clesa": {"max_concepts": 20},
               "kcca": {"n_components": 3}, "dci": {"dcf": "pmi"}}


def test_every_listed_name_builds_its_estimator_with_the_overrides() -> None:
    configs = parse_configs(sorted(_listed_names()))
    assert {c.method for c in configs} == set(CLASSES)  # every kind of configuration is listed somewhere
    for cfg in configs:
        est = build_estimator(cfg, meta_C=7.0, random_state=5, n_jobs=2, view_params=VIEW_PARAMS)
        assert type(est) is CLASSES[cfg.method], cfg.name
        params = est.get_params(deep=False)
        assert params["random_state"] == 5
        if cfg.method == "bert":
            assert params["max_length"] == 48  # the B view's parameters
            continue
        assert params["n_jobs"] == 2
        assert params["meta_C" if cfg.method in ("fun", "gfun") else "C"] == 7.0
        if cfg.method in CROSSLINGUAL:
            key, value = next(iter(VIEW_PARAMS[cfg.method].items()))
            assert params[key] == value
        elif cfg.method == "fun":
            assert (params["views"], params["normalize"], params["view_params"]) == ("x", False, None)
        elif cfg.method == "gfun":
            assert (params["views"], params["aggregation"]) == (cfg.views, cfg.aggregation)
            expected = {v: dict(VIEW_PARAMS[v]) for v in cfg.views if v != "x"}
            if "r" in cfg.views:
                expected["r"]["wce"] = cfg.r_wce
            assert params["view_params"] == (expected or None), cfg.name


def test_the_view_cache_and_zero_shot_fun() -> None:
    fun = build_estimator("fun", zero_shot=True, view_params=VIEW_PARAMS, memory="/tmp/cache")
    assert (fun.zero_shot_views, fun.view_params, fun.memory) == ("m", {"m": VIEW_PARAMS["m"]}, "/tmp/cache")
    xmb = build_estimator("xmb", zero_shot=True, memory="/tmp/cache")
    assert xmb.zero_shot_views is None and xmb.view_params == {"b": {"frozen_cache": "/tmp/cache"}}
    assert build_estimator("bert", memory="/tmp/cache").frozen_cache == "/tmp/cache"
    # the default meta C is gfun train's: C by CV for the SVM baselines, 1 for gFun and Fun
    assert [build_estimator(n).get_params()["C" if n in ("naive", "lri") else "meta_C"]
            for n in ("naive", "lri", "fun", "xm")] == ["cv", "cv", 1.0, 1.0]


UNKNOWN = ("unknown configuration 'xq': expected naive, fun, bert, upper, lri, clesa, kcca, dci, or gFun view "
           "letters from 'xmwbr' (e.g. x, xm, xmw), optionally with -mean / -concat / -stack / -wmean / -select")


def test_a_bad_name_gives_the_same_clear_error_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for call in (parse_config, build_estimator, lambda n: parse_configs(["x", n])):
        with pytest.raises(ValueError) as err:
            call("xq")
        assert UNKNOWN in str(err.value)
    with pytest.raises(ValueError, match=r"^configuration 'xx': view letters repeat$"):
        build_estimator("xx")
    with pytest.raises(ValueError, match=r"^unknown method 'svm'; choose one of \('gfun', 'fun', 'naive'"):
        method_config("svm")
    # the experiment command checks the whole list before the first cell: nothing is written
    out = tmp_path / "out"
    assert main(["-q", "experiment", "many-shot", "--quick", "--configs", "x,xq,xx", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "2 bad configuration name(s)" in err and UNKNOWN in err and "'xx': view letters repeat" in err
    assert not out.exists()


def _cli_estimator(*options: str):
    return train_estimator(build_parser().parse_args(["train", "--train", "t.jsonl", "--model", "m", *options]))


def _experiment_estimator(config: str, *options: str):
    parser = argparse.ArgumentParser()
    add_experiment_parser(parser.add_subparsers())
    args = parser.parse_args(["experiment", "many-shot", "--dataset", "demo", "--configs", config, *options])
    return experiment_estimator(settings_from_args(args), parse_config(config), run=0)


def _comparable(est) -> dict:
    """``get_params`` without what differs by design: the experiments' view cache, the CLI's progress output."""
    params = {k: v for k, v in est.get_params(deep=False).items() if k not in ("memory", "verbose", "progress")}
    if params.get("view_params"):
        params["view_params"] = {k: {p: v for p, v in d.items() if p != "progress"}
                                 for k, d in params["view_params"].items()}
    return params


@pytest.mark.parametrize(("method", "config"), [(["--method", "gfun", "--views", "xmr", "--aggregation", "mean",
                                                  "--r-wce"], "xmr_mw-mean"),
                                                (["--method", "gfun", "--views", "xw", "--aggregation", "select"],
                                                 "xw-select"),
                                                (["--method", "fun"], "fun"), (["--method", "naive"], "naive"),
                                                (["--method", "upper"], "upper"), (["--method", "bert"], "bert"),
                                                (["--method", "dci"], "dci"), (["--method", "kcca"], "kcca")])
def test_cli_and_experiments_build_the_same_estimator(method: list[str], config: str) -> None:
    common = ["--meta-C", "2", "--word-vectors", "vec:/nowhere", "--seed", "4", "--n-jobs", "1", "--neural-preset",
              "cpu", "--device", "cpu", "--encoder", "some/dir", "--trainable-layers", "1",
              "--view-param", "r.hidden_size=8", "--view-param", "kcca.n_components=3"]
    cli, experiment = _cli_estimator(*method, *common), _experiment_estimator(config, *common)
    assert type(cli) is type(experiment)
    assert _comparable(cli) == _comparable(experiment)
    assert _comparable(cli) != _comparable(_experiment_estimator(config, *common, "--seed", "5"))


def test_train_accepts_every_method() -> None:
    parser = build_parser()
    choices = next(a.choices for a in parser._subparsers._group_actions[0].choices["train"]._actions
                   if "--method" in a.option_strings)
    assert tuple(choices) == METHODS and {"lri", "clesa", "kcca", "dci", "upper"} <= set(choices)


def test_neural_view_params_reach_the_views() -> None:
    vp = neural_view_params("e5", "enc", "cpu", "cuda", True, trainable_layers=2, progress=True)
    assert vp == {"m": {"source": "e5"}, "r": {"source": "e5", "preset": "cpu", "device": "cuda", "progress": True,
                                               "wce": True},
                  "b": {"model": "enc", "trainable_layers": 2, "preset": "cpu", "device": "cuda", "progress": True}}
    assert neural_view_params() is None
