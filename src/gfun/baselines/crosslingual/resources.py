"""Parallel (or comparable) collections: the cross-lingual resource of CLESA and KCCA.

A :class:`ParallelCollection` is a list of *items* (a concept, a package, an article), each described in
some of the languages: ``texts[lang][i]`` is item ``i``'s text in ``lang`` or ``None``. Sorg & Cimiano
(2012) and Esuli et al. (2019) use Wikipedia articles linked across languages; gfun builds the collection
from what its corpora hold: :func:`debtags_parallel` takes the Debian package descriptions and their human
translations (the Debian Description Translation Project), one item per binary package;
:func:`sib200_parallel` takes the SIB-200 (FLORES-200) training sentences, one item per ``index_id``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["AUTO", "ParallelCollection", "debtags_parallel", "fit_language_tfidf", "leave_out", "resolve_parallel",
           "sib200_parallel"]

logger = logging.getLogger(__name__)

#: ``parallel="auto"``: the translations of the training documents (debtags: of their source packages; SIB-200:
#: of their sentences), see :func:`resolve_parallel`.
AUTO = "auto"


@dataclass
class ParallelCollection:
    """Items described in several languages.

    Attributes
    ----------
    ids : list of str
        One identifier per item.
    texts : dict of str to list of (str or None)
        For each language, the text of every item in that language (``None`` where the item has none).
    """

    ids: list[str]
    texts: dict[str, list[str | None]]

    def __post_init__(self) -> None:
        self.ids = [str(i) for i in self.ids]
        self.texts = {str(lang): list(col) for lang, col in self.texts.items()}
        for lang, col in self.texts.items():
            if len(col) != len(self.ids):
                raise ValueError(f"the collection has {len(self.ids)} items but {len(col)} texts in {lang!r}")
            bad = [t for t in col if t is not None and not isinstance(t, str)]
            if bad:
                raise TypeError(f"texts of {lang!r} must be str or None, got a {type(bad[0]).__name__}")

    @classmethod
    def from_aligned(cls, texts: Mapping[str, Sequence[str | None]],
                     ids: Sequence[str] | None = None) -> ParallelCollection:
        """From ``{lang: texts}`` where the ``i``-th text of every language describes item ``i``."""
        sizes = {len(v) for v in texts.values()}
        if len(sizes) > 1:
            raise ValueError(f"aligned texts must have one entry per item in every language, got sizes {sizes}")
        n = sizes.pop() if sizes else 0
        return cls(list(ids) if ids is not None else [str(i) for i in range(n)], {k: list(v) for k, v in texts.items()})

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def languages(self) -> list[str]:
        """Languages with at least one text, sorted."""
        return sorted(lang for lang, col in self.texts.items() if any(t is not None for t in col))

    def present(self, lang: str) -> np.ndarray:
        """Boolean mask of the items that have a text in ``lang``."""
        col = self.texts.get(lang)
        if col is None:
            return np.zeros(len(self.ids), dtype=bool)
        return np.array([t is not None for t in col], dtype=bool)

    def coverage(self) -> np.ndarray:
        """Number of languages each item is described in."""
        return np.sum([self.present(lang) for lang in self.texts], axis=0) if self.texts else np.zeros(0, int)

    def subset(self, idx: Iterable[int]) -> ParallelCollection:
        """The items at ``idx``, in that order."""
        idx = [int(i) for i in idx]
        return ParallelCollection([self.ids[i] for i in idx], {k: [v[i] for i in idx] for k, v in self.texts.items()})

    def to_jsonl(self, path: str | os.PathLike[str]) -> None:
        """One JSON object per item: ``{"id": ..., "<lang>": text, ...}`` (missing languages left out)."""
        with open(path, "w", encoding="utf-8") as fh:
            for i, item in enumerate(self.ids):
                rec: dict[str, Any] = {"id": item}
                rec.update({lang: col[i] for lang, col in sorted(self.texts.items()) if col[i] is not None})
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str]) -> ParallelCollection:
        """Read a file written by :meth:`to_jsonl`."""
        records = []
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or "id" not in rec:
                        raise ValueError(f"{path}:{n}: expected a JSON object with an 'id'")
                    records.append(rec)
        langs = sorted({k for r in records for k in r} - {"id"})
        return cls([r["id"] for r in records], {lang: [r.get(lang) for r in records] for lang in langs})


def leave_out(method: str, lang: str, n_texts: int, why: str) -> None:
    """Warn that ``method`` leaves language ``lang`` of the parallel collection out of its space (too few texts to
    place it): the model then does not serve that language, and the fit goes on without it."""
    logger.warning("%s: leaves out %r, a language of the parallel collection with %d text(s) and no training "
                   "document: %s; %s documents will not be classified", method, lang, n_texts, why, lang)


def fit_language_tfidf(make_tfidf: Callable[[], Any], docs: Mapping[str, list[str]], required: Collection[str],
                       method: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One TF-IDF per language of ``docs`` (``{lang: texts}``, each language's training documents and collection
    texts): the vectorizers and the matrices, by language.

    A language that is not ``required`` (no training document, only texts of the collection) whose texts give no
    vocabulary (a handful of texts, with ``min_df`` above 1 or only stop words) is left out, with a warning
    (:func:`leave_out`); a required language that fails raises as the vectorizer does.
    """
    tfidf = make_tfidf()
    try:
        mats = tfidf.fit_transform_by_language(docs)
        return dict(tfidf.vectorizers_), mats
    except ValueError:  # one language could not be fitted: fit them one by one to find which, and go on without it
        pass
    vectorizers, mats = {}, {}
    for lang, texts in docs.items():
        one = make_tfidf()
        try:
            mats[lang] = one.fit_transform_by_language({lang: texts})[lang]
        except ValueError as exc:
            if lang in required:
                raise
            leave_out(method, lang, len(texts), str(exc))
            continue
        vectorizers[lang] = one.vectorizers_[lang]
    return vectorizers, mats


