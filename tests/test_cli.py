"""The ``gfun`` command line, end to end on a sample of the bundled demo data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.main import build_parser, main
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.persistence.loading import read_manifest


def _sample(corpus: MultilingualCorpus, n: int, langs: tuple[str, ...]) -> MultilingualCorpus:
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in langs])
    return corpus.subset(np.sort(idx))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    train, test = load_demo()
    langs = ("de", "en", "it")
    folder = tmp_path_factory.mktemp("cli")
    paths = {"train": folder / "train.jsonl", "test": folder / "test.jsonl.gz", "classes": folder / "classes.json",
             "folder": folder}
    _sample(train, 120, langs).to_jsonl(paths["train"])
    _sample(test, 40, langs).to_jsonl(paths["test"])
    train.save_classes(paths["classes"])
    return paths


@pytest.fixture(scope="module")
def gfun_model(files: dict[str, Path]) -> Path:
    model = files["folder"] / "model-gfun"
    code = main(["-q", "train", "--train", str(files["train"]), "--classes", str(files["classes"]),
                 "--method", "gfun", "--views", "x", "--meta-C", "1", "--model", str(model)])
    assert code == 0
    return model


def test_train_writes_a_loadable_model(gfun_model: Path) -> None:
    manifest = read_manifest(gfun_model)
    assert manifest["estimator"] == "GeneralizedFunnelling"
    assert manifest["languages"] == ["de", "en", "it"]
    assert len(manifest["classes"]) == 30


def test_predict_writes_labels_and_probabilities(files: dict[str, Path], gfun_model: Path) -> None:
    out = files["folder"] / "pred.jsonl"
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(files["test"]), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    test = MultilingualCorpus.from_jsonl(files["test"])
    assert [r["id"] for r in lines] == test.ids
    classes = json.loads(files["classes"].read_text())
    for rec in lines:
        assert set(rec["probabilities"]) == set(classes)
        assert all(0.0 <= p <= 1.0 for p in rec["probabilities"].values())
        assert set(rec["labels"]) <= set(classes)
    assert any(rec["labels"] for rec in lines)


def test_evaluate_json_matches_table(files: dict[str, Path], gfun_model: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "evaluate", "--model", str(gfun_model), "--test", str(files["test"]), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == {"de", "en", "it", "average"}
    avg = np.mean([res[lang]["F1_macro"] for lang in ("de", "en", "it")])
    assert res["average"]["F1_macro"] == pytest.approx(avg)
    assert 0.0 < res["average"]["F1_micro"] <= 1.0
    assert main(["-q", "evaluate", "--model", str(gfun_model), "--test", str(files["test"])]) == 0
    table = capsys.readouterr().out
    assert "F1M" in table and "average" in table


@pytest.mark.parametrize("method", ["naive", "fun"])
def test_train_baselines(files: dict[str, Path], method: str, capsys: pytest.CaptureFixture[str]) -> None:
    model = files["folder"] / f"model-{method}"
    assert main(["-q", "train", "--train", str(files["train"]), "--method", method, "--meta-C", "1",
                 "--model", str(model)]) == 0
    assert main(["-q", "evaluate", "--model", str(model), "--test", str(files["test"]), "--json"]) == 0
    out = capsys.readouterr().out
    res = json.loads(out[out.index("{"):])
    assert res["average"]["F1_micro"] > 0


def test_malformed_input_is_reported_with_line(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bad = files["folder"] / "bad.jsonl"
    bad.write_text('{"id": "a", "lang": "en", "text": "ok", "labels": []}\n{"id": "b", "lang": "en"}\n')
    code = main(["-q", "train", "--train", str(bad), "--model", str(files["folder"] / "never")])
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "line 2" in err and "'text'" in err
    assert not (files["folder"] / "never").exists()


def test_unseen_language_is_an_error(files: dict[str, Path], gfun_model: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    doc = files["folder"] / "fi.jsonl"
    doc.write_text(json.dumps({"id": "x", "lang": "fi", "text": "tekstieditori"}) + "\n")
    code = main(["-q", "predict", "--model", str(gfun_model), "--input", str(doc), "--output",
                 str(files["folder"] / "fi-pred.jsonl")])
    assert code == 1
    assert "'fi'" in capsys.readouterr().err


def test_missing_model_is_an_error(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["-q", "evaluate", "--model", str(files["folder"] / "nope"), "--test", str(files["test"])])
    assert code == 1
    assert "not a saved gfun model" in capsys.readouterr().err


def test_every_command_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in ("train", "predict", "evaluate", "demo", "datasets"):
        text = sub.choices[name].format_help()
        assert name in text
        if name == "train":
            for opt in ("--train", "--method", "--views", "--model", "--meta-C", "--aggregation"):
                assert opt in text


def test_console_script_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "gfun.cli.main", "--help"], capture_output=True, text=True, check=True)
    assert "train" in out.stdout and "predict" in out.stdout and "evaluate" in out.stdout


def test_predict_detects_missing_languages(files: dict[str, Path], gfun_model: Path) -> None:
    pytest.importorskip("py3langid", reason="language identification needs gfun[langid] (py3langid)")
    test = MultilingualCorpus.from_jsonl(files["test"])
    records = [{"id": i, "text": t} for i, t in zip(test.ids[:6], test.texts[:6], strict=True)]
    path = files["folder"] / "nolang.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = files["folder"] / "nolang-pred.jsonl"
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(path), "--output", str(out)]) == 1
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(path), "--output", str(out),
                 "--detect-language"]) == 0
    detected = [json.loads(x)["lang"] for x in out.read_text().splitlines()]
    assert detected == test.langs[:6]


def test_embeddings_command_is_wired() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert "align-eval" in sub.choices["embeddings"].format_help()


# ---------------------------------------------------------------------------------------------- texts a person reads
def _parsers(parser):
    """The parser and every sub-command's parser, recursively."""
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_help_states_only_real_defaults() -> None:
    helps = {p.prog: p.format_help() for p in _parsers(build_parser())}
    assert len(helps) > 15
    for prog, text in helps.items():
        flat = " ".join(text.split())
        assert "(default: None)" not in flat and "(default: False)" not in flat, prog
    train = " ".join(helps["gfun train"].split())
    assert "(default: gfun)" in train and "(default: 0)" in train  # the real ones stay, 0 included (--seed)


