"""``gfun experiment many-shot | zero-shot | learning-curve | aggregation | recurrent``.

Wire into the main parser with ``add_experiment_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from gfun.cli.options import (  # shared with the main CLI
    _out,
    _parse_C,
    add_neural_arguments,
    add_view_param_argument,
    check_modules,
    int_type,
    n_jobs_type,
    parse_view_params,
    seed_type,
    word_vectors_type,
)
from gfun.metrics.columns import columns_help

__all__ = ["DEFAULT_CONFIGS", "DEFAULT_REFERENCE", "add_experiment_parser", "cmd_experiment",
           "settings_from_args"]

logger = logging.getLogger(__name__)

#: Default --configs of each experiment, full and --quick.
DEFAULT_CONFIGS: dict[str, tuple[str, str]] = {
    "many-shot": ("naive,fun,x,m,w,xm,xmw", "naive,fun,x,w,xw"),
    "zero-shot": ("fun,xm", "fun,xm"),
    "learning-curve": ("naive,fun,xm", "naive,fun,x"),
    "aggregation": ("fun,x,m,w,xm,xmw", "fun,x,w,xw"),
    "recurrent": ("r_m,r_mw,br_m,br_mw,xr_mw,xbr_m,xbr_mw", "r_m,r_mw,xr_mw"),
}
#: Default --reference of the recurrent experiment, full and --quick.
DEFAULT_REFERENCE: tuple[str, str] = ("xm", "x")


def settings_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~gfun.experiments.runner.ExperimentSettings` of parsed arguments (``--quick`` applied)."""
    from gfun.experiments.runner import QUICK_SAMPLE, ExperimentSettings

    dataset = args.dataset or "demo"
    if not args.quick and args.dataset is None:
        raise ValueError("--dataset is required (or --quick, which uses the bundled demo data)")
    runs = args.runs if args.runs is not None else (2 if args.quick else 10)
    # gfun train's defaults: C = 1 for gFun and Fun, by cross-validation for the SVM baselines (None); --quick: 1
    meta_C = args.meta_C if args.meta_C is not None else (1.0 if args.quick else None)
    from gfun.configuration import DEFAULT_WORD_VECTORS, neural_view_params

    source = args.word_vectors or DEFAULT_WORD_VECTORS  # gfun train's: sub-word means of the offline encoder

    view_params = neural_view_params(source, getattr(args, "encoder", None),
                                     getattr(args, "neural_preset", None), getattr(args, "device", None),
                                     trainable_layers=getattr(args, "trainable_layers", None))
    view_params = parse_view_params(getattr(args, "view_param", None), view_params)
    langs = [x.strip() for x in args.languages.split(",") if x.strip()] if args.languages else None
    sample = QUICK_SAMPLE if args.quick else None
    if getattr(args, "sample", None):
        parts = args.sample.split(",")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"--sample takes TRAIN,TEST,LANGUAGES (three integers), got {args.sample!r}")
        sample = tuple(int(p) for p in parts)
    return ExperimentSettings(dataset=dataset, runs=runs, meta_C=meta_C, seed=args.seed, data_dir=args.data_dir,
                              sample=sample, languages=langs, n_jobs=args.n_jobs,
                              view_params=view_params,
                              view_cache="" if getattr(args, "no_view_cache", False) else None)


def experiment_modules(configs: Any, view_params: dict | None, *, zero_shot: bool = False) -> dict[str, str]:
    """The optional modules that the configurations of an experiment need, each with what needs it (see
    :func:`gfun.configuration.required_modules`): checked before the first cell is computed."""
    from gfun.configuration import required_modules

    out: dict[str, str] = {}
    for config in configs:
        for module, purpose in required_modules(config, view_params=view_params, zero_shot=zero_shot).items():
            out.setdefault(module, f"{purpose}, in configuration {config.name}")
    return out


def _can_plot() -> bool:
    """Whether matplotlib is there to draw the figures; without it, the experiment says once, at its start, that
    it writes its tables without them (its saved cells draw them, once installed, when it is run again)."""
    from gfun.core.optional import has_optional

    if has_optional("matplotlib"):
        return True
    logger.warning("matplotlib is not installed: the tables are written, the figures skipped (pip install "
                   "'gfun[experiments]' adds them; running the experiment again then draws them from its saved "
                   "cells; --no-plots skips them without this warning)")
    return False


def cmd_experiment(args: argparse.Namespace) -> int:
    """Run the experiment named by ``args.experiment`` and print a summary of what it wrote."""
    from gfun.configuration import parse_configs

    settings = settings_from_args(args)
    full, quick = DEFAULT_CONFIGS[args.experiment]
    configs = parse_configs(args.configs or (quick if args.quick else full))
    reference = getattr(args, "reference", None)
    if args.experiment == "recurrent" and reference is None:
        reference = DEFAULT_REFERENCE[bool(args.quick)]
    checked = configs + (parse_configs(reference) if reference else [])
    check_modules(experiment_modules(checked, settings.view_params, zero_shot=args.experiment == "zero-shot"))
    plots = not args.no_plots and args.experiment != "aggregation" and _can_plot()
    out = args.out or f"results/{args.experiment}-{settings.dataset}{'-quick' if args.quick else ''}"
    logger.info("%s on %s: %d run(s), configurations %s, meta_C=%s, output %s", args.experiment, settings.dataset,
                settings.runs, ",".join(c.name for c in configs),
                "each method's default" if settings.meta_C is None else settings.meta_C, out)
    if args.experiment == "many-shot":
        from gfun.experiments.many_shot import run_many_shot

        res = run_many_shot(settings, configs, out, plots=plots, zero_shot_test=args.zero_shot_test)
    elif args.experiment == "zero-shot":
        from gfun.experiments.zero_shot import run_zero_shot

        res = run_zero_shot(settings, configs, out, plots=plots)
    elif args.experiment == "recurrent":
        from gfun.experiments.recurrent import run_recurrent

        res = run_recurrent(settings, configs, out, reference=reference, plots=plots)
    elif args.experiment == "learning-curve":
        from gfun.experiments.learning_curve import run_learning_curve

        targets = [t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else None
        fractions = [int(f) for f in args.fractions.split(",")] if args.fractions else None
        kw = {"fractions": fractions} if fractions else {}
        res = run_learning_curve(settings, configs, out, targets=targets, plots=plots, **kw)
    else:
        from gfun.experiments.aggregation import run_aggregation

        policies = [x.strip() for x in args.aggregations.split(",") if x.strip()]
        res = run_aggregation(settings, configs, out, policies=policies)
    md = [f for f in res["files"] if str(f).endswith(".md")]
    if md:  # the tables (many-shot, aggregation) or the grids (zero-shot), as written to the .md files
        _out("\n".join(f.read_text(encoding="utf-8") for f in md))
    _out(f"{args.experiment}: {res['cells']['done']} cell(s) computed, {res['cells']['skipped']} resumed, "
         f"{len(res['files'])} file(s) written to {out} in {res['wall_s']:.1f} s")
    return 0


def add_experiment_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``experiment`` and its four sub-commands on the main parser's ``subparsers``."""
    from gfun.cli.options import META_C_HELP, N_JOBS_HELP, HelpFormatter

    fmt = HelpFormatter
    parser = subparsers.add_parser(
        "experiment", help="reproduce the paper's experiments (tables, grids, curves, figures)", formatter_class=fmt,
        description="Resumable experiments: each completed (run, configuration) cell is saved under --out as soon "
                    "as it finishes; a restarted experiment skips completed cells.")
    sub = parser.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    helps = {"many-shot": "Tables 3-4: mean ± std over runs with significance; Figure 4",
             "zero-shot": "Figures 5-7: languages added one at a time, every language tested",
             "learning-curve": "Figure 8: 0-100%% of one target language's training documents",
             "aggregation": "Table 5 extended: every aggregation policy for every configuration",
             "recurrent": "Tables 6-7: the recurrent view (R_M, R_MW) alone and with the other views"}
    for name, text in helps.items():
        full, quick = DEFAULT_CONFIGS[name]
        p = sub.add_parser(name, help=text, description=text.replace("%%", "%"), formatter_class=fmt,
                           epilog=columns_help(("method", "F1M", "F1µ", "KM", "Kµ", "± std", "† ‡"),
                                               "what its tables show"))
        p.add_argument("--dataset", default=None, help="dataset name (see `gfun datasets list`); --quick: demo")
        p.add_argument("--data-dir", default=None, help="the dataset's folder (default: $GFUN_DATA/<dataset>)")
        p.add_argument("--runs", type=int_type(1), default=None, help="number of runs (default 10; --quick: 2)")
        p.add_argument("--configs", default=None,
                       help=f"comma-separated configurations: naive, fun, pooled, bert, bert-tuned (bert with "
                       f"per-class thresholds tuned on out-of-fold scores), upper (UpperBound: debtags, sib200), "
                       f"lri, clesa, kcca, dci (cross-lingual baselines; clesa and kcca need a parallel collection: "
                       f"the training documents' translations on debtags and sib200, else --view-param "
                       f"kcca.parallel=PATH), "
                       f"gFun view letters (x, m, w, b, r, xm, xmw, xmb, r_m, r_mw, xbr_m, ...), optionally "
                       f"-mean/-concat/-stack/-wmean/-select; the whole list is checked before anything runs "
                       f"(default {full}; --quick: {quick})")
        p.add_argument("--out", default=None, help="output folder (default results/<experiment>-<dataset>)")
        p.add_argument("--quick", action="store_true",
                       help="tiny: 60 train / 30 test documents per language, 3 languages, 2 runs, meta C 1")
        p.add_argument("--meta-C", type=_parse_C, default=None, help=META_C_HELP[:-1] + "; --quick: 1)")
        p.add_argument("--languages", default=None, help="comma-separated languages to keep (default: all)")
        p.add_argument("--sample", default=None, metavar="TRAIN,TEST,LANGUAGES",
                       help="sample TRAIN training and TEST test documents per language (seeded by run) of the first "
                            "LANGUAGES training languages (alphabetically); no zero-shot documents")
        p.add_argument("--word-vectors", default=None, type=word_vectors_type,
                       help="word-vector source of the m and r views: e5-subword, e5, encoder:SPEC, "
                            "encoder-subword:SPEC, vec:DIR (default: e5-subword, as gfun train)")
        add_neural_arguments(p)
        add_view_param_argument(p)
        p.add_argument("--seed", type=seed_type, default=0, help="base seed (run r uses seed + r)")
        p.add_argument("--n-jobs", type=n_jobs_type, default=1, help=N_JOBS_HELP)
        p.add_argument("--no-plots", action="store_true",
                       help="skip the PNG figures (skipped anyway, with a warning, without matplotlib)")
        p.add_argument("--no-view-cache", action="store_true",
                       help="refit every view for every configuration instead of fitting it once per run and "
                            "reusing it (the cache lives in <out>/.view-cache while the experiment runs)")
        if name == "aggregation":
            from gfun.funnelling import AGGREGATIONS

            p.add_argument("--aggregations", default=",".join(AGGREGATIONS),
                           help="comma-separated aggregation policies to compare (each gFun configuration is run "
                                "with every one)")
        if name == "many-shot":
            p.add_argument("--zero-shot-test", action="store_true",
                           help="also test every model on the dataset's zero-shot test documents (debtags: fi, hu, nl, "
                                "sv) and write the zero-shot table of the configurations that serve them "
                                "(many-shot-<dataset>-zero-shot.md/.csv/.tex, same runs, same t-tests); the many-shot "
                                "table stays on the training languages")
        if name == "recurrent":
            p.add_argument("--reference", default=None,
                           help=f"comma-separated configurations of the many-shot tables run alongside, that every row "
                                f"is tested against ('' for none; default {DEFAULT_REFERENCE[0]}; --quick: "
                                f"{DEFAULT_REFERENCE[1]})")
        if name == "learning-curve":
            p.add_argument("--targets", default=None, help="comma-separated target languages (default: the first)")
            p.add_argument("--fractions", default=None, help="comma-separated percentages (default 0,10,20,30,50,100)")
        p.set_defaults(func=cmd_experiment, experiment=name)
    return parser
