"""Dataset statistics (Table 1 style) on hand-made splits and on the real corpora."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.registry import load_dataset
from gfun.datasets.splits import DatasetSplits
from gfun.datasets.stats import dataset_stats, label_stats, vocabulary_size
from gfun.text.analysis import Analyzer


def _splits(zero_shot: bool = False) -> DatasetSplits:
    classes = ["a", "b", "c"]
    train = MultilingualCorpus(
        ["en:1", "en:2", "en:3", "it:1"], ["en", "en", "en", "it"],
        ["The cats run quickly", "Dogs bark loudly at cats", "Nothing here", "I gatti corrono"],
        [["a", "b"], ["a"], [], ["c"]], classes)
    test = MultilingualCorpus(["en:4", "it:2"], ["en", "it"], ["cats", "gatti"], [["a"], ["b", "c"]], classes)
    zs = MultilingualCorpus(["fi:1"], ["fi"], ["kissat"], [["a"]], classes) if zero_shot else None
    return DatasetSplits(train=train, test=test, test_zeroshot=zs, name="toy")


def test_label_stats() -> None:
    stats = label_stats(_splits().train)
    assert stats == {"Y": 3, "AveCls": 1.0, "MinCls": 0, "MaxCls": 2, "MinPos": 1, "MaxPos": 2}


def test_vocabulary_size() -> None:
    texts = ["The cats run quickly", "Dogs bark loudly at cats"]
    expected = len(set(Analyzer("en")(texts[0])) | set(Analyzer("en")(texts[1])))
    assert vocabulary_size(texts, "en") == expected
    assert vocabulary_size(texts, "en", min_df=2) == 1  # 'cat'
    assert vocabulary_size(texts, "en", analyzer=str.split) == 8


def test_dataset_stats_table() -> None:
    df = dataset_stats(_splits(zero_shot=True))
    assert list(df.index) == ["en", "fi", "it", "all"]
    assert list(df.columns) == ["L", "Y", "Tr", "Te", "Te0", "AveCls", "MinCls", "MaxCls", "MinPos", "MaxPos",
                                "Feats"]
    en, fi, it, total = (df.loc[k] for k in ("en", "fi", "it", "all"))
    assert (en["Tr"], en["Te"], en["Te0"], en["Y"]) == (3, 1, 0, 2)
    assert en["AveCls"] == 1.0 and en["MinCls"] == 0 and en["MaxCls"] == 2
    assert en["MinPos"] == 0 and en["MaxPos"] == 2  # class c has no English positive
    assert (fi["Tr"], fi["Te0"]) == (0, 1) and pd.isna(fi["AveCls"]) and pd.isna(fi["Feats"])
    assert (total["L"], total["Y"], total["Tr"], total["Te"], total["Te0"]) == (3, 3, 4, 2, 1)
    assert (total["MinPos"], total["MaxPos"], total["MaxCls"]) == (1, 2, 2)
    en_feats = vocabulary_size(_splits().train.select("en").texts, "en")
    assert en["Feats"] == en_feats
    assert total["Feats"] == round((en_feats + it["Feats"]) / 2)
    assert str(df["Tr"].dtype) == "Int64"
    # no feature column; a (train, test) pair is accepted
    df2 = dataset_stats((_splits().train, _splits().test), features=False)
    assert "Feats" not in df2.columns and "Te0" not in df2.columns


# ---------------------------------------------------------------------------------------------- real data
def test_real_exceptius_stats(shared_data: Path) -> None:
    folder = shared_data / "exceptius"
    if not (folder / "italy").is_dir():
        pytest.skip("EXCEPTIUS not available")
    df = dataset_stats(load_dataset("exceptius", data_dir=folder))
    total = df.loc["all"]
    assert (total["L"], total["Y"], total["Tr"], total["Dev"], total["Te"]) == (7, 8, 3312, 418, 418)
    assert total["MinCls"] == 0 and total["MinPos"] > 0
    assert df.loc["fr", "Tr"] == 1416 and 0 < total["AveCls"] < 1


def test_real_sib200_stats(shared_data: Path) -> None:
    folder = shared_data / "sib200"
    if not (folder / "eng_Latn").is_dir():
        pytest.skip("SIB-200 not available")
    df = dataset_stats(load_dataset("sib200", data_dir=folder, langs=["en", "fi", "hu"]))
    total = df.loc["all"]
    assert (total["L"], total["Y"], total["Tr"], total["Dev"], total["Te"]) == (3, 7, 2103, 297, 612)
    assert total["AveCls"] == 1.0 and (total["MinCls"], total["MaxCls"]) == (1, 1)
    assert df.loc["en", "MinPos"] == 58 and df.loc["en", "MaxPos"] == 176
    assert df.loc["fi", "Feats"] > df.loc["en", "Feats"]  # Finnish morphology