def test_help_texts_are_written_for_users() -> None:
    """No developer docstring (reST roles, double back-quotes), no literal %%, every option explained."""
    import argparse
    import re

    parsers = list(_parsers(build_parser()))
    for parser in parsers:
        text = parser.format_help()
        assert not re.search(r"``|:(func|class|meth|mod|data):`|%%", text), (parser.prog, text)
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                assert action.help, (parser.prog, action.option_strings)
    embeddings = " ".join(next(p for p in parsers if p.prog == "gfun embeddings").format_help().split())
    assert "align-eval" in embeddings and "convert-e5" in embeddings and "add_embeddings_parser" not in embeddings
    assert "(default: 0)" not in " ".join(build_parser().format_help().split())  # -v is a counter


def test_info_describes_a_saved_model(gfun_model: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["-q", "info", str(gfun_model)]) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(None, 1) for line in out.splitlines() if not line.startswith(("selected", "model")))
    assert lines["languages"].strip() == "de, en, it"
    assert lines["views"].strip() == "X (PosteriorsView: de, en, it)"
    assert lines["classes"].startswith("30: ") and lines["probabilities"].startswith("yes")
    assert "GeneralizedFunnelling" in out and 'views="x"' in out and "MiB" in lines["size"]
    assert main(["-q", "info", str(gfun_model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["classes"] == read_manifest(gfun_model)["classes"] and info["selected_views"] == ["x"]
    assert main(["-q", "info", str(gfun_model.parent)]) == 1  # not a model: one line, status 1
    assert "gfun info: error:" in capsys.readouterr().err


def test_missing_language_error_names_detect_language(files: dict[str, Path], gfun_model: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    src = files["folder"] / "nolang.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "Ein Texteditor für das Terminal"}) + "\n", encoding="utf-8")
    code = main(["-q", "predict", "--model", str(gfun_model), "--input", str(src), "--output", "-"])
    err = capsys.readouterr().err
    assert code == 1 and "missing required field 'lang'" in err and "--detect-language" in err
    pytest.importorskip("py3langid")
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(src), "--output", "-",
                 "--detect-language"]) == 0
    assert json.loads(capsys.readouterr().out)["lang"] == "de"


def test_chosen_C_is_logged_as_plain_numbers(caplog: pytest.LogCaptureFixture) -> None:
    from gfun.svm.kernel import RBFSVMOvR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :3] > 0).astype(int)
    with caplog.at_level("INFO", logger="gfun.svm.kernel"):
        RBFSVMOvR(C="cv", C_grid=(0.1, 1.0), cv=3, verbose=True, random_state=0).fit(X, Y)
    line = next(r.getMessage() for r in caplog.records if "C chosen" in r.getMessage())
    assert "np." not in line and "C chosen: " in line
    assert sum(int(n) for n in __import__("re").findall(r"\((\d+) class", line)) == 3


