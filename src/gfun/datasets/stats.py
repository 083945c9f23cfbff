"""Dataset statistics in the manner of Table 1 of the gFun paper.

:func:`dataset_stats` returns one row per language and a last row ``all``:

=========  =================================================================================
column     meaning
=========  =================================================================================
``L``      languages (1 on a language row; on ``all``, the languages of any split)
``Y``      classes: on ``all`` the size of the class list; on a language row the classes with
           at least one positive training document of that language
``Tr``     training documents
``Dev``    development documents (only when the dataset has a dev split)
``Te``     test documents
``Te0``    zero-shot test documents (only when the dataset has them)
``AveCls`` average number of classes per training document
``MinCls`` minimum number of classes of a training document
``MaxCls`` maximum number of classes of a training document
``MinPos`` minimum number of positive training documents of a class (over the class list)
``MaxPos`` maximum number of positive training documents of a class
``Feats``  distinct features: the TF-IDF vocabulary of the language's training documents
           (terms of :class:`gfun.text.analysis.Analyzer` in at least ``min_df`` documents); on ``all``
           the average over the languages with training documents (Ave.Feats)
=========  =================================================================================

As in the paper, label statistics are computed on the training documents. Languages with no training
documents (zero-shot) have empty label and feature statistics.

:func:`debtags_stats` is the debtags builder's own table of a run (eligible documents, source packages, ...),
printed by :func:`format_stats_table`.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gfun.corpus.multilingual import MultilingualCorpus

__all__ = ["dataset_stats", "debtags_stats", "format_stats_table", "label_cardinality", "label_stats",
           "vocabulary_size"]

logger = logging.getLogger(__name__)

_SPLIT_COLUMNS = (("train", "Tr"), ("dev", "Dev"), ("test", "Te"), ("test_zeroshot", "Te0"))
_FALLBACK_TOKEN = re.compile(r"\w\w+")


def _analyzer(lang: str) -> Callable[[str], list[str]]:
    try:
        from gfun.text.analysis import Analyzer
    except ImportError:  # pragma: no cover - text.py is part of the package
        logger.warning("gfun.text is not available; counting lower-cased word tokens instead")
        return lambda text: _FALLBACK_TOKEN.findall(text.lower())
    return Analyzer(lang)


def vocabulary_size(texts: Iterable[str], lang: str, *, min_df: int = 1,
                    analyzer: Callable[[str], list[str]] | None = None) -> int:
    """Number of distinct terms that occur in at least ``min_df`` of ``texts``.

    Parameters
    ----------
    texts : iterable of str
        The documents.
    lang : str
        Their language (selects the :class:`gfun.text.analysis.Analyzer`).
    min_df : int
        Minimum document frequency of a counted term.
    analyzer : callable, optional
        ``text -> list of terms``; by default ``gfun.text.analysis.Analyzer(lang)``.
    """
    analyze = analyzer or _analyzer(lang)
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(analyze(text)))
    return sum(1 for n in df.values() if n >= min_df)


def _label_counts(Y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Classes of each document and positives of each class of a binary label matrix."""
    return np.asarray(Y.sum(axis=1)).ravel(), np.asarray(Y.sum(axis=0)).ravel()


def label_stats(corpus: MultilingualCorpus) -> dict[str, Any]:
    """Classes per document (average, min, max) and positives per class (min, max) of a labelled corpus.

    Returns NaN / missing values for an empty corpus; ``Y`` counts the classes with a positive.
    """
    if len(corpus) == 0:
        return {"Y": 0, "AveCls": np.nan, "MinCls": pd.NA, "MaxCls": pd.NA, "MinPos": pd.NA, "MaxPos": pd.NA}
    per_doc, per_class = _label_counts(corpus.Y)
    return {"Y": int((per_class > 0).sum()), "AveCls": float(per_doc.mean()), "MinCls": int(per_doc.min()),
            "MaxCls": int(per_doc.max()),
            "MinPos": int(per_class.min()) if per_class.size else pd.NA,
            "MaxPos": int(per_class.max()) if per_class.size else pd.NA}


def _splits_of(splits: Any) -> dict[str, MultilingualCorpus]:
    if isinstance(splits, tuple | list):
        if len(splits) != 2:
            raise TypeError("a tuple of splits must be (train, test)")
        return {"train": splits[0], "test": splits[1]}
    out = {}
    for name, _ in _SPLIT_COLUMNS:
        corpus = getattr(splits, name, None)
        if corpus is not None:
            out[name] = corpus
    if "train" not in out or "test" not in out:
        raise TypeError(f"expected an object with train and test corpora, got {type(splits).__name__}")
    return out


