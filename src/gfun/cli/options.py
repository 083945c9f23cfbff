"""Command-line pieces shared by ``gfun`` and ``gfun experiment``: help formatting, output, C options, the
options of the neural views and ``--view-param`` (what they mean is :mod:`gfun.configuration`'s).

Both command modules import this one (and not each other), so the experiment commands do not import the main
CLI that registers them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["GLOBAL_OPTIONS", "META_C_HELP", "N_JOBS_HELP", "NEURAL_PRESETS", "HelpFormatter", "add_global_options",
           "add_neural_arguments", "add_view_param_argument", "check_modules", "iter_parsers", "parse_view_params",
           "word_vectors_type"]

NEURAL_PRESETS = ("paper", "gpu", "cpu")
#: ``--meta-C`` of ``gfun train`` and ``gfun experiment``: one default, C = 1 for gFun and Fun (docs/benchmarks.md:
#: on debtags, C by cross-validation takes 1.2 times as long for the same scores).
META_C_HELP = ("C of the meta-classifier (of the linear SVMs for naive, pooled, upper, lri, clesa, kcca, dci), or 'cv' "
               "for 5-fold CV over 0.1..10^4 (default: 1 for gfun and fun, the authors' setting, which scores as cv "
               "does in less time; cv for the others; bert and bert-tuned have none)")
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


def _out(text: str) -> None:
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
    else:
        return
    if not ok:
        raise ValueError(f"--view-param {item!r}: {letter}.{name} takes {expected}, got {_json_kind(value)}")


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
    p.add_argument("--trainable-layers", type=int, default=None,
                   help="b view: fine-tune only the top K transformer layers (and the output layer) on a frozen pass "
                   "computed once per document; 0: the frozen encoder's vector (default: the preset's)")
    if saving:
        p.add_argument("--save-dtype", choices=("float32", "float16"), default=None,
                       help="precision of the saved b weights (float16 halves the model file)")
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
