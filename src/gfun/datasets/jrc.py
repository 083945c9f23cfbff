"""JRC-Acquis (TEI-XML) reader and the Funnelling protocol of Esuli et al. (2019).

The corpus
----------
JRC-Acquis ships one TEI-XML file per document and language, usually as
``<lang>/<year>/jrc<celex>-<lang>.xml`` (the per-language archives ``jrc-<lang>.tgz`` unpack to
``<lang>/``). A file looks like::

    <TEI.2 id="jrc31958D1018-en" n="31958D1018" lang="en">
      <teiHeader lang="en"> ...
        <profileDesc><textClass>
          <classCode scheme="eurovoc">1318</classCode>
          <classCode scheme="eurovoc">1444</classCode>
        </textClass></profileDesc>
      </teiHeader>
      <text><body><head>...</head><div type="body"><p n="1">...</p> ...</div></body></text>
    </TEI.2>

:func:`read_jrc_file` returns the document id (``id``), the CELEX number (``n``), the language, the
year, the EuroVoc codes and the text (the ``head`` and ``p`` elements of the body, one per line).
The language comes from the file name (``-<lang>.xml``), else from the enclosing directories
(``<lang>/`` or ``jrc-<lang>/``), else from the ``lang`` attribute; the year from an enclosing
``<year>/`` directory, else from the CELEX number (``3`` + ``YYYY`` + ...).

The external DTD (``jrc.dtd``) is not read; named character entities that it would define
(``&eacute;``) are resolved with the HTML entity table. Entity expansion is bounded by expat.

The protocol (:func:`jrc_funnelling_split`)
-------------------------------------------
As in the Funnelling and gFun papers: documents up to 2005 are candidates for training and the
documents of 2006 form the test set; the class list is the 300 EuroVoc codes that label the most
training documents (counted once per CELEX), and documents left with no class are dropped. Each
training document (CELEX) enters the training set in *one* of its language versions (no
translation-equivalent content in training): the documents are visited in a seeded random order and
each is given to the language, among those it exists in, that has received the fewest documents so
far (ties broken at random), so that the languages are balanced. Each test document enters the test
set in *all* languages (only the documents available in every language are kept). The paper's
numbers (12,687 training, 4,242 x 11 test documents) come from the authors' copy of the corpus; to
select exactly their documents, pass their per-run split file (see
:func:`gfun.datasets.funnelling_pickle.read_split_file`).
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.funnelling_corpora import (
    element_text,
    load_funnelling_run,
    parse_xml,
    to_corpus,
    unique_documents,
)
from gfun.errors import CorpusFormatError

if TYPE_CHECKING:
    from gfun.datasets.splits import DatasetSplits

__all__ = [
    "JRC_LANGS",
    "JrcDocument",
    "iter_jrc_documents",
    "jrc_funnelling_split",
    "load_jrc_acquis",
    "parse_xml",
    "read_jrc_acquis",
    "read_jrc_file",
]

logger = logging.getLogger(__name__)

#: The eleven languages of the Funnelling / gFun version of JRC-Acquis.
JRC_LANGS: tuple[str, ...] = ("en", "it", "es", "fr", "de", "sv", "da", "pt", "nl", "fi", "hu")

_LANG_FROM_NAME = re.compile(r"-([a-z]{2})\.xml$", re.IGNORECASE)
_LANG_DIR = re.compile(r"^(?:jrc-?)?([a-z]{2})$", re.IGNORECASE)
_YEAR_DIR = re.compile(r"^(1[89]\d\d|20\d\d)$")
_CELEX_YEAR = re.compile(r"^\d(1[89]\d\d|20\d\d)")


# ---------------------------------------------------------------------------------------------- documents
@dataclass(frozen=True)
class JrcDocument:
    """One language version of a JRC-Acquis document."""

    doc_id: str
    celex: str
    lang: str
    year: int
    text: str
    labels: tuple[str, ...]
    path: str


def _parents(path: Path, root: Path | None) -> list[Path]:
    """The directories above ``path`` up to ``root`` (inclusive), or the nearest three without a root."""
    if root is None:
        return list(path.parents)[:3]
    out = []
    for parent in path.parents:
        out.append(parent)
        if parent == root:
            break
    return out


def _lang_of(path: Path, root_attr: str | None, root: Path | None = None) -> str | None:
    m = _LANG_FROM_NAME.search(path.name)
    if m:
        return m.group(1).lower()
    for parent in _parents(path, root):
        m = _LANG_DIR.match(parent.name)
        if m:
            return m.group(1).lower()
    return root_attr.strip().lower() if root_attr and root_attr.strip() else None


def _year_of(path: Path, celex: str, root: Path | None = None) -> int | None:
    for parent in _parents(path, root):
        if _YEAR_DIR.match(parent.name):
            return int(parent.name)
    m = _CELEX_YEAR.match(celex)
    return int(m.group(1)) if m else None


def read_jrc_file(path: str | os.PathLike[str], lang: str | None = None, data: bytes | None = None, *,
                  root: str | os.PathLike[str] | None = None) -> JrcDocument:
    """Read one JRC-Acquis TEI-XML file.

    Parameters
    ----------
    path : path
        The file (used for the language and year when they are not given, and in error messages).
    lang : str, optional
        The language; by default inferred (see the module docstring).
    data : bytes, optional
        The file's content, when already read.
    root : path, optional
        The corpus folder: directories up to it are looked at for the language and year (by default
        the three nearest ones).

    Returns
    -------
    JrcDocument

    Raises
    ------
    CorpusFormatError
        When the XML is malformed, the root is not ``TEI.2``, the CELEX number, language, year or body
        cannot be found, or a ``classCode`` is empty; the message names the file, the line and the
        element or attribute.
    """
    path = Path(path)
    if data is None:
        data = path.read_bytes()
    tei, lines = parse_xml(data, path)
    if tei.tag != "TEI.2":
        raise CorpusFormatError(f"root element is <{tei.tag}>, expected <TEI.2>", path=path,
                                line=lines.get(id(tei)))
    doc_id = (tei.get("id") or "").strip()
    celex = (tei.get("n") or "").strip()
    if not celex:
        m = re.match(r"^jrc(.+)-[a-z]{2}$", doc_id, re.IGNORECASE)
        celex = m.group(1) if m else ""
    if not celex:
        raise CorpusFormatError("no CELEX number (attribute n, or id 'jrc<celex>-<lang>')", path=path,
                                line=lines.get(id(tei)), field="TEI.2/@n")
    doc_id = doc_id or celex
    header = tei.find("teiHeader")
    top = None if root is None else Path(root)
    language = lang or _lang_of(path, tei.get("lang") or (header.get("lang") if header is not None else None),
                                top)
    if not language:
        raise CorpusFormatError("cannot tell the language (file name, directory or lang attribute)",
                                path=path, line=lines.get(id(tei)), field="TEI.2/@lang")
    year = _year_of(path, celex, top)
    if year is None:
        raise CorpusFormatError(f"cannot tell the year (no <year>/ directory; CELEX {celex!r})", path=path,
                                line=lines.get(id(tei)), field="TEI.2/@n")
    labels: list[str] = []
    if header is not None:
        for cc in header.iter("classCode"):
            if (cc.get("scheme") or "").lower() != "eurovoc":
                continue
            code = (cc.text or "").strip()
            if not code:
                raise CorpusFormatError("empty EuroVoc code", path=path, line=lines.get(id(cc)),
                                        field="classCode")
            labels.append(code)
    body = tei.find("text/body")
    if body is None:
        body = tei.find("text")
    if body is None:
        raise CorpusFormatError("no <text> element", path=path, line=lines.get(id(tei)), field="text")
    parts = [element_text(e) for e in body.iter() if e.tag in ("head", "p")]
    if not parts:
        parts = [element_text(body)]
    text = "\n".join(p for p in parts if p)
    return JrcDocument(doc_id=doc_id, celex=celex, lang=language, year=year, text=text,
                       labels=tuple(dict.fromkeys(labels)), path=str(path))


def iter_jrc_documents(root: str | os.PathLike[str],
                       langs: Iterable[str] | None = None) -> Iterator[JrcDocument]:
    """Read every ``*.xml`` file under ``root`` (sorted paths), optionally only some languages.

    Files whose name tells a language outside ``langs`` are skipped without being parsed.
    """
    root = Path(root)
    wanted = None if langs is None else set(langs)
    for path in sorted(root.rglob("*.xml")):
        if wanted is not None:
            guess = _lang_of(path, None, root)
            if guess is not None and guess not in wanted:
                continue
        doc = read_jrc_file(path, root=root)
        if wanted is None or doc.lang in wanted:
            yield doc


def read_jrc_acquis(root: str | os.PathLike[str], langs: Iterable[str] | None = None) -> MultilingualCorpus:
    """Read JRC-Acquis files into one corpus (every language version is a document).

    Parameters
    ----------
    root : path
        Folder searched recursively for ``*.xml`` files.
    langs : iterable of str, optional
        Languages to keep (all by default).

    Returns
    -------
    MultilingualCorpus
        Ids ``<lang>:<celex>``; extra fields ``source_id`` (the CELEX number), ``doc_id`` (the TEI id)
        and ``year``; the class list is the sorted set of EuroVoc codes.

    Raises
    ------
    CorpusFormatError
        On a malformed file, or two files with the same CELEX number and language.
    """
    docs = unique_documents(iter_jrc_documents(root, langs), doc_id="celex", where="path",
                            duplicate="CELEX {id} in language {lang} also in {where}", field="TEI.2/@n")
    if not docs:
        raise FileNotFoundError(f"no JRC-Acquis *.xml files under {root}")
    logger.info("JRC-Acquis: read %d documents from %s", len(docs), root)
    return to_corpus(docs, {"source_id": "celex", "doc_id": "doc_id", "year": "year"})


def jrc_funnelling_split(corpus: MultilingualCorpus, run: int = 0, *, langs: Sequence[str] = JRC_LANGS,
                         n_classes: int = 300, train_max_year: int = 2005, train_min_year: int | None = None,
                         test_year: int = 2006, max_train_per_lang: int | None = None,
                         seed: int | None = None) -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """Split a corpus from :func:`read_jrc_acquis` by the Funnelling protocol (module docstring).

    Parameters
    ----------
    corpus : MultilingualCorpus
        With extra fields ``source_id`` (CELEX) and ``year``.
    run : int
        Run index; the random seed is ``run`` (or ``seed + run`` when ``seed`` is given).
    langs : sequence of str
        The languages.
    n_classes : int
        Size of the class list (most frequent EuroVoc codes among the training candidates).
    train_max_year, train_min_year : int
        Years of the training candidates (inclusive; no lower bound by default).
    test_year : int
        Year of the test documents.
    max_train_per_lang : int, optional
        Cap on the training documents of each language (no cap by default).
    seed : int, optional
        Base seed.

    Returns
    -------
    (MultilingualCorpus, MultilingualCorpus)
        Train (one language version per CELEX) and test (every language version of each CELEX); both
        with the chosen class list and only documents that keep at least one class.
    """
    for name in ("source_id", "year"):
        if name not in corpus.extra:
            raise ValueError(f"corpus lacks the extra field {name!r} (read it with read_jrc_acquis)")
    rng = np.random.RandomState(run if seed is None else seed + run)
    langs = list(dict.fromkeys(langs))
    lang_set = set(langs)
    celex = corpus.extra["source_id"]
    years = [int(y) for y in corpus.extra["year"]]
    train_versions: dict[str, dict[str, int]] = {}
    test_versions: dict[str, dict[str, int]] = {}
    for i, lang in enumerate(corpus.langs):
        if lang not in lang_set:
            continue
        y = years[i]
        if y == test_year:
            test_versions.setdefault(celex[i], {})[lang] = i
        elif y <= train_max_year and (train_min_year is None or y >= train_min_year):
            train_versions.setdefault(celex[i], {})[lang] = i
    # class frequencies over training documents (each CELEX counted once: union of its versions' codes)
    df: Counter[str] = Counter()
    for versions in train_versions.values():
        df.update({lab for i in versions.values() for lab in corpus.labels[i]})
    classes = sorted(df, key=lambda c: (-df[c], c))[:n_classes]
    if len(classes) < n_classes:
        logger.warning("JRC-Acquis: only %d classes in the training candidates (asked for %d)", len(classes),
                       n_classes)
    cset = set(classes)

    def has_class(i: int) -> bool:
        return any(lab in cset for lab in corpus.labels[i])

    order = sorted(train_versions)
    perm = rng.permutation(len(order))
    counts = dict.fromkeys(langs, 0)
    train_idx: list[int] = []
    for k in perm:
        versions = {g: i for g, i in train_versions[order[k]].items() if has_class(i)}
        open_langs = [g for g in versions if max_train_per_lang is None or counts[g] < max_train_per_lang]
        if not open_langs:
            continue
        least = min(counts[g] for g in open_langs)
        ties = sorted(g for g in open_langs if counts[g] == least)
        g = ties[rng.randint(len(ties))]
        counts[g] += 1
        train_idx.append(versions[g])
    test_idx: list[int] = []
    incomplete = 0
    for c in sorted(test_versions):
        versions = test_versions[c]
        if set(versions) != lang_set:
            incomplete += 1
            continue
        if not has_class(versions[langs[0]]):
            continue
        test_idx.extend(versions[g] for g in langs)
    if incomplete:
        logger.info("JRC-Acquis: %d test documents lack some language version; dropped", incomplete)
    logger.info("JRC-Acquis run %d: %d training documents (%s), %d test documents per language, %d classes",
                run, len(train_idx), ", ".join(f"{g}={counts[g]}" for g in langs),
                len(test_idx) // max(len(langs), 1), len(classes))
    sub = corpus.with_classes(classes)
    return sub.subset(sorted(train_idx)), sub.subset(sorted(test_idx))


def load_jrc_acquis(data_dir: str | os.PathLike[str] | None = None, run: int = 0, *,
                    langs: Sequence[str] = JRC_LANGS, split_file: str | os.PathLike[str] | None = None,
                    pickle_file: str | os.PathLike[str] | None = None, **protocol: Any) -> DatasetSplits:
    """Load run ``run`` of JRC-Acquis, from the authors' pickle or from the XML files.

    Sources, in order of preference:

    1. ``pickle_file``, or a Funnelling pickle in ``data_dir`` whose name contains ``run<run>``
       (see :func:`gfun.datasets.funnelling_pickle.find_run_file`): converted as is.
    2. The ``*.xml`` files under ``data_dir``, split by ``split_file`` (or a split file for the run
       in ``data_dir/splits/``) when there is one, else by :func:`jrc_funnelling_split`.

    Parameters
    ----------
    data_dir : path, optional
        By default ``$GFUN_DATA/jrc-acquis``.
    run : int
        Run index (0..9 in the paper).
    langs : sequence of str
        Languages.
    split_file, pickle_file : path, optional
        Explicit split file / Funnelling pickle.
    **protocol
        Further arguments of :func:`jrc_funnelling_split`.

    Returns
    -------
    DatasetSplits
    """
    n_classes = int(protocol.get("n_classes", 300))
    return load_funnelling_run("jrc-acquis", data_dir, run, langs=langs, split_file=split_file,
                               pickle_file=pickle_file, read=read_jrc_acquis, sample=jrc_funnelling_split,
                               split_classes=lambda train: _top_classes(train, n_classes), protocol=protocol)


def _top_classes(corpus: MultilingualCorpus, n: int) -> list[str]:
    """The ``n`` labels with the most documents (CELEX counted once), ties by name."""
    by_doc: dict[str, set[str]] = {}
    for i, labs in enumerate(corpus.labels):
        by_doc.setdefault(str(corpus.extra.get("source_id", corpus.ids)[i]), set()).update(labs)
    df: Counter[str] = Counter(lab for labs in by_doc.values() for lab in labs)
    return sorted(df, key=lambda c: (-df[c], c))[:n]
