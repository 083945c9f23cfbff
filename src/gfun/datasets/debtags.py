"""Debtags: Debian package descriptions in many languages, labelled with their debtags.

The corpus is built from the Debian archive's own index files (Debian 12 "bookworm", main):

* ``Packages`` — one deb822 record per binary package; the fields used are ``Package``, ``Source``
  (its first word is the source package; absent means the package's own name), ``Tag`` (the debtags,
  a comma-separated list that may span several lines) and ``Description-md5``;
* ``Translation-<lang>`` — records with ``Package``, ``Description-md5`` and ``Description-<lang>``
  (first line: the short description; following lines, each indented by one space: the long
  description, where a line ``" ."`` is a paragraph break).

Each file may be lz4-compressed (``.lz4``, read with :mod:`lz4.frame`), gzip- or xz-compressed, or plain.
Besides the plain names (``Packages.lz4``, ``Translation-de.lz4``, ...) apt's own naming in
``/var/lib/apt/lists`` is accepted (``*_binary-amd64_Packages.lz4``, ``*_i18n_Translation-de``, ...);
when apt holds several such files (e.g. several components) they are read in name order as one stream.

The ``debtags-7`` protocol (:func:`load_debtags` with its defaults; seed = ``run``)
----------------------------------------------------------------------------------------
1. Eligible documents of a language: packages with a non-empty ``Tag`` field whose translation record
   carries a ``Description-md5`` equal to one of the package's own (so the text translates the current
   description). Text = short description + ``"\\n"`` + long description, one leading space removed from
   every continuation line, ``" ."`` lines turned into blank lines, trailing blanks removed. Within a
   language, documents repeating an already seen ``Description-md5`` or text are dropped, visiting package
   names in sorted order (so the lexicographically smallest name is kept).
2. Many-shot languages (``en it da fr de es pt``) are processed from the scarcest to the most plentiful
   (ties by code). Each language's documents are shuffled with ``numpy.random.RandomState(run)`` (one
   permutation per language, drawn in processing order). Training set: the first shuffled documents
   whose source package is in no test set and in no other language's training set, up to
   ``min(max_train, n_usable // 2)`` where ``n_usable`` counts the language's documents whose source is in
   no training set yet. Test set: the next documents (in shuffled order, not taken for training) whose
   source is in no training set, up to ``max_test``. Training sets are thus non-parallel, and no test
   document shares its source with a training document.
3. Classes: the ``n_classes`` (73) tags with the highest document frequency over all training documents
   (ties alphabetical), excluding tags that contain ``TODO``. Labels are the document's tags restricted
   to the classes, in alphabetical order (a document may end up with none).
4. Zero-shot test sets (``fi nl sv hu``): every eligible document whose source is in no training set.

``split="all"``: every tagged package in every language
--------------------------------------------------------
A bigger, parallel corpus built from the same eligible documents (step 1): the source packages of the
many-shot languages are shuffled with ``numpy.random.RandomState(run)`` and a ``test_fraction`` of them
(rounded up) is held out; every eligible document of a many-shot language goes to the test set if its source
is held out, to the training set otherwise. Training sets are thus parallel (a package is described in every
language where a translation exists: about 100,000 training documents for the default 5%), and no test
document shares its source with a training document. ``max_train`` and ``max_test`` are ignored. Classes
(step 3) and zero-shot test sets (step 4) as in the protocol. Cross-validation should group documents by
``extra["source"]`` (gFun does: ``cv_groups="auto"``).

Every split lists the languages in the order given by ``many_shot`` / ``zero_shot``, and within a language
the documents sorted by package name.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets import dataset_dir
from gfun.datasets.debian_archive import (
    _find_files,
    _parse_tags,
    _read_file,
    _signature,
    description_text,
    parse_deb822,
)
from gfun.datasets.stats import label_cardinality

__all__ = ["APT_LISTS_DIR", "DEBTAGS_MANY_SHOT", "DEBTAGS_ZERO_SHOT", "DebtagsRun", "clear_debtags_cache",
           "description_text", "load_debtags", "parse_deb822", "write_debtags_run"]

logger = logging.getLogger(__name__)

DEBTAGS_MANY_SHOT: tuple[str, ...] = ("en", "it", "da", "fr", "de", "es", "pt")
DEBTAGS_ZERO_SHOT: tuple[str, ...] = ("fi", "nl", "sv", "hu")
APT_LISTS_DIR = "/var/lib/apt/lists"
PROTOCOL = "debtags-7"
_DEFAULTS = {"n_classes": 73, "max_train": 1000, "max_test": 1000,
             "many_shot": DEBTAGS_MANY_SHOT, "zero_shot": DEBTAGS_ZERO_SHOT}

@dataclass
class _Package:
    tags: list[str]
    source: str
    md5s: set[str]


@dataclass
class _Doc:
    id: str
    lang: str
    source: str
    md5: str | None
    text: str
    tags: list[str]


_CACHE: dict[Any, Any] = {}
_CACHE_LOCK = threading.Lock()


def clear_debtags_cache() -> None:
    """Forget the parsed archive files kept by :func:`load_debtags`."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _load_packages(directory: Path) -> tuple[dict[str, _Package], dict[str, str], Any]:
    """Tagged packages (name -> tags, source, description md5s), file checksums and a cache key."""
    paths = _find_files(directory, "Packages")
    sig = _signature(paths)
    key = ("packages", sig)
    with _CACHE_LOCK:
        if key in _CACHE:
            return *_CACHE[key], sig
    t0 = time.perf_counter()
    pkgs: dict[str, _Package] = {}
    checksums: dict[str, str] = {}
    for path in paths:
        text, digest = _read_file(path)
        checksums[path.name] = digest
        for rec in parse_deb822(text, ("Package", "Source", "Tag", "Description-md5")):
            name = rec.get("Package")
            if not name:
                continue
            tags = _parse_tags(rec.get("Tag", ""))
            source = (rec.get("Source") or name).split()[0]
            md5 = rec.get("Description-md5")
            prev = pkgs.get(name)
            md5s = set(prev.md5s) if prev is not None else set()
            if md5:
                md5s.add(md5)
            if not tags and prev is not None:
                tags = prev.tags  # a later record without tags keeps the earlier ones
            pkgs[name] = _Package(tags, source, md5s)
    tagged = {k: v for k, v in pkgs.items() if v.tags}
    logger.info("debtags: %d packages, %d tagged, read from %s in %.1fs", len(pkgs), len(tagged),
                ", ".join(p.name for p in paths), time.perf_counter() - t0)
    with _CACHE_LOCK:
        _CACHE[key] = (tagged, checksums)
    return tagged, checksums, sig


