"""Command-line pieces shared by ``gfun`` and ``gfun experiment``: help formatting, output, C options, the
options of the neural views and ``--view-param`` (what they mean is :mod:`gfun.configuration`'s).

Both command modules import this one (and not each other), so the experiment commands do not import the main
CLI that registers them.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["GLOBAL_OPTIONS", "INPUT_FORMATS_HELP", "META_C_HELP", "N_JOBS_HELP", "NEURAL_PRESETS", "HelpFormatter",
           "add_global_options", "add_neural_arguments", "add_view_param_argument", "cap_n_jobs", "check_input",
           "check_modules", "complete_for_model", "int_type", "iter_parsers", "n_jobs_type", "parse_view_params",
           "plural", "seed_type", "terminal_safe", "warn_about_documents", "word_vectors_type"]

NEURAL_PRESETS = ("paper", "gpu", "cpu")
#: ``--meta-C`` of ``gfun train`` and ``gfun experiment``: one default, C = 1 for gFun and Fun (docs/benchmarks.md:
#: on debtags, C by cross-validation takes 1.2 times as long for the same scores).
META_C_HELP = ("C of the meta-classifier (of the linear SVMs for naive, pooled, upper, lri, clesa, kcca, dci), or 'cv' "
               "for 5-fold CV over 0.1..10^4 (default: 1 for gfun and fun, the authors' setting, which scores as cv "
               "does in less time; cv for the others; bert and bert-tuned have none)")
#: The files of documents every command reads (``--train``, ``--input``).
INPUT_FORMATS_HELP = ("JSONL, TSV or CSV (told apart by their content; optionally .gz) or Parquet (.parquet, with "
                      "the experiments extra's pyarrow); - reads JSONL, TSV or CSV from standard input")
#: ``--n-jobs`` of every command (its default, 1, is stated by the help formatter).
N_JOBS_HELP = "parallel jobs: languages in tier 1, classes in tier 2 (-1: all cores)"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` lines that state a default only where there is one to state: not for options whose default is
    ``None`` or ``False`` (absent, off), nor for counters (``-v``), nor where the help text already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if (action.default is None or action.default is False or isinstance(action, argparse._CountAction)
                or "(default" in (action.help or "")):
            return action.help
        return super()._get_help_string(action)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """A description or epilog with line breaks keeps them: each line is filled on its own (a list of items,
        such as the columns of a table, one per line); without line breaks, the text is one paragraph."""
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        import textwrap

        lines = []
        for line in text.splitlines():
            body = line.lstrip()
            pad = indent + line[:len(line) - len(body)]
            lines += textwrap.wrap(body, width, initial_indent=pad, subsequent_indent=pad + "    ") or [""]
        return "\n".join(lines)


#: Control characters a terminal may act on (C0 but tab and line feed, DEL, C1): in data printed by a command they
#: are written as ``\u001b`` escapes, which a terminal shows as text and which keep JSON valid.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character a terminal acts on (an escape sequence from a label such as
    ``"\x1b[2J"`` would clear the screen, ``"\x1b]0;...\x07"`` retitle the window) written as a ``\u001b``
    escape; tabs and line breaks are kept. Inside a JSON string the escape is the same character."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _out(text: str) -> None:
    """Write ``text`` (and a line break) on standard output, terminal escapes from the data made harmless
    (:func:`terminal_safe`)."""
    text = terminal_safe(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


#: The title of the options that every command takes, before or after its name.
GLOBAL_OPTIONS = "global options (before or after the command)"


def add_global_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--version``, ``-v`` and ``-q``, which ``gfun`` takes before the command (``gfun -q train``) and every
    command after its name (``gfun train -q``); listed in every ``--help``.

    The command's parser (``top=False``) leaves them unset when they are not given (``argparse.SUPPRESS``), so
    that it never resets what was given before the command.
    """
    from gfun import __version__

    group = parser.add_argument_group(GLOBAL_OPTIONS)
    group.add_argument("--version", action="version", version=f"gfun {__version__}")
    group.add_argument("-v", "--verbose", action="count", default=0 if top else argparse.SUPPRESS,
                       help="more log output: -v adds debug messages")
    group.add_argument("-q", "--quiet", action="store_true", default=False if top else argparse.SUPPRESS,
                       help="only warnings and errors on stderr: no progress bars or progress lines")


