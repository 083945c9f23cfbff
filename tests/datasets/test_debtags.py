"""The debtags loader: against the reference builder (../shared/tools/build_debtags.py), on tiny archives."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import lz4.frame
import numpy as np
import pytest

from gfun.datasets import debtags as dt
from gfun.datasets.debian_archive import description_text, parse_deb822
from gfun.datasets.debtags import DEBTAGS_MANY_SHOT, DEBTAGS_ZERO_SHOT, DebtagsRun, load_debtags, write_debtags_run
from gfun.datasets.stats import debtags_stats, format_stats_table
from tests.conftest import SHARED_DATA

REFERENCE = SHARED_DATA.parent / "tools" / "build_debtags.py"
SPLITS = ("train", "test", "test_zeroshot")
RUNS = [0, pytest.param(3, marks=pytest.mark.slow)]


def _reference_module() -> ModuleType:
    if not REFERENCE.is_file():
        pytest.skip(f"reference builder not found at {REFERENCE}")
    spec = importlib.util.spec_from_file_location("_build_debtags_reference", REFERENCE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# ---------------------------------------------------------------------------------------- the real archive
class _Runs:
    """Reference outputs and our runs, built on demand (the reference in a subprocess, ours meanwhile)."""

    def __init__(self, data: Path, out: Path) -> None:
        self.data, self.out = data, out
        self.ours: dict[int, DebtagsRun] = {}

    def get(self, run: int) -> tuple[Path, DebtagsRun]:
        ref_dir = self.out / f"run{run}"
        if run not in self.ours:
            cmd = [sys.executable, str(REFERENCE), "--data", str(self.data), "--out", str(self.out),
                   "--run", str(run)]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                self.ours[run] = load_debtags(run, self.data)
            finally:
                _, err = proc.communicate(timeout=900)
            assert proc.returncode == 0, f"reference run {run} failed:\n{err.decode()}"
        return ref_dir, self.ours[run]


@pytest.fixture(scope="module")
def runs(debtags_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> _Runs:
    if not REFERENCE.is_file():
        pytest.skip(f"reference builder not found at {REFERENCE}")
    return _Runs(debtags_dir, tmp_path_factory.mktemp("debtags_reference"))


@pytest.mark.parametrize("run", RUNS)
def test_same_documents_as_reference(run: int, runs: _Runs) -> None:
    ref_dir, ours = runs.get(run)
    assert json.loads((ref_dir / "classes.json").read_text(encoding="utf-8")) == ours.classes
    for split in SPLITS:
        ref = _read_jsonl(ref_dir / f"{split}.jsonl")
        corpus = getattr(ours, split)
        assert corpus.classes == tuple(ours.classes)
        assert [r["id"] for r in ref] == corpus.ids
        assert [r["lang"] for r in ref] == corpus.langs
        assert [r["source"] for r in ref] == corpus.extra["source"]
        assert [r["text"] for r in ref] == corpus.texts
        assert [r["labels"] for r in ref] == [list(x) for x in corpus.labels]
    assert ours.test_zeroshot.languages == sorted(DEBTAGS_ZERO_SHOT)
    assert ours.train.languages == sorted(DEBTAGS_MANY_SHOT)
    assert len(ours.classes) == 73 and not any("TODO" in c for c in ours.classes)


@pytest.mark.parametrize("run", RUNS)
def test_written_files_identical(run: int, runs: _Runs, tmp_path: Path) -> None:
    ref_dir, ours = runs.get(run)
    write_debtags_run(ours, tmp_path)
    for name in ("train.jsonl", "test.jsonl", "test_zeroshot.jsonl", "classes.json", "stats.json"):
        assert (tmp_path / name).read_bytes() == (ref_dir / name).read_bytes(), name


def test_protocol_properties(runs: _Runs) -> None:
    r = runs.get(0)[1]
    train_src = {}
    for s, g in zip(r.train.extra["source"], r.train.langs, strict=True):
        assert train_src.setdefault(s, g) == g  # non-parallel training sets
    assert not set(r.test.extra["source"]) & set(train_src)
    assert not set(r.test_zeroshot.extra["source"]) & set(train_src)
    counts = r.train.lang_counts()
    assert all(counts[g] <= 1000 for g in DEBTAGS_MANY_SHOT)
    assert r.info["order"] == sorted(DEBTAGS_MANY_SHOT, key=lambda g: (r.info["eligible"][g], g))
    assert list(r.info["class_df_train"]) == r.classes
    assert set(r.info["checksums"]) == {"Packages.lz4"} | {
        f"Translation-{g}.lz4" for g in DEBTAGS_MANY_SHOT + DEBTAGS_ZERO_SHOT}
    other = load_debtags(3, runs.data)  # only the sampling: the parsed files are cached
    assert other.train.ids != r.train.ids and other.info["eligible"] == r.info["eligible"]


def test_second_load_uses_cache(runs: _Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    first = runs.get(0)[1]
    load_debtags(0, runs.data)  # parses the archive unless an earlier test left it parsed

    def no_reading(path: Path) -> None:
        raise AssertionError(f"{path} read again although its parsed content is cached")

    monkeypatch.setattr(dt, "_read_file", no_reading)  # behaviour, not a timed assert (flaky on a busy machine)
    r = load_debtags(0, runs.data)
    assert r.train.ids == first.train.ids and r is not first


def test_stats_table(runs: _Runs) -> None:
    r = runs.get(0)[1]
    df = debtags_stats(r)
    assert list(df.index) == list(DEBTAGS_MANY_SHOT + DEBTAGS_ZERO_SHOT) + ["all"]
    assert df.loc["all", "train"] == len(r.train) == df.loc[list(DEBTAGS_MANY_SHOT), "train"].sum()
    assert df.loc["all", "test"] == len(r.test)
    assert df.loc[list(DEBTAGS_ZERO_SHOT), "test"].sum() == len(r.test_zeroshot)
    assert (df.loc[list(DEBTAGS_ZERO_SHOT), "train"] == 0).all()
    assert df.loc["all", "ave_cls"] == pytest.approx(r.train.Y.sum() / len(r.train))
    text = format_stats_table(df)
    assert text.splitlines()[0].split()[:2] == ["lang", "role"]
    assert all(g in text for g in DEBTAGS_MANY_SHOT + DEBTAGS_ZERO_SHOT)


# ---------------------------------------------------------------------------------------- tiny archives
PACKAGES = """\
Package: alpha
Source: alpha-src (1.0-1)
Version: 1.0
Description: alpha short
Description-md5: a1
Tag: use::editing, works-with::text,
 interface::x11
