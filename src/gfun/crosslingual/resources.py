"""Parallel (or comparable) collections: the cross-lingual resource of CLESA and KCCA.

A :class:`ParallelCollection` is a list of *items* (a concept, a package, an article), each described in
some of the languages: ``texts[lang][i]`` is item ``i``'s text in ``lang`` or ``None``. Sorg & Cimiano
(2012) and Esuli et al. (2019) use Wikipedia articles linked across languages; gfun builds the collection
from what its corpora hold: :func:`debtags_parallel` takes the Debian package descriptions and their human
translations (the Debian Description Translation Project), one item per binary package.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["AUTO", "ParallelCollection", "debtags_parallel", "resolve_parallel"]

logger = logging.getLogger(__name__)

#: ``parallel="auto"``: the debtags translations of the training documents' source packages (see
#: :func:`resolve_parallel`).
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


def resolve_parallel(parallel: Any, X: Any = None) -> ParallelCollection:
    """The collection a ``parallel`` parameter names.

    ``parallel`` is a :class:`ParallelCollection`, a mapping ``{lang: aligned texts}``, the path of a JSONL
    file (:meth:`ParallelCollection.to_jsonl`), or ``"auto"``: the debtags descriptions (``$GFUN_DATA/debtags``,
    else apt's lists) of the packages whose source package is among the training documents'
    (``X.extra["source"]``), which keeps every test document out of the collection by construction of the
    debtags protocol.

    Raises
    ------
    ValueError
        With ``"auto"``, when ``X`` has no ``source`` field, or when the debtags files found do not hold the
        training documents themselves (another release, or another data folder than the corpus came from).
    """
    if isinstance(parallel, ParallelCollection):
        return parallel
    if isinstance(parallel, Mapping):
        return ParallelCollection.from_aligned(parallel)
    if isinstance(parallel, str) and parallel == AUTO:
        sources = getattr(X, "extra", {}).get("source") if X is not None else None
        if not sources:
            raise ValueError("parallel='auto' builds the collection from the debtags translations of the training "
                             "packages, which needs a debtags training corpus (with a 'source' field); pass "
                             "parallel=ParallelCollection(...), {lang: aligned texts} or a JSONL path instead")
        coll = debtags_parallel(sources=set(sources))
        _check_matches(coll, X)
        return coll
    if isinstance(parallel, str | os.PathLike):
        return ParallelCollection.from_jsonl(Path(parallel))
    raise TypeError(f"parallel must be a ParallelCollection, a mapping, a JSONL path or 'auto', got {parallel!r}")


def _check_matches(coll: ParallelCollection, X: Any) -> None:
    """Refuse a collection built from other debtags files than the training corpus (most documents must match)."""
    index = {(lang, i): n for lang in coll.texts for n, i in enumerate(coll.ids)}
    found = sum(1 for i, lang, text in zip(X.ids, X.langs, X.texts, strict=True)
                if (n := index.get((lang, i))) is not None and coll.texts[lang][n] == text)
    if found < 0.5 * len(X.ids):
        raise ValueError(f"parallel='auto': only {found} of the {len(X.ids)} training documents are in the debtags "
                         "files found ($GFUN_DATA/debtags, else apt's lists): they are not the files the corpus was "
                         "built from; set GFUN_DATA, or pass the collection explicitly")