def iter_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and the parser of every command and sub-command under it, each once."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias names the same parser again
                yield from iter_parsers(sub)


def check_modules(required: dict[str, str]) -> None:
    """Stop a command before it starts working when an optional module it needs is missing: ``required`` maps each
    module to what needs it (:func:`gfun.configuration.required_modules`).

    Raises
    ------
    gfun.errors.MissingDependencyError
        For the first missing module, naming the extra that installs it (the command prints it as one line).
    """
    from gfun.core.optional import require_optional

    for module, purpose in required.items():
        require_optional(module, purpose=purpose)



def _C_type(*, allow_cv: bool = True) -> Any:
    """argparse ``type`` of a C option: a positive finite number (or ``cv``); NaN, inf, 0 and negatives are refused.

    argparse prefixes the message with the option: ``argument --meta-C: must be a positive finite number or 'cv',
    got 'nan'``.
    """

    def parse(value: str) -> float | str:
        from gfun.corpus.inputs import check_C

        try:
            return check_C("cv" if value.strip() == "cv" else float(value), allow_cv=allow_cv)
        except ValueError:
            what = "a positive finite number" + (" or 'cv'" if allow_cv else "")
            raise argparse.ArgumentTypeError(f"must be {what}, got {value!r}") from None

    return parse


_parse_C = _C_type()  # also used by the experiment commands


def n_jobs_type(value: str) -> int:
    """argparse ``type`` of ``--n-jobs``: a non-zero integer (negative: joblib's count from the number of CPUs, -1
    all of them); how many CPUs there are is :func:`cap_n_jobs`'s business, once logging is set up."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (-1: every CPU), got {value!r}") from None
    if n == 0:
        raise argparse.ArgumentTypeError("must not be 0: a positive number of jobs, or -1 for every CPU")
    return n


def int_type(minimum: int, maximum: int | None = None) -> Any:
    """argparse ``type`` of an integer option from ``minimum`` to ``maximum`` (inclusive; ``None``: no upper bound):
    argparse names the option, ``argument --seed: must be an integer from 0 to 4294967295, got '-1'``."""
    if maximum is None:
        what = "a positive integer" if minimum == 1 else f"an integer of {minimum} or more"
    else:
        what = f"an integer from {minimum} to {maximum}"

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {value!r}") from None
        if n < minimum or (maximum is not None and n > maximum):
            raise argparse.ArgumentTypeError(f"must be {what}, got {value!r}")
        return n

    return parse


#: ``--seed``: what numpy's random generators take.
seed_type = int_type(0, 2**32 - 1)


def cap_n_jobs(n_jobs: int | None, logger: Any) -> int | None:
    """``--n-jobs`` at most the number of CPUs this process may use (more threads than CPUs only add
    overhead, and thousands fail to start), with a log line when it was lowered; a negative value below
    ``-CPUs`` becomes 1 (joblib would ask for fewer than one job)."""
    if n_jobs is None:
        return None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n_jobs > cpus:
        logger.info("--n-jobs %d: capped at %d, the number of CPUs available", n_jobs, cpus)
        return cpus
    if n_jobs < -cpus:
        logger.info("--n-jobs %d: %d CPUs are available, running 1 job", n_jobs, cpus)
        return 1
    return n_jobs


def plural(n: int, noun: str) -> str:
    """``"1 document"``, ``"2 documents"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def warn_about_documents(model: Any, docs: Any, detected: Sequence[bool] | None = None,
                         logger: logging.Logger | None = None) -> None:
    """Warn, before ``gfun predict`` or ``gfun explain`` labels ``docs`` (a corpus) with ``model``, about what
    labels a document from less than the model knows: a blank text (labelled from no words at all), and a language
    the model was not trained on (named with the views that serve it and those that cannot, or, for a model
    without views, that it is served as any other language); a detected language says so. A language no view can
    serve is left to the model, which refuses it."""
    from collections import Counter

    log = logger or logging.getLogger("gfun.cli.main")
    blank = [i for i, text in enumerate(docs.texts) if not text.strip()]
    if blank:
        log.warning("%s with a blank text (e.g. id %s): labelled from no words at all", plural(len(blank), "document"),
                    ", ".join(repr(docs.ids[i]) for i in blank[:3]))
    known = set(getattr(model, "languages_", None) or ())
    if not known:
        return
    branches = getattr(model, "branches_", None)
    was_detected = {lang for lang, d in zip(docs.langs, detected or [False] * len(docs), strict=True) if d}
    for lang, n in sorted(Counter(docs.langs).items()):
        if lang in known:
            continue
        how = " (detected from the text)" if lang in was_detected else ""
        head = (f"{plural(n, 'document')} in language {lang!r}{how}, which the model was not trained on "
                f"({', '.join(sorted(known))})")
        if branches is None:
            log.warning("%s: labelled as the model labels any language it did not see", head)
            continue
        names = [b.name.upper() for b in branches]
        serving = [b.name.upper() for b in branches if b.view.covers(lang)]
        if not serving:
            serving = [b.name.upper() for b in getattr(model, "fallback_branches_", None) or ()
                       if b.view.covers(lang)]
            if serving:
                log.warning("%s: served by the zero-shot view(s) %s alone", head, ", ".join(serving))
            continue  # no view at all: the model refuses the language
        others = [v for v in names if v not in serving]
        log.warning("%s: served by %s alone%s", head, ", ".join(serving),
                    f" ({', '.join(others)} cannot represent it)" if others else "")


