"""Converter from the Funnelling / gFun dataset pickles; split files; the restricted unpickler."""

from __future__ import annotations

import io
import json
import pickle
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.funnelling_pickle import (
    PickledObject,
    RestrictedUnpickler,
    apply_split,
    find_run_file,
    load_funnelling_pickle,
    read_split_file,
)
from gfun.datasets.registry import load_dataset
from gfun.errors import CorpusFormatError

LABELS = ["C11", "C12", "E21"]


def write_authors_pickle(path: Path, multiling: dict[str, Any], labels: Any = LABELS,
                         module: str = "data.dataset_builder") -> None:
    """Pickle an object of a class ``MultilingualDataset`` defined in a module that is then removed."""
    mod = types.ModuleType(module)
    cls = type("MultilingualDataset", (), {"__module__": module})
    mod.MultilingualDataset = cls  # type: ignore[attr-defined]
    saved = {m: sys.modules.get(m) for m in (module, module.split(".")[0])}
    sys.modules[module] = mod
    if "." in module:
        sys.modules[module.split(".")[0]] = types.ModuleType(module.split(".")[0])
    try:
        obj = cls()
        obj.dataset_name = "fixture"
        obj.multiling_dataset = multiling
        obj.labels = labels
        with open(path, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        for m, v in saved.items():
            if v is None:
                sys.modules.pop(m, None)
            else:
                sys.modules[m] = v
    assert module not in sys.modules  # the authors' code is not importable when loading


def _data() -> dict[str, Any]:
    ytr_en = np.array([[1, 0, 1], [0, 1, 0]])
    yte_en = np.array([[0, 0, 1]])
    ytr_it = sp.csr_matrix(np.array([[1, 1, 0]]))
    yte_it = sp.csr_matrix(np.array([[0, 0, 0], [1, 0, 0]]))
    return {
        "en": ((["Raw text one.", "Raw text two."], ytr_en, ["2286", "2287"]), (["Test."], yte_en, ["3001"])),
        "it": (([["testo", "tokenizzato"]], ytr_it, np.array([17])), (["a", "b"], yte_it, None)),
    }


def test_convert(tmp_path: Path) -> None:
    path = tmp_path / "rcv1-2_run0.pickle"
    write_authors_pickle(path, _data())
    s = load_funnelling_pickle(path)
    assert s.classes == tuple(LABELS)
    assert s.train.ids == ["en:2286", "en:2287", "it:17"]
    assert s.train.texts[2] == "testo tokenizzato"  # token lists are joined
    assert s.train.labels == [("C11", "E21"), ("C12",), ("C11", "C12")]
    assert s.train.extra["source_id"] == ["2286", "2287", "17"]
    assert s.test.ids == ["en:3001", "it:te0", "it:te1"]  # no ids: positional
    assert s.test.labels == [("E21",), (), ("C11",)]
    dropped = load_funnelling_pickle(path, drop_unlabelled=True)
    assert "it:te0" not in dropped.test.ids


def test_registry_finds_the_run_pickle(tmp_path: Path) -> None:
    root = tmp_path / "jrc-acquis"
    root.mkdir()
    write_authors_pickle(root / "jrc_doclist_run0.pickle", {})  # a split-like name is not a dataset
    write_authors_pickle(root / "jrc_nltk_1958-2005vs2006_run1.pickle", _data(), module="dataManager.mld")
    s = load_dataset("jrc-acquis", data_dir=root, run=1)
    assert len(s.train) == 3 and s.name == "jrc-acquis"
    s = load_dataset("jrc-acquis", data_dir=root, run=1, langs=["it"])
    assert s.train.languages == ["it"]


def test_no_labels_attribute(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "p.pickle"
    write_authors_pickle(path, _data(), labels=None)
    s = load_funnelling_pickle(path)
    assert s.classes == ("0", "1", "2")
    assert "column number" in caplog.text


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda d: d["en"][0].__class__((sp.random(2, 5, format="csr"), d["en"][0][1], d["en"][0][2])),
     "vectorised matrix"),
    (lambda d: ([1, 2], d["en"][0][1], d["en"][0][2]), r"X\[0\]: expected a text"),
    (lambda d: (d["en"][0][0], np.array([[1, 0, 1]]), d["en"][0][2]), "1 rows for 2 documents"),
    (lambda d: (d["en"][0][0], np.array([[1, 0], [0, 1]]), d["en"][0][2]), "2 columns but there are 3"),
    (lambda d: (d["en"][0][0], np.array([[2, 0, 1], [0, 1, 0]]), d["en"][0][2]), "not binary"),
    (lambda d: (d["en"][0][0], d["en"][0][1], ["only-one"]), "1 ids for 2 documents"),
])
def test_malformed_parts(tmp_path: Path, mutate: Any, match: str) -> None:
    data = _data()
    data["en"] = (mutate(data), data["en"][1])
    path = tmp_path / "p.pickle"
    write_authors_pickle(path, data)
    with pytest.raises(CorpusFormatError, match=match) as info:
        load_funnelling_pickle(path)
    assert str(path) in str(info.value) and "multiling_dataset['en'][0]" in str(info.value)


