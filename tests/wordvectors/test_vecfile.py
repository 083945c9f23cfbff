"""Word vectors from .vec files (gfun.wordvectors.vecfile): reading subsets, layouts and the cache."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from gfun.wordvectors.vecfile import VecFileSource, read_vec_subset


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


@pytest.fixture()
def vec_dir(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    words = ["the", "Cat", "cat", "dog", "Paris", "house", "tree"]
    _write_vec(tmp_path / "wiki.multi.en.vec", words, rng.normal(size=(len(words), 6)))
    _write_vec(tmp_path / "it.vec.gz", ["il", "gatto", "cane", "casa"], rng.normal(size=(4, 6)), header=False)
    return tmp_path


def test_read_vec_subset_exact_fold_case_and_order(vec_dir):
    path = vec_dir / "wiki.multi.en.vec"
    lines = path.read_text().splitlines()[1:]
    table = {ln.split(" ")[0]: np.array(ln.split(" ")[1:], dtype=np.float32) for ln in lines}
    mat, found = read_vec_subset(path, ["dog", "CAT", "cat", "paris", "nope", "dog"])
    np.testing.assert_allclose(mat[0], table["dog"])
    np.testing.assert_allclose(mat[1], table["Cat"])  # first casing in file order
    np.testing.assert_allclose(mat[2], table["cat"])  # exact match wins over a folded one
    np.testing.assert_allclose(mat[3], table["Paris"])
    np.testing.assert_allclose(mat[5], table["dog"])
    assert found.tolist() == [True, True, True, True, False, True]
    assert not mat[4].any()
    mat, found = read_vec_subset(path, ["paris", "CAT"], fold_case=False)
    assert not found.any()
    _, found = read_vec_subset(path, ["the", "cat", "dog"], max_rows=3)
    assert found.tolist() == [True, True, False]
    _, found = read_vec_subset(vec_dir / "it.vec.gz", ["il", "gatto", "cane"], max_rows=2)  # no header line
    assert found.tolist() == [True, True, False]


def test_vec_source_layouts_and_cache(vec_dir, tmp_path):
    cache = tmp_path / "cache"
    src = VecFileSource(vec_dir, cache_dir=cache)
    assert src.path_for("en").name == "wiki.multi.en.vec"
    assert src.path_for("it").name == "it.vec.gz"
    assert src.dim == 6
    mat = src.vectors("it", ["gatto", "cane", "xyz"])
    assert mat.shape == (3, 6) and src.oov_share_["it"] == pytest.approx(1 / 3)
    assert len(list((cache / "wordvectors").glob("vec-*.npz"))) == 1
    again = VecFileSource(vec_dir, cache_dir=cache).vectors("it", ["gatto", "cane", "xyz"])
    np.testing.assert_array_equal(mat, again)
    with pytest.raises(FileNotFoundError):
        src.vectors("fi", ["kissa"])
    tmpl = VecFileSource(str(vec_dir / "wiki.multi.{lang}.vec"), cache=False)
    assert tmpl.vectors("en", ["dog"]).shape == (1, 6)
    mapping = VecFileSource({"it": vec_dir / "it.vec.gz"}, cache=False)
    np.testing.assert_array_equal(mapping.vectors("it", ["gatto", "cane", "xyz"]), mat)


def test_vec_cache_is_invalidated_when_the_file_changes(vec_dir, tmp_path):
    cache = tmp_path / "cache"
    path = vec_dir / "wiki.multi.en.vec"
    first = VecFileSource({"en": path}, cache_dir=cache).vectors("en", ["dog"])
    _write_vec(path, ["dog"], np.full((1, 6), 7.0))
    second = VecFileSource({"en": path}, cache_dir=cache).vectors("en", ["dog"])
    assert not np.allclose(first, second) and np.allclose(second, 7.0)