def dataset_stats(splits: Any, *, features: bool = True, min_df: int = 1,
                  languages: Sequence[str] | None = None) -> pd.DataFrame:
    """A Table-1-style statistics table of a dataset (see the module docstring for the columns).

    Parameters
    ----------
    splits : DatasetSplits or similar
        Any object with ``train`` and ``test`` corpora (and optionally ``dev`` and ``test_zeroshot``),
        e.g. :class:`~gfun.datasets.registry.DatasetSplits`, ``DebtagsRun``, or a ``(train, test)`` pair.
    features : bool
        Compute ``Feats`` (analyses every training text once; the slowest column).
    min_df : int
        Minimum document frequency of a feature.
    languages : sequence of str, optional
        Row order; by default the sorted languages of all splits.

    Returns
    -------
    pandas.DataFrame
        Index: the languages, then ``all``. Integer columns use the nullable ``Int64`` dtype.
    """
    parts = _splits_of(splits)
    train = parts["train"]
    if languages is not None:
        langs = list(languages)
    else:
        langs = sorted({g for c in parts.values() for g in c.languages})
    columns = [col for name, col in _SPLIT_COLUMNS if name in parts]
    train_by_lang = train.by_language()
    rows: dict[str, dict[str, Any]] = {}
    feats: dict[str, int] = {}
    for lang in langs:
        row: dict[str, Any] = {"L": 1}
        for name, col in _SPLIT_COLUMNS:
            if name in parts:
                row[col] = parts[name].lang_counts().get(lang, 0)
        idx = train_by_lang.get(lang)
        if idx is not None and len(idx):
            sub = train.subset(idx)
            row.update(label_stats(sub))
            if features:
                feats[lang] = vocabulary_size(sub.texts, lang, min_df=min_df)
                row["Feats"] = feats[lang]
        else:
            row.update({k: v for k, v in label_stats(train.subset([])).items() if k != "Y"})
            row["Y"] = 0
        rows[lang] = row
    total: dict[str, Any] = {"L": len(langs)}
    for name, col in _SPLIT_COLUMNS:
        if name in parts:
            total[col] = sum(parts[name].lang_counts().get(g, 0) for g in langs)
    total.update(label_stats(train.select(langs) if languages is not None else train))
    total["Y"] = len(train.classes)
    if features:
        total["Feats"] = int(round(float(np.mean(list(feats.values()))))) if feats else pd.NA
    rows["all"] = total
    order = ["L", "Y", *columns, "AveCls", "MinCls", "MaxCls", "MinPos", "MaxPos"]
    if features:
        order.append("Feats")
    df = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=order)
    for col in order:
        df[col] = df[col].astype("Float64" if col == "AveCls" else "Int64")
    df["AveCls"] = df["AveCls"].round(2)
    df.index.name = "lang"
    name = getattr(splits, "name", "")
    if name:
        df.attrs["name"] = name
    return df


# -------------------------------------------------------------------------------------- debtags runs
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    """Lower-cased words (what the debtags statistics count as features)."""
    return _WORD.findall(text.lower())


def label_cardinality(labels: Sequence[Sequence[str]]) -> float:
    """Average number of labels per document (NaN for no documents)."""
    return float(np.mean([len(x) for x in labels])) if len(labels) else float("nan")


def _label_stats(Y: Any) -> dict[str, float]:
    """Ave/min/max classes per document and min/max positives per class of a binary label matrix."""
    if Y.shape[0] == 0:
        nan = float("nan")
        return {"ave_cls": nan, "min_cls": nan, "max_cls": nan, "min_pos": nan, "max_pos": nan}
    per_doc, per_class = _label_counts(Y)
    return {"ave_cls": float(per_doc.mean()), "min_cls": int(per_doc.min()), "max_cls": int(per_doc.max()),
            "min_pos": int(per_class.min()), "max_pos": int(per_class.max())}