def complete_for_model(records: list[dict[str, Any]], model: Any, path: str | None = None) -> tuple[
        list[dict[str, Any]], list[bool]]:
    """:func:`gfun.predictions.complete_records` (ids numbered, missing languages detected, preferring the model's
    languages, as ``gfun serve`` does) for documents that ``model`` is to label, with a failed detection's hint
    naming what the command line can do. Returns the records and whether each one's language was detected."""
    from gfun.errors import LanguageDetectionError
    from gfun.predictions import complete_records

    languages = [str(lang) for lang in getattr(model, "languages_", None) or ()]
    try:
        return complete_records(records, languages=languages, path=path)
    except LanguageDetectionError as exc:  # the library's hint names Python parameters: give the command's
        reason = exc.reason.split(". Give its language", 1)[0]
        raise LanguageDetectionError(
            f"{reason}. Give the document its 'lang' field (detection chose among every language, then among the "
            f"model's: {', '.join(languages) or 'none'})", index=exc.index, guesses=exc.guesses,
            n_failed=exc.n_failed, path=exc.path, line=exc.line) from None


def check_input(path: str | None, option: str = "--input") -> None:
    """Refuse, before a model is loaded (seconds), an input file that does not exist or is a directory
    (``-``, standard input, is left alone).

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        Naming the option.
    """
    if path is None or path == "-":
        return
    if not os.path.exists(path):
        raise FileNotFoundError(f"{option} {path}: no such file")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{option} {path} is a directory, not a file of documents")


