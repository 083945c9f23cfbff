"""Multilingual multilabel corpus: documents with an id, a language, a text and labels.

A :class:`MultilingualCorpus` holds parallel lists (one entry per document) and a fixed,
ordered class list (the codeframe) shared by every language. The order of ``classes``
defines the columns of the binary label matrix :attr:`MultilingualCorpus.Y`.

The file formats (JSONL, TSV, the class list) are read and written by :mod:`gfun.corpus.files`; the
shortcuts :func:`read_corpus`, :func:`read_jsonl` and :func:`read_tsv` return a corpus.
"""

from __future__ import annotations

import logging
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from gfun.corpus.files import (
    _REQUIRED,
    _is_missing,
    _is_missing_cell,
    read_jsonl_records,
    read_records,
    read_tsv_records,
    write_classes,
    write_jsonl_records,
    write_tsv,
)
from gfun.errors import CorpusFormatError

__all__ = ["CorpusFormatError", "Document", "MultilingualCorpus", "binarize_labels", "read_corpus", "read_jsonl",
           "read_tsv"]

logger = logging.getLogger(__name__)

#: Appended to the error about a document without a language.
_DETECT_HINT = (" (gfun predict, gfun explain and gfun serve detect the language of a document without one from its "
                "text, with gfun[langid]; training and test documents need theirs: in Python, "
                "detect_language=True detects them)")
MissingLabels = Literal["warn", "error", "negative"]