def debtags_stats(r: Any) -> pd.DataFrame:
    """Statistics of a run of :func:`gfun.datasets.debtags.load_debtags` (a ``DebtagsRun``), as in the paper's Table 1.

    One row per language (many-shot first, then zero-shot) and a last row ``"all"``. Columns: ``role``
    (``many-shot``/``zero-shot``/``all``), ``eligible``, ``train``, ``test`` (zero-shot test documents for
    zero-shot languages), ``train_sources``, ``test_sources``, ``ave_cls``/``min_cls``/``max_cls``
    (labels per training document; over the test documents for zero-shot languages), ``card_test``,
    ``min_pos``/``max_pos`` (positives per class in the same documents), ``no_label_train``,
    ``no_label_test`` and ``feats`` (distinct lower-cased words in the training documents, test documents
    for zero-shot languages). The ``all`` row sums the counts over the many-shot languages, gives the
    label statistics of the whole training set and the mean of ``feats`` over many-shot languages
    (the paper's Ave.Feats). ``df.attrs`` holds ``run``, ``n_classes``, ``n_test_zeroshot``,
    ``processing_order`` and ``protocol``.
    """
    rows = []
    for lang in r.many_shot + r.zero_shot:
        many = lang in r.many_shot
        tr = r.train.select(lang) if many else None
        te = (r.test if many else r.test_zeroshot).select(lang)
        base = tr if tr is not None else te
        row: dict[str, Any] = {"lang": lang, "role": "many-shot" if many else "zero-shot",
                               "eligible": r.info["eligible"][lang], "train": 0 if tr is None else len(tr),
                               "test": len(te),
                               "train_sources": 0 if tr is None else len(set(tr.extra["source"])),
                               "test_sources": len(set(te.extra["source"]))}
        row.update(_label_stats(base.Y))
        row["card_test"] = label_cardinality(te.labels)
        row["no_label_train"] = 0 if tr is None else sum(1 for x in tr.labels if not x)
        row["no_label_test"] = sum(1 for x in te.labels if not x)
        row["feats"] = vocabulary_size(base.texts, lang, analyzer=_words)
        rows.append(row)
    many_rows = [x for x in rows if x["role"] == "many-shot"]
    total: dict[str, Any] = {"lang": "all", "role": "all",
                             "eligible": sum(x["eligible"] for x in many_rows), "train": len(r.train),
                             "test": len(r.test), "train_sources": len(set(r.train.extra["source"])),
                             "test_sources": len(set(r.test.extra["source"]))}
    total.update(_label_stats(r.train.Y))
    total["card_test"] = label_cardinality(r.test.labels)
    total["no_label_train"] = sum(1 for x in r.train.labels if not x)
    total["no_label_test"] = sum(1 for x in r.test.labels if not x)
    total["feats"] = float(np.mean([x["feats"] for x in many_rows]))
    rows.append(total)
    df = pd.DataFrame(rows).set_index("lang")
    df.attrs.update({"run": r.run, "n_classes": len(r.classes), "n_test_zeroshot": len(r.test_zeroshot),
                     "processing_order": list(r.info["order"]), "protocol": r.info["protocol"]})
    return df


def format_stats_table(df: pd.DataFrame) -> str:
    """Plain-text rendering of :func:`debtags_stats` for terminals and logs."""
    cols = [("eligible", "elig", "d"), ("train", "#tr", "d"), ("test", "#te", "d"),
            ("train_sources", "src_tr", "d"), ("test_sources", "src_te", "d"), ("ave_cls", "ave.cls", ".2f"),
            ("min_cls", "min", "d"), ("max_cls", "max", "d"), ("min_pos", "min.pos", "d"),
            ("max_pos", "max.pos", "d"), ("card_test", "card.te", ".2f"), ("feats", "feats", "d")]
    cols = [c for c in cols if c[0] in df.columns]
    header = f"{'lang':<5} {'role':<9}" + "".join(f" {h:>8}" for _, h, _ in cols)
    lines = [header, "-" * len(header)]
    for lang, row in df.iterrows():
        cells = []
        for name, _, fmt in cols:
            v = row[name]
            if v is None or (isinstance(v, float) and np.isnan(v)):
                cells.append(f" {'-':>8}")
            elif fmt == "d":
                cells.append(f" {round(float(v)):>8d}")
            else:
                cells.append(f" {float(v):>8{fmt}}")
        lines.append(f"{lang!s:<5} {row.get('role', ''):<9}" + "".join(cells))
    a = df.attrs
    if a:
        order = " ".join(a.get("processing_order", []))
        lines.append(f"run {a.get('run')}: {a.get('n_classes')} classes; zero-shot test documents "
                     f"{a.get('n_test_zeroshot')}; processing order {order}")
    return "\n".join(lines)
