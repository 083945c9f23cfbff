"""RCV1 / RCV2 (Reuters news, NewsML-like XML) reader and the Funnelling protocol.

The corpus
----------
RCV1 (English) and RCV2 (multilingual) hold one XML file per news story::

    <newsitem itemid="2286" id="root" date="1996-08-20" xml:lang="en">
      <title>MEXICO: Recovery excitement brings Mexican markets to life.</title>
      <headline>Recovery excitement brings Mexican markets to life.</headline>
      <text><p>...</p><p>...</p></text>
      <metadata>
        <codes class="bip:topics:1.0"><code code="E11"> ... </code><code code="M11"/></codes>
        <codes class="bip:countries:1.0"> ... </codes>
      </metadata>
    </newsitem>

RCV1 is distributed as one zip archive per day (``19960820.zip``) and RCV2 as per-language folders
of zip archives; :func:`read_rcv` reads ``*.xml`` files and the ``*.xml`` members of ``*.zip``
archives found under a folder. The labels are the ``code`` attributes of the
``codes class="bip:topics:1.0"`` block. The language is the ``xml:lang`` attribute of ``newsitem``
(its primary subtag), else a language folder name (``english``, ``spanish``, ``de``, ...); the
text is the title (or headline) followed by the paragraphs.

The protocol (:func:`rcv_funnelling_split`)
-------------------------------------------
As in Esuli et al. (2019) and the gFun paper: 9 languages (English from RCV1, the others from
RCV2), documents without topic codes dropped, and for each language a seeded random sample of 1,000
training and 1,000 test documents (a language with fewer documents gets all that remain as test
documents: Dutch has 1,794, hence 794 test documents). The class list is by default the topic
codes with at least one positive training document (73 in the paper's samples). To select the
authors' exact documents, pass their per-run split file
(:func:`gfun.datasets.funnelling_pickle.read_split_file`).
"""

from __future__ import annotations

import logging
import os
import zipfile
from collections.abc import Iterator, Sequence
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
    "RCV_LANGS",
    "RCV_TOPICS",
    "RcvDocument",
    "iter_rcv_documents",
    "load_rcv1_rcv2",
    "parse_newsitem",
    "rcv_funnelling_split",
    "read_rcv",
]

logger = logging.getLogger(__name__)

#: The nine languages of the Funnelling / gFun version of RCV1/RCV2.
RCV_LANGS: tuple[str, ...] = ("en", "it", "es", "fr", "de", "sv", "da", "pt", "nl")

#: The ``class`` attribute of the topic codes.
RCV_TOPICS = "bip:topics:1.0"

_LANG_NAMES = {
    "english": "en", "german": "de", "french": "fr", "italian": "it", "spanish": "es", "spanish-latam": "es",
    "latam": "es", "swedish": "sv", "danish": "da", "portuguese": "pt", "dutch": "nl", "norwegian": "no",
    "japanese": "ja", "chinese": "zh", "chinese-simplified": "zh", "chinese-traditional": "zh",
    "russian": "ru",
}


@dataclass(frozen=True)
class RcvDocument:
    """One news story."""

    itemid: str
    lang: str
    date: str
    text: str
    labels: tuple[str, ...]
    source: str


def _lang_from_folders(source: str) -> str | None:
    for part in reversed(Path(source.split("!", 1)[0]).parts[:-1]):
        key = part.lower()
        if key in _LANG_NAMES:
            return _LANG_NAMES[key]
        if len(key) == 2 and key.isalpha() and key in _LANG_NAMES.values():
            return key
    return None