@dataclass(frozen=True)
class Document:
    """One document of a :class:`MultilingualCorpus`."""

    id: str
    lang: str
    text: str
    labels: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C: a composed ``ô`` and an ``o`` followed by a combining circumflex are one
    string (labels and language codes are compared in this form)."""
    return unicodedata.normalize("NFC", text)


def _label_key(label: str) -> str:
    """What two spellings of one label share: NFC, surrounding spaces stripped, case folded."""
    return nfc(nfc(label.strip()).casefold())


def normalize_languages(langs: Sequence[Any]) -> list[str]:
    """Language codes in lower case without surrounding spaces, in Unicode normal form C, so that ``EN``, `` en``
    and ``en`` are one language.

    Codes are compared case-insensitively everywhere (BCP 47 and ISO 639 codes are case-insensitive); a
    warning lists the codes that were changed (once per call).
    """
    out = [nfc(str(lang).strip().lower()) for lang in langs]
    changed = Counter((str(a), b) for a, b in zip(langs, out, strict=True) if str(a) != b)
    if changed:
        logger.warning("language codes normalised to lower case without spaces (Unicode NFC): %s",
                       ", ".join(f"{a!r} -> {b!r} ({n} document(s))" for (a, b), n in sorted(changed.items())))
    return out


def normalize_labels(labels: Sequence[Sequence[Any]], classes: Sequence[str] | None = None,
                     ) -> list[tuple[str, ...]]:
    """Each document's labels as strings without surrounding spaces, in Unicode normal form C, case variants of one
    label merged, repeats dropped: ``"Web "``, ``"WEB"`` and ``"web"`` are one class, not three, and so are a
    composed ``"rôle"`` and its decomposed spelling (NFD: ``o`` + a combining circumflex).

    A label that is exactly a class of ``classes`` is kept as it is. Otherwise its surrounding whitespace is
    stripped, it is put in normal form C, and a label that differs only by case (``str.casefold``) or normal
    form from one spelling is given that spelling:
    with ``classes``, the class's (when exactly one class matches; otherwise the label stays as it is, unknown);
    without, the spelling carried by the most documents (ties: the first in sorted order). A warning lists every
    change (once per call).

    Normalised rather than refused, as language codes are (:func:`normalize_languages`): to a reader these
    spellings name one class, and splitting it silently gives classes with a fraction of their documents each
    (and scores for classes that do not exist), while refusing would stop a run over a spelling that the
    warning can name. A class list that is given (a ``classes.json``, a model's classes) keeps its own spelling,
    so labels are matched to it; two classes that differ only by case in such a list stay distinct (a label
    matching both only by case is then not matched).
    """
    cset = set() if classes is None else {str(c) for c in classes}
    stripped = [[lab if lab in cset else nfc(lab.strip()) for lab in map(str, ls)] for ls in labels]
    if classes is not None:
        by_fold: dict[str, list[str]] = {}
        for c in classes:
            by_fold.setdefault(_label_key(str(c)), []).append(str(c))
        spelling = {lab: (lab if lab in cset or len(by_fold.get(_label_key(lab), [])) != 1
                          else by_fold[_label_key(lab)][0])
                    for lab in {lab for ls in stripped for lab in ls}}
    else:
        counts = Counter(lab for ls in stripped for lab in set(ls))
        groups: dict[str, list[str]] = {}
        for lab in counts:
            groups.setdefault(_label_key(lab), []).append(lab)
        spelling = {lab: min(group, key=lambda v: (-counts[v], v)) for group in groups.values() for lab in group}
    out = [tuple(dict.fromkeys(spelling[lab] for lab in ls)) for ls in stripped]
    changed = Counter(pair for ls, st in zip(labels, stripped, strict=True)
                      for pair in {(str(raw), spelling[lab]) for raw, lab in zip(ls, st, strict=True)}
                      if pair[0] != pair[1])
    if changed:
        items = sorted(changed.items())
        listed = ", ".join(f"{a!r} -> {b!r} ({n} document(s)" + (", another Unicode normal form)" if nfc(a) != a
                                                                  else ")") for (a, b), n in items[:10])
        logger.warning("%d label spelling(s) normalised (surrounding spaces removed, Unicode NFC, case variants "
                       "merged into %s): %s%s", len(items),
                       "the most frequent spelling" if classes is None else "the class list's", listed,
                       f", ... ({len(items) - 10} more)" if len(items) > 10 else "")
    return out


def binarize_labels(labels: Sequence[Sequence[str]], classes: Sequence[str]) -> sp.csr_matrix:
    """Binary label matrix (documents x classes, ``int8`` CSR); labels not in ``classes`` are dropped."""
    index = {c: j for j, c in enumerate(classes)}
    indptr = [0]
    indices: list[int] = []
    for labs in labels:
        cols = sorted({index[lab] for lab in labs if lab in index})
        indices.extend(cols)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.int8)
    return sp.csr_matrix((data, np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int64)),
                         shape=(len(labels), len(classes)))


class MultilingualCorpus:
    """Documents in several languages labelled against one ordered class list.

    Parameters
    ----------
    ids, langs, texts : sequences of str
        One entry per document. An id must be unique within its language (parallel corpora may use
        the same id for the versions of one document in several languages).
    labels : sequence of sequences of str, optional
        The labels of each document (``None`` for an unlabelled corpus, e.g. documents to classify).
    classes : sequence of str, optional
        The codeframe, in column order. By default the sorted union of the labels.
    on_unknown_label : {"error", "ignore", "keep"}
        What to do with a label that is not in ``classes`` (after :func:`normalize_labels` matched its spelling
        to them): refuse it, drop it, or keep it as one more class, after those of ``classes`` (in sorted order).
        ``"keep"`` reads test documents against a model's classes: a label is matched to the model's own
        spelling (two classes that differ only by case stay two), and the labels the model does not know are
        kept for :func:`gfun.metrics.evaluation.evaluate_model` to count.
    extra : dict of str to list, optional
        Further per-document fields (e.g. ``source``), kept through subsetting and I/O.

    Raises
    ------
    CorpusFormatError
        On mismatched lengths, empty or duplicated ids, missing languages or unknown labels.
    """

    def __init__(
        self,
        ids: Sequence[str],
        langs: Sequence[str],
        texts: Sequence[str],
        labels: Sequence[Sequence[str]] | None = None,
        classes: Sequence[str] | None = None,
        *,
        on_unknown_label: Literal["error", "ignore", "keep"] = "error",
        extra: dict[str, Sequence[Any]] | None = None,
    ) -> None:
        if on_unknown_label not in ("error", "ignore", "keep"):
            raise ValueError(f"on_unknown_label must be 'error', 'ignore' or 'keep', got {on_unknown_label!r}")
        n = len(ids)
        lengths = {"ids": n, "langs": len(langs), "texts": len(texts)}
        if labels is not None:
            lengths["labels"] = len(labels)
        for name, values in (extra or {}).items():
            lengths[f"extra[{name!r}]"] = len(values)
        if len(set(lengths.values())) > 1:
            raise CorpusFormatError("mismatched lengths: " + ", ".join(f"{k}={v}" for k, v in lengths.items()))
        for i, (doc_id, lang) in enumerate(zip(ids, langs, strict=True)):
            if _is_missing(doc_id):
                raise CorpusFormatError(f"document {i} has no id (got {doc_id!r})", field="id")
            if _is_missing(lang):
                raise CorpusFormatError(f"document {i} ({doc_id!r}) has no language (got {lang!r})", field="lang")
        self.ids: list[str] = [str(i) for i in ids]
        self.langs: list[str] = normalize_languages(langs)
        self.texts: list[str] = list(texts)
        for i, (doc_id, lang, text) in enumerate(zip(self.ids, self.langs, self.texts, strict=True)):
            if not doc_id:
                raise CorpusFormatError(f"document {i} has an empty id", field="id")
            if not lang:
                raise CorpusFormatError(f"document {doc_id!r} has no language", field="lang")
            if not isinstance(text, str):
                raise CorpusFormatError(f"document {doc_id!r}: text must be a string, got {type(text).__name__}",
                                        field="text")
        dup = [k for k, c in Counter(zip(self.langs, self.ids, strict=True)).items() if c > 1]
        if dup:
            examples = ", ".join(f"{i!r} ({lang})" for lang, i in dup[:3])
            raise CorpusFormatError(f"{len(dup)} duplicated document id(s) within a language, e.g. {examples}",
                                    field="id")
        self.labelled = labels is not None
        for i, ls in enumerate(labels or []):
            if isinstance(ls, str | bytes) or not isinstance(ls, Iterable):
                raise CorpusFormatError(f"document {self.ids[i]!r} ({self.langs[i]}): labels must be a list of "
                                        f"label names, got {ls!r}", field="labels")
            blank = [lab for lab in ls if not str(lab).strip()]
            if blank:
                raise CorpusFormatError(f"document {self.ids[i]!r} ({self.langs[i]}) has an empty label "
                                        f"{blank[0]!r}", field="labels")
        labs = normalize_labels(labels, classes) if labels is not None else [()] * n
        if classes is None:
            classes = sorted({lab for ls in labs for lab in ls})
        elif on_unknown_label == "keep":
            given = {str(c) for c in classes}
            classes = [*classes, *sorted({lab for ls in labs for lab in ls} - given)]
        self.classes: tuple[str, ...] = tuple(str(c) for c in classes)
        if len(set(self.classes)) != len(self.classes):
            raise CorpusFormatError("the class list has duplicates")
        if any(not c.strip() for c in self.classes):
            raise CorpusFormatError("the class list has an empty class name")
        cset = set(self.classes)
        for i, ls in enumerate(labs):
            unknown = [lab for lab in ls if lab not in cset]
            if unknown:
                if on_unknown_label == "error":
                    raise CorpusFormatError(
                        f"document {self.ids[i]!r} ({self.langs[i]}) has label(s) {unknown} outside the class "
                        "list (on the command line --unknown-labels ignore, in Python on_unknown_label='ignore', "
                        "drops them)",
                        field="labels")
                labs[i] = tuple(lab for lab in ls if lab in cset)
        self.labels: list[tuple[str, ...]] = labs
        self.extra: dict[str, list[Any]] = {k: list(v) for k, v in (extra or {}).items()}
        self._Y: sp.csr_matrix | None = None

    # ------------------------------------------------------------------ basic protocol
    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Document]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, i: Any) -> Any:
        """Document ``i``; for a slice, a list or an array of positions (or booleans), the sub-corpus
        (:meth:`subset`), also as ``corpus[idx, ...]``: how scikit-learn's model selection indexes an array,
        which :attr:`shape` makes it do for a corpus."""
        if isinstance(i, tuple) and len(i) == 2 and i[1] is Ellipsis:
            i = i[0]
        if isinstance(i, slice):
            return self.subset(np.arange(len(self))[i])
        if isinstance(i, list | np.ndarray):
            return self.subset(i)
        return Document(self.ids[i], self.langs[i], self.texts[i], self.labels[i],
                        {k: v[i] for k, v in self.extra.items()})

    @property
    def shape(self) -> tuple[int]:
        """``(number of documents,)``: with :meth:`__getitem__`, what lets ``GridSearchCV``,
        ``cross_val_score`` and ``train_test_split`` split a corpus (labels, class list and extra fields
        included) as they split an array."""
        return (len(self),)

    def __repr__(self) -> str:
        counts = ", ".join(f"{lang}={c}" for lang, c in sorted(self.lang_counts().items()))
        return f"MultilingualCorpus({len(self)} documents, {len(self.classes)} classes; {counts})"

    @property
    def languages(self) -> list[str]:
        """The languages present, sorted."""
        return sorted(set(self.langs))

    def lang_counts(self) -> dict[str, int]:
        """Number of documents per language."""
        return dict(Counter(self.langs))

    @property
    def lang_array(self) -> np.ndarray:
        """The language of each document as a numpy array of str."""
        return np.asarray(self.langs, dtype=object)

    @property
    def Y(self) -> sp.csr_matrix:
        """Binary label matrix (documents x classes), columns in the order of :attr:`classes`."""
        if self._Y is None:
            self._Y = binarize_labels(self.labels, self.classes)
        return self._Y

    # ------------------------------------------------------------------ selection
    def subset(self, indices: Iterable[int] | np.ndarray) -> MultilingualCorpus:
        """The documents at ``indices`` (in that order), with the same class list."""
        idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64, copy=False)
        return MultilingualCorpus(
            [self.ids[i] for i in idx], [self.langs[i] for i in idx], [self.texts[i] for i in idx],
            [self.labels[i] for i in idx] if self.labelled else None, self.classes,
            extra={k: [v[i] for i in idx] for k, v in self.extra.items()})

    def select(self, langs: str | Iterable[str]) -> MultilingualCorpus:
        """The documents of the given language(s), in corpus order."""
        wanted = {langs} if isinstance(langs, str) else set(langs)
        return self.subset([i for i, lang in enumerate(self.langs) if lang in wanted])

    def by_language(self) -> dict[str, np.ndarray]:
        """Indices of the documents of each language (sorted languages)."""
        arr = self.lang_array
        return {lang: np.flatnonzero(arr == lang) for lang in self.languages}

    def with_classes(self, classes: Sequence[str]) -> MultilingualCorpus:
        """The same documents against another class list; labels outside it are dropped."""
        return MultilingualCorpus(self.ids, self.langs, self.texts, self.labels if self.labelled else None,
                                  classes, on_unknown_label="ignore", extra=self.extra)

    def split(self, test_size: float | int = 0.2, random_state: int | None = None,
              groups: str | None = None) -> tuple[MultilingualCorpus, MultilingualCorpus]:
        """Seeded split into (train, test), stratified by language.

        Parameters
        ----------
        test_size : float or int
            Fraction (0 < f < 1) or number of documents of each language that go to the test set.
        random_state : int, optional
            Seed; the same seed gives the same split.
        groups : str, optional
            Name of an extra field (e.g. ``"source"``): documents sharing its value stay on the same side.
        """
        rng = np.random.RandomState(random_state)
        train_idx: list[int] = []
        test_idx: list[int] = []
        for _lang, idx in self.by_language().items():
            n_test = int(round(test_size * len(idx))) if isinstance(test_size, float) else int(test_size)
            if isinstance(test_size, float) and not 0.0 < test_size < 1.0:
                raise ValueError(f"test_size must be in (0, 1) or an int, got {test_size}")
            if groups is None:
                perm = rng.permutation(idx)
                test_idx.extend(perm[:n_test])
                train_idx.extend(perm[n_test:])
                continue
            if groups not in self.extra:
                raise KeyError(f"no extra field {groups!r} to group by; have {sorted(self.extra)}")
            members: dict[Any, list[int]] = {}
            for i in idx:
                members.setdefault(self.extra[groups][i], []).append(int(i))
            keys = list(members)
            order = rng.permutation(len(keys))
            taken = 0
            for k in order:
                target = test_idx if taken < n_test else train_idx
                target.extend(members[keys[k]])
                if target is test_idx:
                    taken += len(members[keys[k]])
        return self.subset(sorted(train_idx)), self.subset(sorted(test_idx))

    @staticmethod
    def concat(corpora: Sequence[MultilingualCorpus]) -> MultilingualCorpus:
        """Concatenate corpora that share one class list."""
        if not corpora:
            raise ValueError("nothing to concatenate")
        classes = corpora[0].classes
        for c in corpora[1:]:
            if c.classes != classes:
                raise ValueError("cannot concatenate corpora with different class lists")
        keys = set(corpora[0].extra)
        for c in corpora[1:]:
            keys &= set(c.extra)
        labelled = all(c.labelled for c in corpora)
        return MultilingualCorpus(
            [i for c in corpora for i in c.ids], [g for c in corpora for g in c.langs],
            [t for c in corpora for t in c.texts],
            [ls for c in corpora for ls in c.labels] if labelled else None, classes,
            extra={k: [v for c in corpora for v in c.extra[k]] for k in sorted(keys)})

    # ------------------------------------------------------------------ I/O
    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], classes: Sequence[str] | None = None, *,
                     on_unknown_label: Literal["error", "ignore", "keep"] = "error",
                     path: str | Path | None = None,
                     detect_language: bool | Sequence[str] = False,
                     on_missing_labels: MissingLabels = "warn") -> MultilingualCorpus:
        """Build a corpus from dicts with keys ``id``, ``lang``, ``text`` and optionally ``labels``.

        Parameters
        ----------
        records : iterable of dict
        classes : sequence of str, optional
        on_unknown_label : {"error", "ignore", "keep"}
            See :class:`MultilingualCorpus`.
        path : path, optional
            The file the records come from, named in error messages.
        detect_language : bool or sequence of str
            Detect the language of records without one (``lang`` absent, null or blank) with
            :func:`gfun.text.langid.fill_missing_languages` (needs ``pip install 'gfun[langid]'``): ``True``
            chooses among every language the detector knows, a list of codes among those only. By
            default a record without a language is an error.
        on_missing_labels : {"warn", "error", "negative"}
            Records without a ``labels`` field (or with ``null``) when other records have one: read as
            documents with no label (negative for every class) with a warning naming them (``"warn"``),
            refused (``"error"``), or read so deliberately, without a warning (``"negative"``). When no
            record has labels the corpus is unlabelled (documents to classify) and this does not apply.
        """
        if on_missing_labels not in ("warn", "error", "negative"):
            raise ValueError(f"on_missing_labels must be 'warn', 'error' or 'negative', got {on_missing_labels!r}")
        ids, langs, texts, labels = [], [], [], []
        extra: dict[str, list[Any]] = {}
        any_labels = False
        missing: list[tuple[int, str]] = []  # (line, id) of the records without a labels field
        recs = list(records)
        if isinstance(detect_language, str):
            raise TypeError("detect_language must be True/False or a list of candidate language codes, not a "
                            f"single string ({detect_language!r})")
        if detect_language is not False and detect_language is not None:
            from gfun.text.langid import fill_missing_languages

            recs = fill_missing_languages(recs, candidates=None if detect_language is True else detect_language,
                                          path=None if path is None else str(path))
        extra_keys = sorted({k for r in recs for k in r} - {"id", "lang", "text", "labels", "__line__"})
        for i, rec in enumerate(recs):
            line = rec.pop("__line__", i + 1) if isinstance(rec, dict) else i + 1
            for key in _REQUIRED:
                if key not in rec or rec[key] is None:
                    raise CorpusFormatError(f"missing required field {key!r}" + (_DETECT_HINT if key == "lang" else ""),
                                            path=path, line=line, field=key)
            if not isinstance(rec["text"], str):
                raise CorpusFormatError(f"expected a string, got {type(rec['text']).__name__}", path=path,
                                        line=line, field="text")
            for key in ("id", "lang"):
                if not isinstance(rec[key], str | int) or str(rec[key]).strip() == "":
                    raise CorpusFormatError(f"expected a non-empty string, got {rec[key]!r}"
                                            + (_DETECT_HINT if key == "lang" else ""), path=path, line=line,
                                            field=key)
            labs = rec.get("labels")
            if labs is None:
                missing.append((line, str(rec["id"])))
            else:
                any_labels = True
                if isinstance(labs, str) or not isinstance(labs, list) or not all(
                        isinstance(x, str) for x in labs):
                    raise CorpusFormatError(f"expected a list of strings, got {labs!r}", path=path, line=line,
                                            field="labels")
                blank = [x for x in labs if not x.strip()]
                if blank:
                    raise CorpusFormatError(f"empty label {blank[0]!r} (a label must be a non-empty string)",
                                            path=path, line=line, field="labels")
            ids.append(str(rec["id"]))
            langs.append(str(rec["lang"]))  # normalised (and the change named) by the constructor
            texts.append(rec["text"])
            labels.append(labs or [])
            for k in extra_keys:
                extra.setdefault(k, []).append(rec.get(k))
        if any_labels and missing:
            where = "" if path is None else f"{path}: "
            examples = ", ".join(f"line {ln} (id {i!r})" for ln, i in missing[:5])
            message = (f"{where}{len(missing)} of {len(recs)} document(s) have no 'labels' field, e.g. {examples}")
            if on_missing_labels == "error":
                raise CorpusFormatError(message.removeprefix(where) + " (on_missing_labels='negative', on the "
                                        "command line --missing-labels negative, reads them as documents with no "
                                        "label)", path=path, line=missing[0][0], field="labels")
            if on_missing_labels == "warn":
                logger.warning("%s: they are read as documents with no label, negative for every class "
                               "(on_missing_labels='negative', on the command line --missing-labels negative, "
                               "does so without this warning; 'error' refuses them)", message)
        try:
            return cls(ids, langs, texts, labels if any_labels else None, classes,
                       on_unknown_label=on_unknown_label, extra=extra)
        except CorpusFormatError as exc:
            if path is not None and exc.path is None:
                raise CorpusFormatError(str(exc), path=path) from None
            raise

    @classmethod
    def from_jsonl(cls, path: str | Path, classes: Sequence[str] | None = None, *,
                   on_unknown_label: Literal["error", "ignore", "keep"] = "error",
                   detect_language: bool | Sequence[str] = False,
                   on_missing_labels: MissingLabels = "warn") -> MultilingualCorpus:
        """Read a JSONL file (``.gz`` allowed); errors name the file, line and field.

        ``detect_language`` fills in missing languages, ``on_missing_labels`` says what to do with records
        without labels (see :meth:`from_records`).
        """
        records = read_jsonl_records(path)
        return cls.from_records(records, classes, on_unknown_label=on_unknown_label, path=path,
                                detect_language=detect_language, on_missing_labels=on_missing_labels)

    @classmethod
    def from_frame(cls, frame: Any, classes: Sequence[str] | None = None, **kw: Any) -> MultilingualCorpus:
        """Build a corpus from a pandas DataFrame with one row per document: a ``text`` column, and ``lang``,
        optionally ``id`` (default: the row's position) and ``labels`` (a list of label names per row, or one
        ``,``-separated string); other columns become extra fields. A missing cell (``None``, NaN) is an absent
        field. ``kw`` goes to :meth:`from_records`.

        Raises
        ------
        CorpusFormatError
            A frame without a ``text`` column, and what :meth:`from_records` refuses (naming the row).
        """
        columns = [str(c) for c in frame.columns]
        if "text" not in columns:
            raise CorpusFormatError(f"a DataFrame of documents needs a 'text' column; it has {columns}")
        records = []
        for i, row in enumerate(frame.to_dict(orient="records")):
            rec = {str(k): v for k, v in row.items() if not (np.isscalar(v) and _is_missing_cell(v)) and v is not None}
            rec.setdefault("id", str(i))
            labels = rec.get("labels")
            if isinstance(labels, str):
                rec["labels"] = labels.split(",") if labels else []
            elif isinstance(labels, tuple | np.ndarray):
                rec["labels"] = [str(x) for x in labels]
            rec["__line__"] = i + 1
            records.append(rec)
        return cls.from_records(records, classes, **kw)

    def to_records(self) -> list[dict[str, Any]]:
        """The documents as dicts (the JSONL schema)."""
        out = []
        for i in range(len(self)):
            rec: dict[str, Any] = {"id": self.ids[i], "lang": self.langs[i]}
            for k, v in self.extra.items():
                rec[k] = v[i]
            rec["text"] = self.texts[i]
            if self.labelled:
                rec["labels"] = list(self.labels[i])
            out.append(rec)
        return out

    def to_jsonl(self, path: str | Path) -> None:
        """Write the corpus as JSONL (``.gz`` compresses).

        The file is replaced only once every record is written (see :func:`gfun.core.atomic.atomic_write`): an
        error (a value that JSON cannot hold) leaves the previous file as it was.
        """
        write_jsonl_records(self.to_records(), path)

    @classmethod
    def from_tsv(cls, path: str | Path, classes: Sequence[str] | None = None, *,
                 on_unknown_label: Literal["error", "ignore", "keep"] = "error",
                 detect_language: bool | Sequence[str] = False,
                 on_missing_labels: MissingLabels = "warn") -> MultilingualCorpus:
        """Read a TSV file with header ``id, lang, labels, text`` (other columns become extra fields).

        ``detect_language`` fills in missing (empty) languages (see :meth:`from_records`).
        """
        records = read_tsv_records(path)
        return cls.from_records(records, classes, on_unknown_label=on_unknown_label, path=path,
                                detect_language=detect_language, on_missing_labels=on_missing_labels)

    def to_tsv(self, path: str | Path) -> None:
        """Write the corpus as TSV (see :mod:`gfun.corpus.files` for the escaping).

        Everything is validated before the file is touched, and the file is replaced only once every row is
        written: an error leaves the previous file as it was.

        Raises
        ------
        CorpusFormatError
            An id, language or label that TSV cannot hold (naming the document and the field).
        """
        write_tsv(self, path)

    def save_classes(self, path: str | Path) -> None:
        """Write the class list as a JSON array."""
        write_classes(self.classes, path)


def read_jsonl(path: str | Path, classes: Sequence[str] | None = None, **kw: Any) -> MultilingualCorpus:
    """Shortcut for :meth:`MultilingualCorpus.from_jsonl`."""
    return MultilingualCorpus.from_jsonl(path, classes, **kw)


def read_tsv(path: str | Path, classes: Sequence[str] | None = None, **kw: Any) -> MultilingualCorpus:
    """Shortcut for :meth:`MultilingualCorpus.from_tsv`."""
    return MultilingualCorpus.from_tsv(path, classes, **kw)


def read_corpus(path: Any, classes: Sequence[str] | None = None, **kw: Any) -> MultilingualCorpus:
    """Read a corpus file, JSONL, TSV or CSV (told apart by their first line, optionally ``.gz``; ``-``: standard
    input) or Parquet (``.parquet``, with pyarrow: the ``experiments`` extra), see
    :func:`gfun.corpus.files.read_records`; or a pandas DataFrame (:meth:`MultilingualCorpus.from_frame`). ``kw``
    goes to :meth:`MultilingualCorpus.from_records`."""
    if hasattr(path, "columns") and hasattr(path, "iloc"):
        return MultilingualCorpus.from_frame(path, classes, **kw)
    return MultilingualCorpus.from_records(read_records(path), classes, path=path, **kw)
