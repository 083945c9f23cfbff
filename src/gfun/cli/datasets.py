"""The ``gfun datasets`` command: list the datasets, print their statistics, build run files.

::

    gfun datasets list
    gfun datasets stats NAME [--data-dir DIR] [--run R] [--langs L1,L2] [--json] [--no-features]
    gfun datasets build NAME --out DIR [--data-dir DIR] [--run R] [--langs L1,L2] [--force]

:func:`add_datasets_parser` registers the command on the ``subparsers`` object of the main parser;
each sub-command sets ``func``, which takes the parsed arguments and returns the exit status
(0 success, 1 a data problem, 2 a usage problem). Output goes to standard output, errors to
standard error.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

_LANGS_HELP = "comma-separated languages (exceptius, sib200, jrc-acquis, rcv1-rcv2)"

__all__ = ["add_datasets_parser", "build_dataset", "check_build_destination", "cmd_build", "cmd_list", "cmd_stats",
           "main"]

logger = logging.getLogger(__name__)


def _run_index(value: str) -> int:
    """argparse ``type`` of ``--run``: a run index, 0 or more."""
    from gfun.cli.options import int_type

    return int_type(0)(value)


def _error(message: str, status: int = 1) -> int:
    sys.stderr.write(f"gfun datasets: error: {message}\n")
    return status


def _location(name: str) -> str:
    from gfun.datasets import GFUN_DATA_ENV

    if name == "demo":
        return "(bundled)"
    name = "debtags" if name == "debtags-rare" else name  # the same files, another codeframe
    if name == "debtags" and not os.environ.get(GFUN_DATA_ENV):
        from gfun.datasets.debtags import APT_LISTS_DIR

        return APT_LISTS_DIR
    if os.environ.get(GFUN_DATA_ENV):
        return str(Path(os.environ[GFUN_DATA_ENV]) / name)
    return f"(set {GFUN_DATA_ENV} or pass --data-dir)"


def cmd_list(args: argparse.Namespace) -> int:
    """``gfun datasets list``: one line per dataset with its description and default folder."""
    from gfun.datasets.registry import DATASETS, DESCRIPTIONS

    width = max(len(n) for n in DATASETS)
    for name in DATASETS:
        where = _location(name)
        found = "" if where.startswith("(") else ("  [found]" if Path(where).is_dir() else "  [missing]")
        sys.stdout.write(f"{name:<{width}}  {DESCRIPTIONS.get(name, '')}\n{'':<{width}}  {where}{found}\n")
    return 0


def _jsonable(value: Any) -> Any:
    import pandas as pd

    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


def _loader_kw(args: argparse.Namespace) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if getattr(args, "split", None):
        kw["split"] = args.split  # debtags only: the protocol's sample or every tagged package
    langs = getattr(args, "langs", None)
    if langs:
        kw["langs"] = [g.strip() for g in langs.split(",") if g.strip()]
    return kw


def cmd_stats(args: argparse.Namespace) -> int:
    """``gfun datasets stats NAME``: the Table-1-style statistics of one run of a dataset."""
    from gfun.datasets.registry import load_dataset, resolve_dataset_name
    from gfun.datasets.stats import dataset_stats

    try:
        name = resolve_dataset_name(args.name)
    except ValueError as exc:
        return _error(str(exc), 2)
    try:
        splits = load_dataset(name, data_dir=args.data_dir, run=args.run, **_loader_kw(args))
    except (FileNotFoundError, ValueError, ImportError, TypeError) as exc:  # CorpusFormatError is a ValueError
        return _error(str(exc))
    table = dataset_stats(splits, features=not getattr(args, "no_features", False))
    if args.json:
        payload = {"dataset": name, "run": args.run, "classes": len(splits.classes),
                   "languages": {str(lang): {k: _jsonable(v) for k, v in row.items()}
                                 for lang, row in table.drop(index="all").iterrows()},
                   "overall": {k: _jsonable(v) for k, v in table.loc["all"].items()}}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    else:
        sys.stdout.write(f"{name} (run {args.run})\n{table.to_string()}\n")
    return 0


def build_dataset(name: str, out_dir: str | os.PathLike[str], *,
                  data_dir: str | os.PathLike[str] | None = None, run: int = 0, english: bool = False,
                  **kw: Any) -> Path:
    """Write one run of a dataset as files: ``<split>.jsonl`` per split and ``classes.json``.

    For ``debtags`` the files are those of :func:`gfun.datasets.debtags.write_debtags_run` (with
    ``stats.json``; ``english=True`` adds each record's English original, ``text_en``); for the other datasets
    each split present is written with :meth:`~gfun.corpus.multilingual.MultilingualCorpus.to_jsonl` (every extra field
    included: ``text_en`` for sib200). ``kw`` goes to the dataset's loader.

    Returns
    -------
    Path
        ``out_dir``, created if needed.
    """
    from gfun.datasets.registry import load_dataset, resolve_dataset_name

    name = resolve_dataset_name(name)
    out = Path(out_dir)
    if name == "debtags":
        from gfun.datasets.debtags import load_debtags, write_debtags_run

        return Path(write_debtags_run(load_debtags(run=run, data_dir=data_dir, **kw), out, english=english))
    splits = load_dataset(name, data_dir=data_dir, run=run, **kw)
    out.mkdir(parents=True, exist_ok=True)
    for split, corpus in splits.items():
        corpus.to_jsonl(out / f"{split}.jsonl")
    splits.train.save_classes(out / "classes.json")
    logger.debug("%s run %d written to %s", name, run, out)  # gfun datasets build prints it once, with the table
    return out


#: What ``gfun datasets build`` may write in its folder: the splits, the class list, debtags' statistics.
_BUILT = ("*.jsonl", "*.jsonl.gz", "classes.json", "stats.json")


def check_build_destination(out_dir: str | os.PathLike[str], *, force: bool = False) -> None:
    """Refuse, before a dataset is loaded, to write its files into a gfun model directory (it would damage the
    model), into a path that is a file, or over files already there (a ``train.jsonl``, a ``classes.json``...)
    unless ``force``.

    Raises
    ------
    FileExistsError, NotADirectoryError, ValueError
    """
    from gfun.persistence.directory import model_directory_of

    out = Path(out_dir)
    owner = model_directory_of(out)
    if owner is not None:
        raise ValueError(f"--out {out_dir} lies inside the gfun model directory {owner}; refusing to write there (it "
                         "would damage the model)")
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out_dir} is a file, not a folder")
    if out.is_dir() and not force:
        there = sorted({p.name for pattern in _BUILT for p in out.glob(pattern)})
        if there:
            raise FileExistsError(f"--out {out_dir} already holds {', '.join(there[:5])}"
                                  + (f" (+{len(there) - 5})" if len(there) > 5 else "")
                                  + "; refusing to overwrite (--force replaces them)")


def cmd_build(args: argparse.Namespace) -> int:
    """``gfun datasets build NAME --out DIR``: write the corpora of one run as JSONL files."""
    try:
        check_build_destination(args.out, force=args.force)
    except (OSError, ValueError) as exc:
        return _error(str(exc))
    try:
        out = build_dataset(args.name, args.out, data_dir=args.data_dir, run=args.run, english=args.english,
                            **_loader_kw(args))
    except ValueError as exc:
        if str(exc).startswith("unknown dataset"):
            return _error(str(exc), 2)
        return _error(str(exc))
    except (FileNotFoundError, ImportError, TypeError) as exc:
        return _error(str(exc))
    from gfun.datasets.registry import load_dataset, resolve_dataset_name
    from gfun.datasets.stats import dataset_stats

    name = resolve_dataset_name(args.name)
    splits = load_dataset(name, data_dir=args.data_dir, run=args.run, **_loader_kw(args))  # cached: cheap
    sys.stdout.write(f"{name} run {args.run} written to {out}\n{dataset_stats(splits).to_string()}\n")
    return 0


def add_datasets_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``datasets list | stats | build`` on the ``subparsers`` of the main parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``parser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``datasets`` parser.
    """
    parser = subparsers.add_parser("datasets",
                                   help="list the datasets, print their statistics, build run files",
                                   description="List the datasets, print their statistics, build run files.")
    sub = parser.add_subparsers(dest="datasets_command", metavar="{list,stats,build}")

    def usage(args: argparse.Namespace) -> int:
        parser.print_help(sys.stdout)
        return 2

    parser.set_defaults(func=usage)

    p_list = sub.add_parser("list", help="the datasets and where their files are looked for")
    p_list.set_defaults(func=cmd_list)

    p_stats = sub.add_parser("stats", help="Table-1-style statistics of one run of a dataset")
    p_stats.add_argument("name", help="dataset name (see 'gfun datasets list')")
    p_stats.add_argument("--data-dir", default=None, help="the dataset's folder (default: $GFUN_DATA/NAME)")
    p_stats.add_argument("--run", type=_run_index, default=0, help="run index (default 0)")
    p_stats.add_argument("--langs", default=None, help=_LANGS_HELP)
    p_stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_stats.add_argument("--no-features", action="store_true", help="skip the (slower) feature counts")
    p_stats.set_defaults(func=cmd_stats)

    p_build = sub.add_parser("build", help="write the corpora of one run as JSONL files")
    p_build.add_argument("name", help="dataset name (e.g. debtags)")
    p_build.add_argument("--out", required=True, help="output folder (never a model's; files already there are "
                         "refused unless --force)")
    p_build.add_argument("--force", action="store_true", help="replace the files of an earlier build in --out")
    p_build.add_argument("--data-dir", default=None, help="the dataset's folder (default: $GFUN_DATA/NAME)")
    p_build.add_argument("--run", type=_run_index, default=0, help="run index (default 0)")
    p_build.add_argument("--langs", default=None, help=_LANGS_HELP)
    p_build.add_argument("--english", action="store_true",
                         help="debtags: also write each record's English original (text_en), which gfun train --method "
                              "upper (UpperBound) needs; sib200 files always hold it")
    p_build.add_argument("--split", choices=("protocol", "all"), default=None,
                         help="debtags: 'all' builds every tagged package in every language with a translation, "
                              "split by source package (about 100,000 training documents), instead of the "
                              "protocol's sample")
    p_build.set_defaults(func=cmd_build)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``datasets`` on its own (``python -m gfun.cli.datasets list``)."""
    parser = argparse.ArgumentParser(prog="gfun")
    add_datasets_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["datasets", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