def test_wrong_structure(tmp_path: Path) -> None:
    path = tmp_path / "p.pickle"
    path.write_bytes(pickle.dumps({"something": 1}))
    with pytest.raises(CorpusFormatError, match="multiling_dataset"):
        load_funnelling_pickle(path)
    path.write_bytes(b"not a pickle")
    with pytest.raises(CorpusFormatError, match="cannot unpickle"):
        load_funnelling_pickle(path)


class _Evil:
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        import os

        return (os.system, ("echo pwned > /dev/null",))


def test_refuses_other_globals(tmp_path: Path) -> None:
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"multiling_dataset": _Evil()}))
    with pytest.raises(CorpusFormatError, match="refusing to load .*system"):
        load_funnelling_pickle(path)
    with pytest.raises(pickle.UnpicklingError, match="builtins.eval"):
        RestrictedUnpickler(io.BytesIO(b"")).find_class("builtins", "eval")


def test_allowed_globals() -> None:
    u = RestrictedUnpickler(io.BytesIO(b""))
    # names that numpy 1.x and 2.x pickles use, and old scipy module paths
    assert callable(u.find_class("numpy.core.multiarray", "_reconstruct"))
    assert u.find_class("numpy._core.multiarray", "_reconstruct") is u.find_class("numpy.core.multiarray",
                                                                                   "_reconstruct")
    assert u.find_class("numpy", "ndarray") is np.ndarray
    assert u.find_class("scipy.sparse.csr", "csr_matrix") is sp.csr_matrix
    assert u.find_class("anything.at.all", "MultilingualDataset") is PickledObject
    with pytest.raises(pickle.UnpicklingError):
        u.find_class("numpy", "load")
    with pytest.raises(pickle.UnpicklingError):
        u.find_class("scipy.sparse", "load_npz")
    # arrays and sparse matrices of several dtypes round-trip
    payload = {"a": np.arange(5, dtype=np.int16), "b": sp.csc_matrix(np.eye(3, dtype=np.float32)),
               "c": np.array(["x", "y"]), "d": np.float64(2.5), "e": (1, {2}, frozenset({3}))}
    back = RestrictedUnpickler(io.BytesIO(pickle.dumps(payload, protocol=2))).load()
    assert back["a"].dtype == np.int16 and (back["b"] != payload["b"]).nnz == 0
    assert back["c"].tolist() == ["x", "y"] and back["d"] == 2.5 and back["e"] == payload["e"]


# ---------------------------------------------------------------------------------------------- split files
def test_split_files(tmp_path: Path) -> None:
    as_json = tmp_path / "split.json"
    as_json.write_text(json.dumps({"en": {"train": ["1", 2], "test": []}, "it": [["3"], ["4"]]}),
                       encoding="utf-8")
    assert read_split_file(as_json) == {"en": (["1", "2"], []), "it": (["3"], ["4"])}
    as_pickle = tmp_path / "split.pickle"
    as_pickle.write_bytes(pickle.dumps({"en": (np.array([1, 2]), ["5"])}))
    assert read_split_file(as_pickle) == {"en": (["1", "2"], ["5"])}
    bad = tmp_path / "bad.json"
    for content, match in (("[1, 2]", "expected a mapping"), ('{"en": {"train": []}}', "'train' and 'test'"),
                           ('{"en": [1, 2, 3]}', "pair"), ('{"en": ["ab", []]}', "expected a list"),
                           ("{", "invalid JSON")):
        bad.write_text(content, encoding="utf-8")
        with pytest.raises(CorpusFormatError, match=match):
            read_split_file(bad)


def test_apply_split(caplog: pytest.LogCaptureFixture) -> None:
    corpus = MultilingualCorpus(["en:a", "en:b", "it:a"], ["en", "en", "it"], ["x", "y", "z"],
                                [["1"], [], ["2"]], extra={"source_id": ["a", "b", "a"]})
    train, test = apply_split(corpus, {"en": (["b"], ["en:a"]), "it": (["a"], [])})
    assert train.ids == ["en:b", "it:a"] and test.ids == ["en:a"]
    with pytest.raises(CorpusFormatError, match="not in the corpus"):
        apply_split(corpus, {"en": (["zz"], [])})
    train, _ = apply_split(corpus, {"en": (["zz", "a"], [])}, on_missing="warn")
    assert train.ids == ["en:a"] and "not in the corpus" in caplog.text
    with pytest.raises(CorpusFormatError, match="twice"):
        apply_split(corpus, {"en": (["a", "en:a"], [])})


def test_find_run_file(tmp_path: Path) -> None:
    for name in ("rcv_run1.pickle", "rcv_run10.pickle", "rcv_doclist_run1.pickle", "notes_run1.txt"):
        (tmp_path / name).write_bytes(b"")
    assert find_run_file(tmp_path, 1, "dataset") == tmp_path / "rcv_run1.pickle"
    assert find_run_file(tmp_path, 1, "split") == tmp_path / "rcv_doclist_run1.pickle"
    assert find_run_file(tmp_path, 2, "dataset") is None
    (tmp_path / "splits").mkdir()
    (tmp_path / "splits" / "run-1.json").write_text("{}")
    assert find_run_file(tmp_path, 1, "split") == tmp_path / "splits" / "run-1.json"
    (tmp_path / "other_run_1.pkl").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="several"):
        find_run_file(tmp_path, 1, "dataset")
