"""The ``gfun datasets`` command: list, stats and build, and its errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from gfun.cli.datasets import add_datasets_parser, build_dataset
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.registry import DATASETS


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


def test_build_refuses_to_overwrite_an_earlier_build_or_write_into_a_model(tmp_path: Path, capsys) -> None:
    """gfun datasets build replaced DIR/train.jsonl silently and wrote into a model directory."""
    from gfun.cli.main import main
    from gfun.persistence.directory import MARKER

    out = tmp_path / "demo"
    assert main(["-q", "datasets", "build", "demo", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("written to") == 1  # once, not also as a log line
    (out / "train.jsonl").write_text("edited by hand\n", encoding="utf-8")
    code = main(["-q", "datasets", "build", "demo", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "refusing to overwrite (--force replaces them)" in err and "train.jsonl" in err, err
    assert (out / "train.jsonl").read_text(encoding="utf-8") == "edited by hand\n"
    assert main(["-q", "datasets", "build", "demo", "--out", str(out), "--force"]) == 0
    assert (out / "train.jsonl").read_text(encoding="utf-8") != "edited by hand\n"
    model = tmp_path / "model"
    assert main(["-q", "train", "--train", str(out / "train.jsonl"), "--views", "x", "--meta-C", "1",
                 "--model", str(model)]) == 0
    assert (model / MARKER).exists()
    before = sorted(p.name for p in model.iterdir())
    capsys.readouterr()
    for target in (model, model / "data"):
        code = main(["-q", "datasets", "build", "demo", "--out", str(target), "--force"])
        assert code == 1 and "lies inside the gfun model directory" in capsys.readouterr().err
    assert sorted(p.name for p in model.iterdir()) == before


def test_build_debtags_prints_its_line_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """gfun datasets build debtags printed "written to" twice: the command's line and a log line of
    write_debtags_run (a tiny run stands in for the archive)."""
    import gfun.datasets.debtags as debtags
    from gfun.cli.main import main

    classes = ["role::program", "use::editing"]

    def corpus(langs: list[str], prefix: str) -> MultilingualCorpus:
        n = len(langs)
        return MultilingualCorpus([f"{prefix}{k}" for k in range(n)], langs,
                                  [f"a {prefix} text number {k} in {lang}" for k, lang in enumerate(langs)],
                                  [[classes[k % 2]] for k in range(n)], classes,
                                  extra={"source": [f"src{k}" for k in range(n)], "text_en": [None] * n})

    many, zero = ["en", "it"], ["fi"]
    tiny = debtags.DebtagsRun(
        train=corpus(["en", "en", "it", "it"], "tr"), test=corpus(["en", "it"], "te"),
        test_zeroshot=corpus(["fi", "fi"], "zs"), classes=classes, run=0,
        info={"protocol": debtags.PROTOCOL, "params": {"many_shot": many, "zero_shot": zero},
              "order": many + zero, "eligible": {"en": 3, "it": 3, "fi": 2}, "n_tagged_packages": 8,
              "class_df_train": {c: 2 for c in classes}, "checksums": {}})
    monkeypatch.setattr(debtags, "load_debtags", lambda run=0, data_dir=None, **kw: tiny)
    out = tmp_path / "built"
    code = main(["datasets", "build", "debtags", "--out", str(out)])  # not -q: the log lines are shown
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert (out / "stats.json").is_file()
    assert (printed.out + printed.err).count("written to") == 1, (printed.out, printed.err)