\t

Package: alpha-data
Source: alpha-src
Description-md5: a2
Tag: use::editing, works-with::text

Package: beta
Description-md5: b1
Tag: role::program, suite::TODO-x

Package: gamma
Description-md5: g1

Package: delta
Description-md5: d1
Tag: role::program
Package-List:
 delta deb misc optional
"""


def _translation(lang: str, records: list[tuple[str, str, str]]) -> str:
    return "\n".join(f"Package: {p}\nDescription-md5: {m}\nDescription-{lang}: {d}\n" for p, m, d in records)


def _write(path: Path, text: str, compress: bool = True) -> None:
    data = text.encode("utf-8")
    if compress:
        path.with_name(path.name + ".lz4").write_bytes(lz4.frame.compress(data))
    else:
        path.write_bytes(data)


def test_parse_deb822_continuations_and_blank_lines() -> None:
    recs = list(parse_deb822(PACKAGES))
    assert [r["Package"] for r in recs] == ["alpha", "alpha-data", "beta", "gamma", "delta"]
    assert recs[0]["Tag"] == "use::editing, works-with::text,\n interface::x11"
    assert recs[0]["Source"] == "alpha-src (1.0-1)"
    assert recs[4]["Package-List"] == "\n delta deb misc optional"
    only = list(parse_deb822(PACKAGES, keys=("Package", "Tag")))
    assert set(only[0]) == {"Package", "Tag"}
    # a line of blanks ends a paragraph; a continuation line before any field is ignored
    assert list(parse_deb822(" stray\nA: 1\n \t \nB: 2\n\tmore\n")) == [{"A": "1"}, {"B": "2\n\tmore"}]


def test_description_text() -> None:
    value = "  Short  \n First line.  \n .\n  Indented\n .\n"
    assert description_text(value) == "Short\nFirst line.\n\n Indented"
    assert description_text("only short") == "only short\n"
    assert description_text("short\n .") == "short\n"


def _tiny_archive(root: Path, compress: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _write(root / "Packages", PACKAGES, compress)
    xx = [("alpha", "a1", "Alpha xx\n first paragraph\n .\n second"),
          ("alpha-data", "a2", "Alpha data xx"),
          ("beta", "OLD", "Beta outdated translation"),  # md5 mismatch: excluded
          ("beta", "b1", "Beta xx"),  # a later record with the right md5 is used
          ("delta", "d1", "Alpha data xx"),  # same text as alpha-data: dropped (alpha-data < delta)
          ("gamma", "g1", "Gamma has no tags")]  # untagged: excluded
    _write(root / "Translation-xx", _translation("xx", xx), compress)
    yy = [("alpha", "a1", "Alpha yy"), ("beta", "b1", "Beta yy"), ("delta", "b1", "Delta yy")]
    _write(root / "Translation-yy", _translation("yy", yy), compress)
    zz = [("alpha", "a1", "Alpha zz"), ("beta", "b1", "Beta zz"), ("delta", "d1", "Delta zz")]
    _write(root / "Translation-zz", _translation("zz", zz), compress)
    return root


@pytest.mark.parametrize("compress", [True, False])
def test_tiny_archive_eligibility(tmp_path: Path, compress: bool) -> None:
    root = _tiny_archive(tmp_path / "d", compress)
    r = load_debtags(0, root, n_classes=10, max_train=10, max_test=10, many_shot=("xx", "yy"),
                     zero_shot=("zz",))
    assert r.info["eligible"] == {"xx": 3, "yy": 2, "zz": 3}
    docs = {(d.lang, d.id): d for d in list(r.train) + list(r.test) + list(r.test_zeroshot)}
    if ("xx", "alpha") in docs:
        assert docs["xx", "alpha"].text == "Alpha xx\nfirst paragraph\n\nsecond"
        assert docs["xx", "alpha"].extra["source"] == "alpha-src"
    assert ("xx", "delta") not in docs and ("xx", "gamma") not in docs
    assert ("yy", "delta") not in docs  # md5 of another package's description: excluded
    assert not any("TODO" in c for c in r.classes)
    assert set(r.classes) <= {"use::editing", "works-with::text", "interface::x11", "role::program"}
    ext = ".lz4" if compress else ""
    assert set(r.info["checksums"]) == {f"Packages{ext}", f"Translation-xx{ext}", f"Translation-yy{ext}",
                                        f"Translation-zz{ext}"}


def test_duplicate_md5_keeps_smallest_name(tmp_path: Path) -> None:
    root = _tiny_archive(tmp_path / "d")
    pk = PACKAGES.replace("Description-md5: d1", "Description-md5: b1")
    _write(root / "Packages", pk)
    _write(root / "Translation-xx", _translation("xx", [("delta", "b1", "Delta"), ("beta", "b1", "Beta")]))
    r = load_debtags(0, root, n_classes=5, many_shot=("xx",), zero_shot=())
    assert r.info["eligible"] == {"xx": 1}
    assert (list(r.train) + list(r.test))[0].id == "beta"


def test_missing_files(tmp_path: Path) -> None:
    root = _tiny_archive(tmp_path / "d")
    with pytest.raises(FileNotFoundError, match=r"Translation-qq.*" + str(root).replace("\\", "\\\\")):
        load_debtags(0, root, many_shot=("xx",), zero_shot=("qq",))
    (root / "Packages.lz4").unlink()
    with pytest.raises(FileNotFoundError, match="Packages"):
        load_debtags(0, root, many_shot=("xx",), zero_shot=())
    with pytest.raises(FileNotFoundError, match="not found"):
        load_debtags(0, tmp_path / "nowhere")


def test_apt_file_names(tmp_path: Path) -> None:
    plain = _tiny_archive(tmp_path / "plain")
    apt = tmp_path / "apt"
    apt.mkdir()
    prefix = "deb.debian.org_debian_dists_bookworm_main_"
    (apt / f"{prefix}binary-amd64_Packages.lz4").write_bytes((plain / "Packages.lz4").read_bytes())
    for lang in ("xx", "yy"):
        data = lz4.frame.decompress((plain / f"Translation-{lang}.lz4").read_bytes())
        (apt / f"{prefix}i18n_Translation-{lang}").write_bytes(data)  # uncompressed, as apt may keep them
    (apt / f"{prefix}binary-amd64_Packages.diff_Index").write_text("not a Packages file")
    kw = {"n_classes": 5, "many_shot": ("xx", "yy"), "zero_shot": ()}
    a, b = load_debtags(1, plain, **kw), load_debtags(1, apt, **kw)
    assert (a.train.ids, a.test.ids, a.classes) == (b.train.ids, b.test.ids, b.classes)
    assert f"{prefix}i18n_Translation-xx" in b.info["checksums"]


def test_data_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tiny_archive(tmp_path / "debtags")
    monkeypatch.setenv("GFUN_DATA", str(tmp_path))
    r = load_debtags(0, many_shot=("xx",), zero_shot=("zz",))
    assert r.info["data_dir"] == str(tmp_path / "debtags")


def test_cache_sees_changed_files(tmp_path: Path) -> None:
    root = _tiny_archive(tmp_path / "d")
    kw = {"many_shot": ("zz",), "zero_shot": ()}
    before = load_debtags(0, root, **kw)
    assert before.info["eligible"] == {"zz": 3}
    path = root / "Translation-zz.lz4"
    _write(root / "Translation-zz", _translation("zz", [("alpha", "a1", "Alpha zz")]))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert load_debtags(0, root, **kw).info["eligible"] == {"zz": 1}


# ---------------------------------------------------------------------------------------- random archives
def _random_archive(root: Path, seed: int, langs: tuple[str, ...]) -> None:
    """A synthetic archive with the awkward cases (shared sources, stale md5s, duplicates, TODO tags)."""
    rng = np.random.RandomState(seed)
    tags = [f"facet{i // 4}::t{i}" for i in range(12)] + ["x::TODO", "TODO::y"]
    sources = [f"src{i}" for i in range(60)]
    records, names = [], []
    for i in range(160):
        name = f"pkg{rng.randint(1000):03d}"
        names.append(name)
        lines = [f"Package: {name}"]
        if rng.rand() < 0.7:
            lines.append(f"Source: {sources[rng.randint(len(sources))]} (1.{i})")
        lines.append(f"Description-md5: m{rng.randint(200)}")
        if rng.rand() < 0.85:
            picked = sorted(set(rng.choice(tags, size=rng.randint(1, 6))))
            half = len(picked) // 2
            sep = ",\n " if half else ""
            lines.append("Tag: " + ", ".join(picked[:half]) + sep + ", ".join(picked[half:]))
        records.append("\n".join(lines) + "\n")
    _write(root / "Packages", "\n".join(records))
    for lang in langs:
        n = rng.randint(20, 150)
        recs = []
        for _ in range(n):
            name = names[rng.randint(len(names))]
            md5 = f"m{rng.randint(200)}"
            text = f"{name} in {lang} {rng.randint(40)}\n body {rng.randint(5)}\n .\n more  "
            recs.append((name, md5, text))
        _write(root / f"Translation-{lang}", _translation(lang, recs))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_archives_match_reference(tmp_path: Path, seed: int) -> None:
    ref = _reference_module()
    root = tmp_path / "arch"
    root.mkdir()
    langs = tuple(ref.MANY_SHOT) + tuple(ref.ZERO_SHOT)
    _random_archive(root, seed, langs)
    for run in (0, 5):
        splits, classes, _ = ref.build_run(str(root), run)
        ours = load_debtags(run, root, n_classes=ref.N_CLASSES, max_train=ref.MAX_TRAIN,
                            max_test=ref.MAX_TEST, many_shot=ref.MANY_SHOT, zero_shot=ref.ZERO_SHOT)
        assert classes == ours.classes
        for split in SPLITS:
            got = [{"id": d.id, "lang": d.lang, "source": d.extra["source"], "text": d.text,
                    "labels": list(d.labels)} for d in getattr(ours, split)]
            assert got == [dict(x) for x in splits[split]], split


def test_small_sizes_respected(tmp_path: Path) -> None:
    root = tmp_path / "arch"
    root.mkdir()
    _random_archive(root, 7, ("aa", "bb", "cc"))
    r = load_debtags(2, root, n_classes=4, max_train=5, max_test=3, many_shot=("aa", "bb"), zero_shot=("cc",))
    assert len(r.classes) <= 4
    assert all(c <= 5 for c in r.train.lang_counts().values())
    assert all(c <= 3 for c in r.test.lang_counts().values())
    assert r.info["protocol"].endswith("-custom")
    with pytest.raises(ValueError):
        load_debtags(0, root, many_shot=("aa",), zero_shot=("aa",))
    dt.clear_debtags_cache()


def _parallel_archive(root: Path) -> None:
    """40 tagged packages from 25 sources, described in aa and bb (all) and cc (every third)."""
    root.mkdir()
    records = [f"Package: p{i:02d}\nSource: s{i % 25:02d}\nDescription-md5: m{i}\nTag: f::t{i % 7}, g::u{i % 3}\n"
               for i in range(40)]
    _write(root / "Packages", "\n".join(records))
    for lang, step in (("aa", 1), ("bb", 1), ("cc", 3)):
        _write(root / f"Translation-{lang}",
               _translation(lang, [(f"p{i:02d}", f"m{i}", f"package {i} in {lang}") for i in range(0, 40, step)]))


def test_split_all_takes_every_eligible_document_split_by_source(tmp_path: Path) -> None:
    """``split="all"``: every eligible many-shot document, in train or test by its source, parallel training."""
    root = tmp_path / "arch"
    _parallel_archive(root)
    kw = {"n_classes": 6, "many_shot": ("aa", "bb"), "zero_shot": ("cc",)}
    proto = load_debtags(0, root, **kw)
    r = load_debtags(0, root, split="all", test_fraction=0.2, **kw)
    assert r.info["protocol"] == "debtags-7-all" and r.info["params"]["split"] == "all"
    assert r.info["eligible"] == {"aa": 40, "bb": 40, "cc": 14}
    for lang in ("aa", "bb"):  # every eligible document is used
        assert len(r.train.select(lang)) + len(r.test.select(lang)) == 40
    assert len(r.train) > len(proto.train)
    train_src, test_src = set(r.train.extra["source"]), set(r.test.extra["source"])
    assert len(test_src) == 5 and len(train_src) == 20 and not train_src & test_src
    assert set(r.test_zeroshot.extra["source"]) <= test_src
    # parallel: each training package is described in both languages (the protocol forbids it)
    assert r.train.select("aa").ids == r.train.select("bb").ids
    assert len(r.classes) == 6
    again = load_debtags(0, root, split="all", test_fraction=0.2, **kw)
    assert again.train.ids == r.train.ids and again.classes == r.classes
    assert load_debtags(1, root, split="all", test_fraction=0.2, **kw).test.ids != r.test.ids
    with pytest.raises(ValueError, match="split"):
        load_debtags(0, root, split="every", **kw)
    with pytest.raises(ValueError, match="test_fraction"):
        load_debtags(0, root, split="all", test_fraction=1.0, **kw)
    dt.clear_debtags_cache()