def test_quiet_silences_transformers_progress_bars(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    """`-q` silences transformers' own bars (the "Loading weights" one), and leaves them on afterwards."""
    hf_logging = pytest.importorskip("transformers.utils.logging")
    import gfun.cli.demo

    def command(args) -> int:
        for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
            pass
        return 0

    monkeypatch.setattr(gfun.cli.main, "cmd_info", command)
    enabled = hf_logging.is_progress_bar_enabled()
    assert main(["-q", "info", "any"]) == 0
    assert "Loading weights" not in capsys.readouterr().err
    assert hf_logging.is_progress_bar_enabled() == enabled
    if enabled:
        assert main(["info", "any"]) == 0
        assert "Loading weights" in capsys.readouterr().err


def test_demo_asks_for_the_torch_extra_only_when_it_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture) -> None:
    import pandas as pd

    import gfun.cli.demo
    import gfun.core.optional

    table = pd.DataFrame({"F1_macro": [0.3], "F1_micro": [0.4], "K_macro": [0.2], "K_micro": [0.3],
                          "fit_s": [1.0]}, index=pd.Index(["gFun-X"], name="method"))
    monkeypatch.setattr(gfun.cli.demo, "run_demo", lambda **kw: table)
    for installed in (True, False):
        monkeypatch.setattr(gfun.core.optional, "has_optional", lambda name, ok=installed: ok)
        assert main(["-q", "demo"]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        assert first.endswith("gFun-XW and gFun-XMW: gfun demo --full" if installed else
                              "after pip install 'gfun[torch]' for the m view's word vectors "
                              "(make demo-full does both)")
        assert ("gfun[torch]" in first) is not installed


def test_a_training_log_prints_plain_numbers(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    """What `gfun train` logs (views, mappers, folds, select's choice) reads as plain numbers: no `np.float64(`."""
    assert main(["train", "--train", str(files["train"]), "--classes", str(files["classes"]), "--views", "xw",
                 "--meta-C", "cv", "--model", str(files["folder"] / "model-xw")]) == 0
    messages = capsys.readouterr().err.splitlines()
    assert any("C chosen: " in m for m in messages) and any(" INFO select: validated" in m for m in messages)
    assert any("fold 1/" in m and "left" in m for m in messages)  # progress with the time left
    assert not [m for m in messages if "np." in m or "float64(" in m or "int64(" in m]


@pytest.mark.parametrize(("method", "options"), [("lri", ["--view-param", "lri.n_dimensions=400"]), ("dci", [])])
def test_train_a_crosslingual_baseline(files: dict[str, Path], method: str, options: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """gfun train takes every baseline the experiments take: trained, saved, described, loaded, evaluated and
    predicting as the estimator fitted in memory does."""
    from gfun.configuration import build_estimator
    from gfun.persistence.loading import load_model
    from gfun.predictions import prediction_records

    model = files["folder"] / f"model-{method}"
    assert main(["-q", "train", "--train", str(files["train"]), "--method", method, "--meta-C", "1",
                 "--model", str(model), *options]) == 0
    assert read_manifest(model)["estimator"] == type(build_estimator(method)).__name__
    assert main(["-q", "info", str(model)]) == 0 and method.upper() in capsys.readouterr().out.upper()
    loaded = load_model(model)
    assert loaded.get_params()["C"] == 1.0 and (method != "lri" or loaded.n_dimensions == 400)
    out = files["folder"] / f"pred-{method}.jsonl"
    assert main(["-q", "predict", "--model", str(model), "--input", str(files["test"]), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    params = {"n_dimensions": 400} if method == "lri" else {}
    fitted = build_estimator(method, meta_C=1.0, view_params={method: params}).fit(
        MultilingualCorpus.from_jsonl(files["train"]))
    in_memory = prediction_records(fitted, MultilingualCorpus.from_jsonl(files["test"]))
    assert [r["labels"] for r in lines] == [r["labels"] for r in in_memory] and any(r["labels"] for r in lines)
    capsys.readouterr()
    assert main(["-q", "evaluate", "--model", str(model), "--test", str(files["test"]), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == {"de", "en", "it", "average"} and res["average"]["F1_micro"] > 0
