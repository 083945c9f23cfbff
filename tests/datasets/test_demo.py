"""The bundled demo sample (src/gfun/datasets/data, built by benchmarks/build_demo_data.py)."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import DEMO_FILES, demo_classes, load_demo

LANGS = ["da", "de", "en", "fr", "it"]


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return load_demo()


def test_sizes_and_languages(demo: tuple[MultilingualCorpus, MultilingualCorpus]) -> None:
    train, test = demo
    assert train.languages == LANGS and test.languages == LANGS
    assert all(n >= 300 for n in train.lang_counts().values())
    assert all(n >= 100 for n in test.lang_counts().values())
    assert train.labelled and test.labelled


def test_classes(demo: tuple[MultilingualCorpus, MultilingualCorpus]) -> None:
    train, test = demo
    classes = demo_classes()
    assert 20 <= len(classes) <= 40 and len(set(classes)) == len(classes)
    assert train.classes == test.classes == tuple(classes)
    assert not any("TODO" in c for c in classes)
    assert train.Y.shape == (len(train), len(classes))
    assert (train.Y.sum(axis=0) > 0).all()  # every class has training positives
    assert train.Y.sum() / len(train) > 1.5  # multilabel


def test_no_source_shared_between_train_and_test(demo: tuple[MultilingualCorpus, MultilingualCorpus]) -> None:
    train, test = demo
    assert not set(train.extra["source"]) & set(test.extra["source"])
    owner: dict[str, str] = {}
    for src, lang in zip(train.extra["source"], train.langs, strict=True):
        assert owner.setdefault(src, lang) == lang  # non-parallel training sets
    assert len(set(train.ids)) == len(train)  # non-parallel: a package is in one training set at most
    assert all(t.strip() for t in train.texts + test.texts)


def test_files_small_and_well_formed() -> None:
    folder = resources.files("gfun.datasets").joinpath("data")
    names = [p.name for p in folder.iterdir() if p.is_file()]
    assert set(DEMO_FILES.values()) <= set(names)
    total = sum(len(folder.joinpath(n).read_bytes()) for n in names)
    assert total <= 3 * 1024 * 1024
    raw = folder.joinpath(DEMO_FILES["train"]).read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip header without a timestamp: reproducible builds
    first = json.loads(gzip.decompress(raw).decode("utf-8").split("\n", 1)[0])
    assert list(first) == ["id", "lang", "source", "text", "labels"]
    readme = folder.joinpath("demo_README.md").read_text(encoding="utf-8")
    assert "DFSG" in readme and "sha256" in readme
