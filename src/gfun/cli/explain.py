"""``gfun explain``: why a saved gFun model gives each document its labels.

For each document and each label explained (the predicted ones by default), the meta-classifier's decision split
into a base value and each view's contribution, and the words of the document that pushed the label up or down
(:mod:`gfun.funnelling.explanation` defines the numbers). A readable text on standard output by default; with
``--output``, one JSON object per document (JSONL), as ``gfun predict`` writes its records.
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from gfun.cli.options import (
    INPUT_FORMATS_HELP,
    HelpFormatter,
    _out,
    check_input,
    check_modules,
    complete_for_model,
    int_type,
    plural,
    warn_about_documents,
)

__all__ = ["add_explain_parser", "cmd_explain"]

logger = logging.getLogger("gfun.cli.main")


def cmd_explain(args: argparse.Namespace) -> int:
    from gfun.cli.output import check_prediction_output, prediction_output, writes_to_stdout
    from gfun.corpus.files import read_records
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.persistence.loading import load_model

    if args.detect_language:  # asked for explicitly: the extra is checked before anything is read
        check_modules({"py3langid": "--detect-language"})
    check_input(args.input)
    if args.output is not None:
        check_prediction_output(args.output, args.input)
    if args.top_k is not None and args.top_k < 1:
        raise ValueError(f"--top-k must be a positive integer, got {args.top_k}")
    if args.top_words < 0:
        raise ValueError(f"--top-words must be 0 or more, got {args.top_words}")
    model = load_model(args.model)
    if not callable(getattr(model, "explain", None)):
        raise ValueError(f"{args.model}: a {type(model).__name__} model has no views to explain (gfun explain "
                         "explains gFun and Fun models)")
    # read as gfun predict reads: documents without an id are numbered, languages detected where missing
    records, _ = complete_for_model(read_records(args.input), model, path=args.input)
    docs = MultilingualCorpus.from_records(records, list(model.classes_), on_unknown_label="ignore", path=args.input,
                                           on_missing_labels="negative")
    t0 = time.perf_counter()
    explained = model.explain(docs, labels=args.labels, top_k=args.top_k, top_words=args.top_words)
    warn_about_documents(model, docs)  # once the labels asked for are known to be the model's
    logger.info("explained %s in %.1f s", plural(len(docs), "document"), time.perf_counter() - t0)
    if args.output is None:
        _out(explained.to_text())
        return 0
    with prediction_output(args.output) as fh:
        for doc in explained:
            fh.write(json.dumps(doc.to_dict(), ensure_ascii=False, allow_nan=False) + "\n")
    if not writes_to_stdout(args.output):
        _out(f"wrote explanations of {plural(len(docs), 'document')} to {args.output}")
    return 0


def add_explain_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``gfun explain``."""
    p = sub.add_parser(
        "explain", help="why a saved model gives each document its labels: views and words",
        formatter_class=HelpFormatter,
        description="For each document and each label explained (the predicted ones by default): the "
                    "meta-classifier's decision value as a base value plus one contribution per view (their Shapley "
                    "values: they add up to the decision exactly), and the words that pushed the label up or down "
                    "(X and P: w*x terms of the view's own SVM score; M and W: change in the view's posterior when "
                    "the word is removed). See docs/user-guide.md, 'Explanations'.")
    p.add_argument("--model", required=True, help="directory of a saved model")
    p.add_argument("--input", required=True,
                   help="documents to explain, as gfun predict reads them: " + INPUT_FORMATS_HELP + "; labels "
                   "ignored; a document without 'id' gets its position, one without 'lang' its detected language")
    p.add_argument("--output", default=None,
                   help="write one JSON object per document to this JSONL file (- for standard output) instead of "
                   "the text; never the input or a file of a model")
    p.add_argument("--labels", nargs="+", default=None, metavar="LABEL",
                   help="explain these labels for every document (default: the predicted labels, or the "
                   "best-scoring one when none is predicted)")
    p.add_argument("--top-k", type=int_type(1), default=None,
                   help="explain each document's K best-scoring labels instead")
    p.add_argument("--top-words", type=int_type(0), default=10, help="most words shown per view, up and down (0: none)")
    p.add_argument("--detect-language", action="store_true", help=argparse.SUPPRESS)  # detection is the default
    p.set_defaults(func=cmd_explain)
