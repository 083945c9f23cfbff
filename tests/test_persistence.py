"""Saving and loading fitted models: exact round trips, checksums, versions, and no pickle."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from gfun.baselines import NaiveClassifier, make_fun
from gfun.corpus import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling import GeneralizedFunnelling
from gfun.persistence import FORMAT_VERSION, ModelFormatError, load_model, read_manifest, save_model
from gfun.views.base import UnseenLanguageError
from gfun.views.posteriors import PosteriorsView

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in LANGS])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus, MultilingualCorpus]:
    full_train, full_test = load_demo()
    return _sample(full_train, 80, 0), _sample(full_test, 40, 1), full_test


@pytest.fixture(scope="module")
def models(demo) -> dict[str, object]:
    train = demo[0]
    return {
        "gfun": GeneralizedFunnelling(meta_C="cv", meta_C_grid=(1.0, 10.0), meta_cv=3, random_state=0).fit(train),
        "fun": make_fun(meta_C=1.0, random_state=0).fit(train),
        "naive": NaiveClassifier(C=1.0, random_state=0).fit(train),
    }


@pytest.fixture(scope="module")
def saved(models, tmp_path_factory) -> Path:
    """The fitted GeneralizedFunnelling saved once; tests that damage it work on copies."""
    return save_model(models["gfun"], tmp_path_factory.mktemp("saved") / "gfun-model")


def _copy(saved: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "model"))


# ----------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", ["gfun", "fun", "naive"])
def test_round_trip_gives_identical_predictions(demo, models, tmp_path: Path, name: str) -> None:
    _, test, _ = demo
    model = models[name]
    path = save_model(model, tmp_path / "m")
    assert path == tmp_path / "m"
    assert sorted(p.name for p in path.iterdir()) == ["arrays.npz", "manifest.json", "state.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary directory left
    loaded = load_model(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    assert loaded.classes_ == model.classes_ and loaded.languages_ == model.languages_
    np.testing.assert_array_equal(loaded.predict(test), model.predict(test))
    np.testing.assert_array_equal(loaded.decision_function(test), model.decision_function(test))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(loaded.predict_proba(test), model.predict_proba(test))
        np.testing.assert_array_equal(loaded.transform(test), model.transform(test))
    fr = demo[2].select("fr").subset(range(2))
    with pytest.raises(UnseenLanguageError, match="'fr'"):
        loaded.predict(fr)


def test_loaded_model_keeps_the_chosen_Cs(models, saved: Path) -> None:
    loaded = load_model(saved)
    np.testing.assert_array_equal(loaded.meta_.C_, models["gfun"].meta_.C_)
    np.testing.assert_array_equal(loaded.meta_.cv_scores_, models["gfun"].meta_.cv_scores_)
    assert loaded.meta_C_grid == (1.0, 10.0)


def test_save_method_and_overwriting(demo, models, tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "m"
    models["naive"].save(str(path))
    first = read_manifest(path)
    assert first["estimator"] == "NaiveClassifier"
    models["fun"].save(str(path))  # replacing a saved model is allowed by default
    assert read_manifest(path)["estimator"] == "GeneralizedFunnelling"
    np.testing.assert_array_equal(load_model(path).predict(demo[1]), models["fun"].predict(demo[1]))
    with pytest.raises(FileExistsError, match="overwrite"):
        save_model(models["naive"], path, overwrite=False)
    assert read_manifest(path)["estimator"] == "GeneralizedFunnelling"
    assert sorted(p.name for p in path.parent.iterdir()) == ["m"]


def test_manifest(models, saved: Path) -> None:
    manifest = json.loads((saved / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "gfun-model" and manifest["format_version"] == FORMAT_VERSION
    assert manifest["estimator"] == "GeneralizedFunnelling"
    assert manifest["classes"] == models["gfun"].classes_ and manifest["languages"] == LANGS
    assert manifest["config"]["meta_C_grid"] == [1.0, 10.0] and manifest["config"]["random_state"] == 0
    for fname in ("state.json", "arrays.npz"):
        assert manifest["files"][fname] == hashlib.sha256((saved / fname).read_bytes()).hexdigest()
    json.loads((saved / "state.json").read_text(encoding="utf-8"))  # plain JSON
    with np.load(saved / "arrays.npz", allow_pickle=False) as npz:  # plain numeric arrays only
        assert all(npz[k].dtype != object for k in npz.files)


# ----------------------------------------------------------------------------------------------- refusals
def _flip_byte(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))


def _truncate(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 7])


def _append(p: Path) -> None:
    with open(p, "ab") as fh:
        fh.write(b" ")


@pytest.mark.parametrize("fname", ["state.json", "arrays.npz"])
@pytest.mark.parametrize("damage", [_flip_byte, _truncate, _append], ids=["flip", "truncate", "append"])
def test_tampered_files_are_refused(saved: Path, tmp_path: Path, fname: str, damage) -> None:
    path = _copy(saved, tmp_path)
    damage(path / fname)
    with pytest.raises(ModelFormatError, match="checksum") as err:
        load_model(path)
    assert fname in str(err.value)


def test_missing_file_is_refused(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    (path / "arrays.npz").unlink()
    with pytest.raises(ModelFormatError, match="arrays.npz is missing"):
        load_model(path)


def _edit_manifest(path: Path, **changes) -> None:
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(changes)
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_other_format_version_is_refused_naming_both_versions(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    other = FORMAT_VERSION + 41
    _edit_manifest(path, format_version=other, gfun_version="9.9.9")
    with pytest.raises(ModelFormatError) as err:
        load_model(path)
    msg = str(err.value)
    assert f"format version {other};" in msg and f"reads format version {FORMAT_VERSION}." in msg
    assert "9.9.9" in msg


def test_manifest_problems_are_refused(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    _edit_manifest(path, estimator="os.system")
    with pytest.raises(ModelFormatError, match="unknown estimator 'os.system'"):
        load_model(path)
    _edit_manifest(path, format="something-else", estimator="GeneralizedFunnelling")
    with pytest.raises(ModelFormatError, match="does not describe a gfun model"):
        load_model(path)
    (path / "manifest.json").write_bytes(b'{"format": "gfun-mo')
    with pytest.raises(ModelFormatError, match="damaged"):
        load_model(path)


def test_loading_what_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path)
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path / "does-not-exist")


def test_saving_over_a_non_model_directory_is_refused(models, tmp_path: Path) -> None:
    target = tmp_path / "important"
    target.mkdir()
    (target / "data.csv").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a saved gfun model"):
        save_model(models["naive"], target)
    assert (target / "data.csv").read_text() == "keep me" and sorted(os.listdir(target)) == ["data.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["important"]
    a_file = tmp_path / "file.bin"
    a_file.write_bytes(b"x")
    with pytest.raises(FileExistsError):
        save_model(models["naive"], a_file)
    assert a_file.read_bytes() == b"x"


def test_unsaveable_models_are_refused_without_leftovers(demo, tmp_path: Path) -> None:
    with pytest.raises(NotFittedError):
        save_model(GeneralizedFunnelling(), tmp_path / "m")
    with pytest.raises(TypeError, match="cannot save"):
        save_model(PosteriorsView(), tmp_path / "m")
    custom = GeneralizedFunnelling(views=[PosteriorsView(random_state=0)], meta_C=1.0, random_state=0)
    custom.fit(demo[0].subset(range(0, len(demo[0]), 4)))
    with pytest.raises(ValueError, match="view letters"):
        save_model(custom, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


class _Payload:
    """Unpickling this creates a directory: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_object_arrays_are_never_unpickled(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    marker = tmp_path / "code-ran"
    with np.load(path / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    arrays["meta/intercept_"] = evil
    with open(path / "arrays.npz", "wb") as fh:
        np.savez(fh, **arrays)
    # the crafted file does run code when pickle is allowed (so the check below can fail) ...
    with np.load(path / "arrays.npz", allow_pickle=True) as npz:
        npz["meta/intercept_"]
    assert marker.is_dir()
    marker.rmdir()
    # ... with a forged checksum it passes the integrity check, and loading still refuses it
    files = json.loads((path / "manifest.json").read_text(encoding="utf-8"))["files"]
    files["arrays.npz"] = hashlib.sha256((path / "arrays.npz").read_bytes()).hexdigest()
    _edit_manifest(path, files=files)
    with pytest.raises(ValueError, match="(?i)pickle|object"):
        load_model(path)
    assert not marker.exists()


def test_save_refuses_object_arrays(models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    naive = models["naive"]
    meta, arrays = naive.get_state()
    arrays["oops"] = np.array([{"a": 1}], dtype=object)
    monkeypatch.setattr(naive, "get_state", lambda: (meta, arrays))
    with pytest.raises(TypeError, match="dtype object"):
        save_model(naive, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []
