"""The ``gfun`` command line: train, predict, evaluate, demo, datasets.

Examples
--------
::

    gfun train --train train.jsonl --method gfun --views x --model model/
    gfun predict --model model/ --input new.jsonl --output predictions.jsonl
    gfun evaluate --model model/ --test test.jsonl
    gfun demo
    GFUN_DATA=../shared/data gfun datasets stats exceptius
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gfun.cli.options import (
    INPUT_FORMATS_HELP,
    META_C_HELP,
    N_JOBS_HELP,
    HelpFormatter,
    _C_type,
    _out,
    _parse_C,
    _read,
    add_global_options,
    add_neural_arguments,
    add_view_param_argument,
    cap_n_jobs,
    check_input,
    check_modules,
    complete_for_model,
    iter_parsers,
    n_jobs_type,
    parse_view_params,
    plural,
    seed_type,
    terminal_safe,
    warn_about_documents,
    word_vectors_type,
)
from gfun.configuration import METHODS
from gfun.errors import MissingDependencyError
from gfun.funnelling import AGGREGATIONS, DEFAULT_AGGREGATION
from gfun.metrics.columns import columns_help

__all__ = ["build_parser", "main"]

logger = logging.getLogger("gfun.cli.main")

MISSING_LABELS_HELP = ("documents without a 'labels' field (when others have one): read as having no label, negative "
                       "for every class, with a warning (warn), refused (error), or so without a warning (negative)")


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity < 0 else logging.INFO if verbosity == 0 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S",
                        stream=sys.stderr, force=True)


# ---------------------------------------------------------------------------------------------- commands
def train_configuration(args: argparse.Namespace) -> tuple[Any, dict | None]:
    """The configuration (:class:`gfun.configuration.Config`) and the view parameters of ``gfun train``'s
    arguments, defaults applied (the views of the install, the word vectors)."""
    from gfun.configuration import (
        DEFAULT_VIEWS_CORE,
        DEFAULT_WORD_VECTORS,
        default_views,
        method_config,
        neural_view_params,
    )

    views, word_vectors = args.views, args.word_vectors
    if args.method == "gfun" and views is None:
        views = default_views()
        logger.info("no --views: gFun-%s, the default %s", views.upper(),
                    "without the torch extra (gfun[torch] adds the frozen encoder's E and F views: gFun-XPEF)"
                    if views == DEFAULT_VIEWS_CORE else "with the torch extra")
    if word_vectors is None and args.method in ("gfun", "fun") and set("mr") & set((views or "") + (
            args.zero_shot_views or "")):
        word_vectors = DEFAULT_WORD_VECTORS
    config = method_config(args.method, views=views or "x", aggregation=args.aggregation, r_wce=args.r_wce)
    view_params = neural_view_params(word_vectors, args.encoder, args.neural_preset, args.device,
                                     args.r_wce, trainable_layers=args.trainable_layers, save_dtype=args.save_dtype,
                                     self_contained=args.self_contained, progress=True)
    return config, parse_view_params(args.view_param, view_params)


def train_estimator(args: argparse.Namespace, setup: tuple[Any, dict | None] | None = None) -> Any:
    """The unfitted estimator of ``gfun train``'s arguments (see :func:`gfun.configuration.build_estimator`);
    ``setup``: what :func:`train_configuration` returned for them, when the caller has it already."""
    from gfun.configuration import build_estimator, default_meta_class_weight

    config, view_params = setup or train_configuration(args)
    class_weight = default_meta_class_weight(args.method, args.meta_class_weight)
    return build_estimator(config, meta_C=args.meta_C, first_tier_C=args.first_tier_C,
                           train_posteriors=args.train_posteriors, normalize=not args.no_normalize,
                           zero_shot_views=args.zero_shot_views, meta_class_weight=class_weight,
                           meta_threshold=args.meta_threshold, view_params=view_params, n_jobs=args.n_jobs,
                           random_state=args.seed, verbose=True)


def cmd_train(args: argparse.Namespace) -> int:
    from gfun.configuration import required_modules
    from gfun.corpus.files import read_classes
    from gfun.persistence.saving import check_model_destination

    if args.views is not None and not args.views.strip():
        raise ValueError("--views is empty: give view letters (e.g. xp), or leave --views out for the default")
    check_model_destination(args.model)  # before the fit: a destination that cannot be written fails in seconds
    from gfun.persistence.directory import model_directory_of

    replaced = model_directory_of(args.model)
    if replaced is not None and Path(os.path.abspath(args.model)) == replaced:
        logger.info("%s holds a saved model: it is replaced once the new one is fitted", args.model)
    setup = train_configuration(args)  # and so does a missing extra
    check_modules(required_modules(setup[0], view_params=setup[1], zero_shot_views=args.zero_shot_views))
    classes = read_classes(args.classes) if args.classes else None
    train = _read(args.train, classes, args.unknown_labels, on_missing_labels=args.missing_labels)
    if not train.labelled:
        raise ValueError(f"{args.train}: the training documents carry no 'labels' field")
    logger.info("training %s on %s", args.method, train)
    est = train_estimator(args, setup)
    t0 = time.perf_counter()
    est.fit(train)
    logger.info("fitted in %.1f s", time.perf_counter() - t0)
    est.save(args.model)
    _out(f"model saved to {args.model} ({args.method}, {len(train.classes)} classes, languages "
         f"{', '.join(train.languages)}, fitted in {time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from gfun.cli.output import check_prediction_output, prediction_output, writes_to_stdout
    from gfun.corpus.files import read_records
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.persistence.loading import load_model
    from gfun.predictions import prediction_records

    if args.detect_language:  # asked for explicitly: the extra is checked before anything is read
        check_modules({"py3langid": "--detect-language"})
    check_input(args.input)
    check_prediction_output(args.output, args.input)
    model = load_model(args.model)
    # what gfun serve accepts: documents without an id are numbered, languages detected where missing
    records, detected = complete_for_model(read_records(args.input), model, path=args.input)
    docs = MultilingualCorpus.from_records(records, list(model.classes_), on_unknown_label="ignore",
                                           path=args.input, on_missing_labels="negative")
    warn_about_documents(model, docs, detected)
    t0 = time.perf_counter()
    # an empty input (no document, or blank lines only) gives an empty output, as gfun explain does
    records = prediction_records(model, docs, probabilities=not args.no_proba, detected=detected) if len(docs) else []
    logger.info("predicted %s in %.1f s", plural(len(docs), "document"), time.perf_counter() - t0)
    with prediction_output(args.output) as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, allow_nan=False) + "\n")  # JSON: no bare NaN
    if writes_to_stdout(args.output):  # keep the JSONL stream clean
        logger.info("wrote predictions for %s to standard output", plural(len(docs), "document"))
    else:
        _out(f"wrote predictions for {plural(len(docs), 'document')} to {args.output}")
    return 0


#: The columns of ``gfun evaluate`` that count (written as integers by ``--json``).
_COUNT_COLUMNS = ("n_docs", "unknown_labels")


def _json_number(column: str, value: Any) -> float | int | None:
    """A cell of ``gfun evaluate --json``: ``null`` for NaN, an integer for a count, else a float."""
    if value != value:
        return None
    return int(value) if column in _COUNT_COLUMNS else float(value)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from gfun.metrics.evaluation import evaluate_model
    from gfun.metrics.formatting import format_table
    from gfun.persistence.loading import load_model

    check_input(args.input)
    model = load_model(args.model)
    # read against the model's classes: a label is matched to the model's spelling (classes that the model keeps
    # apart, such as 'role::program' and 'ROLE::PROGRAM', stay apart), and unknown labels are kept to be counted
    test = _read(args.input, list(model.classes_), "keep", on_missing_labels=args.missing_labels)
    if not test.labelled:
        raise ValueError(f"{args.input}: the test documents carry no 'labels' field")
    df = evaluate_model(model, test, unknown_labels=args.unknown_labels)
    if args.json:
        _out(json.dumps({str(k): {c: _json_number(c, v) for c, v in row.items()}
                         for k, row in df.to_dict(orient="index").items()}, indent=1, allow_nan=False))
    else:
        _out(format_table(df))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from gfun.cli.demo import demo_modules, full_demo_hint, run_demo
    from gfun.metrics.formatting import format_table

    check_modules(demo_modules(full=args.full))
    t0 = time.perf_counter()
    df = run_demo(seed=args.seed, n_jobs=args.n_jobs, full=args.full)
    _out("gfun demo: Debian package descriptions (5 languages, 30 debtags), averages over languages"
         + ("" if "gFun-XMW" in df.index else f"; gFun-XW, gFun-XMW and gFun-XMP: {full_demo_hint()}"))
    _out(format_table(df))
    _out(f"total {time.perf_counter() - t0:.0f} s")
    return 0


def _encoder_note(view: dict) -> str:
    """``; 128 tokens, int8`` for a frozen-encoder view of :func:`gfun.persistence.loading.model_description`."""
    encoder = view.get("encoder")
    if not encoder:
        return ""
    return f"; {encoder['max_length']} tokens, {'int8' if encoder['quantize'] else 'float32'}"


def format_model_description(info: dict[str, Any], *, max_classes: int = 20) -> str:
    """``gfun info``'s text: one line per aspect of :func:`gfun.persistence.loading.model_description`."""
    size = info["size_bytes"]
    views = ", ".join(f"{v['letter'].upper()} ({v['name']}: {v['serves']}{_encoder_note(v)})"
                      for v in info["views"]) or "none (a baseline)"
    languages = ", ".join(info["languages"])
    if info.get("any_language"):
        through = ", ".join(v.upper() for v in info.get("any_language_views", []))
        languages += "; any other language" + (f" through {through}" if through else "")
    classes = info["classes"]
    shown = ", ".join(classes[:max_classes]) + (f", ... (+{len(classes) - max_classes})"
                                                if len(classes) > max_classes else "")
    settings = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(info["settings"].items()) if v is not None)
    rows = [("model", f"{info['model']} ({info['estimator']}, saved {info['created'] or '?'} by gfun "
                      f"{info['saved_by_gfun'] or '?'}; read by gfun {info['gfun_version']})"),
            ("size", "?" if size is None else f"{size / 2**20:.1f} MiB"),
            *([("saved with", ", ".join(f"{k} {v['saved']}" + ("" if v["here"] == v["saved"] else
                                                             f" (here: {v['here'] or 'not installed'})")
                                        for k, v in info["saved_with"].items()))] if info.get("saved_with") else []),
            ("languages", languages),
            ("views", views)]
    if info["selected_views"] is not None:
        rows.append(("selected views", ", ".join(v.upper() for v in info["selected_views"])))
    if info.get("unseen_language_views"):
        rows.append(("other languages", "own meta-classifier of " + ", ".join(v.upper() for v in
                                                                           info["unseen_language_views"])))
    if info["zero_shot_views"]:
        rows.append(("zero-shot views", ", ".join(f"{v['letter'].upper()} ({v['serves']})"
                                                  for v in info["zero_shot_views"])))
    rows += [("probabilities", "yes (calibrated)" if info["probabilities"] else "no"),
             ("classes", f"{len(classes)}: {shown}"), ("settings", settings or "-")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def cmd_info(args: argparse.Namespace) -> int:
    from gfun.persistence.loading import load_model, model_description, read_manifest

    if (args.model_option is None) == (args.model is None):
        sys.stderr.write("gfun info: error: give the model directory once, as --model MODEL (or as MODEL)\n")
        return 2
    model = args.model_option or args.model
    info = model_description(load_model(model), read_manifest(model), model)
    _out(json.dumps(info, indent=1, ensure_ascii=False) if args.json else format_model_description(info))
    return 0


def _serve_amount(value: str) -> float:
    """argparse ``type`` of the sizes and timeouts of ``gfun serve``: a positive number below 1e300 (so that a size
    in MiB counts in bytes); argparse names the option, ``argument --max-body-mb: must be ..., got 'inf'``."""
    try:
        amount = float(value)
    except ValueError:
        amount = float("nan")
    if not 0 < amount < 1e300:
        raise argparse.ArgumentTypeError(f"must be a positive number below 1e300, got {value!r}")
    return amount


def cmd_serve(args: argparse.Namespace) -> int:
    from gfun.serve.app import serve

    check_modules({"fastapi": "gfun serve", "uvicorn": "gfun serve"})  # before the model is loaded
    serve(args.model, host=args.host, port=args.port, max_batch=args.max_batch,
          max_body_bytes=int(args.max_body_mb * 2**20), max_connections=args.max_connections,
          header_timeout=args.header_timeout, body_timeout=args.body_timeout,
          keep_alive_timeout=args.keep_alive_timeout, allow_hosts=args.allow_host or (),
          log_level="warning" if args.quiet else "info")
    return 0


# ---------------------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The ``gfun`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="gfun", description="Generalized Funnelling: cross-lingual multilabel text classification.",
        formatter_class=HelpFormatter)
    add_global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    fmt = HelpFormatter
    p = sub.add_parser("train", help="train a model on labelled documents and save it", formatter_class=fmt,
                       description="Train gFun or a baseline on a JSONL/TSV file of labelled documents.")
    p.add_argument("--train", required=True, help="training documents, " + INPUT_FORMATS_HELP)
    p.add_argument("--model", required=True, help="directory the fitted model is saved to")
    p.add_argument("--method", choices=METHODS, default="gfun",
                   help="gfun: Generalized Funnelling; fun: Funnelling (2019); naive: one classifier per language; "
                   "pooled: one classifier over one vocabulary of all languages; bert: the fine-tuned transformer "
                   "used as the classifier (the paper's mBERT baseline); bert-tuned: the same with per-class "
                   "thresholds tuned on out-of-fold scores of its training documents; upper: the "
                   "paper's UpperBound, one English classifier on the documents' English versions (a text_en field "
                   "in every non-English record: gfun datasets build debtags --english, or sib200); lri, clesa, "
                   "kcca, dci: the cross-lingual baselines of gfun.baselines.crosslingual (clesa and kcca read a "
                   "parallel collection: debtags by default, or --view-param kcca.parallel=FILE)")
    p.add_argument("--views", default=None, help="gFun view letters: x (Posteriors), m (aligned word embeddings), "
                   "w (word-class embeddings), b (fine-tuned transformer), r (GRU over word vectors), p (pooled: one "
                   "classifier over a vocabulary shared by all languages), e (a frozen encoder's document vector), "
                   "f (that vector beside p's vocabulary); e.g. xmw, xmb, xpef. Default: xpef with the torch extra "
                   "(its frozen pass 128 int8 tokens on a CPU, 512 float32 on a GPU), else xp")
    p.add_argument("--r-wce", action="store_true",
                   help="the r view reads word vectors concatenated with word-class embeddings (R_MW; default R_M)")
    add_neural_arguments(p, saving=True)
    add_view_param_argument(p)
    p.add_argument("--word-vectors", default=None, type=word_vectors_type,
                   help="source of aligned word vectors for the m and r views: 'e5-subword' (the default: the mean "
                   "of each word's sub-word input embeddings of the offline multilingual-e5-small encoder; needs "
                   "gfun[torch]), 'e5' (each word encoded in isolation by that encoder: slower), or a folder of "
                   "MUSE/fastText wiki.multi.<lang>.vec files ('vec:DIR')")
    p.add_argument("--aggregation", choices=AGGREGATIONS, default=DEFAULT_AGGREGATION,
                   help="how views are combined: mean, concat (the paper's), stack (every view's posteriors side by "
                   "side), wmean (per-view, per-class weighted mean); see gfun.funnelling.aggregation")
    p.add_argument("--zero-shot-views", default=None,
                   help="fallback view letters (e.g. m) used only for languages the main views cannot serve; "
                   "with --method fun this is the 2019 paper's zero-shot Funnelling")
    p.add_argument("--classes", default=None, metavar="FILE",
                   help="a file holding the class names as a JSON list, in column order (gfun datasets build "
                   "writes one: classes.json); default: every label found in the training file, sorted")
    p.add_argument("--unknown-labels", choices=("error", "ignore"), default="error",
                   help="training labels outside --classes: refused (error) or dropped (ignore)")
    p.add_argument("--ignore-unknown-labels", action="store_const", const="ignore", dest="unknown_labels",
                   help=argparse.SUPPRESS)  # the earlier spelling of --unknown-labels ignore
    p.add_argument("--missing-labels", choices=("warn", "error", "negative"), default="warn", help=MISSING_LABELS_HELP)
    p.add_argument("--meta-C", type=_parse_C, default=None, help=META_C_HELP)
    p.add_argument("--meta-class-weight", choices=("none", "balanced", "sqrt"), default=None,
                   help="class weights of the meta-classifier: none (the paper's), balanced (each class's positives "
                   "and negatives weighted by their inverse frequency), sqrt (the square roots of the balanced "
                   "weights: rare classes weigh more, less than balanced); default: sqrt for --method gfun, none "
                   "for the other methods")
    p.add_argument("--meta-threshold", choices=("auto", "zero", "validated", "f1", "k", "f1+k"), default="auto",
                   help="decision threshold rule of the meta-classifier per class: auto (validated with select, "
                   "stack and wmean, else zero), zero (the SVM's own), validated (0 or F1-optimal, whichever "
                   "validates better), f1 (F1-optimal), k (K-optimal: recall-aware, favours K and rare classes), "
                   "f1+k (the mean of F1 and K: between the two); "
                   "default: %(default)s")
    p.add_argument("--first-tier-C", type=_C_type(allow_cv=False), default=1.0,
                   help="C of the first-tier linear SVMs")
    p.add_argument("--train-posteriors", choices=("auto", "in-sample", "cv"), default="auto",
                   help="how first-tier posteriors of training documents are produced (auto: out-of-fold for "
                   "stack and wmean, in-sample for mean and concat)")
    p.add_argument("--no-normalize", action="store_true", help="disable L2 and z-score normalisation")
    p.add_argument("--n-jobs", type=n_jobs_type, default=1, help=N_JOBS_HELP)
    p.add_argument("--seed", type=seed_type, default=0, help="random seed (0 to 2^32 - 1)")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("predict", help="label new documents with a saved model", formatter_class=fmt,
                       description="Write one JSON line per document: id, lang, lang_detected, predicted labels "
                                   "and the posterior probability of every class. Documents are what gfun serve "
                                   "accepts: 'text', and optionally 'id' (default: the document's position, from 0) "
                                   "and 'lang' (default: detected from the text, which needs gfun[langid]; "
                                   "unconfident detections are errors, and so are languages the model cannot "
                                   "serve).")
    p.add_argument("--model", required=True, help="directory of a saved model")
    p.add_argument("--input", required=True, help="documents to label, " + INPUT_FORMATS_HELP + "; labels ignored")
    p.add_argument("--output", default="-",
                   help="output JSONL file (default: standard output, as -); never the input or a file of a model")
    p.add_argument("--no-proba", action="store_true", help="do not write per-class probabilities")
    p.add_argument("--detect-language", action="store_true", help=argparse.SUPPRESS)  # detection is the default
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", help="F1/K per language and on average", formatter_class=fmt,
                       description="Evaluate a saved model on labelled documents: F1 and K, macro and micro, "
                                   "per language and averaged over languages.",
                       epilog=columns_help(("lang", "F1M", "F1µ", "KM", "Kµ", "F1M(present)", "unlabelled", "n_docs",
                                            "unknown_labels")))
    p.add_argument("--model", required=True, help="directory of a saved model")
    p.add_argument("--input", default=None, help="labelled test documents, " + INPUT_FORMATS_HELP + " (required)")
    p.add_argument("--test", dest="input", help=argparse.SUPPRESS)  # the earlier spelling of --input
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--unknown-labels", choices=("count", "ignore", "error"), default="count",
                   help="test labels the model does not know. count: each is, in every language where it occurs "
                   "(and only there), one more class with its documents as false negatives and no true negatives "
                   "(F1 0, K -1), so it enters that language's macro and micro averages; never above ignore. "
                   "ignore: dropped, the scores cover the model's classes only. error: refused. Their number is "
                   "in the unknown_labels column either way")
    p.add_argument("--missing-labels", choices=("warn", "error", "negative"), default="warn", help=MISSING_LABELS_HELP)
    p.set_defaults(func=cmd_evaluate, required_options=(("input", "--input"),), parser=p)

    p = sub.add_parser("demo", help="train Naive, Pooled, Fun and gFun on the bundled demo data and print the table",
                       formatter_class=fmt, epilog=columns_help(("method", "F1M", "F1µ", "KM", "Kµ", "fit_s")),
                       description="Train Naive, Pooled, Fun, gFun-X and gFun-XP (--full: also gFun-XW, gFun-XMW "
                                   "and gFun-XMP) on the bundled demo data (Debian package descriptions in 5 "
                                   "languages, 30 debtags) and print their test scores averaged over languages.")
    p.add_argument("--seed", type=seed_type, default=0, help="random seed (0 to 2^32 - 1)")
    p.add_argument("--n-jobs", type=n_jobs_type, default=1,
                   help=N_JOBS_HELP + "; any number gives the same table")
    p.add_argument("--full", action="store_true",
                   help="also gFun-XW, gFun-XMW and gFun-XMP (needs gfun[torch]; `make demo-full`)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("info", help="what a saved model is: classes, views, languages, size, settings",
                       formatter_class=fmt)
    p.add_argument("--model", dest="model_option", metavar="MODEL", help="directory of a saved model")
    p.add_argument("model", nargs="?", help=argparse.SUPPRESS)  # the earlier spelling: the model without --model
    p.add_argument("--json", action="store_true", help="print JSON (every class, every setting)")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("serve", help="serve a saved model over HTTP (an API and a page to try it)", formatter_class=fmt,
                       description="Serve a saved model: POST /predict labels a batch of documents, GET /model "
                                   "describes the model, GET /health, GET / a page to try it, GET /docs the API "
                                   "(needs gfun[serve]).")
    p.add_argument("--model", required=True, help="directory of a saved model")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    from gfun.cli.options import int_type

    p.add_argument("--port", type=int_type(1, 65535), default=8000, help="TCP port")
    p.add_argument("--max-batch", type=int_type(1), default=256,
                   help="most documents in one request (more: status 413)")
    p.add_argument("--max-body-mb", type=_serve_amount, default=8.0,
                   help="largest request body in MiB (larger: status 413)")
    p.add_argument("--max-connections", type=int_type(1), default=32,
                   help="most connections open at once (a new one closes the one idle longest; when every one "
                   "is in a request, the new one's request gets status 503, but for GET /health)")
    p.add_argument("--header-timeout", type=_serve_amount, default=10.0,
                   help="seconds for a request line and headers to arrive (later: the connection is closed)")
    p.add_argument("--body-timeout", type=_serve_amount, default=30.0,
                   help="seconds for a request body to arrive whole after its headers (later: status 408)")
    p.add_argument("--keep-alive-timeout", type=_serve_amount, default=5.0,
                   help="seconds an idle connection stays open")
    p.add_argument("--allow-host", action="append", metavar="NAME",
                   help="also answer requests whose Host header names NAME (repeatable; '*': any host); by default "
                   "only localhost, 127.0.0.1, [::1] and --host (against DNS rebinding; status 400)")
    p.set_defaults(func=cmd_serve)

    from gfun.cli.datasets import add_datasets_parser
    from gfun.cli.embeddings import add_embeddings_parser
    from gfun.cli.experiment import add_experiment_parser
    from gfun.cli.explain import add_explain_parser
    from gfun.cli.plot import add_plot_parser

    add_explain_parser(sub)
    add_datasets_parser(sub)
    add_embeddings_parser(sub)
    add_experiment_parser(sub)
    add_plot_parser(sub)
    for command in list(iter_parsers(parser))[1:]:  # -q, -v also after the command, and in its --help
        add_global_options(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gfun`` command: exit status 0, 1 (an error, one line on stderr), 2 (usage), 130 (Ctrl-C).

    Heavy modules are imported only inside this function, so an interrupt at any moment (imports
    included) ends with one line on stderr and status 130, and ``--help``/``--version`` answer at once.
    """
    with _recording_interrupts() as interrupts:
        try:
            return _main(argv)
        except KeyboardInterrupt:
            sys.stderr.write("gfun: interrupted\n")
            return 130
        except BrokenPipeError:  # e.g. `gfun predict --output - | head`: the reader left
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        except BaseException:
            if interrupts:  # Ctrl-C turned into another error (numpy reports it as a failed C-extension import)
                sys.stderr.write("gfun: interrupted\n")
                return 130
            raise


@contextlib.contextmanager
def _recording_interrupts() -> Iterator[list[int]]:
    """Remember every SIGINT while raising KeyboardInterrupt as usual (main thread only; restored after)."""
    import signal

    seen: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


_HF_QUIET = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}


@contextlib.contextmanager
def _quiet_hugging_face() -> Iterator[None]:
    """``-q``: no progress bars (``Loading weights`` ...) nor info from transformers and huggingface_hub, whether
    they are imported already or during the command; restored afterwards (in-process calls)."""
    saved = {k: os.environ.get(k) for k in _HF_QUIET}
    os.environ.update(_HF_QUIET)
    hf_logging = sys.modules.get("transformers.utils.logging")
    was_on = hf_logging.is_progress_bar_enabled() if hf_logging is not None else saved[
        "HF_HUB_DISABLE_PROGRESS_BARS"] not in ("1", "true", "TRUE", "yes")
    if hf_logging is not None:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        hf_logging = sys.modules.get("transformers.utils.logging")
        if hf_logging is not None and was_on:
            from gfun.core.progress import enable_hugging_face_bars

            enable_hugging_face_bars(hf_logging)


def missing_extra(exc: ImportError) -> MissingDependencyError | None:
    """The missing extra behind an :class:`ImportError` (one line that names the extra to install), or ``None`` when
    the module that failed to import is none of gfun's optional dependencies."""
    from gfun.core.optional import EXTRA_OF

    if isinstance(exc, MissingDependencyError):
        return exc
    top = (exc.name or "").split(".", 1)[0]
    return MissingDependencyError(top, EXTRA_OF[top]) if top in EXTRA_OF else None


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    _setup_logging(-1 if args.quiet else args.verbose)
    try:
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 2
        for dest, option in getattr(args, "required_options", ()):
            if getattr(args, dest, None) is None:
                args.parser.error(f"the following arguments are required: {option}")
        if getattr(args, "n_jobs", None) is not None:
            args.n_jobs = cap_n_jobs(args.n_jobs, logger)
        from gfun.core.progress import show_bars
        from gfun.errors import CorpusFormatError, ModelFormatError, UnseenLanguageError

        try:
            # progress: a bar for every long step on a terminal, log lines otherwise; -q: neither
            with show_bars(not args.quiet), _quiet_hugging_face() if args.quiet else contextlib.nullcontext():
                return int(args.func(args))
        except BrokenPipeError:
            raise
        except (CorpusFormatError, ModelFormatError, UnseenLanguageError, ValueError, OSError, OverflowError) as exc:
            sys.stderr.write(terminal_safe(f"gfun {args.command}: error: {exc}").replace("\n", " ") + "\n")
            return 1
        except MemoryError as exc:  # a size asked for (a resolution, a batch) beyond this machine: one line
            detail = f" ({exc})" if str(exc) else ""
            sys.stderr.write(terminal_safe(f"gfun {args.command}: error: out of memory{detail}; ask for less (a "
                                           "smaller value of the option that sets the size)") + "\n")
            return 1
        except ImportError as exc:
            missing = missing_extra(exc)
            if missing is None:  # not an extra of gfun: a broken install, reported as is
                raise
            sys.stderr.write(f"gfun {args.command}: error: {missing}\n")
            return 1
    finally:
        # Called in-process (tests, notebooks): leave no handler bound to this call's stderr behind.
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        root.setLevel(saved[0])
        for handler in saved[1]:
            root.addHandler(handler)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
