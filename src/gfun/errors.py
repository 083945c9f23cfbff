"""The errors gfun raises about what it reads: corpora and saved models.

They live in this small module, which imports nothing from gfun, so that any module can raise them (and the
reading modules do not import each other to do so); :mod:`gfun.corpus` and :mod:`gfun.persistence` re-export
them under their usual names.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CorpusFormatError", "DamagedModelError", "ModelFormatError", "ReferenceMismatchError",
           "UnregisteredViewError"]


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



class ModelFormatError(ValueError):
    """A saved model cannot be loaded: not a gfun model, another format version, or damaged files."""


class DamagedModelError(ModelFormatError):
    """The files of a saved model are damaged, tampered with or inconsistent; the message names file and field."""


class ReferenceMismatchError(ModelFormatError):
    """A saved model refers to a local resource (a base encoder) for part of its state, and the one found here
    differs from the one it was saved with (or cannot give it): the message names the model file and the resource."""


class UnregisteredViewError(ModelFormatError):
    """A saved model has a view whose class is not registered here under the name it was saved with (or is
    registered as another class): :func:`gfun.views.register_view` it before loading."""
