"""Every configuration name the experiments list runs; the README's R example; Tables 6-7 and Figure 2 commands.

The configuration checks are on the bundled demo data; the README example and the recurrent experiment run on a
tiny slice of debtags run 0 (skipped without ../shared/data) with a tiny random BERT, a small GRU and hashed word
vectors written by the test.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gfun.cli.experiment import DEFAULT_CONFIGS
from gfun.cli.main import main
from gfun.cli.options import parse_view_params
from gfun.configuration import parse_config, parse_configs
from gfun.experiments.aggregation import aggregation_variants
from gfun.experiments.keys import check_key_value
from gfun.experiments.runner import CellStore, run_cells

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------- names
def _listed_names() -> set[str]:
    """Every configuration name the README, the --configs help and the defaults mention."""
    names: set[str] = set()
    for full, quick in DEFAULT_CONFIGS.values():
        names |= set(full.split(",")) | set(quick.split(","))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for m in re.finditer(r"^gfun experiment .*?--configs ([\w,\-]+)", readme, flags=re.MULTILINE):
        names |= set(m.group(1).split(","))
    import argparse

    from gfun.cli.experiment import add_experiment_parser

    parser = argparse.ArgumentParser()
    add_experiment_parser(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["experiment"]._subparsers._group_actions[0]
    help_text = next(a.help for a in sub.choices["many-shot"]._actions if "--configs" in a.option_strings)
    listed = re.sub(r"\([^()]*:[^()]*\)", "", re.search(r"configurations: (.*?), optionally", help_text).group(1))
    names |= {w for w in (x.strip() for x in re.split(r",|\(|\)", listed)) if w and w[0].isalpha() and " " not in w}
    return {n for n in names if n and n != "..."}


def test_every_listed_configuration_name_is_accepted_and_usable_as_a_cell_key() -> None:
    names = _listed_names()
    assert {"r_m", "r_mw", "xbr_m", "upper", "bert", "xmw"} <= names
    for cfg in parse_configs(sorted(names)):
        assert check_key_value("config", cfg.name) == cfg.name
    assert CellStore("/tmp/x").path({"run": 0, "config": "xbr_mw-concat"}).name == "run=0__config=xbr_mw-concat.csv"


def test_the_whole_list_is_checked_before_anything_runs() -> None:
    with pytest.raises(ValueError) as err:
        parse_configs("x,foo,r_w,xm,rx_mq,xx")
    text = str(err.value)
    assert text.startswith("4 bad configuration name(s)")
    for bad in ("'foo'", "'r_w'", "'rx_mq'", "'xx'"):
        assert bad in text
    assert "Valid names: naive, fun, bert, upper" in text and "r_m, r_mw" in text
    calls = []
    cells = [({"run": 0, "config": "x"}, lambda: calls.append(1)), ({"run": 0, "config": "a__b"}, lambda: None)]
    with pytest.raises(ValueError, match="cannot be used in a file name"):
        run_cells(CellStore("/nonexistent"), cells)
    assert not calls  # the bad key was found before the first cell ran
    for bad in ("a__b", "_a", "a_", "a b", "a=b", ".a", ""):
        with pytest.raises(ValueError):
            check_key_value("config", bad)


def test_no_silent_renaming(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="gfun.configuration"):
        assert [c.name for c in parse_configs("mx,r,upperbound,xr_mw")] == ["xm", "r_m", "upper", "xr_mw"]
    logged = caplog.text
    assert "'mx' is run and reported as 'xm'" in logged and "'r' is run and reported as 'r_m'" in logged
    assert "'upperbound' is run and reported as 'upper'" in logged and "'xr_mw'" not in logged
    variants = [c.name for c in aggregation_variants(parse_configs("xr_mw,r_m,fun"), ["concat", "mean"])]
    assert variants == ["xr_mw-concat", "xr_mw-mean", "r_m-concat", "r_m-mean", "fun"]
    assert all(parse_config(v).r_wce for v in variants[:2]) and not parse_config(variants[2]).r_wce


def test_view_param_option() -> None:
    out = parse_view_params(["r.hidden_size=16", "r.wce=true", "b.model=some/dir", "m.source=vec:x"],
                            {"m": {"source": "e5"}})
    assert out == {"r": {"hidden_size": 16, "wce": True}, "b": {"model": "some/dir"}, "m": {"source": "vec:x"}}
    for bad in ("hidden_size=16", "q.x=1", "r.=3", "r.x"):
        with pytest.raises(ValueError):
            parse_view_params([bad], None)


# ----------------------------------------------------------------------------------- debtags slice
def _hashed_vec_files(folder: Path, texts_by_lang: dict[str, list[str]], dim: int = 8) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, texts in texts_by_lang.items():
        words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
        lines = [f"{len(words)} {dim}"]
        for w in words:
            v = np.random.RandomState(int(hashlib.md5(w.encode()).hexdigest()[:8], 16)).randn(dim)
            lines.append(w + " " + " ".join(f"{x:.4f}" for x in v))
        (folder / f"wiki.multi.{lang}.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def neural_slice(debtags_dir, tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    from gfun.datasets.debtags import load_debtags
    from neural_fixtures import tiny_bert_folder

    r = load_debtags(0, debtags_dir)
    texts = {lang: r.train.select(lang).texts + r.test.select(lang).texts for lang in ("da", "de")}
    root = tmp_path_factory.mktemp("slice")
    return {"vec": _hashed_vec_files(root / "vec", texts),
            "bert": tiny_bert_folder(root / "bert", texts["da"][:200] + texts["de"][:200], hidden=16, layers=2),
            "data": str(debtags_dir)}


def _tiny_neural_options(s: dict) -> list[str]:
    return ["--data-dir", s["data"], "--runs", "1", "--sample", "10,5,2", "--meta-C", "1", "--no-plots",
            "--word-vectors", f"vec:{s['vec']}", "--encoder", str(s["bert"]), "--neural-preset", "cpu",
            "--device", "cpu", "--view-param", "b.max_length=32", "--view-param", "b.max_epochs=1",
            "--view-param", "b.head_epochs=2", "--view-param", "r.hidden_size=8",
            "--view-param", "r.max_epochs=2", "--view-param", "r.batch_size=8"]


@pytest.mark.torch
def test_the_readme_r_example_runs(neural_slice, tmp_path, capsys) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in readme.splitlines() if ln.startswith("gfun experiment") and "r_m" in ln)
    argv = shlex.split(line.split("#")[0])[1:]
    out = tmp_path / "out"
    assert main([*argv, *_tiny_neural_options(neural_slice), "--out", str(out)]) == 0
    configs = argv[argv.index("--configs") + 1].split(",")
    table = pd.read_csv(out / "many-shot-debtags.csv")
    assert len(table) == len(configs) and table.filter(like="_mean").notna().all().all()
    for name in configs:
        assert (out / "cells" / "many-shot" / f"run=0__config={parse_config(name).name}.csv").is_file()


@pytest.mark.torch
def test_recurrent_experiment_tables_6_7(neural_slice, tmp_path, capsys) -> None:
    out = tmp_path / "rec"
    argv = ["experiment", "recurrent", "--dataset", "debtags", "--configs", "r_m,r_mw,xr_mw", "--reference", "x",
            *_tiny_neural_options(neural_slice), "--out", str(out)]
    assert main(argv) == 0
    md = (out / "recurrent-debtags.md").read_text(encoding="utf-8")
    assert "Tables 6-7" in md
    for label in ("gFun-R_M |", "gFun-R_MW |", "gFun-XR_MW |", "gFun-X |"):
        assert label in md
    assert sorted(p.name for p in (out / "cells" / "recurrent").glob("*.csv")) == [
        "run=0__config=r_m.csv", "run=0__config=r_mw.csv", "run=0__config=x.csv", "run=0__config=xr_mw.csv"]
    capsys.readouterr()
    assert main(["experiment", "recurrent", "--dataset", "debtags", "--configs", "r_m,xm", "--out",
                 str(tmp_path / "bad")]) == 1
    assert "xm have none: give them as --reference" in capsys.readouterr().err


# --------------------------------------------------------------------------------------- Figure 2
def test_plot_wce_writes_a_png(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    from PIL import Image

    from gfun.datasets.demo import load_demo

    train, _ = load_demo()
    path = tmp_path / "train.jsonl"
    train.to_jsonl(path)
    out = tmp_path / "wce.png"
    assert main(["plot", "wce", "--train", str(path), "--top", "2", "--out", str(out)]) == 0
    assert f"written to {out}" in capsys.readouterr().out
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size[0] > 200 and im.size[1] > 200
    # chosen words and classes; an unknown word is one error line
    word = next(w for w in train.texts[0].split() if w.isalpha() and len(w) > 4)
    lang = train.langs[0]
    cls = list(train.classes)[:2]
    out2 = tmp_path / "wce2.png"
    assert main(["plot", "wce", "--train", str(path), "--words", f"{lang}:{word}", "--show-classes", ",".join(cls),
                 "--out", str(out2)]) == 0 and out2.is_file()
    assert main(["plot", "wce", "--train", str(path), "--words", f"{lang}:zzqqxxnotaword", "--out",
                 str(tmp_path / "no.png")]) == 1
    assert "not in the training vocabulary" in capsys.readouterr().err


def test_wce_figure_rows_are_the_views_embeddings(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from gfun.datasets.demo import load_demo
    from gfun.experiments.wce_plot import top_wce_terms, wce_figure
    from gfun.views.wce import WordClassEmbeddingView

    train, _ = load_demo()
    view = WordClassEmbeddingView().fit(list(train.texts), np.asarray(train.langs, dtype=object), train.Y)
    lang = sorted(view.languages_)[0]
    top = top_wce_terms(view, lang, 3)
    peaks = [row.max() for _, row in top]
    assert peaks == sorted(peaks, reverse=True) and peaks[0] == view.matrices_[lang].max()
    fig = wce_figure(None, tmp_path / "f.png", model=view, languages=[lang], top=3)
    image = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(np.asarray(image), np.vstack([r for _, r in top]))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [f"{t} ({lang})" for t, _ in top]


def test_plot_wce_from_a_saved_model(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    from gfun.datasets.demo import load_demo
    from gfun.funnelling.generalized import GeneralizedFunnelling

    train, _ = load_demo()
    small = train.subset(np.arange(0, len(train), 5))
    GeneralizedFunnelling(views="xw", aggregation="mean", meta_C=1.0, random_state=0).fit(small).save(tmp_path / "xw")
    GeneralizedFunnelling(views="x", meta_C=1.0, random_state=0).fit(small).save(tmp_path / "x")
    out = tmp_path / "wce.png"
    assert main(["plot", "wce", "--model", str(tmp_path / "xw"), "--top", "2", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    capsys.readouterr()
    assert main(["plot", "wce", "--model", str(tmp_path / "x"), "--out", str(tmp_path / "no.png")]) == 1
    assert "no word-class embeddings (W) view" in capsys.readouterr().err
    assert main(["plot", "wce", "--out", str(tmp_path / "no.png")]) == 1
