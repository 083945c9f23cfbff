"""Dataset statistics (Table 1 style), the registry and the ``datasets`` command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from gfun.cli.datasets import add_datasets_parser, build_dataset
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.registry import DATASETS, load_dataset, resolve_dataset_name
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


def test_dataset_splits_checks_classes() -> None:
    s = _splits()
    assert s.classes == ("a", "b", "c") and s.languages == ["en", "it"]
    assert [name for name, _ in s.items()] == ["train", "test"]
    with pytest.raises(ValueError, match="class list"):
        DatasetSplits(train=s.train, test=s.test.with_classes(["a", "b"]))


def test_registry_names() -> None:
    assert set(DATASETS) == {"debtags", "exceptius", "sib200", "jrc-acquis", "rcv1-rcv2", "demo"}
    assert resolve_dataset_name("JRC_Acquis") == "jrc-acquis"
    assert resolve_dataset_name("rcv") == "rcv1-rcv2"
    with pytest.raises(ValueError, match="known: debtags"):
        load_dataset("imdb")


def test_registry_demo() -> None:
    pytest.importorskip("gfun.datasets.demo")
    s = load_dataset("demo")
    assert s.name == "demo" and len(s.train) > 0 and len(s.test) > 0
    assert s.classes == s.train.classes


# ---------------------------------------------------------------------------------------------- fixtures
def _write_sib(root: Path) -> Path:
    for folder, prefix in (("eng_Latn", "The"), ("ita_Latn", "Il")):
        (root / folder).mkdir(parents=True)
        for split, n in (("train", 4), ("dev", 1), ("test", 2)):
            rows = ["index_id\tcategory\ttext"] + [
                f"{split}{k}\t{'sports' if k % 2 else 'health'}\t{prefix} sentence number {k} of {split}"
                for k in range(n)]
            (root / folder / f"{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _cli() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gfun")
    add_datasets_parser(parser.add_subparsers(dest="command"))
    return parser


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = _cli().parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_list(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> None:
    monkeypatch.setenv("GFUN_DATA", str(tmp_path))
    (tmp_path / "sib200").mkdir()
    code, out, _ = _run(["datasets", "list"], capsys)
    assert code == 0
    for name in DATASETS:
        assert name in out
    assert f"{tmp_path / 'sib200'}  [found]" in out and "[missing]" in out


def test_cli_stats_and_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sib = _write_sib(tmp_path / "sib200")
    code, _, err = _run(["datasets", "stats", "sib200", "--data-dir", str(sib)], capsys)
    assert code == 1 and "no directory for language 'da'" in err  # the default eleven languages
    code, out, _ = _run(["datasets", "stats", "sib200", "--data-dir", str(sib), "--langs", "en,it"], capsys)
    assert code == 0 and "sib200 (run 0)" in out and "Feats" in out and "all" in out
    code, out, _ = _run(["datasets", "stats", "sib200", "--data-dir", str(sib), "--json", "--langs", "en,it"],
                        capsys)
    payload = json.loads(out)
    assert payload["overall"]["Tr"] == 8 and payload["overall"]["Dev"] == 2 and payload["classes"] == 7
    assert payload["languages"]["it"]["Te"] == 2
    out_dir = tmp_path / "built"
    code, out, _ = _run(["datasets", "build", "sib200", "--data-dir", str(sib), "--out", str(out_dir),
                         "--langs", "en,it"], capsys)
    assert code == 0 and f"written to {out_dir}" in out and "Feats" in out  # the Table-1 statistics follow
    assert sorted(p.name for p in out_dir.iterdir()) == ["classes.json", "dev.jsonl", "test.jsonl",
                                                         "train.jsonl"]
    back = MultilingualCorpus.from_jsonl(out_dir / "train.jsonl")
    assert len(back) == 8 and back.extra["index_id"][0] == "train0"
    assert build_dataset("sib200", tmp_path / "again", data_dir=sib, langs=["en"]) == tmp_path / "again"


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["datasets", "stats", "imdb"], capsys)
    assert code == 2 and "unknown dataset" in err
    code, _, err = _run(["datasets", "stats", "exceptius", "--data-dir", str(tmp_path / "none")], capsys)
    assert code == 1 and "not found" in err
    bad = tmp_path / "sib200" / "eng_Latn"
    bad.mkdir(parents=True)
    (bad / "train.tsv").write_text("index_id\tcategory\ttext\n1\tcooking\tx\n", encoding="utf-8")
    code, _, err = _run(["datasets", "stats", "sib200", "--data-dir", str(tmp_path / "sib200")], capsys)
    assert code == 1 and "no directory for language" in err
    code, out, _ = _run(["datasets"], capsys)
    assert code == 2 and "list" in out


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