def debtags_parallel(data_dir: str | os.PathLike[str] | None = None, *,
                     languages: Sequence[str] | None = None, sources: Collection[str] | None = None,
                     exclude_sources: Collection[str] = ()) -> ParallelCollection:
    """The debtags descriptions as a parallel collection: one item per tagged binary package.

    Each item holds the package's eligible description in every language (the English original and the
    human translations of the Debian Description Translation Project; eligibility as in
    :mod:`gfun.datasets.debtags`: tagged package, translation of the current description, no duplicate text).

    Parameters
    ----------
    data_dir : path, optional
        Folder with ``Packages`` and ``Translation-<lang>`` files (default ``$GFUN_DATA/debtags``).
    languages : sequence of str, optional
        Default: those of the debtags many-shot and zero-shot languages whose ``Translation`` file exists.
    sources : collection of str, optional
        Keep only packages whose source package is in this set (e.g. the training documents' sources, so
        that no test document's text enters the collection).
    exclude_sources : collection of str
        Drop packages whose source package is in this set.
    """
    from gfun.datasets import dataset_dir
    from gfun.datasets.debtags import (
        APT_LISTS_DIR,
        DEBTAGS_MANY_SHOT,
        DEBTAGS_ZERO_SHOT,
        _load_language,
        _load_packages,
    )

    directory = dataset_dir("debtags", data_dir, fallback=APT_LISTS_DIR)
    langs = list(languages) if languages is not None else list(DEBTAGS_MANY_SHOT + DEBTAGS_ZERO_SHOT)
    tagged, _, sig = _load_packages(directory)
    keep_src = set(sources) if sources is not None else None
    drop_src = set(exclude_sources)
    by_lang: dict[str, dict[str, str]] = {}
    for lang in langs:
        try:
            docs = _load_language(directory, lang, tagged, sig)[0]
        except FileNotFoundError:
            if languages is not None:
                raise
            continue  # a default language whose Translation file is absent
        by_lang[lang] = {d.id: d.text for d in docs
                         if (keep_src is None or d.source in keep_src) and d.source not in drop_src}
    ids = sorted(set().union(*[set(v) for v in by_lang.values()])) if by_lang else []
    coll = ParallelCollection(ids, {lang: [m.get(i) for i in ids] for lang, m in by_lang.items()})
    logger.info("debtags parallel collection: %d packages; per language %s", len(ids),
                {lang: len(m) for lang, m in by_lang.items()})
    return coll


