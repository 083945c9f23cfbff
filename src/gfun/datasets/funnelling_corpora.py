"""What the readers of the two Funnelling corpora (JRC-Acquis, RCV1/RCV2) share.

* :func:`parse_xml` / :func:`element_text`: XML files read with expat (line numbers kept for error messages, the
  external DTD never fetched, HTML named entities resolved);
* :func:`unique_documents` and :func:`to_corpus`: parsed documents gathered into one corpus, a document seen
  twice refused;
* :func:`load_funnelling_run`: one run of such a dataset, from the authors' pickle, their split file or the
  dataset's own sampling protocol (:func:`gfun.datasets.jrc.load_jrc_acquis`,
  :func:`gfun.datasets.rcv.load_rcv1_rcv2`).
"""

from __future__ import annotations

import html.entities
import logging
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from pyexpat import ExpatError, ParserCreate
from typing import TYPE_CHECKING, Any

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets import dataset_dir
from gfun.errors import CorpusFormatError

if TYPE_CHECKING:
    from gfun.datasets.splits import DatasetSplits

__all__ = ["element_text", "load_funnelling_run", "parse_xml", "restrict_languages", "to_corpus", "unique_documents"]

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------- XML
def parse_xml(data: bytes, path: str | os.PathLike[str] | None = None) -> tuple[ET.Element, dict[int, int]]:
    """Parse an XML document with expat, keeping the line of each element.

    No namespace processing is done (``xml:lang`` stays a plain attribute name), the external DTD is
    not fetched, and named entities left undefined for that reason are resolved with the HTML entity
    table (an unknown one is dropped, with a log message).

    Parameters
    ----------
    data : bytes
        The raw document (its XML declaration chooses the encoding).
    path : path, optional
        Used in error messages.

    Returns
    -------
    (Element, dict)
        The root element and a map ``id(element) -> line number`` (1-based).

    Raises
    ------
    CorpusFormatError
        When the document is not well-formed XML (names the file and line).
    """
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}
    parser = ParserCreate()
    parser.buffer_text = True

    def start(tag: str, attrs: dict[str, str]) -> None:
        elem = builder.start(tag, attrs)
        lines[id(elem)] = parser.CurrentLineNumber

    def skipped(name: str, is_parameter_entity: bool) -> None:
        if is_parameter_entity:
            return
        code = html.entities.name2codepoint.get(name)
        if code is None:
            logger.debug("%s: undefined entity &%s; dropped", path, name)
            return
        builder.data(chr(code))

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.SkippedEntityHandler = skipped
    parser.UseForeignDTD(False)
    try:
        parser.Parse(data, True)
    except ExpatError as exc:
        raise CorpusFormatError(f"malformed XML ({exc})", path=path, line=exc.lineno) from None
    root = builder.close()
    return root, lines


def element_text(elem: ET.Element) -> str:
    """All the text inside ``elem`` with white space runs collapsed to single spaces."""
    return " ".join("".join(elem.itertext()).split())


# ---------------------------------------------------------------------------------------------- corpus
def unique_documents(docs: Iterable[Any], *, doc_id: str, where: str, duplicate: str,
                     field: str) -> dict[str, Any]:
    """Parsed documents keyed ``<lang>:<id>``, in reading order; a second document with the same key is refused.

    Parameters
    ----------
    docs : iterable
        Documents with the attributes ``lang``, ``text``, ``labels``, ``doc_id`` and ``where``.
    doc_id : str
        The attribute that identifies a document within its language (``celex``, ``itemid``).
    where : str
        The attribute naming the document's file (for the error message).
    duplicate : str
        Message for a document seen twice, formatted with ``id``, ``lang`` and ``where`` (the first one's file).
    field : str
        The field the error names.

    Raises
    ------
    CorpusFormatError
        On a document seen twice.
    """
    out: dict[str, Any] = {}
    for doc in docs:
        key = f"{doc.lang}:{getattr(doc, doc_id)}"
        if key in out:
            raise CorpusFormatError(duplicate.format(id=getattr(doc, doc_id), lang=doc.lang,
                                                     where=getattr(out[key], where)),
                                    path=getattr(doc, where), field=field)
        out[key] = doc
    return out