def _load_language(directory: Path, lang: str, tagged: dict[str, _Package],
                   pkg_sig: Any) -> tuple[list[_Doc], dict[str, str], dict[str, _Doc]]:
    """Eligible documents of one language, sorted by package name, deduplicated by md5 and text; the checksums
    of the files read; every candidate document by package name (before deduplication)."""
    paths = _find_files(directory, f"Translation-{lang}")
    key = ("lang", lang, pkg_sig, _signature(paths))
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    t0 = time.perf_counter()
    fld = f"Description-{lang}"
    cands: dict[str, _Doc] = {}
    checksums: dict[str, str] = {}
    for path in paths:
        text, digest = _read_file(path)
        checksums[path.name] = digest
        for rec in parse_deb822(text, ("Package", "Description-md5", fld)):
            name = rec.get("Package")
            if name is None or name in cands or fld not in rec:
                continue
            pkg = tagged.get(name)
            if pkg is None:
                continue
            md5 = rec.get("Description-md5")
            if pkg.md5s and md5 not in pkg.md5s:
                continue  # translates another version of the description
            cands[name] = _Doc(name, lang, pkg.source, md5, description_text(rec[fld]), pkg.tags)
    docs: list[_Doc] = []
    seen_md5: set[str | None] = set()
    seen_text: set[str] = set()
    for name in sorted(cands):
        doc = cands[name]
        if doc.md5 in seen_md5 or doc.text in seen_text:
            continue
        seen_md5.add(doc.md5)
        seen_text.add(doc.text)
        docs.append(doc)
    logger.info("debtags: %s: %d eligible documents (%d candidates) in %.1fs", lang, len(docs), len(cands),
                time.perf_counter() - t0)
    with _CACHE_LOCK:
        _CACHE[key] = (docs, checksums, cands)
    return docs, checksums, cands


