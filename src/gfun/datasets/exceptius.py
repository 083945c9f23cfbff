"""EXCEPTIUS: sentences of COVID-19 exceptional-measure acts, 8 event types (multilabel).

Layout of the data directory (``$GFUN_DATA/exceptius`` by default)::

    <country>/train_or.tsv   <country>/dev_or.tsv   <country>/test_or.tsv

Only the original-language files (``*_or.tsv``) are read; the ``*_en.tsv`` files are partial machine
translations and ``full_*``/``all_*`` files duplicate the splits. Each file is tab-separated, with the
header ``id, text, event1 .. event8``; the event columns hold ``True``/``False``.

Quirks of the released files, handled here
------------------------------------------
* ``id`` is the row number inside each file (restarting at 0 in every split and country), except for
  ``uk`` whose ids come from the original corpus. Document ids are therefore made unique as
  ``<country>:<split>:<id>``; the country is kept as the extra field ``country``.
* Many sentences carry no event at all; they are kept, with an empty label list.
* Some sentences have leading or trailing white space (stripped).
* The ``uk`` files lack the final newline.
* A few dev/test sentences also occur verbatim in the training file of the same language (33 test and
  34 dev sentences overall); ``drop_leaked=True`` removes them from dev/test.

Countries map to languages as: belgium and france -> ``fr``, italy -> ``it``, uk -> ``en``,
netherlands -> ``nl``, hungary -> ``hu``, norway -> ``nb``, poland -> ``pl``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets import dataset_dir
from gfun.datasets.splits import DatasetSplits
from gfun.errors import CorpusFormatError

__all__ = [
    "EXCEPTIUS_CLASSES",
    "EXCEPTIUS_COUNTRIES",
    "ExceptiusSplits",
    "load_exceptius",
    "read_exceptius_file",
]

logger = logging.getLogger(__name__)

#: Country directory -> language code.
EXCEPTIUS_COUNTRIES: dict[str, str] = {
    "belgium": "fr",
    "france": "fr",
    "italy": "it",
    "uk": "en",
    "netherlands": "nl",
    "hungary": "hu",
    "norway": "nb",
    "poland": "pl",
}

#: The codeframe: the eight event types, in column order.
EXCEPTIUS_CLASSES: tuple[str, ...] = tuple(f"event{i}" for i in range(1, 9))

_SPLITS = ("train", "dev", "test")
_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


ExceptiusSplits = DatasetSplits
"""The splits :func:`load_exceptius` returns (train, dev and test sharing :data:`EXCEPTIUS_CLASSES`): a
:class:`~gfun.datasets.splits.DatasetSplits` (this name is an alias of that class)."""


def read_exceptius_file(path: str | os.PathLike[str], country: str, split: str,
                        lang: str | None = None) -> list[dict[str, Any]]:
    """Read one ``<country>/<split>_or.tsv`` file into corpus records.

    Parameters
    ----------
    path : path
        The TSV file.
    country : str
        Country directory name (becomes the extra field ``country`` and part of the id).
    split : str
        Split name (part of the id).
    lang : str, optional
        Language code; by default looked up in :data:`EXCEPTIUS_COUNTRIES`.

    Returns
    -------
    list of dict
        Records with ``id`` (``<country>:<split>:<row id>``), ``lang``, ``country``, ``text`` and
        ``labels``.

    Raises
    ------
    CorpusFormatError
        On a missing column, a wrong number of fields, an empty id or text, a duplicated id or an event
        value other than True/False; the message names the file, the line and the field.
    """
    path = Path(path)
    if lang is None:
        if country not in EXCEPTIUS_COUNTRIES:
            raise ValueError(f"unknown EXCEPTIUS country {country!r}; pass lang explicitly")
        lang = EXCEPTIUS_COUNTRIES[country]
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"EXCEPTIUS file not found: {path}") from None
    records: list[dict[str, Any]] = []
    header: list[str] | None = None
    seen: dict[str, int] = {}
    for lineno, rawline in enumerate(raw.split(b"\n"), start=1):
        try:
            line = rawline.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise CorpusFormatError(f"not valid UTF-8 (byte {exc.start} of the line)", path=path,
                                    line=lineno) from None
        if lineno == 1:
            header = [h.strip() for h in line.lstrip("\ufeff").split("\t")]
            missing = [c for c in ("id", "text", *EXCEPTIUS_CLASSES) if c not in header]
            if missing:
                raise CorpusFormatError(f"header lacks column(s) {missing}; found {header}", path=path,
                                        line=lineno)
            continue
        if not line.strip():
            continue
        assert header is not None
        cells = line.split("\t")
        if len(cells) != len(header):
            raise CorpusFormatError(f"expected {len(header)} tab-separated fields, found {len(cells)}",
                                    path=path, line=lineno)
        row = dict(zip(header, cells, strict=True))
        row_id = row["id"].strip()
        if not row_id:
            raise CorpusFormatError("empty id", path=path, line=lineno, field="id")
        if row_id in seen:
            raise CorpusFormatError(f"duplicated id {row_id!r} (first seen on line {seen[row_id]})",
                                    path=path, line=lineno, field="id")
        seen[row_id] = lineno
        text = row["text"].strip()
        if not text:
            raise CorpusFormatError("empty text", path=path, line=lineno, field="text")
        labels = []
        for event in EXCEPTIUS_CLASSES:
            value = row[event].strip().lower()
            if value in _TRUE:
                labels.append(event)
            elif value not in _FALSE:
                raise CorpusFormatError(f"expected True or False, got {row[event]!r}", path=path,
                                        line=lineno, field=event)
        records.append({"id": f"{country}:{split}:{row_id}", "lang": lang, "country": country, "text": text,
                        "labels": labels})
    if header is None:
        raise CorpusFormatError("empty file (no header row)", path=path)
    return records


def _corpus(records: list[dict[str, Any]]) -> MultilingualCorpus:
    return MultilingualCorpus([r["id"] for r in records], [r["lang"] for r in records],
                              [r["text"] for r in records], [r["labels"] for r in records], EXCEPTIUS_CLASSES,
                              extra={"country": [r["country"] for r in records]})


def load_exceptius(data_dir: str | os.PathLike[str] | None = None, countries: Iterable[str] | None = None, *,
                   drop_leaked: bool = False, langs: Sequence[str] | None = None) -> DatasetSplits:
    """Load the train/dev/test splits of EXCEPTIUS (original-language text only).

    Parameters
    ----------
    data_dir : path, optional
        The ``exceptius`` folder; by default ``$GFUN_DATA/exceptius``.
    countries : iterable of str, optional
        Country directories to read (keys of :data:`EXCEPTIUS_COUNTRIES`). By default every known
        country whose directory exists (a missing one is logged).
    drop_leaked : bool, default False
        Remove from dev and test the sentences whose text also occurs in the training split of the same
        language (the released splits contain a few such duplicates).
    langs : sequence of str, optional
        Keep only the countries of these languages (e.g. ``["fr", "it"]``).

    Returns
    -------
    DatasetSplits
        ``train``, ``dev`` and ``test`` corpora with the extra field ``country`` and the class list
        :data:`EXCEPTIUS_CLASSES`.

    Raises
    ------
    FileNotFoundError
        When the data directory, a requested country or one of its files is missing.
    CorpusFormatError
        When a file is malformed (see :func:`read_exceptius_file`).
    """
    root = dataset_dir("exceptius", data_dir)
    if countries is None:
        chosen = [c for c in EXCEPTIUS_COUNTRIES if (root / c).is_dir()]
        absent = [c for c in EXCEPTIUS_COUNTRIES if c not in chosen]
        if absent:
            logger.warning("EXCEPTIUS: no directory for %s in %s", ", ".join(absent), root)
        if not chosen:
            raise FileNotFoundError(f"no EXCEPTIUS country directory (e.g. {root / 'italy'}) in {root}")
    else:
        chosen = list(dict.fromkeys(countries))
        unknown = [c for c in chosen if c not in EXCEPTIUS_COUNTRIES]
        if unknown:
            raise ValueError(f"unknown EXCEPTIUS countries {unknown}; known: {sorted(EXCEPTIUS_COUNTRIES)}")
        for c in chosen:
            if not (root / c).is_dir():
                raise FileNotFoundError(f"EXCEPTIUS country directory not found: {root / c}")
    if langs is not None:
        wanted = set(langs)
        chosen = [c for c in chosen if EXCEPTIUS_COUNTRIES[c] in wanted]
        if not chosen:
            raise ValueError(f"no EXCEPTIUS country has a language in {sorted(wanted)}")
    by_split: dict[str, list[dict[str, Any]]] = {s: [] for s in _SPLITS}
    for country in chosen:
        for split in _SPLITS:
            by_split[split].extend(read_exceptius_file(root / country / f"{split}_or.tsv", country, split))
    if drop_leaked:
        seen = {(r["lang"], r["text"]) for r in by_split["train"]}
        for split in ("dev", "test"):
            before = len(by_split[split])
            by_split[split] = [r for r in by_split[split] if (r["lang"], r["text"]) not in seen]
            logger.info("EXCEPTIUS: dropped %d %s sentences also found in train",
                        before - len(by_split[split]), split)
    train, dev, test = (_corpus(by_split[s]) for s in _SPLITS)
    out = DatasetSplits(train=train, test=test, dev=dev, name="exceptius")
    logger.info("EXCEPTIUS loaded from %s: train %d, dev %d, test %d sentences", root, len(out.train),
                len(out.dev), len(out.test))
    return out