def to_corpus(docs: Mapping[str, Any], extra: Mapping[str, str]) -> MultilingualCorpus:
    """One corpus of the documents of :func:`unique_documents` (ids its keys; ``extra``: field -> attribute)."""
    values = list(docs.values())
    return MultilingualCorpus(list(docs), [d.lang for d in values], [d.text for d in values],
                              [d.labels for d in values],
                              extra={name: [getattr(d, attr) for d in values] for name, attr in extra.items()})


# ---------------------------------------------------------------------------------------------- runs
def load_funnelling_run(name: str, data_dir: str | os.PathLike[str] | None, run: int, *, langs: Sequence[str],
                        split_file: str | os.PathLike[str] | None, pickle_file: str | os.PathLike[str] | None,
                        read: Callable[[Path, Sequence[str]], MultilingualCorpus],
                        sample: Callable[..., tuple[MultilingualCorpus, MultilingualCorpus]],
                        split_classes: Callable[[MultilingualCorpus], Sequence[str]],
                        protocol: Mapping[str, Any]) -> DatasetSplits:
    """Load run ``run`` of a Funnelling dataset, from the authors' pickle, a split file or the protocol.

    Sources, in order of preference: ``pickle_file``, or a Funnelling pickle of the run in the data folder
    (:func:`gfun.datasets.funnelling_pickle.find_run_file`), converted as is; else the documents ``read`` from
    the folder, split by ``split_file`` (or a split file of the run in the folder) with the class list
    ``protocol["classes"]`` or ``split_classes(train)``; else split by ``sample(pool, run, langs=langs,
    **protocol)``.

    Parameters
    ----------
    name : str
        Dataset name (the folder ``$GFUN_DATA/<name>`` by default).
    data_dir : path, optional
    run : int
    langs : sequence of str
    split_file, pickle_file : path, optional
    read : callable
        ``read(folder, langs) -> MultilingualCorpus``: every document of the folder.
    sample : callable
        The dataset's protocol, ``sample(pool, run, langs=..., **protocol) -> (train, test)``.
    split_classes : callable
        The class list of a training set chosen by a split file (when ``protocol`` names none).
    protocol : mapping
        Further arguments of ``sample``.

    Returns
    -------
    DatasetSplits
    """
    from gfun.datasets.funnelling_pickle import (
        apply_split,
        find_run_file,
        load_funnelling_pickle,
        read_split_file,
    )
    from gfun.datasets.splits import DatasetSplits

    root = dataset_dir(name, data_dir)
    pkl = Path(pickle_file) if pickle_file is not None else find_run_file(root, run, kind="dataset")
    if pkl is not None:
        return restrict_languages(load_funnelling_pickle(pkl), langs)
    pool = read(root, langs)
    sfile = Path(split_file) if split_file is not None else find_run_file(root, run, kind="split")
    if sfile is not None:
        train, test = apply_split(pool, read_split_file(sfile))
        classes = protocol.get("classes") or split_classes(train)
        train, test = train.with_classes(classes), test.with_classes(classes)
    else:
        train, test = sample(pool, run, langs=langs, **protocol)
    return DatasetSplits(train=train, test=test, classes=train.classes)


def restrict_languages(splits: DatasetSplits, langs: Sequence[str]) -> DatasetSplits:
    """``splits`` with the documents of the languages ``langs`` only (itself when it has no other language)."""
    from gfun.datasets.splits import DatasetSplits

    wanted = set(langs)
    if set(splits.train.languages) | set(splits.test.languages) <= wanted:
        return splits
    return DatasetSplits(train=splits.train.select(wanted), test=splits.test.select(wanted),
                         classes=splits.classes)