def _english_versions(docs: list[_Doc], en_cands: dict[str, _Doc] | None) -> list[str | None]:
    """The English original of each document (``None`` where the English translation file lacks it).

    A package's ``Description-md5`` is the md5 of its English description, so the English version of a
    translation is the ``Translation-en`` record with the same md5 (by package name when the md5 is unknown).
    """
    if en_cands is None:
        return [d.text if d.lang == "en" else None for d in docs]
    by_md5 = {d.md5: d.text for d in en_cands.values() if d.md5}
    out: list[str | None] = []
    for d in docs:
        if d.lang == "en":
            out.append(d.text)
        elif d.md5:
            out.append(by_md5.get(d.md5))
        else:
            out.append(en_cands[d.id].text if d.id in en_cands else None)
    return out


# ---------------------------------------------------------------------------------------- protocol
@dataclass
class DebtagsRun:
    """One run of the debtags protocol.

    Attributes
    ----------
    train, test : MultilingualCorpus
        Many-shot training and test documents. Ids are binary package names (unique within a language:
        test sets of different languages may describe the same package); ``extra["source"]`` holds the
        source package, ``extra["text_en"]`` the English original of each document's description (the
        ``Translation-en`` record with the same ``Description-md5``; ``None`` where there is none), which
        :class:`gfun.baselines.naive.UpperBoundClassifier` uses. The JSONL files of :func:`write_debtags_run` do not
        hold it.
    test_zeroshot : MultilingualCorpus
        Test documents of the zero-shot languages (no training data in those languages).
    classes : list of str
        The codeframe, shared by the three corpora (the columns of their ``Y``).
    run : int
        The run index, which is also the random seed.
    info : dict
        ``protocol``, ``params``, ``data_dir``, ``order`` (the processing order, scarcest first),
        ``eligible`` (eligible documents per language), ``class_df_train`` (training document frequency
        of each class), ``checksums`` (file name -> sha256 of the input files), ``n_tagged_packages``.
    """

    train: MultilingualCorpus
    test: MultilingualCorpus
    test_zeroshot: MultilingualCorpus
    classes: list[str]
    run: int
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def many_shot(self) -> list[str]:
        """The many-shot languages, in protocol order."""
        return list(self.info.get("params", {}).get("many_shot", DEBTAGS_MANY_SHOT))

    @property
    def zero_shot(self) -> list[str]:
        """The zero-shot languages, in protocol order."""
        return list(self.info.get("params", {}).get("zero_shot", DEBTAGS_ZERO_SHOT))


