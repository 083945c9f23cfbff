"""Loading saved models (gfun.persistence.loading): checksums, versions, damaged or foreign files, no pickle."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier, make_fun
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import DamagedModelError, ModelFormatError, UnregisteredViewError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.directory import FORMAT_VERSION
from gfun.persistence.loading import load_model, read_manifest
from gfun.persistence.saving import save_model

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
        "gfun": GeneralizedFunnelling(random_state=0,
                                      meta=default_meta().set_params(C='cv', C_grid=(1.0, 10.0), cv=3)).fit(train),
        "fun": make_fun(random_state=0, meta=default_meta().set_params(C=1.0)).fit(train),
        "naive": NaiveClassifier(C=1.0, random_state=0).fit(train),
    }


@pytest.fixture(scope="module")
def saved(models, tmp_path_factory) -> Path:
    """The fitted GeneralizedFunnelling saved once; tests that damage it work on copies."""
    return save_model(models["gfun"], tmp_path_factory.mktemp("saved") / "gfun-model")


def _copy(saved: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "model"))


def _version(path: Path) -> Path:
    """The version folder that ``path``'s CURRENT pointer names."""
    return path / json.loads((path / "CURRENT").read_text(encoding="utf-8"))["version"]


def _reseal(path: Path) -> None:
    """Recompute the checksums and sizes of a copied model after editing its files (as a forger would)."""
    vdir = _version(path)
    try:
        manifest = json.loads((vdir / "manifest.json").read_text(encoding="utf-8"))
    except ValueError:  # a manifest damaged on purpose
        manifest = None
    if isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) and isinstance(manifest.get("sizes"),
                                                                                             dict):
        for fname in ("state.json", "arrays.npz"):
            manifest["files"][fname] = hashlib.sha256((vdir / fname).read_bytes()).hexdigest()
            manifest["sizes"][fname] = (vdir / fname).stat().st_size
        (vdir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    data = (vdir / "manifest.json").read_bytes()
    pointer = {"version": vdir.name, "manifest_sha256": hashlib.sha256(data).hexdigest(), "manifest_size": len(data)}
    (path / "CURRENT").write_text(json.dumps(pointer), encoding="utf-8")


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
    damage(_version(path) / fname)
    with pytest.raises(DamagedModelError, match="checksum") as err:
        load_model(path)
    assert fname in str(err.value)


def test_missing_file_is_refused(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    (_version(path) / "arrays.npz").unlink()
    with pytest.raises(DamagedModelError, match="arrays.npz is missing"):
        load_model(path)


def _edit_manifest(path: Path, reseal: bool = True, **changes) -> None:
    mpath = _version(path) / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    manifest.update(changes)
    mpath.write_text(json.dumps(manifest), encoding="utf-8")
    if reseal:
        _reseal(path)


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
    (_version(path) / "manifest.json").write_bytes(b'{"format": "gfun-mo')
    _reseal(path)
    with pytest.raises(DamagedModelError, match="damaged"):
        load_model(path)


def test_the_manifest_is_covered_by_a_checksum(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    _edit_manifest(path, reseal=False, classes=["a", "b"])
    with pytest.raises(DamagedModelError, match=r"manifest.json .*checksum in .*CURRENT"):
        read_manifest(path)


def test_loading_what_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path)
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path / "does-not-exist")
    with pytest.raises(ModelFormatError, match="not a saved gfun model"):
        load_model(tmp_path / "notes.txt")


class _Payload:
    """Unpickling this creates a directory: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_object_arrays_are_never_unpickled(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    marker = tmp_path / "code-ran"
    npz_path = _version(path) / "arrays.npz"
    with np.load(npz_path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    arrays["meta/intercept_"] = evil
    with open(npz_path, "wb") as fh:
        np.savez(fh, **arrays)
    # the crafted file does run code when pickle is allowed (so the check below can fail) ...
    with np.load(npz_path, allow_pickle=True) as npz:
        npz["meta/intercept_"]
    assert marker.is_dir()
    marker.rmdir()
    # ... with a forged checksum it passes the integrity check, and loading still refuses it
    _reseal(path)
    with pytest.raises(DamagedModelError, match="(?i)pickle|object"):
        load_model(path)
    assert not marker.exists()


# ------------------------------------------------------------------------------ what a save must not touch
def _tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its content (to prove that nothing changed)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_legacy_flat_model_loads_but_is_not_replaced(demo, models, saved: Path, tmp_path: Path) -> None:
    flat = Path(shutil.copytree(_version(saved), tmp_path / "flat"))  # gfun 0.1.0's layout: the three files only
    manifest = json.loads((flat / "manifest.json").read_text(encoding="utf-8"))
    del manifest["sizes"]
    (flat / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    np.testing.assert_array_equal(load_model(flat).predict(demo[1]), models["gfun"].predict(demo[1]))
    before = _tree(flat)
    with pytest.raises(FileExistsError, match="flat layout"):
        save_model(models["naive"], flat)
    assert _tree(flat) == before


# --------------------------------------------------------------------------------- files that are not files
@pytest.mark.parametrize("fname", ["state.json", "arrays.npz", "manifest.json"])
def test_a_symlink_to_dev_zero_is_refused_without_reading_it(saved: Path, tmp_path: Path, fname: str) -> None:
    path = _copy(saved, tmp_path)
    target = _version(path) / fname
    target.unlink()
    target.symlink_to("/dev/zero")
    with pytest.raises(DamagedModelError, match=f"{fname} is a symbolic link"):
        load_model(path)


def test_symlinks_and_special_files_inside_a_model_are_refused(saved: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-state.json"
    path = _copy(saved, tmp_path)
    state = _version(path) / "state.json"
    shutil.copy(state, outside)
    state.unlink()
    state.symlink_to(outside)  # the right bytes, but outside the model directory
    with pytest.raises(DamagedModelError, match="symbolic link"):
        load_model(path)
    state.unlink()
    os.mkfifo(state)  # a FIFO would block a reader forever
    with pytest.raises(DamagedModelError, match="not a regular file"):
        load_model(path)
    # the version folder itself, and the pointer, must not be links either
    path2 = _copy(saved, tmp_path / "two")
    vdir = _version(path2)
    shutil.move(vdir, tmp_path / "elsewhere")
    vdir.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DamagedModelError, match="symbolic link"):
        load_model(path2)
    path3 = _copy(saved, tmp_path / "three")
    shutil.move(path3 / "CURRENT", tmp_path / "CURRENT")
    (path3 / "CURRENT").symlink_to(tmp_path / "CURRENT")
    with pytest.raises(DamagedModelError, match="CURRENT is a symbolic link"):
        load_model(path3)


def test_sizes_are_checked_before_reading(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    with open(_version(path) / "arrays.npz", "r+b") as fh:
        fh.truncate(1 << 30)  # a sparse 1 GiB file: refused by its size, before a byte of it is read or hashed
    with pytest.raises(DamagedModelError, match=r"arrays.npz has 1073741824 bytes but .*manifest.json records"):
        load_model(path)


_JUNK = [None, "x", "", -1, 0, 10**12, 1.5, float("nan"), True, [], {}, ["x"], {"x": 1}]


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: object, path: tuple, how: str, junk: object) -> object:
    if not path:
        return junk
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if how == "delete":
        del parent[path[-1]]
    elif how == "shorten" and isinstance(parent[path[-1]], list | str) and parent[path[-1]]:
        parent[path[-1]] = parent[path[-1]][:-1]
    else:
        parent[path[-1]] = junk
    return doc


@pytest.mark.parametrize(("name", "fname"), [("naive", "state.json"), ("gfun", "state.json"),
                                            ("naive", "manifest.json")])
def test_fuzzed_manifests_and_states_give_one_clear_error(models, demo, tmp_path: Path, name: str,
                                                          fname: str) -> None:
    """Hand edits of every kind, checksums forged: the model loads and works, or DamagedModelError names the file."""
    rng = np.random.RandomState(15)
    path = save_model(models[name], tmp_path / "m")
    pristine = (_version(path) / fname).read_text(encoding="utf-8")
    paths = _paths(json.loads(pristine))
    picks = rng.choice(len(paths), min(len(paths), 120), replace=False)
    outcomes = {"refused": 0, "loaded": 0}
    for n, i in enumerate(picks):
        how = ["delete", "replace", "shorten"][n % 3]
        junk = _JUNK[rng.randint(len(_JUNK))]
        doc = _mutate(json.loads(pristine), paths[i], how, junk)
        (_version(path) / fname).write_text(json.dumps(doc), encoding="utf-8")
        _reseal(path)
        try:
            model = load_model(path)
        except ModelFormatError as exc:
            # a hand-edited view name reads as a view this process has not registered, with the file named
            assert type(exc) in (ModelFormatError, DamagedModelError, UnregisteredViewError)
            assert str(path) in str(exc), (paths[i], how, junk, exc)
            outcomes["refused"] += 1
        else:  # an edit that does not matter (a timestamp, a parameter within range): the model must work
            assert np.isfinite(model.decision_function(demo[1])).all()
            outcomes["loaded"] += 1
        (_version(path) / fname).write_text(pristine, encoding="utf-8")
    _reseal(path)
    load_model(path)
    assert outcomes["refused"] >= 10 and outcomes["refused"] + outcomes["loaded"] == len(picks)


def test_damaged_state_names_the_file_and_the_field(models, tmp_path: Path) -> None:
    path = save_model(models["naive"], tmp_path / "m")
    state_path = _version(path) / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    del state["vectorizers"]["de"]["params"]
    state_path.write_text(json.dumps(state), encoding="utf-8")
    _reseal(path)
    with pytest.raises(DamagedModelError, match=r"state.json is damaged .*field 'vectorizers/de/params'"):
        load_model(path)
    state["vectorizers"]["de"] = ["not", "an", "object"]
    state_path.write_text(json.dumps(state), encoding="utf-8")
    _reseal(path)
    with pytest.raises(DamagedModelError, match=r"state.json .*field 'vectorizers/de"):
        load_model(path)


def test_a_damaged_pointer_is_a_clear_error(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    good = (path / "CURRENT").read_text(encoding="utf-8")
    for bad, field in [("{", "damaged"), ("[]", "top level"), ('{"version": "../../etc"}', "'version'"),
                       (json.dumps({**json.loads(good), "manifest_size": "12"}), "'manifest_size'"),
                       (json.dumps({**json.loads(good), "manifest_sha256": 1}), "'manifest_sha256'")]:
        (path / "CURRENT").write_text(bad, encoding="utf-8")
        with pytest.raises(DamagedModelError, match=field):
            load_model(path)
    (path / "CURRENT").unlink()
    with pytest.raises(ModelFormatError, match="holds no complete model"):
        load_model(path)