def sib200_parallel(data_dir: str | os.PathLike[str] | None = None, *, languages: Sequence[str] | None = None,
                    index_ids: Collection[str] | None = None) -> ParallelCollection:
    """The SIB-200 training sentences as a parallel collection: one item per ``index_id``.

    Every FLORES-200 sentence exists in every language, so each item holds the same sentence in every
    language read. Only the ``train.tsv`` files are read: no dev or test sentence enters the collection.

    Parameters
    ----------
    data_dir : path, optional
        The ``sib200`` folder (default ``$GFUN_DATA/sib200``).
    languages : sequence of str, optional
        ISO 639-1 codes or directory names; default the paper's eleven
        (:data:`gfun.datasets.sib200.SIB200_LANGS`) whose directory exists.
    index_ids : collection of str, optional
        Keep only these sentences (e.g. the training documents').
    """
    from gfun.datasets import dataset_dir
    from gfun.datasets.sib200 import SIB200_LANGS, read_sib200_file, resolve_sib200_dir

    root = dataset_dir("sib200", data_dir)
    keep = None if index_ids is None else {str(i) for i in index_ids}
    by_lang: dict[str, dict[str, str]] = {}
    for lang in (languages if languages is not None else SIB200_LANGS):
        try:
            code, directory = resolve_sib200_dir(root, lang)
        except FileNotFoundError:
            if languages is not None:
                raise
            continue  # a default language whose directory is absent
        rows = read_sib200_file(directory / "train.tsv", code, categories=None)
        by_lang[code] = {r["index_id"]: r["text"] for r in rows if keep is None or r["index_id"] in keep}
    ids = sorted(set().union(*[set(v) for v in by_lang.values()]), key=_natural) if by_lang else []
    coll = ParallelCollection(ids, {lang: [m.get(i) for i in ids] for lang, m in by_lang.items()})
    logger.info("SIB-200 parallel collection: %d training sentences in %d languages (%s)", len(ids), len(by_lang),
                ", ".join(by_lang))
    return coll


def _natural(key: str) -> tuple[int, str]:
    """Sort key of an ``index_id``: numerically when it is a number."""
    return (int(key), "") if key.isdigit() else (1 << 62, key)


