"""Read the Funnelling / gFun authors' dataset pickles and per-run split files, without their code.

Dataset pickles
---------------
The authors distribute each run of RCV1/RCV2 and JRC-Acquis as a pickled ``MultilingualDataset``
object. Its attribute ``multiling_dataset`` maps each language to
``((Xtr, Ytr, ids_tr), (Xte, Yte, ids_te))``, where ``X`` is a list of raw texts or of token lists
(pre-processed versions), ``Y`` a binary label matrix (numpy array or scipy sparse matrix,
documents x classes) and ``ids`` the document ids (or ``None``); its attribute ``labels`` (when set)
names the columns of ``Y``.

:func:`load_funnelling_pickle` reads such a file with a restricted :class:`pickle.Unpickler`
(:class:`RestrictedUnpickler`): the authors' class is replaced by a plain stand-in
(:class:`PickledObject`) whatever module it was defined in, and only the numpy, scipy.sparse and
builtin types needed to rebuild arrays and containers may be created. Anything else (functions,
other classes) is refused with :class:`pickle.UnpicklingError`.

.. warning::
   Restricting the globals narrows what a pickle can do but is not a security boundary: only load
   pickles from sources you trust.

Split files
-----------
To select the very documents of a published run from a copy of the raw corpus, a split file maps each
language to its training and test document ids, as JSON or pickle::

    {"en": {"train": ["2286", ...], "test": [...]}, "it": ...}     # or
    {"en": [["2286", ...], [...]], ...}                            # (train ids, test ids) pairs

:func:`read_split_file` reads it; :func:`apply_split` selects the documents of a corpus.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import pickle
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.errors import CorpusFormatError

if TYPE_CHECKING:
    from gfun.datasets.splits import DatasetSplits

__all__ = [
    "PickledObject",
    "RestrictedUnpickler",
    "apply_split",
    "find_run_file",
    "load_funnelling_pickle",
    "read_split_file",
    "restricted_load",
]

logger = logging.getLogger(__name__)

#: Class names (from any module) that are rebuilt as :class:`PickledObject`.
STAND_IN_CLASSES: frozenset[str] = frozenset({"MultilingualDataset"})

_BUILTINS = frozenset({"list", "dict", "tuple", "set", "frozenset", "str", "bytes", "bytearray", "int",
                       "float", "complex", "bool", "slice", "range", "object"})
_NUMPY = {
    ("multiarray", "_reconstruct"), ("multiarray", "scalar"), ("numeric", "_frombuffer"),
    ("", "ndarray"), ("", "dtype"), ("multiarray", "ndarray"), ("multiarray", "dtype"),
}
_SPARSE = frozenset({"csr_matrix", "csc_matrix", "coo_matrix", "lil_matrix", "dok_matrix", "bsr_matrix",
                     "dia_matrix", "csr_array", "csc_array", "coo_array", "lil_array", "dok_array",
                     "bsr_array", "dia_array"})


class PickledObject:
    """Stand-in for the authors' classes: keeps the pickled attributes and nothing else."""

    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict state, slots state)
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(f"unexpected object state of type {type(state).__name__}")
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"PickledObject({', '.join(sorted(self.__dict__))})"


