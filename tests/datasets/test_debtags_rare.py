"""debtags-rare: debtags' documents with a long tail of rarer tags as the codeframe."""

from __future__ import annotations

from collections import Counter

import pytest

from gfun.datasets.debtags import load_debtags
from gfun.datasets.registry import DEBTAGS_RARE_RANKS, load_dataset
from tests.conftest import SHARED_DATA

DEBTAGS = SHARED_DATA / "debtags"
pytestmark = pytest.mark.skipif(not (DEBTAGS / "Packages.lz4").is_file(), reason="no ../shared/data/debtags")


def test_debtags_rare_keeps_the_documents_and_takes_the_tags_after_the_top_73():
    common = load_dataset("debtags", data_dir=DEBTAGS, run=1)
    rare = load_dataset("debtags-rare", data_dir=DEBTAGS, run=1)
    assert rare.name == "debtags-rare" and rare.info["class_ranks"] == list(DEBTAGS_RARE_RANKS)
    assert list(rare.train.ids) == list(common.train.ids) and list(rare.test.ids) == list(common.test.ids)
    assert not set(rare.classes) & set(common.classes)
    assert len(rare.classes) == DEBTAGS_RARE_RANKS[1] - DEBTAGS_RARE_RANKS[0] + 1
    # ranked by the number of training documents: every rare tag is rarer than every common one
    counts = Counter(label for labels in rare.train.labels for label in labels)
    common_counts = common.train.Y.toarray().sum(0)
    rare_counts = rare.train.Y.toarray().sum(0)
    assert rare_counts.max() <= common_counts.min() and rare_counts.min() > 0
    assert all(counts[c] >= rare_counts[i] for i, c in enumerate(rare.classes))
    unlabelled = (rare.train.Y.toarray().sum(1) == 0).mean()
    assert 0.5 < unlabelled < 0.9  # most documents carry none of the rare tags, and are kept
    assert len(rare.test_zeroshot) == len(common.test_zeroshot)


def test_class_ranks_are_checked():
    with pytest.raises(ValueError, match="class_ranks"):
        load_debtags(run=0, data_dir=DEBTAGS, class_ranks=(0, 10))
    with pytest.raises(ValueError, match="class_ranks"):
        load_debtags(run=0, data_dir=DEBTAGS, class_ranks=(20, 10))


def test_datasets_list_finds_debtags_rare_in_the_debtags_folder(monkeypatch, capsys):
    from gfun.cli.main import main

    monkeypatch.setenv("GFUN_DATA", str(SHARED_DATA))
    assert main(["datasets", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    where = lines[[i for i, line in enumerate(lines) if line.startswith("debtags-rare")][0] + 1]
    assert where.strip() == f"{DEBTAGS}  [found]"