def parse_newsitem(data: bytes, source: str, lang: str | None = None) -> RcvDocument:
    """Parse one RCV1/RCV2 story.

    Parameters
    ----------
    data : bytes
        The XML document.
    source : str
        Where it comes from (a path, or ``archive.zip!member.xml``), for the language fallback and
        error messages.
    lang : str, optional
        The language, overriding the ``xml:lang`` attribute.

    Raises
    ------
    CorpusFormatError
        On malformed XML, a root other than ``newsitem``, a missing ``itemid``, an unknown language or
        a topic ``code`` without its ``code`` attribute; names the file, the line and the field.
    """
    root, lines = parse_xml(data, source)
    if root.tag != "newsitem":
        raise CorpusFormatError(f"root element is <{root.tag}>, expected <newsitem>", path=source,
                                line=lines.get(id(root)))
    itemid = (root.get("itemid") or "").strip()
    if not itemid:
        raise CorpusFormatError("missing itemid", path=source, line=lines.get(id(root)),
                                field="newsitem/@itemid")
    attr = (root.get("xml:lang") or root.get("lang") or "").strip()
    primary = attr.split("-")[0].split("_")[0].lower() if attr else None
    language = lang or primary or _lang_from_folders(source)
    if not language:
        raise CorpusFormatError("no language (xml:lang attribute or a language folder)", path=source,
                                line=lines.get(id(root)), field="newsitem/@xml:lang")
    labels: list[str] = []
    for codes in root.iter("codes"):
        if codes.get("class") != RCV_TOPICS:
            continue
        for code in codes.iter("code"):
            value = (code.get("code") or "").strip()
            if not value:
                raise CorpusFormatError("topic <code> without a code attribute", path=source,
                                        line=lines.get(id(code)), field="code/@code")
            labels.append(value)
    title = root.find("title")
    if title is None or not element_text(title):
        title = root.find("headline")
    parts = [element_text(title)] if title is not None else []
    body = root.find("text")
    if body is not None:
        paragraphs = [element_text(p) for p in body.iter("p")]
        parts.extend(paragraphs if paragraphs else [element_text(body)])
    text = "\n".join(p for p in parts if p)
    return RcvDocument(itemid=itemid, lang=language, date=(root.get("date") or "").strip(), text=text,
                       labels=tuple(dict.fromkeys(labels)), source=source)


def iter_rcv_documents(root: str | os.PathLike[str]) -> Iterator[RcvDocument]:
    """Parse every ``*.xml`` file and every ``*.xml`` member of ``*.zip`` archives under ``root`` (sorted)."""
    root = Path(root)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        name = path.name.lower()
        if name.endswith(".xml"):
            yield parse_newsitem(path.read_bytes(), str(path))
        elif name.endswith(".zip"):
            try:
                archive = zipfile.ZipFile(path)
            except zipfile.BadZipFile as exc:
                raise CorpusFormatError(f"not a zip archive ({exc})", path=path) from None
            with archive:
                for member in sorted(archive.namelist()):
                    if member.lower().endswith(".xml"):
                        yield parse_newsitem(archive.read(member), f"{path}!{member}")


def read_rcv(root: str | os.PathLike[str], langs: Sequence[str] | None = None) -> MultilingualCorpus:
    """Read RCV1/RCV2 stories into one corpus.

    Parameters
    ----------
    root : path
        A folder (searched recursively) or a single ``.xml``/``.zip`` file.
    langs : sequence of str, optional
        Languages to keep (all by default).

    Returns
    -------
    MultilingualCorpus
        Ids ``<lang>:<itemid>``; extra fields ``source_id`` (the itemid) and ``date``; the class list is
        the sorted set of topic codes.

    Raises
    ------
    CorpusFormatError
        On a malformed story or an itemid seen twice in one language.
    """
    wanted = None if langs is None else set(langs)
    docs = unique_documents((d for d in iter_rcv_documents(root) if wanted is None or d.lang in wanted),
                            doc_id="itemid", where="source", duplicate="itemid {id} ({lang}) also in {where}",
                            field="newsitem/@itemid")
    if not docs:
        raise FileNotFoundError(f"no RCV1/RCV2 stories under {root}")
    logger.info("RCV1/RCV2: read %d stories from %s", len(docs), root)
    return to_corpus(docs, {"source_id": "itemid", "date": "date"})