def _numpy_global(module: str, name: str) -> Any:
    sub = re.sub(r"^numpy\.(_core|core)\.?", "", module) if module != "numpy" else ""
    if module.startswith("numpy.dtypes") and name.endswith("DType"):
        return getattr(importlib.import_module("numpy.dtypes"), name)
    if (sub, name) not in _NUMPY:
        return None
    if sub == "":
        return getattr(np, name)
    for base in ("numpy._core", "numpy.core"):
        try:
            return getattr(importlib.import_module(f"{base}.{sub}"), name)
        except (ImportError, AttributeError):
            continue
    return None


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that builds only containers, numpy arrays, sparse matrices and stand-in objects.

    Parameters
    ----------
    file : binary file
        The open pickle.
    stand_in : iterable of str
        Class names (from any module) to rebuild as :class:`PickledObject`.
    **kwargs
        Passed to :class:`pickle.Unpickler` (e.g. ``encoding="latin1"`` for Python 2 pickles).
    """

    def __init__(self, file: Any, *, stand_in: Iterable[str] = STAND_IN_CLASSES, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.stand_in = frozenset(stand_in)

    def find_class(self, module: str, name: str) -> Any:
        """The allowed global ``module.name``; anything else raises :class:`pickle.UnpicklingError`."""
        if name in self.stand_in:
            return PickledObject
        if module in ("builtins", "__builtin__") and name in _BUILTINS:
            return getattr(__import__("builtins"), name)
        if module == "copyreg" and name == "_reconstructor":
            return importlib.import_module("copyreg")._reconstructor
        if module == "collections" and name in ("OrderedDict", "defaultdict"):
            return getattr(importlib.import_module("collections"), name)
        if module == "_codecs" and name == "encode":  # Python 2 byte strings
            return importlib.import_module("_codecs").encode
        if module == "numpy" or module.startswith("numpy."):
            found = _numpy_global(module, name)
            if found is not None:
                return found
        if (module == "scipy.sparse" or module.startswith("scipy.sparse.")) and name in _SPARSE:
            return getattr(sp, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: not an allowed type (only numpy, "
                                     "scipy.sparse, builtin containers and the stand-in classes "
                                     f"{sorted(self.stand_in)})")


def restricted_load(path: str | os.PathLike[str], *, stand_in: Iterable[str] = STAND_IN_CLASSES,
                    encoding: str = "ASCII") -> Any:
    """Unpickle a file with :class:`RestrictedUnpickler` (only for trusted files).

    Raises
    ------
    CorpusFormatError
        When the file is not a pickle or needs a type that is not allowed (names the file).
    """
    path = Path(path)
    with open(path, "rb") as fh:
        try:
            return RestrictedUnpickler(fh, stand_in=stand_in, encoding=encoding).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
            raise CorpusFormatError(f"cannot unpickle: {exc}", path=path) from None


# ------------------------------------------------------------------------------------------ dataset pickles
def _texts(X: Any, where: str, path: Path) -> list[str]:
    if sp.issparse(X) or (isinstance(X, np.ndarray) and X.dtype.kind in "fiub"):
        raise CorpusFormatError(f"{where} is a vectorised matrix ({type(X).__name__}, shape {X.shape}); the "
                                "converter needs the raw or tokenised texts (the pickle versions with text)",
                                path=path, field=where)
    if not isinstance(X, list | tuple | np.ndarray):
        raise CorpusFormatError(f"{where}: expected a list of texts or token lists, got {type(X).__name__}",
                                path=path, field=where)
    out = []
    for i, doc in enumerate(X):
        if isinstance(doc, str):
            out.append(doc)
        elif isinstance(doc, bytes):
            out.append(doc.decode("utf-8", errors="replace"))
        elif isinstance(doc, list | tuple | np.ndarray) and all(isinstance(t, str) for t in doc):
            out.append(" ".join(doc))
        else:
            raise CorpusFormatError(f"{where}[{i}]: expected a text or a list of tokens, got "
                                    f"{type(doc).__name__}", path=path, field=where)
    return out


def _label_rows(Y: Any, n_docs: int, n_classes: int | None, where: str, path: Path) -> list[list[int]]:
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y)
    elif isinstance(Y, list | tuple):
        Y = np.asarray(Y)
    if not (sp.issparse(Y) or isinstance(Y, np.ndarray)) or Y.ndim != 2:
        shape = getattr(Y, "shape", None)
        raise CorpusFormatError(f"{where}: expected a 2-D binary label matrix, got {type(Y).__name__} of "
                                f"shape {shape}", path=path, field=where)
    if Y.shape[0] != n_docs:
        raise CorpusFormatError(f"{where} has {Y.shape[0]} rows for {n_docs} documents", path=path,
                                field=where)
    if n_classes is not None and Y.shape[1] != n_classes:
        raise CorpusFormatError(f"{where} has {Y.shape[1]} columns but there are {n_classes} labels",
                                path=path, field=where)
    values = Y.data if sp.issparse(Y) else Y
    if not np.isin(np.unique(values), (0, 1)).all():
        raise CorpusFormatError(f"{where} is not binary (values {np.unique(values)[:5]} ...)", path=path,
                                field=where)
    if sp.issparse(Y):
        Y.eliminate_zeros()
        return [Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist() for i in range(Y.shape[0])]
    return [np.flatnonzero(row).tolist() for row in Y]


def load_funnelling_pickle(path: str | os.PathLike[str], *, stand_in: Iterable[str] = STAND_IN_CLASSES,
                           encoding: str = "ASCII", drop_unlabelled: bool = False) -> DatasetSplits:
    """Convert a Funnelling / gFun ``MultilingualDataset`` pickle into training and test corpora.

    Only load pickles from trusted sources (see the module docstring).

    Parameters
    ----------
    path : path
        The pickle.
    stand_in : iterable of str
        Class names rebuilt as :class:`PickledObject` (default: ``MultilingualDataset``).
    encoding : str
        Passed to :class:`pickle.Unpickler` (``"latin1"`` for Python 2 pickles).
    drop_unlabelled : bool
        Drop the documents with no positive label.

    Returns
    -------
    DatasetSplits
        Ids ``<lang>:<id>`` (``<lang>:tr<i>``/``<lang>:te<i>`` when the pickle has no ids); the original
        id is kept as the extra field ``source_id``. Classes are the pickle's ``labels`` (as strings),
        else the column numbers.

    Raises
    ------
    CorpusFormatError
        When the pickle does not have the expected structure; the message names the file and the part.
    """
    from gfun.datasets.splits import DatasetSplits

    path = Path(path)
    obj = restricted_load(path, stand_in=stand_in, encoding=encoding)
    data = obj.get("multiling_dataset") if isinstance(obj, dict) else getattr(obj, "multiling_dataset", None)
    if not isinstance(data, Mapping) or not data:
        raise CorpusFormatError("no 'multiling_dataset' mapping language -> "
                                "((Xtr, Ytr, ids), (Xte, Yte, ids))", path=path, field="multiling_dataset")
    labels = obj.get("labels") if isinstance(obj, dict) else getattr(obj, "labels", None)
    classes: list[str] | None = None
    if labels is not None:
        classes = [str(c.item() if isinstance(c, np.generic) else c) for c in labels]
        if len(set(classes)) != len(classes):
            raise CorpusFormatError("the labels attribute has duplicates", path=path, field="labels")
    parts: dict[str, dict[str, list[Any]]] = {"train": {}, "test": {}}
    for lang in sorted(data, key=str):
        entry = data[lang]
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise CorpusFormatError(f"multiling_dataset[{lang!r}]: expected "
                                    "((Xtr, Ytr, ids), (Xte, Yte, ids))", path=path,
                                    field=f"multiling_dataset[{lang!r}]")
        for side, tag, triple in (("train", "tr", entry[0]), ("test", "te", entry[1])):
            where = f"multiling_dataset[{lang!r}][{0 if side == 'train' else 1}]"
            if not isinstance(triple, tuple | list) or len(triple) not in (2, 3):
                raise CorpusFormatError(f"{where}: expected (X, Y, ids)", path=path, field=where)
            X, Y = triple[0], triple[1]
            ids = triple[2] if len(triple) == 3 else None
            texts = _texts(X, f"{where}.X", path)
            if classes is None and getattr(Y, "ndim", 0) == 2:
                classes = [str(j) for j in range(Y.shape[1])]
                logger.warning("%s: no labels attribute; classes are named by column number", path)
            rows = _label_rows(Y, len(texts), None if classes is None else len(classes), f"{where}.Y", path)
            if ids is None:
                src = [f"{tag}{i}" for i in range(len(texts))]
            else:
                src = [str(i.item() if isinstance(i, np.generic) else i) for i in ids]
                if len(src) != len(texts):
                    raise CorpusFormatError(f"{where}: {len(src)} ids for {len(texts)} documents", path=path,
                                            field=f"{where}.ids")
            bucket = parts[side]
            for t, r, s in zip(texts, rows, src, strict=True):
                if drop_unlabelled and not r:
                    continue
                bucket.setdefault("ids", []).append(f"{lang}:{s}")
                bucket.setdefault("langs", []).append(str(lang))
                bucket.setdefault("texts", []).append(t)
                bucket.setdefault("labels", []).append([classes[j] for j in r])  # type: ignore[index]
                bucket.setdefault("source_id", []).append(s)
    assert classes is not None
    corpora = {}
    for side, b in parts.items():
        try:
            corpora[side] = MultilingualCorpus(b.get("ids", []), b.get("langs", []), b.get("texts", []),
                                               b.get("labels", []), classes,
                                               extra={"source_id": b.get("source_id", [])})
        except CorpusFormatError as exc:
            raise CorpusFormatError(f"{side}: {exc}", path=path) from None
    logger.info("Funnelling pickle %s: %d training and %d test documents, %d languages, %d classes", path,
                len(corpora["train"]), len(corpora["test"]), len(data), len(classes))
    return DatasetSplits(train=corpora["train"], test=corpora["test"], classes=tuple(classes))


# ---------------------------------------------------------------------------------------------- split files
def read_split_file(path: str | os.PathLike[str], *, encoding: str = "ASCII") -> dict[str, tuple[list[str],
                                                                                                  list[str]]]:
    """Read a per-run split file (JSON, or pickle for trusted files) into ``{lang: (train_ids, test_ids)}``.

    Raises
    ------
    CorpusFormatError
        When the file does not map languages to (train, test) id lists; the message names the file and
        the language.
    """
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".json", ".json.gz")):
        import gzip

        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            try:
                raw = json.load(fh)
            except json.JSONDecodeError as exc:
                raise CorpusFormatError(f"invalid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    else:
        raw = restricted_load(path, encoding=encoding)
    if not isinstance(raw, Mapping) or not raw:
        raise CorpusFormatError("expected a mapping language -> (train ids, test ids), got "
                                f"{type(raw).__name__}", path=path)
    out: dict[str, tuple[list[str], list[str]]] = {}
    for lang, entry in raw.items():
        if isinstance(entry, Mapping):
            if "train" not in entry or "test" not in entry:
                raise CorpusFormatError("expected keys 'train' and 'test'", path=path, field=str(lang))
            tr, te = entry["train"], entry["test"]
        elif isinstance(entry, list | tuple) and len(entry) == 2:
            tr, te = entry
        else:
            raise CorpusFormatError("expected {'train': [...], 'test': [...]} or a (train, test) pair",
                                    path=path, field=str(lang))
        lists = []
        for side, ids in (("train", tr), ("test", te)):
            if isinstance(ids, str) or not isinstance(ids, Iterable):
                raise CorpusFormatError(f"{side} ids: expected a list, got {type(ids).__name__}", path=path,
                                        field=f"{lang}.{side}")
            lists.append([str(i.item() if isinstance(i, np.generic) else i) for i in ids])
        out[str(lang)] = (lists[0], lists[1])
    return out


def apply_split(corpus: MultilingualCorpus, split: Mapping[str, tuple[Sequence[str], Sequence[str]]], *,
                keys: Sequence[str] = ("source_id", "doc_id"),
                on_missing: Literal["error", "warn"] = "error"
                ) -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """Select the training and test documents named by a split (see :func:`read_split_file`).

    Parameters
    ----------
    corpus : MultilingualCorpus
        All the documents (e.g. from :func:`gfun.datasets.rcv.read_rcv` or
        :func:`gfun.datasets.jrc.read_jrc_acquis`).
    split : mapping
        ``{lang: (train_ids, test_ids)}``.
    keys : sequence of str
        Extra fields holding ids the split may use, besides the corpus id itself (e.g. the RCV ``itemid``
        or the CELEX number stored in ``source_id``).
    on_missing : {"error", "warn"}
        What to do when an id of the split is not in the corpus.

    Returns
    -------
    (MultilingualCorpus, MultilingualCorpus)
        The training and test documents, in the order of the split.
    """
    lookup: dict[tuple[str, str], int] = {}
    for i, (doc_id, lang) in enumerate(zip(corpus.ids, corpus.langs, strict=True)):
        lookup[(lang, doc_id)] = i
        for k in keys:
            if k in corpus.extra and corpus.extra[k][i] is not None:
                lookup.setdefault((lang, str(corpus.extra[k][i])), i)
    chosen: dict[str, list[int]] = {"train": [], "test": []}
    missing: list[str] = []
    for lang, (tr, te) in split.items():
        for side, ids in (("train", tr), ("test", te)):
            for doc_id in ids:
                i = lookup.get((lang, str(doc_id)))
                if i is None:
                    missing.append(f"{lang}:{doc_id} ({side})")
                else:
                    chosen[side].append(i)
    if missing:
        msg = f"{len(missing)} document(s) of the split are not in the corpus, e.g. {missing[:3]}"
        if on_missing == "error":
            raise CorpusFormatError(msg)
        logger.warning(msg)
    for side, idx in chosen.items():
        if len(set(idx)) != len(idx):
            raise CorpusFormatError(f"the split names some {side} document twice")
    return corpus.subset(chosen["train"]), corpus.subset(chosen["test"])


def find_run_file(directory: str | os.PathLike[str], run: int,
                  kind: Literal["dataset", "split"]) -> Path | None:
    """Find the file of run ``run`` in ``directory``.

    ``kind="dataset"`` looks for a pickle (``*.pickle``/``*.pkl``) directly in ``directory`` whose name
    contains ``run<run>`` (``run_3``, ``run-3`` too) and neither ``split`` nor ``doclist``;
    ``kind="split"`` looks in ``directory/splits/`` for a ``.json``/``.pickle``/``.pkl`` file of the run,
    and in ``directory`` for one whose name contains ``split`` or ``doclist``. ``None`` when there is none;
    several candidates are an error.
    """
    directory = Path(directory)
    pattern = re.compile(rf"run[_-]?{int(run)}(?!\d)", re.IGNORECASE)
    suffixes = (".pickle", ".pkl") if kind == "dataset" else (".json", ".json.gz", ".pickle", ".pkl")

    def candidates(folder: Path) -> list[Path]:
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir()
                      if p.is_file() and p.name.lower().endswith(suffixes) and pattern.search(p.name))

    splitlike = re.compile(r"split|doclist", re.IGNORECASE)
    if kind == "dataset":
        found = [p for p in candidates(directory) if not splitlike.search(p.name)]
    else:
        found = (candidates(directory / "splits")
                 or [p for p in candidates(directory) if splitlike.search(p.name)])
    if len(found) > 1:
        names = [p.name for p in found]
        raise FileNotFoundError(f"several {kind} files for run {run} in {directory}: {names}")
    return found[0] if found else None