def word_vectors_type(value: str) -> str:
    """argparse ``type`` of ``--word-vectors``: a word-vector source spec, checked before anything is read or fitted
    (:func:`gfun.wordvectors.check_source_spec`)."""
    from gfun.wordvectors import check_source_spec

    try:
        return check_source_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_view_params(items: list[str] | None, view_params: dict | None) -> dict | None:
    """``view_params`` with the ``--view-param NAME.PARAM=VALUE`` options applied (VALUE read as JSON when it parses).

    NAME is a view letter (``r.hidden_size=64``) or a cross-lingual baseline (``kcca.parallel=FILE``).

    Raises
    ------
    ValueError
        On a malformed item or an unknown name.
    """
    import json

    from gfun.configuration import CROSSLINGUAL_BASELINES
    from gfun.views import VIEW_CLASSES

    names = [*VIEW_CLASSES, *CROSSLINGUAL_BASELINES]
    out = {k: dict(v) for k, v in (view_params or {}).items()}
    for item in items or []:
        key, eq, value = item.partition("=")
        letter, dot, name = key.strip().partition(".")
        if not eq or not dot or not name.strip():
            raise ValueError(f"--view-param takes LETTER.NAME=VALUE (e.g. r.hidden_size=64), got {item!r}")
        if letter not in names:
            raise ValueError(f"--view-param {item!r}: unknown view letter {letter!r}; choose from "
                             f"{', '.join(names)}")
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            parsed = value
        _check_view_param(item, letter, name.strip(), parsed)
        out.setdefault(letter, {})[name.strip()] = parsed
    return out or None


#: Parameters whose default is a bool but which also take a list of strings (a word list).
_BOOL_OR_WORDS = ("stopwords",)


def _check_view_param(item: str, letter: str, name: str, value: Any) -> None:
    """Refuse, before anything is read or fitted, a parameter the view (or baseline) ``letter`` does not have, or a
    VALUE whose JSON type cannot be its parameter's: a bool parameter takes ``true``/``false`` (``stopwords``
    also a list of words), an integer one an integer, a number one a number. Parameters without a typed default
    (``None``, a string) are left to the view to check."""
    import inspect

    from gfun.baselines.crosslingual import CROSSLINGUAL
    from gfun.views import VIEW_CLASSES

    cls = VIEW_CLASSES.get(letter) or CROSSLINGUAL[letter]
    try:
        signature = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover - a registered view without an introspectable __init__
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values()):
        return
    known = sorted(n for n, p in signature.items() if n != "self" and p.kind is not inspect.Parameter.VAR_POSITIONAL)
    if name not in known:
        raise ValueError(f"--view-param {item!r}: {letter!r} ({cls.__name__}) has no parameter {name!r}; its "
                         f"parameters: {', '.join(known)}")
    default = signature[name].default
    if isinstance(default, bool):
        ok = isinstance(value, bool) or (name in _BOOL_OR_WORDS and isinstance(value, list)
                                         and all(isinstance(v, str) for v in value))
        expected = "true or false" + (" (or a JSON list of words)" if name in _BOOL_OR_WORDS else "")
    elif isinstance(default, int):
        ok, expected = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok, expected = isinstance(value, int | float) and not isinstance(value, bool), "a number"
    else:  # no typed default (None: the preset's value): only the domain of a number is checked
        _check_domain(item, letter, name, value)
        return
    if not ok:
        raise ValueError(f"--view-param {item!r}: {letter}.{name} takes {expected}, got {_json_kind(value)}")
    _check_domain(item, letter, name, value)


def _positive(v: float) -> bool:
    return math.isfinite(v) and v > 0


#: The domain of the numeric parameters of the views and baselines, by name: a value outside it is refused on the
#: command line, before anything is read, instead of being replaced (``cv=1`` fitted the posteriors in-sample) or
#: failing deep inside a fit.
_DOMAINS: dict[str, tuple[Any, str]] = {
    "cv": (lambda v: isinstance(v, int) and v >= 2, "an integer of 2 or more (the number of folds)"),
    **{name: (lambda v: isinstance(v, int) and v >= 1, "a positive integer")
       for name in ("min_df", "max_length", "batch_size", "eval_batch_size", "max_epochs", "hidden_size",
                    "n_components", "rank", "max_concepts", "min_languages", "non_zeros", "n_dimensions",
                    "head_epochs", "step_size")},
    **{name: (lambda v: isinstance(v, int) and v >= 0, "an integer of 0 or more")
       for name in ("trainable_layers", "patience")},
    **{name: (_positive, "a positive finite number") for name in ("C", "lr", "head_lr", "reg", "max_grad_norm")},
    "weight_decay": (lambda v: math.isfinite(v) and v >= 0, "a finite number of 0 or more"),
    "dropout": (lambda v: math.isfinite(v) and 0 <= v < 1, "a number from 0 up to (not including) 1"),
    "gamma": (lambda v: math.isfinite(v) and 0 < v <= 1, "a number above 0 and at most 1"),
}


