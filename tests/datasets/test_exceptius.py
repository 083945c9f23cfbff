"""EXCEPTIUS loader: small fixtures in the released format, and the real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from gfun.datasets.exceptius import (
    EXCEPTIUS_CLASSES,
    EXCEPTIUS_COUNTRIES,
    load_exceptius,
    read_exceptius_file,
)
from gfun.errors import CorpusFormatError

HEADER = "id\ttext\t" + "\t".join(EXCEPTIUS_CLASSES)


def _row(row_id: str, text: str, events: set[int]) -> str:
    return "\t".join([row_id, text] + [str(i in events) for i in range(1, 9)])


def write_country(root: Path, country: str, rows: dict[str, list[str]], *,
                  final_newline: bool = True) -> None:
    folder = root / country
    folder.mkdir(parents=True, exist_ok=True)
    for split, lines in rows.items():
        body = "\n".join([HEADER, *lines]) + ("\n" if final_newline else "")
        (folder / f"{split}_or.tsv").write_text(body, encoding="utf-8")
        # the English machine translations must be ignored
        (folder / f"{split}_en.tsv").write_text(HEADER + "\n" + _row("0", "ignored", {1}) + "\n",
                                                encoding="utf-8")


@pytest.fixture()
def exceptius_dir(tmp_path: Path) -> Path:
    root = tmp_path / "exceptius"
    write_country(root, "italy", {
        "train": [_row("0", "Chiusura delle scuole.", {4}), _row("1", " Visto il decreto; ", set()),
                  _row("2", "Obbligo di mascherina e distanza.", {2, 5})],
        "dev": [_row("0", "Sospensione eventi.", {4})],
        "test": [_row("0", "Visto il decreto;", set()), _row("1", "Nuove misure.", {8})],
    })
    write_country(root, "belgium", {
        "train": [_row("0", "Les écoles sont fermées.", {4})],
        "dev": [_row("0", "Les magasins restent ouverts.", set())],
        "test": [_row("0", "Le couvre-feu commence à 22 heures.", {2})],
    })
    write_country(root, "uk", {
        "train": [_row("603", "Stay at home.", {2}), _row("759", "The regulation applies.", set())],
        "dev": [_row("12", "Protect the NHS.", {8})],
        "test": [_row("44", "Schools close.", {4})],
    }, final_newline=False)
    return root


def test_load_fixture(exceptius_dir: Path) -> None:
    s = load_exceptius(exceptius_dir)
    assert s.classes == EXCEPTIUS_CLASSES
    assert len(s.train) == 6 and len(s.dev) == 3 and len(s.test) == 4
    assert s.train.lang_counts() == {"fr": 1, "it": 3, "en": 2}
    # ids are unique across countries and splits; the country is kept
    assert s.train.ids[0] == "belgium:train:0"
    assert "italy:train:0" in s.train.ids and "uk:train:603" in s.train.ids
    assert set(s.train.extra["country"]) == {"belgium", "italy", "uk"}
    i = s.train.ids.index("italy:train:1")
    assert s.train.texts[i] == "Visto il decreto;"  # stripped
    assert s.train.labels[i] == ()  # unlabelled sentences are kept
    j = s.train.ids.index("italy:train:2")
    assert s.train.labels[j] == ("event2", "event5")
    assert s.train.Y.shape == (6, 8)
    assert all(c.classes == EXCEPTIUS_CLASSES for c in (s.dev, s.test))


def test_country_and_language_selection(exceptius_dir: Path) -> None:
    s = load_exceptius(exceptius_dir, countries=["uk"])
    assert s.train.languages == ["en"]
    s = load_exceptius(exceptius_dir, langs=["fr", "it"])
    assert s.train.languages == ["fr", "it"]
    with pytest.raises(ValueError, match="unknown EXCEPTIUS countries"):
        load_exceptius(exceptius_dir, countries=["atlantis"])
    with pytest.raises(FileNotFoundError, match="poland"):
        load_exceptius(exceptius_dir, countries=["poland"])


def test_drop_leaked(exceptius_dir: Path) -> None:
    s = load_exceptius(exceptius_dir, drop_leaked=True)
    assert "italy:test:0" not in s.test.ids  # same text as italy:train:1
    assert len(s.test) == 3


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_exceptius(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no EXCEPTIUS country"):
        load_exceptius(tmp_path / "empty")


@pytest.mark.parametrize(("lines", "match", "line", "field"), [
    ([_row("0", "ok", set()), "1\ttext\tTrue\tFalse"], "expected 10 tab-separated fields", 3, None),
    ([_row("0", "ok", set()), _row("1", "bad", set()).replace("False", "maybe", 1)], "True or False", 3,
     "event1"),
    ([_row("0", "ok", set()), _row("0", "again", set())], "duplicated id", 3, "id"),
    ([_row("0", "   ", set())], "empty text", 2, "text"),
    ([_row("", "no id", set())], "empty id", 2, "id"),
])
def test_malformed_rows(tmp_path: Path, lines: list[str], match: str, line: int, field: str | None) -> None:
    path = tmp_path / "train_or.tsv"
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=match) as info:
        read_exceptius_file(path, "italy", "train")
    assert info.value.path == str(path)
    assert info.value.line == line
    assert info.value.field == field


def test_malformed_header_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "train_or.tsv"
    path.write_text("id\ttext\tevent1\n0\tx\tTrue\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="header lacks") as info:
        read_exceptius_file(path, "italy", "train")
    assert info.value.line == 1
    path.write_bytes((HEADER + "\n").encode() + b"0\t\xff\xfe\n")
    with pytest.raises(CorpusFormatError, match="UTF-8") as info:
        read_exceptius_file(path, "italy", "train")
    assert info.value.line == 2
    path.write_bytes(b"")
    with pytest.raises(CorpusFormatError, match="header"):
        read_exceptius_file(path, "italy", "train")


# ---------------------------------------------------------------------------------------------- real data
# Sizes of the released files (train, dev, test) per country.
REAL_SIZES = {"belgium": (1045, 131, 131), "france": (371, 47, 47), "italy": (742, 93, 93),
              "uk": (648, 81, 81), "netherlands": (135, 18, 18), "norway": (221, 28, 28),
              "hungary": (75, 10, 10), "poland": (75, 10, 10)}


@pytest.fixture(scope="module")
def real(shared_data: Path):
    folder = shared_data / "exceptius"
    if not (folder / "italy" / "train_or.tsv").exists():
        pytest.skip(f"EXCEPTIUS files not found in {folder}")
    return load_exceptius(folder)


def test_real_sizes(real) -> None:
    for split_index, corpus in enumerate((real.train, real.dev, real.test)):
        countries = corpus.extra["country"]
        for country, sizes in REAL_SIZES.items():
            assert countries.count(country) == sizes[split_index], country
    assert real.train.lang_counts()["fr"] == 1045 + 371


def test_real_content(real) -> None:
    assert set(real.train.languages) == set(EXCEPTIUS_COUNTRIES.values())
    all_ids = real.train.ids + real.dev.ids + real.test.ids
    assert len(set(all_ids)) == len(all_ids)
    # many sentences have no label; every class is used in training
    n_empty = sum(1 for labs in real.train.labels if not labs)
    assert 0.3 < n_empty / len(real.train) < 0.7
    assert real.train.Y.sum(axis=0).min() > 0
    assert all(t == t.strip() and t for t in real.train.texts[::50])


def test_real_leaks(shared_data: Path, real) -> None:
    s = load_exceptius(shared_data / "exceptius", drop_leaked=True)
    assert len(real.test) - len(s.test) == 33
    assert len(real.dev) - len(s.dev) == 34
