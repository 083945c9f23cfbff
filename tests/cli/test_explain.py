"""``gfun explain`` end to end on a sample of the bundled demo data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus, read_corpus
from gfun.datasets.demo import load_demo
from gfun.persistence.loading import load_model

NAIVE = Path(__file__).parents[1] / "persistence" / "fixtures" / "naive"


def _first(corpus: MultilingualCorpus, n: int, langs: tuple[str, ...]) -> MultilingualCorpus:
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in langs])
    return corpus.subset(np.sort(idx))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gFun-XP model trained by ``gfun train`` on 50 documents in each of de, en, it, and 3 test documents in each
    of de and fr (French: a language without training documents, served by P alone)."""
    train, test = load_demo()
    path = tmp_path_factory.mktemp("explain")
    _first(train, 50, ("de", "en", "it")).to_jsonl(path / "train.jsonl")
    _first(test, 3, ("de", "fr")).to_jsonl(path / "test.jsonl")
    assert main(["-q", "train", "--train", str(path / "train.jsonl"), "--views", "xp", "--aggregation", "mean",
                 "--meta-C", "1", "--model", str(path / "model")]) == 0
    return path


def test_gfun_explain_names_views_and_words(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "explain", "--model", str(folder / "model"), "--input", str(folder / "test.jsonl"),
                 "--top-words", "3"]) == 0
    out = capsys.readouterr().out
    docs = read_corpus(folder / "test.jsonl")
    model = load_model(folder / "model")
    explained = model.explain(docs, top_words=3)
    assert out.strip() == explained.to_text()
    i = docs.langs.index("de")  # a German document: X and P both used, each with its words
    first = explained[i]
    assert f"document {first.id} (de): " in out
    label = first.explained[0]
    assert f"  {label.label}: decision {label.decision:+.3f} = base {label.base_value:+.3f} X " in out
    x, p = label.views
    assert f"    X  {x.contribution:+.3f}" in out and f"    P  {p.contribution:+.3f}" in out
    word = (x.words_up or x.words_down)[0].words[0]
    assert word in docs.texts[i] and word in out
    assert "    X  0 (does not serve 'fr')" in out  # the French documents


def test_gfun_explain_jsonl_adds_up_to_the_decisions(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = folder / "explained.jsonl"
    assert main(["-q", "explain", "--model", str(folder / "model"), "--input", str(folder / "test.jsonl"),
                 "--output", str(out), "--top-k", "4"]) == 0
    assert "wrote explanations of 6 documents" in capsys.readouterr().out
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    model = load_model(folder / "model")
    docs = read_corpus(folder / "test.jsonl")
    decision = model.decision_function(docs)
    assert [rec["id"] for rec in lines] == docs.ids
    for i, rec in enumerate(lines):
        assert len(rec["explained"]) == 4
        for lab in rec["explained"]:
            j = model.classes_.index(lab["label"])
            total = lab["base_value"] + sum(v["contribution"] for v in lab["views"])
            assert total == pytest.approx(decision[i, j], abs=1e-8)
            assert [v["view"] for v in lab["views"]] == ["x", "p"]


def test_gfun_explain_refusals_are_one_line(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["-q", "explain", "--model", str(folder / "model"), "--input", str(folder / "test.jsonl")]
    assert main([*args, "--labels", "no::such-label"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gfun explain: error: unknown label(s) ['no::such-label']") and err.count("\n") == 1
    assert main(["-q", "explain", "--model", str(NAIVE), "--input", str(folder / "test.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "a NaiveClassifier model has no views to explain" in err and err.count("\n") == 1


def test_gfun_explain_reads_what_gfun_predict_reads(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Documents without an id are numbered, documents without a language have it detected (the langid extra)."""
    pytest.importorskip("py3langid")
    docs = read_corpus(folder / "test.jsonl").select(["de"])
    path = folder / "bare.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in docs.texts[:2]), encoding="utf-8")
    assert main(["-q", "explain", "--model", str(folder / "model"), "--input", str(path), "--output", "-"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(rec["id"], rec["lang"]) for rec in lines] == [("0", "de"), ("1", "de")]