def _check_domain(item: str, letter: str, name: str, value: Any) -> None:
    """Refuse a number outside its parameter's domain (:data:`_DOMAINS`), naming the domain."""
    if name not in _DOMAINS or not isinstance(value, int | float) or isinstance(value, bool):
        return  # null (the preset's value) and non-numbers are the type check's business
    ok, domain = _DOMAINS[name]
    if not ok(value):
        raise ValueError(f"--view-param {item!r}: {letter}.{name} takes {domain}, got {value!r}")


def _json_kind(value: Any) -> str:
    """How a parsed VALUE reads in a message: ``the string 'yes'``, ``the number 2.5``, ``a list``."""
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return f"a JSON {'list' if isinstance(value, list) else 'object'}"


def add_view_param_argument(p: argparse.ArgumentParser) -> None:
    """The repeatable ``--view-param NAME.PARAM=VALUE`` option (read by :func:`parse_view_params`)."""
    p.add_argument("--view-param", action="append", default=None, metavar="LETTER.NAME=VALUE",
                   help="a parameter of one view, repeatable: r.hidden_size=64, r.max_epochs=10, b.max_length=64, "
                        "m.source=e5 ..., or of a cross-lingual baseline: kcca.parallel=FILE, lri.n_dimensions=5000 "
                        "(VALUE read as JSON when it parses: numbers, true, false, null)")


def add_neural_arguments(p: argparse.ArgumentParser, *, saving: bool = False) -> None:
    """Options of the neural views B and R (and of the fine-tuned transformer baseline); ``saving``: also how the
    B weights are saved (``--save-dtype``, ``--self-contained``)."""
    p.add_argument("--encoder", default=None,
                   help="transformer of the b view and of the bert baseline: 'multilingual-e5-small' (default, "
                   "offline), a local save_pretrained folder, or a Hugging Face id already in the local cache (never "
                   "downloaded)")
    p.add_argument("--neural-preset", choices=NEURAL_PRESETS, default=None,
                   help="training settings of the b and r views (default: gpu on a CUDA device, cpu otherwise): "
                   "paper (section 4.3/5 settings: batch 4, length 512, up to 50 epochs), gpu (10 epochs, length "
                   "256, head lr 1e-3), cpu (b: only the top layer fine-tuned on a frozen pass computed once per "
                   "document, int8 frozen layers, length 256, 6 epochs)")
    p.add_argument("--trainable-layers", type=int_type(0), default=None,
                   help="b view: fine-tune only the top K transformer layers (and the output layer) on a frozen pass "
                   "computed once per document; 0: the frozen encoder's vector (default: the preset's)")
    if saving:
        p.add_argument("--save-dtype", choices=("float32", "float16"), default=None,
                       help="precision of the saved b weights (default: float32; float16 halves the model file)")
        p.add_argument("--self-contained", action="store_true",
                       help="store every b weight and the m view's word vectors in the model (default: the b weights "
                       "fine-tuning did not change, and sub-word word vectors such as e5-subword's, are referred to "
                       "by content hash of the local encoder and recomputed from it at load time)")
    p.add_argument("--device", default=None, help="torch device of the b and r views: auto (default), cpu, cuda, ...")


def _read(path: str, classes: list[str] | None = None, on_unknown_label: str = "error",
          detect_language: bool | list[str] = False, on_missing_labels: str = "warn") -> Any:
    from gfun.corpus.multilingual import read_corpus

    return read_corpus(path, classes, on_unknown_label=on_unknown_label, detect_language=detect_language,
                       on_missing_labels=on_missing_labels)
