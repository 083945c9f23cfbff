"""The corpora of one run of a dataset (what every loader of :mod:`gfun.datasets.registry` returns)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gfun.corpus.multilingual import MultilingualCorpus

__all__ = ["DatasetSplits"]


@dataclass
class DatasetSplits:
    """The corpora of one run of a dataset, all labelled against ``classes``.

    Attributes
    ----------
    train, test : MultilingualCorpus
        Training and (many-shot) test documents.
    dev : MultilingualCorpus, optional
        Development documents, where the dataset has an official development split.
    test_zeroshot : MultilingualCorpus, optional
        Test documents of languages with no training data.
    classes : tuple of str
        The class list (column order of the label matrices); by default ``train.classes``.
    name : str
        Dataset name.
    info : dict
        Free-form details (run, protocol parameters, source files).
    """

    train: MultilingualCorpus
    test: MultilingualCorpus
    dev: MultilingualCorpus | None = None
    test_zeroshot: MultilingualCorpus | None = None
    classes: tuple[str, ...] = ()
    name: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.classes = tuple(self.classes) if self.classes else tuple(self.train.classes)
        for split, corpus in self.items():
            if tuple(corpus.classes) != self.classes:
                raise ValueError(f"the {split} corpus has a class list different from the dataset's "
                                 f"({len(corpus.classes)} vs {len(self.classes)} classes)")

    def items(self) -> Iterator[tuple[str, MultilingualCorpus]]:
        """``(split name, corpus)`` for the splits present, in the order train, dev, test, test_zeroshot."""
        for split in ("train", "dev", "test", "test_zeroshot"):
            corpus = getattr(self, split)
            if corpus is not None:
                yield split, corpus

    @property
    def languages(self) -> list[str]:
        """Every language of any split, sorted."""
        return sorted({lang for _, c in self.items() for lang in c.languages})