def resolve_parallel(parallel: Any, X: Any = None,
                     data_dir: str | os.PathLike[str] | None = None) -> ParallelCollection:
    """The collection a ``parallel`` parameter names.

    ``parallel`` is a :class:`ParallelCollection`, a mapping ``{lang: aligned texts}``, the path of a JSONL
    file (:meth:`ParallelCollection.to_jsonl`), or ``"auto"``: the translations of the training documents
    ``X``, never a test document's text:

    * debtags (``X.extra["source"]``): the debtags descriptions (``$GFUN_DATA/debtags``, else apt's lists) of
      the packages whose source package is among the training documents', which keeps every test document out
      of the collection by construction of the debtags protocol;
    * SIB-200 (``X.extra["index_id"]``): one item per training sentence (``index_id``), in the languages of
      ``X`` and the paper's eleven, read from the ``train.tsv`` files of ``$GFUN_DATA/sib200``
      (:func:`sib200_parallel`); without that folder, the training documents themselves (the languages of
      ``X`` only).

    ``data_dir`` is the dataset's folder that ``"auto"`` reads (the ``debtags`` or ``sib200`` folder the corpus
    was built from); by default ``$GFUN_DATA/<dataset>``.

    Raises
    ------
    ValueError
        With ``"auto"``, when ``X`` is not a debtags or SIB-200 training corpus (no ``source`` or ``index_id``
        field), or when the files found do not hold the training documents themselves (another release, or
        another data folder than the corpus came from).
    """
    if isinstance(parallel, ParallelCollection):
        return parallel
    if isinstance(parallel, Mapping):
        return ParallelCollection.from_aligned(parallel)
    if isinstance(parallel, str) and parallel == AUTO:
        extra = getattr(X, "extra", None) or {}
        if extra.get("source"):
            coll = debtags_parallel(data_dir, sources=set(extra["source"]))
            _check_matches(coll, X.ids, X)
            return coll
        if extra.get("index_id"):
            return _sib200_auto(X, data_dir)
        raise ValueError("parallel='auto' builds the collection from the translations of the training documents, "
                         "which only the parallel corpora provide (debtags: a 'source' field; SIB-200: an 'index_id' "
                         "field), and this training corpus has neither; pass parallel=ParallelCollection(...), "
                         "{lang: aligned texts} or a JSONL path instead (in an experiment: "
                         "--view-param kcca.parallel=PATH)")
    if isinstance(parallel, str | os.PathLike):
        return ParallelCollection.from_jsonl(Path(parallel))
    raise TypeError(f"parallel must be a ParallelCollection, a mapping, a JSONL path or 'auto', got {parallel!r}")


def _sib200_auto(X: Any, data_dir: str | os.PathLike[str] | None = None) -> ParallelCollection:
    """``parallel="auto"`` on a SIB-200 training corpus (see :func:`resolve_parallel`)."""
    from gfun.datasets import dataset_dir
    from gfun.datasets.sib200 import SIB200_LANGS, resolve_sib200_dir

    index_ids = [str(i) for i in X.extra["index_id"]]
    coll = None
    try:
        root = dataset_dir("sib200", data_dir)
        langs = []
        for lang in dict.fromkeys([*SIB200_LANGS, *sorted(set(X.langs))]):
            try:
                langs.append(resolve_sib200_dir(root, lang)[1].name)
            except FileNotFoundError:
                continue
        coll = sib200_parallel(root, languages=langs, index_ids=set(index_ids))
    except FileNotFoundError as exc:
        logger.warning("parallel='auto': no SIB-200 files (%s); the parallel collection is the training sentences "
                       "themselves, in their %d languages only", exc, len(set(X.langs)))
    if coll is not None and len(coll):
        _check_matches(coll, index_ids, X)
        return coll
    ids = sorted(set(index_ids), key=_natural)
    row = {i: n for n, i in enumerate(ids)}
    texts: dict[str, list[str | None]] = {lang: [None] * len(ids) for lang in sorted(set(X.langs))}
    for i, lang, text in zip(index_ids, X.langs, X.texts, strict=True):
        texts[lang][row[i]] = text
    return ParallelCollection(ids, texts)


def _check_matches(coll: ParallelCollection, ids: Sequence[str], X: Any) -> None:
    """Refuse a collection built from other files than the training corpus (most documents must match);
    ``ids[k]`` is the item of the ``k``-th training document."""
    index = {(lang, i): n for lang in coll.texts for n, i in enumerate(coll.ids)}
    found = sum(1 for i, lang, text in zip(ids, X.langs, X.texts, strict=True)
                if (n := index.get((lang, str(i)))) is not None and coll.texts[lang][n] == text)
    if found < 0.5 * len(ids):
        raise ValueError(f"parallel='auto': only {found} of the {len(ids)} training documents are in the dataset "
                         "files found ($GFUN_DATA/<dataset>; for debtags else apt's lists): they are not the files "
                         "the corpus was built from; set GFUN_DATA, or pass the collection explicitly")
