"""DatasetSplits (gfun.datasets.splits): the splits must share their classes."""

from __future__ import annotations

import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.splits import DatasetSplits


def _splits(zero_shot: bool = False) -> DatasetSplits:
    classes = ["a", "b", "c"]
    train = MultilingualCorpus(
        ["en:1", "en:2", "en:3", "it:1"], ["en", "en", "en", "it"],
        ["The cats run quickly", "Dogs bark loudly at cats", "Nothing here", "I gatti corrono"],
        [["a", "b"], ["a"], [], ["c"]], classes)
    test = MultilingualCorpus(["en:4", "it:2"], ["en", "it"], ["cats", "gatti"], [["a"], ["b", "c"]], classes)
    zs = MultilingualCorpus(["fi:1"], ["fi"], ["kissat"], [["a"]], classes) if zero_shot else None
    return DatasetSplits(train=train, test=test, test_zeroshot=zs, name="toy")


def test_dataset_splits_checks_classes() -> None:
    s = _splits()
    assert s.classes == ("a", "b", "c") and s.languages == ["en", "it"]
    assert [name for name, _ in s.items()] == ["train", "test"]
    with pytest.raises(ValueError, match="class list"):
        DatasetSplits(train=s.train, test=s.test.with_classes(["a", "b"]))