def rcv_funnelling_split(corpus: MultilingualCorpus, run: int = 0, *, langs: Sequence[str] = RCV_LANGS,
                         n_train: int = 1000, n_test: int = 1000, classes: Sequence[str] | None = None,
                         min_train_positives: int = 1,
                         seed: int | None = None) -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """Sample run ``run`` of the Funnelling protocol (module docstring).

    Parameters
    ----------
    corpus : MultilingualCorpus
        From :func:`read_rcv`.
    run : int
        Run index; the random seed is ``run`` (or ``seed + run`` when ``seed`` is given).
    langs : sequence of str
        The languages.
    n_train, n_test : int
        Training and test documents per language.
    classes : sequence of str, optional
        The class list; by default the codes with at least ``min_train_positives`` positive training
        documents.
    min_train_positives : int
        See ``classes``.
    seed : int, optional
        Base seed.

    Returns
    -------
    (MultilingualCorpus, MultilingualCorpus)
        Train and test; labels outside the class list are dropped.
    """
    if n_train < 0 or n_test < 0:
        raise ValueError(f"n_train and n_test must be non-negative, got {n_train}, {n_test}")
    rng = np.random.RandomState(run if seed is None else seed + run)
    langs = list(dict.fromkeys(langs))
    by_lang = corpus.by_language()
    train_idx: list[int] = []
    test_idx: list[int] = []
    for lang in langs:
        idx = [int(i) for i in by_lang.get(lang, []) if corpus.labels[i]]
        if not idx:
            raise ValueError(f"no labelled RCV document in language {lang!r}")
        idx.sort(key=lambda i: corpus.ids[i])
        perm = [idx[k] for k in rng.permutation(len(idx))]
        if len(perm) < n_train + n_test:
            logger.warning("RCV %s: %d documents, fewer than %d + %d; the test set gets %d", lang, len(perm),
                           n_train, n_test, max(len(perm) - n_train, 0))
        train_idx.extend(perm[:n_train])
        test_idx.extend(perm[n_train:n_train + n_test])
    if classes is None:
        counts: dict[str, int] = {}
        for i in train_idx:
            for lab in corpus.labels[i]:
                counts[lab] = counts.get(lab, 0) + 1
        classes = sorted(c for c, n in counts.items() if n >= min_train_positives)
    sub = corpus.with_classes(list(classes))
    logger.info("RCV run %d: %d training and %d test documents, %d classes", run, len(train_idx),
                len(test_idx), len(classes))
    return sub.subset(sorted(train_idx)), sub.subset(sorted(test_idx))


def load_rcv1_rcv2(data_dir: str | os.PathLike[str] | None = None, run: int = 0, *,
                   langs: Sequence[str] = RCV_LANGS, split_file: str | os.PathLike[str] | None = None,
                   pickle_file: str | os.PathLike[str] | None = None, **protocol: Any) -> DatasetSplits:
    """Load run ``run`` of RCV1/RCV2, from the authors' pickle or from the XML files.

    Sources, in order of preference: ``pickle_file`` or a Funnelling pickle of the run in ``data_dir``;
    the stories under ``data_dir`` split by ``split_file`` (or a split file of the run, see
    :func:`gfun.datasets.funnelling_pickle.find_run_file`); else :func:`rcv_funnelling_split`
    (:func:`gfun.datasets.funnelling_corpora.load_funnelling_run`).

    The parameters are those of :func:`gfun.datasets.jrc.load_jrc_acquis`: ``data_dir`` is by default
    ``$GFUN_DATA/rcv1-rcv2`` and ``**protocol`` goes to :func:`rcv_funnelling_split`; by a split file, the class
    list is ``protocol["classes"]`` or every topic code of the training documents.

    Returns
    -------
    DatasetSplits
    """
    return load_funnelling_run("rcv1-rcv2", data_dir, run, langs=langs, split_file=split_file,
                               pickle_file=pickle_file, read=read_rcv, sample=rcv_funnelling_split,
                               split_classes=lambda train: sorted({lab for ls in train.labels for lab in ls}),
                               protocol=protocol)