def _split_language(docs: list[_Doc], perm: np.ndarray, lang: str, train_src: dict[str, str],
                    test_src: set[str], max_train: int, max_test: int) -> tuple[list[_Doc], list[_Doc]]:
    """Training and test documents of one language (updates ``train_src``; not ``test_src``)."""
    n_usable = sum(1 for d in docs if d.source not in train_src)
    n_train = min(max_train, n_usable // 2)
    taken = np.zeros(len(docs), dtype=bool)
    train: list[_Doc] = []
    if n_train > 0:
        for pos, i in enumerate(perm):
            d = docs[i]
            if d.source in test_src or train_src.get(d.source, lang) != lang:
                continue
            train.append(d)
            taken[pos] = True
            train_src[d.source] = lang
            if len(train) >= n_train:
                break
    test: list[_Doc] = []
    if max_test > 0:
        for pos, i in enumerate(perm):
            d = docs[i]
            if taken[pos] or d.source in train_src:
                continue
            test.append(d)
            if len(test) >= max_test:
                break
    return sorted(train, key=lambda d: d.id), sorted(test, key=lambda d: d.id)


def _corpus(docs: list[_Doc], classes: list[str], en_cands: dict[str, _Doc] | None = None) -> MultilingualCorpus:
    cset = set(classes)
    return MultilingualCorpus(
        [d.id for d in docs], [d.lang for d in docs], [d.text for d in docs],
        [[t for t in d.tags if t in cset] for d in docs], classes,
        extra={"source": [d.source for d in docs], "text_en": _english_versions(docs, en_cands)})


def load_debtags(run: int = 0, data_dir: str | os.PathLike[str] | None = None, *, n_classes: int = 73,
                 max_train: int = 1000, max_test: int = 1000,
                 many_shot: Sequence[str] = DEBTAGS_MANY_SHOT,
                 zero_shot: Sequence[str] = DEBTAGS_ZERO_SHOT, split: str = "protocol",
                 test_fraction: float = 0.05, class_ranks: tuple[int, int] | None = None) -> DebtagsRun:
    """Build run ``run`` of the debtags protocol (see the module docstring).

    Parameters
    ----------
    run : int
        Run index and random seed (the paper's protocol averages runs 0..9).
    data_dir : path, optional
        Folder with ``Packages`` and ``Translation-<lang>`` files; by default ``$GFUN_DATA/debtags``, else
        apt's ``/var/lib/apt/lists``.
    n_classes : int
        Number of classes (the most frequent tags in the training documents).
    max_train, max_test : int
        Maximum number of training / test documents per many-shot language.
    many_shot, zero_shot : sequences of str
        Languages with training and test data / with test data only.
    split : {"protocol", "all"}
        ``"protocol"``: the ``debtags-7`` protocol (non-parallel samples of at most ``max_train`` documents per
        language). ``"all"``: every eligible document of every many-shot language, split by source package
        (see the module docstring), for benchmarks at scale.
    test_fraction : float
        ``split="all"``: the fraction of source packages held out for testing.
    class_ranks : (int, int), optional
        The codeframe is the tags ranked ``first`` to ``last`` (1-based, inclusive) by their number of training
        documents, instead of the ``n_classes`` most frequent: ``(74, 150)`` is a long tail of rarer tags (the
        ``debtags-rare`` dataset). The documents are the same; those carrying none of these tags are kept, without
        a label.

    Returns
    -------
    DebtagsRun

    Raises
    ------
    FileNotFoundError
        When the directory, the Packages file or a Translation file is missing.

    Notes
    -----
    Parsed files are kept in a module-level cache (keyed by path, mtime and size), so that loading
    further runs from the same files costs only the sampling; :func:`clear_debtags_cache` empties it.
    """
    many_shot, zero_shot = tuple(many_shot), tuple(zero_shot)
    overlap = set(many_shot) & set(zero_shot)
    if overlap or len(set(many_shot)) != len(many_shot) or len(set(zero_shot)) != len(zero_shot):
        raise ValueError(f"languages must be distinct; many_shot={many_shot}, zero_shot={zero_shot}")
    if not many_shot:
        raise ValueError("at least one many-shot language is needed")
    if class_ranks is not None:
        first, last = (int(r) for r in class_ranks)
        if not 1 <= first <= last:
            raise ValueError(f"class_ranks must be (first, last) with 1 <= first <= last, got {class_ranks!r}")
    if n_classes < 1 or max_train < 0 or max_test < 0:
        raise ValueError(f"invalid sizes: n_classes={n_classes}, max_train={max_train}, max_test={max_test}")
    if split not in ("protocol", "all"):
        raise ValueError(f"split must be 'protocol' or 'all', got {split!r}")
    if split == "all" and not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    directory = dataset_dir("debtags", data_dir, fallback=APT_LISTS_DIR)
    t0 = time.perf_counter()
    tagged, pkg_sums, pkg_sig = _load_packages(directory)
    checksums = dict(pkg_sums)
    ldocs: dict[str, list[_Doc]] = {}
    en_cands: dict[str, _Doc] | None = None
    for lang in many_shot + zero_shot:
        ldocs[lang], sums, cands = _load_language(directory, lang, tagged, pkg_sig)
        checksums.update(sums)
        if lang == "en":
            en_cands = cands
    if en_cands is None:
        try:
            en_cands = _load_language(directory, "en", tagged, pkg_sig)[2]
        except FileNotFoundError:
            logger.info("debtags: no Translation-en file: no English versions (extra['text_en']) for UpperBound")

    rng = np.random.RandomState(run)
    order = sorted(many_shot, key=lambda g: (len(ldocs[g]), g))
    train_src: dict[str, str] = {}
    test_src: set[str] = set()
    train: dict[str, list[_Doc]] = {}
    test: dict[str, list[_Doc]] = {}
    if split == "all":
        sources = sorted({d.source for lang in many_shot for d in ldocs[lang]})
        held = rng.permutation(len(sources))[:int(np.ceil(test_fraction * len(sources)))]
        test_src = {sources[i] for i in held}
        for lang in many_shot:
            train[lang] = [d for d in ldocs[lang] if d.source not in test_src]
            test[lang] = [d for d in ldocs[lang] if d.source in test_src]
        train_src = {d.source: lang for lang in many_shot for d in train[lang]}
    for lang in order if split == "protocol" else ():
        perm = rng.permutation(len(ldocs[lang]))
        train[lang], test[lang] = _split_language(ldocs[lang], perm, lang, train_src, test_src, max_train,
                                                  max_test)
        test_src.update(d.source for d in test[lang])
    zeroshot = {lang: [d for d in ldocs[lang] if d.source not in train_src] for lang in zero_shot}

    df: Counter[str] = Counter()
    for lang in many_shot:
        for d in train[lang]:
            df.update(t for t in d.tags if "TODO" not in t)
    ranked = [t for t, _ in sorted(df.items(), key=lambda kv: (-kv[1], kv[0]))]
    classes = ranked[:n_classes] if class_ranks is None else ranked[class_ranks[0] - 1:class_ranks[1]]

    _check_invariants(train, test, zeroshot, parallel=split == "all")
    params = {"n_classes": n_classes, "max_train": max_train, "max_test": max_test,
              "many_shot": list(many_shot), "zero_shot": list(zero_shot)}
    is_default = all(params[k] == (list(v) if isinstance(v, tuple) else v) for k, v in _DEFAULTS.items())
    if class_ranks is not None:
        params["class_ranks"] = [int(r) for r in class_ranks]
        del params["n_classes"]
        is_default = False
    if split == "all":
        params.update(split="all", test_fraction=test_fraction)
        del params["max_train"], params["max_test"]
    info = {
        "protocol": PROTOCOL + "-all" if split == "all" else PROTOCOL if is_default else PROTOCOL + "-custom",
        "params": params,
        "data_dir": str(directory),
        "order": order,
        "eligible": {lang: len(ldocs[lang]) for lang in many_shot + zero_shot},
        "class_df_train": {c: df[c] for c in classes},
        "checksums": checksums,
        "n_tagged_packages": len(tagged),
    }
    result = DebtagsRun(
        train=_corpus([d for lang in many_shot for d in train[lang]], classes, en_cands),
        test=_corpus([d for lang in many_shot for d in test[lang]], classes, en_cands),
        test_zeroshot=_corpus([d for lang in zero_shot for d in zeroshot[lang]], classes, en_cands),
        classes=classes, run=run, info=info)
    logger.info("debtags run %d: %d training, %d test, %d zero-shot test documents, %d classes (%.1fs)",
                run, len(result.train), len(result.test), len(result.test_zeroshot), len(classes),
                time.perf_counter() - t0)
    return result


def _check_invariants(train: dict[str, list[_Doc]], test: dict[str, list[_Doc]],
                      zeroshot: dict[str, list[_Doc]], parallel: bool = False) -> None:
    owner: dict[str, str] = {}
    for lang, docs in train.items():
        for d in docs:
            if owner.setdefault(d.source, lang) != lang and not parallel:
                raise AssertionError(
                    f"source {d.source!r} is in the training sets of {owner[d.source]} and {lang}")
    for split in (test, zeroshot):
        for lang, docs in split.items():
            for d in docs:
                if d.source in owner:
                    raise AssertionError(
                        f"{lang} test document {d.id!r} shares its source with training data")


# ------------------------------------------------------------------------------------------ output
def _records(corpus: MultilingualCorpus, english: bool = False) -> Iterator[dict[str, Any]]:
    sources = corpus.extra["source"]
    for i in range(len(corpus)):
        rec = {"id": corpus.ids[i], "lang": corpus.langs[i], "source": sources[i], "text": corpus.texts[i],
               "labels": list(corpus.labels[i])}
        if english:
            rec["text_en"] = corpus.extra["text_en"][i]
        yield rec


def _stats_json(r: DebtagsRun) -> dict[str, Any]:
    """The content of ``stats.json`` (same layout as the reference builder's)."""
    many, zero = r.many_shot, r.zero_shot
    rows = []
    for lang in many + zero:
        is_many = lang in many
        tr = r.train.select(lang) if is_many else None
        te = (r.test if is_many else r.test_zeroshot).select(lang)
        rows.append({
            "lang": lang, "eligible": r.info["eligible"][lang], "train": 0 if tr is None else len(tr),
            "test": len(te), "card_train": float("nan") if tr is None else label_cardinality(tr.labels),
            "card_test": label_cardinality(te.labels),
            "train_sources": 0 if tr is None else len(set(tr.extra["source"])),
            "test_sources": len(set(te.extra["source"])),
        })
    all_labels = r.train.labels + r.test.labels
    overall = {
        "protocol": r.info["protocol"], "run": r.run, "seed": r.run, "languages": list(many),
        "zero_shot": list(zero), "n_classes": len(r.classes), "n_train": len(r.train), "n_test": len(r.test),
        "n_test_zeroshot": len(r.test_zeroshot), "card_train": label_cardinality(r.train.labels),
        "card_test": label_cardinality(r.test.labels), "card_all": label_cardinality(all_labels),
        "density_all": label_cardinality(all_labels) / len(r.classes),
        "no_label_train": sum(1 for x in r.train.labels if not x),
        "no_label_test": sum(1 for x in r.test.labels if not x),
        "no_label_test_zeroshot": sum(1 for x in r.test_zeroshot.labels if not x),
        "classes_without_train_positive": [c for c in r.classes if not any(c in x for x in r.train.labels)],
        "processing_order": list(r.info["order"]), "n_tagged_packages": r.info["n_tagged_packages"],
    }
    return {"overall": overall, "languages": rows, "class_df_train": dict(r.info["class_df_train"]),
            "inputs_sha256": dict(r.info["checksums"])}


def write_debtags_run(r: DebtagsRun, out_dir: str | os.PathLike[str], *, english: bool = False) -> Path:
    """Write a run as JSONL files and its class list and statistics as JSON.

    Files: ``train.jsonl``, ``test.jsonl``, ``test_zeroshot.jsonl``, ``classes.json``, ``stats.json``.

    JSONL records have the fields ``id, lang, source, text, labels`` in this order (UTF-8, not
    ASCII-escaped), ``id`` being the package name (unique within a language only); ``classes.json`` is
    the class list in column order. The files are byte-identical to those of the reference builder for
    the same inputs and run. With ``english=True`` every record also has ``text_en``, the English original of
    its description (what ``gfun train --method upper`` reads).

    Returns
    -------
    Path
        ``out_dir``, created if needed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, corpus in (("train", r.train), ("test", r.test), ("test_zeroshot", r.test_zeroshot)):
        with open(out / f"{name}.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for rec in _records(corpus, english):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (out / "classes.json").write_text(json.dumps(list(r.classes), ensure_ascii=False, indent=1) + "\n",
                                      encoding="utf-8", newline="\n")
    (out / "stats.json").write_text(json.dumps(_stats_json(r), ensure_ascii=False, indent=1) + "\n",
                                    encoding="utf-8", newline="\n")
    logger.debug("debtags run %d written to %s", r.run, out)  # gfun datasets build prints it once
    return out
