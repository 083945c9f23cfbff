"""Bilingual dictionaries (gfun.wordvectors.dictionaries): dictd files, pair files, held-out splits."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gfun.wordvectors.dictionaries import freedict_pairs, parse_dictd_entry, read_dictd, read_pairs, split_pairs


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(n: int) -> str:
    out = ""
    while True:
        out = _B64[n % 64] + out
        n //= 64
        if not n:
            return out


ENTRIES = {
    "cat": "cat /kæt/ <n>\n1. gatto, micio\ndomestic animal\n2. felino 2.\nany feline\n 3.\nanother gloss\n",
    "dog": "dog /dɒɡ/\ncane\n",
    "house": "house /haʊs/ <n>\ncasa, [[abitazione|abitazioni]], casa di campagna\na building\n",
    "the": "the /ðə/\nil (article)\n",
}


def _write_dictd(folder: Path, name: str, entries: dict[str, str], *, compress: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = "00-database-info\nA test dictionary\n"
    data, index = header, [f"00databaseinfo\t{_b64(0)}\t{_b64(len(header.encode()))}"]
    for head, text in entries.items():
        start = len(data.encode())
        data += text
        index.append(f"{head}\t{_b64(start)}\t{_b64(len(text.encode()))}")
    raw = data.encode()
    if compress:
        (folder / f"{name}.dict.dz").write_bytes(gzip.compress(raw))
    else:
        (folder / f"{name}.dict").write_bytes(raw)
    (folder / f"{name}.index").write_text("\n".join(index) + "\n", encoding="utf-8")
    return folder / f"{name}.index"


def test_parse_dictd_entry_skips_definitions():
    head, trans = parse_dictd_entry(ENTRIES["cat"])
    assert head == "cat"
    assert trans == ["gatto", "micio", "felino"]


def test_read_dictd_and_pairs(tmp_path):
    index = _write_dictd(tmp_path / "dictd", "freedict-eng-ita", ENTRIES)
    entries = read_dictd(index)
    assert entries["house"] == ["casa", "abitazioni", "casa di campagna"]
    assert entries["the"] == ["il"]
    pairs = read_pairs(index)
    assert ("house", "casa di campagna") not in pairs and ("house", "casa") in pairs
    assert ("cat", "micio") in pairs
    # uncompressed .dict, and the reverse direction joined by freedict_pairs
    _write_dictd(
        tmp_path / "dictd", "freedict-ita-eng", {"cane": "cane /kane/\ndog, hound\n"}, compress=False
    )
    both = freedict_pairs("en", "it", dictd_dir=tmp_path / "dictd")
    assert ("hound", "cane") in both and ("dog", "cane") in both
    assert both.count(("dog", "cane")) == 1
    with pytest.raises(FileNotFoundError, match="dict-freedict-eng-fin"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")


def test_read_pairs_text_files(tmp_path):
    tsv = tmp_path / "d.tsv"
    tsv.write_text("Cat\tGatto\n# comment\ndog\tcane\nice cream\tgelato\n\nbad\n", encoding="utf-8")
    assert read_pairs(tsv) == [("cat", "gatto"), ("dog", "cane")]
    muse = tmp_path / "d.txt"
    muse.write_text("cat gatto\ncat micio\n", encoding="utf-8")
    assert read_pairs(muse) == [("cat", "gatto"), ("cat", "micio")]


def test_split_pairs_holds_out_whole_source_words():
    pairs = [(f"w{i}", f"t{i}{j}") for i in range(50) for j in range(2)]
    train, test = split_pairs(pairs, 10, seed=3)
    test_src = {a for a, _ in test}
    assert len(test_src) == 10 and len(test) == 20
    assert not test_src & {a for a, _ in train}
    assert split_pairs(pairs, 10, seed=3) == (train, test)
