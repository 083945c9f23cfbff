"""``gfun plot wce``: the paper's Figure 2 (word-class embeddings as a heat map) as a PNG.

Wire into the main parser with ``add_plot_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

__all__ = ["add_plot_parser", "cmd_plot_wce", "parse_words"]

logger = logging.getLogger(__name__)

#: The highest ``--dpi``: a print resolution (higher ones ask for gigabytes of pixels).
MAX_DPI = 1200


def parse_words(text: str | None) -> list[tuple[str, str]] | None:
    """``"en:editor,de:Editor"`` -> ``[("en", "editor"), ("de", "Editor")]`` (``None`` for no text).

    Raises
    ------
    ValueError
        On an item without ``LANG:``.
    """
    if not text:
        return None
    out = []
    for item in text.split(","):
        if not item.strip():
            continue
        lang, colon, word = item.strip().partition(":")
        if not colon or not lang or not word:
            raise ValueError(f"--words takes LANG:WORD items separated by commas (e.g. en:editor,de:Editor), got "
                             f"{item.strip()!r}")
        out.append((lang.strip(), word.strip()))
    return out or None


def cmd_plot_wce(args: argparse.Namespace) -> int:
    """Draw the word-class embeddings of a training file (or of a saved model's W view) and write the PNG."""
    from gfun.cli.options import _out, _read, check_modules
    from gfun.cli.output import check_prediction_output
    from gfun.experiments.wce_plot import wce_figure

    check_modules({"matplotlib": "gfun plot"})  # before a W view is fitted or a model loaded
    if bool(args.train) == bool(args.model):
        raise ValueError("give either --train (a W view is fitted on it) or --model (a saved gFun model with W)")
    # never inside a model directory, never the training file, a directory that can be written
    check_prediction_output(args.out, args.train or "-", option="--out")
    words = parse_words(args.words)
    languages = [x.strip() for x in args.languages.split(",") if x.strip()] if args.languages else None
    classes = [x.strip() for x in args.show_classes.split(",") if x.strip()] if args.show_classes else None
    corpus = model = None
    if args.model:
        from gfun.persistence.loading import load_model

        model = load_model(args.model)
    else:
        from gfun.corpus.files import read_classes

        corpus = _read(args.train, read_classes(args.classes) if args.classes else None,
                       on_unknown_label="ignore" if args.classes else "error")
    try:
        fig = wce_figure(corpus, None, words=words, languages=languages, top=args.top, classes=classes, model=model,
                         title=args.title, dpi=args.dpi)
    except KeyError as exc:  # a word or language the view does not know: one line, not a traceback
        raise ValueError(exc.args[0] if exc.args else str(exc)) from None
    fmt = save_exactly(fig, args.out, dpi=args.dpi)
    _out(f"word-class embeddings heat map written to {args.out} ({fmt.upper()})")
    return 0


def save_exactly(fig: Any, path: str, *, dpi: int) -> str:
    """Save ``fig`` to ``path`` itself, replaced atomically once whole, and return the image format: the one its
    suffix names when matplotlib writes it (``.pdf``, ``.svg``...), else PNG (``mplot/CURRENT`` is written as
    ``mplot/CURRENT``, not ``mplot/CURRENT.png``)."""
    from pathlib import Path

    from gfun.core.atomic import atomic_write

    suffix = Path(path).suffix.lstrip(".").lower()
    fmt = suffix if suffix in fig.canvas.get_supported_filetypes() else "png"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        fig.savefig(fh, dpi=dpi, format=fmt)
    return fmt


def add_plot_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``plot`` and its sub-command ``wce`` on the main parser's ``subparsers``."""
    from gfun.cli.options import HelpFormatter, int_type

    parser = subparsers.add_parser("plot", help="the paper's figures that are not experiment outputs (Figure 2)",
                                   formatter_class=HelpFormatter)
    sub = parser.add_subparsers(dest="figure", metavar="FIGURE", required=True)
    text = ("Figure 2: word-class embeddings (each word's correlation with each class) as a heat map, from a W view "
            "fitted on --train or the W view of a saved --model; needs gfun[plots]")
    p = sub.add_parser("wce", help=text, description=text, formatter_class=HelpFormatter)
    p.add_argument("--train", default=None,
                   help="labelled training documents (.jsonl/.tsv): a W view is fitted on them")
    p.add_argument("--classes", default=None, help="JSON list of the class names of --train (others are dropped)")
    p.add_argument("--model", default=None, help="a saved gFun model with a W view, instead of --train")
    p.add_argument("--words", default=None, metavar="LANG:WORD,...",
                   help="rows, e.g. en:editor,de:Editor,it:editor (analysed as documents are: stems match); default: "
                        "the --top terms of each language that say most about a class (strongest class "
                        "association times the log of their document frequency, one class per term first: no "
                        "term of a single document)")
    p.add_argument("--languages", default=None, help="languages of the default rows (default: the first 3)")
    p.add_argument("--top", type=int_type(1), default=4, help="default rows per language")
    p.add_argument("--show-classes", default=None, help="comma-separated classes to show (default: every class)")
    p.add_argument("--title", default=None, help="figure title")
    p.add_argument("--dpi", type=int_type(1, MAX_DPI), default=150, help="resolution of the PNG (dots per inch)")
    p.add_argument("--out", required=True,
                   help="output image, written at exactly this path: PNG, or the format its suffix names (.pdf, "
                   ".svg...)")
    p.set_defaults(func=cmd_plot_wce)
    return parser
