"""SIB-200: topic classification of FLORES-200 sentences (7 topics, single-label, parallel).

Layout of the data directory (``$GFUN_DATA/sib200`` by default)::

    <iso639-3>_<Script>/train.tsv   dev.tsv   test.tsv      e.g. eng_Latn/train.tsv

Each file is tab-separated with the header ``index_id, category, text``. Fields are quoted the way
``csv``/pandas write them: a text containing a double quote is enclosed in ``"..."`` with inner quotes
doubled (``""``). The same ``index_id`` is the same sentence in every language.

Quirk: in some files (``deu``, ``swe``, ``hun``, once in ``fra``) texts that contain quotes were quoted
twice, so that one level of unquoting leaves ``"... ""word"" ..."``. By default such a text (one that
starts and ends with ``"``, contains ``""`` and whose inner quotes all come in pairs) is unquoted once
more, which restores the text of the other languages (``... "word" ...``); pass ``fix_quotes=False``
to keep the files' text.

Languages are selected by ISO 639-1 code (``en``) and mapped to the directory present (``eng_Latn``);
a directory name can be given as well. Documents get the id ``<lang>:<index_id>`` and keep
``index_id`` as an extra field, so that the parallel versions of a sentence can be matched, and ``text_en``,
the English sentence of the same ``index_id`` (when the English files are present), which
:class:`gfun.baselines.naive.UpperBoundClassifier` uses.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets import dataset_dir
from gfun.datasets.splits import DatasetSplits
from gfun.errors import CorpusFormatError

__all__ = [
    "SIB200_CATEGORIES",
    "SIB200_LANGS",
    "Sib200Splits",
    "load_sib200",
    "read_sib200_file",
    "resolve_sib200_dir",
    "undo_double_quoting",
]

logger = logging.getLogger(__name__)

#: The paper's eleven languages (ISO 639-1), the default selection.
SIB200_LANGS: tuple[str, ...] = ("en", "it", "da", "fr", "de", "es", "pt", "nl", "sv", "fi", "hu")

#: The seven SIB-200 topics (the class list, in column order).
SIB200_CATEGORIES: tuple[str, ...] = ("entertainment", "geography", "health", "politics",
                                      "science/technology", "sports", "travel")

# ISO 639-1 -> the ISO 639-3 code that FLORES-200 / SIB-200 use in directory names.
_ISO3: dict[str, str] = {
    "af": "afr", "ar": "arb", "bg": "bul", "bn": "ben", "ca": "cat", "cs": "ces", "cy": "cym", "da": "dan",
    "de": "deu", "el": "ell", "en": "eng", "es": "spa", "et": "est", "eu": "eus", "fa": "pes", "fi": "fin",
    "fr": "fra", "ga": "gle", "gl": "glg", "he": "heb", "hi": "hin", "hr": "hrv", "hu": "hun", "hy": "hye",
    "id": "ind", "is": "isl", "it": "ita", "ja": "jpn", "ka": "kat", "ko": "kor", "lt": "lit", "lv": "lvs",
    "mt": "mlt", "nb": "nob", "nl": "nld", "nn": "nno", "pl": "pol", "pt": "por", "ro": "ron", "ru": "rus",
    "sk": "slk", "sl": "slv", "sr": "srp", "sv": "swe", "sw": "swh", "th": "tha", "tr": "tur", "uk": "ukr",
    "ur": "urd", "vi": "vie", "zh": "zho",
}
_ISO1 = {v: k for k, v in _ISO3.items()}
_QUOTED_TWICE = re.compile(r'"((?:[^"]|"")*""(?:[^"]|"")*)"')
_SPLITS = ("train", "dev", "test")


Sib200Splits = DatasetSplits
"""The splits :func:`load_sib200` returns (train, dev and test sharing :data:`SIB200_CATEGORIES`): a
:class:`~gfun.datasets.splits.DatasetSplits` (this name is an alias of that class)."""


def resolve_sib200_dir(root: str | os.PathLike[str], lang: str) -> tuple[str, Path]:
    """Find the directory of language ``lang`` under ``root``.

    Parameters
    ----------
    root : path
        The ``sib200`` folder.
    lang : str
        ISO 639-1 code (``"en"``), ISO 639-3 code (``"eng"``) or directory name (``"eng_Latn"``).

    Returns
    -------
    (str, Path)
        The language code used in the corpus (ISO 639-1 where known) and the directory.

    Raises
    ------
    FileNotFoundError
        When no directory matches; the message lists the directories present.
    """
    root = Path(root)
    if (root / lang).is_dir():
        iso3 = lang.split("_", 1)[0]
        return _ISO1.get(iso3, lang), root / lang
    iso3 = _ISO3.get(lang, lang)
    matches = sorted(p for p in root.glob(f"{iso3}_*") if p.is_dir())
    if not matches:
        present = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise FileNotFoundError(f"SIB-200: no directory for language {lang!r} ({iso3}_*) in {root}; "
                                f"present: {', '.join(present) or '(none)'}")
    latn = [p for p in matches if p.name.endswith("_Latn")]
    chosen = (latn or matches)[0]
    if len(matches) > 1:
        logger.info("SIB-200: several directories for %s (%s); using %s", lang,
                    ", ".join(p.name for p in matches), chosen.name)
    return (lang if lang in _ISO3 else _ISO1.get(iso3, lang)), chosen


def undo_double_quoting(text: str) -> str:
    """Unquote a text that was CSV-quoted twice (see the module docstring); other texts are returned as is."""
    m = _QUOTED_TWICE.fullmatch(text)
    return m.group(1).replace('""', '"') if m else text


def read_sib200_file(path: str | os.PathLike[str], lang: str,
                     categories: Sequence[str] | None = SIB200_CATEGORIES, *,
                     fix_quotes: bool = True) -> list[dict[str, Any]]:
    """Read one SIB-200 TSV file into corpus records.

    Parameters
    ----------
    path : path
        A ``train.tsv``/``dev.tsv``/``test.tsv`` file.
    lang : str
        Language code of the documents.
    categories : sequence of str, optional
        Accepted categories (``None`` accepts any).
    fix_quotes : bool
        Undo the double quoting of some texts (see the module docstring).

    Returns
    -------
    list of dict
        Records with ``id`` (``<lang>:<index_id>``), ``lang``, ``index_id``, ``text`` and ``labels``
        (``[category]``).

    Raises
    ------
    CorpusFormatError
        On a missing column, a wrong number of fields, bad quoting, an empty field, a duplicated
        ``index_id`` or an unknown category; the message names the file, the line and the field.
    """
    path = Path(path)
    try:
        data = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"SIB-200 file not found: {path}") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise CorpusFormatError("not valid UTF-8", path=path, line=line) from None
    allowed = None if categories is None else set(categories)
    reader = csv.reader(io.StringIO(data.lstrip("\ufeff"), newline=""), delimiter="\t", quotechar='"',
                        doublequote=True, strict=True)
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            lineno = start
            start = reader.line_num + 1
            if header is None:
                header = [c.strip() for c in cells]
                missing = [c for c in ("index_id", "category", "text") if c not in header]
                if missing:
                    raise CorpusFormatError(f"header lacks column(s) {missing}; found {header}", path=path,
                                            line=lineno)
                continue
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(header):
                raise CorpusFormatError(f"expected {len(header)} tab-separated fields, found {len(cells)}",
                                        path=path, line=lineno)
            row = dict(zip(header, cells, strict=True))
            for name in ("index_id", "category", "text"):
                if not row[name].strip():
                    raise CorpusFormatError("empty field", path=path, line=lineno, field=name)
            index_id = row["index_id"].strip()
            if index_id in seen:
                raise CorpusFormatError(f"duplicated index_id {index_id!r} (first seen on line "
                                        f"{seen[index_id]})", path=path, line=lineno, field="index_id")
            seen[index_id] = lineno
            category = row["category"].strip()
            if allowed is not None and category not in allowed:
                raise CorpusFormatError(f"unknown category {category!r}; expected one of {sorted(allowed)}",
                                        path=path, line=lineno, field="category")
            text = row["text"].strip()
            if fix_quotes:
                text = undo_double_quoting(text).strip()
            records.append({"id": f"{lang}:{index_id}", "lang": lang, "index_id": index_id, "text": text,
                            "labels": [category]})
    except csv.Error as exc:
        raise CorpusFormatError(f"bad quoting ({exc})", path=path, line=reader.line_num) from None
    if header is None:
        raise CorpusFormatError("empty file (no header row)", path=path)
    return records


def _corpus(records: list[dict[str, Any]], classes: Sequence[str],
            english: dict[str, str] | None = None) -> MultilingualCorpus:
    extra: dict[str, list[Any]] = {"index_id": [r["index_id"] for r in records]}
    if english is not None:
        extra["text_en"] = [english.get(r["index_id"]) for r in records]
    return MultilingualCorpus([r["id"] for r in records], [r["lang"] for r in records],
                              [r["text"] for r in records], [r["labels"] for r in records], classes, extra=extra)


def load_sib200(data_dir: str | os.PathLike[str] | None = None, langs: Sequence[str] = SIB200_LANGS, *,
                train_langs: Sequence[str] | None = None, fix_quotes: bool = True) -> DatasetSplits:
    """Load the train/dev/test splits of SIB-200 for some languages.

    Parameters
    ----------
    data_dir : path, optional
        The ``sib200`` folder; by default ``$GFUN_DATA/sib200``.
    langs : sequence of str
        Languages (ISO 639-1 codes, or directory names such as ``"eng_Latn"``); by default the paper's
        eleven (:data:`SIB200_LANGS`).
    train_langs : sequence of str, optional
        Keep only these languages in the training split (dev and test keep all of ``langs``): the
        zero-shot set-up. By default every language is trained on.
    fix_quotes : bool
        Undo the double quoting of some texts (see the module docstring).

    Returns
    -------
    DatasetSplits
        ``train``, ``dev`` and ``test`` corpora, single-label (``labels == [category]``), with the extra
        field ``index_id``.

    Raises
    ------
    FileNotFoundError
        When the folder, a language directory or a split file is missing.
    CorpusFormatError
        When a file is malformed (see :func:`read_sib200_file`).
    """
    root = dataset_dir("sib200", data_dir)
    if isinstance(langs, str):
        langs = [langs]
    resolved = [resolve_sib200_dir(root, lang) for lang in dict.fromkeys(langs)]
    codes = [code for code, _ in resolved]
    if len(set(codes)) != len(codes):
        raise ValueError(f"languages resolve to duplicated codes: {codes}")
    by_split: dict[str, list[dict[str, Any]]] = {s: [] for s in _SPLITS}
    for code, directory in resolved:
        for split in _SPLITS:
            by_split[split].extend(read_sib200_file(directory / f"{split}.tsv", code, fix_quotes=fix_quotes))
    if train_langs is not None:
        keep = {resolve_sib200_dir(root, lang)[0] for lang in train_langs}
        outside = keep - set(codes)
        if outside:
            raise ValueError(f"train_langs {sorted(outside)} are not among the loaded languages {codes}")
        by_split["train"] = [r for r in by_split["train"] if r["lang"] in keep]
    english: dict[str, dict[str, str] | None] = dict.fromkeys(_SPLITS)
    try:  # the English sentence of each index_id, for UpperBound (extra["text_en"])
        en_dir = dict(resolved)["en"] if "en" in codes else resolve_sib200_dir(root, "en")[1]
        for split in _SPLITS:
            english[split] = {r["index_id"]: r["text"] for r in
                              read_sib200_file(en_dir / f"{split}.tsv", "en", fix_quotes=fix_quotes)}
    except FileNotFoundError:
        logger.info("SIB-200: no English files in %s: no English versions (extra['text_en'])", root)
    train, dev, test = (_corpus(by_split[s], SIB200_CATEGORIES, english[s]) for s in _SPLITS)
    out = DatasetSplits(train=train, test=test, dev=dev, name="sib200")
    logger.info("SIB-200 loaded from %s (%s): train %d, dev %d, test %d sentences", root, ", ".join(codes),
                len(out.train), len(out.dev), len(out.test))
    return out
