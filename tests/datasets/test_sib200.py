"""SIB-200 loader: small fixtures in the released format, and the real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from gfun.datasets.sib200 import (
    SIB200_CATEGORIES,
    SIB200_LANGS,
    load_sib200,
    read_sib200_file,
    resolve_sib200_dir,
    undo_double_quoting,
)
from gfun.errors import CorpusFormatError

ROWS = {
    "train": [("7", "sports", "The team won."), ("3", "travel", 'He said "go home" twice.'),
              ("9", "health", "Wash your hands.")],
    "dev": [("11", "politics", "The vote failed.")],
    "test": [("20", "geography", "Seas surround Turkey."), ("21", "science/technology", "Radar improved.")],
}


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if '"' in text else text


def write_sib200(root: Path, dirs: dict[str, str]) -> Path:
    """One folder per language; ``dirs`` maps folder name -> text prefix."""
    for name, prefix in dirs.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for split, rows in ROWS.items():
            lines = ["index_id\tcategory\ttext"] + [f"{i}\t{c}\t{_quote(prefix + t)}" for i, c, t in rows]
            (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture()
def sib_dir(tmp_path: Path) -> Path:
    return write_sib200(tmp_path / "sib200", {"eng_Latn": "", "ita_Latn": "IT ", "fin_Latn": "FI "})


def test_load_fixture(sib_dir: Path) -> None:
    s = load_sib200(sib_dir, ["en", "it", "fi"])
    assert s.classes == SIB200_CATEGORIES
    assert len(s.train) == 9 and len(s.dev) == 3 and len(s.test) == 6
    assert s.train.languages == ["en", "fi", "it"]
    i = s.train.ids.index("en:3")
    assert s.train.texts[i] == 'He said "go home" twice.'  # CSV quoting undone
    assert s.train.labels[i] == ("travel",)
    assert s.train.extra["index_id"][i] == "3"
    # parallel: the same index_id in every language
    by_lang = {g: sorted(s.test.extra["index_id"][k] for k in idx) for g, idx in s.test.by_language().items()}
    assert by_lang["en"] == by_lang["it"] == by_lang["fi"] == ["20", "21"]
    assert s.train.Y.sum(axis=1).max() == 1  # single-label


def test_language_codes(sib_dir: Path) -> None:
    assert resolve_sib200_dir(sib_dir, "en") == ("en", sib_dir / "eng_Latn")
    assert resolve_sib200_dir(sib_dir, "eng_Latn") == ("en", sib_dir / "eng_Latn")
    assert resolve_sib200_dir(sib_dir, "ita") == ("it", sib_dir / "ita_Latn")
    with pytest.raises(FileNotFoundError, match="eng_Latn"):  # lists what is present
        resolve_sib200_dir(sib_dir, "de")
    with pytest.raises(FileNotFoundError, match="no directory for language 'da'"):
        load_sib200(sib_dir)  # the default eleven languages are not all there


def test_train_langs(sib_dir: Path) -> None:
    s = load_sib200(sib_dir, ["en", "it", "fi"], train_langs=["en"])
    assert s.train.languages == ["en"]
    assert s.test.languages == ["en", "fi", "it"]
    with pytest.raises(ValueError, match="not among"):
        load_sib200(sib_dir, ["en", "it"], train_langs=["fi"])


@pytest.mark.parametrize(("body", "match", "line", "field"), [
    ("index_id\tcategory\ttext\n1\tsports\tok\n2\tcooking\tnot a topic\n", "unknown category", 3, "category"),
    ("index_id\tcategory\ttext\n1\tsports\tok\n2\tsports\n", "expected 3 tab-separated fields", 3, None),
    ("index_id\tcategory\ttext\n1\tsports\tok\n1\tsports\tagain\n", "duplicated index_id", 3, "index_id"),
    ("index_id\tcategory\ttext\n1\tsports\t\n", "empty field", 2, "text"),
    ("index_id\tcategory\ttext\n1\tsports\tok\n2\tsports\t\"unclosed\" quote\n", "bad quoting", 3, None),
    ("index_id\tlabel\ttext\n1\tsports\tok\n", "header lacks", 1, None),
])
def test_malformed(tmp_path: Path, body: str, match: str, line: int, field: str | None) -> None:
    path = tmp_path / "train.tsv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=match) as info:
        read_sib200_file(path, "en")
    assert info.value.path == str(path)
    assert info.value.line == line
    assert info.value.field == field


def test_double_quoting(tmp_path: Path) -> None:
    assert undo_double_quoting('"He said ""no"" twice."') == 'He said "no" twice.'
    assert undo_double_quoting('"""Yes,"" she said."') == '"Yes," she said.'
    assert undo_double_quoting('"Quoted sentence."') == '"Quoted sentence."'  # no inner pair: genuine
    assert undo_double_quoting('"a "b" c"') == '"a "b" c"'
    path = tmp_path / "train.tsv"
    path.write_text('index_id\tcategory\ttext\n1\tsports\t"""Er sagte, """"nein"""" zweimal."""\n',
                    encoding="utf-8")
    assert read_sib200_file(path, "de")[0]["text"] == 'Er sagte, "nein" zweimal.'
    assert read_sib200_file(path, "de", fix_quotes=False)[0]["text"] == '"Er sagte, ""nein"" zweimal."'


def test_quoted_field_spanning_lines(tmp_path: Path) -> None:
    path = tmp_path / "train.tsv"
    path.write_text('index_id\tcategory\ttext\n1\tsports\t"two\nlines"\n2\thealth\tok\n3\tsports\tbad\tx\n',
                    encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        read_sib200_file(path, "en")
    assert info.value.line == 5  # line numbers count physical lines


# ---------------------------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def real(shared_data: Path):
    folder = shared_data / "sib200"
    if not (folder / "eng_Latn" / "train.tsv").exists():
        pytest.skip(f"SIB-200 files not found in {folder}")
    return load_sib200(folder)


def test_real_sizes(real) -> None:
    assert real.train.languages == sorted(SIB200_LANGS)
    for corpus, n in ((real.train, 701), (real.dev, 99), (real.test, 204)):
        assert set(corpus.lang_counts().values()) == {n}
    assert real.train.Y.sum(axis=0).min() > 0


def test_real_parallel(real) -> None:
    # sample a few sentences: same index_id -> same category in every language, different texts
    rng_ids = real.test.extra["index_id"][:204:40]
    for index_id in rng_ids:
        rows = [k for k, v in enumerate(real.test.extra["index_id"]) if v == index_id]
        assert len(rows) == len(SIB200_LANGS)
        assert len({real.test.labels[k] for k in rows}) == 1
        assert len({real.test.texts[k] for k in rows}) > 5
    assert sum(t.startswith('"') for t in real.train.texts) > 10  # quoted texts are unquoted correctly
    assert not any('""' in t for t in real.train.texts + real.dev.texts + real.test.texts)


def test_real_double_quoting(shared_data: Path, real) -> None:
    raw = load_sib200(shared_data / "sib200", ["de", "en"], fix_quotes=False)
    k = raw.train.ids.index("de:76")
    assert '""geltende Rechtsprechung des Landes""' in raw.train.texts[k]
    k = real.train.ids.index("de:76")
    assert real.train.texts[k].startswith("Allerdings wiederholte er")
    assert '"geltende Rechtsprechung des Landes"' in real.train.texts[k]
