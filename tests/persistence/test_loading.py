"""Loading saved models (gfun.persistence.loading): checksums, versions, damaged or foreign files, no pickle."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from gfun.errors import DamagedModelError, ModelFormatError, UnregisteredViewError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.directory import FORMAT_VERSION
from gfun.persistence.loading import load_model, read_manifest
from gfun.persistence.saving import save_model


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


@pytest.mark.parametrize("failure", [MemoryError("cannot allocate memory"),
                                     type("OutOfMemoryError", (RuntimeError,), {})("CUDA out of memory")])
def test_running_out_of_memory_while_loading_is_not_called_damage(saved: Path, monkeypatch, failure) -> None:
    """Too little memory (of the host, or of a GPU loading a network) while rebuilding intact files: that error as
    it is, not "damaged or edited by hand" (which every failure of the rebuild was called)."""
    def rebuild(cls, meta, arrays):
        raise failure

    monkeypatch.setattr(GeneralizedFunnelling, "from_state", classmethod(rebuild))
    with pytest.raises(type(failure), match="memory"):
        load_model(saved)


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


def test_a_failure_inside_a_library_of_another_version_says_so(models, tmp_path: Path, monkeypatch) -> None:
    """The manifest records the versions of the numeric libraries; a state that fails to rebuild inside one of them,
    installed here in another version, is reported as that change (both versions named), not as damage."""
    from sklearn.utils.validation import check_array

    from gfun.baselines.naive import NaiveClassifier
    from gfun.errors import LibraryVersionError
    from gfun.persistence.libraries import library_versions

    path = save_model(models["naive"], tmp_path / "m")
    manifest_path = _version(path) / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    installed = library_versions(("numpy", "sklearn"))
    assert {k: manifest["libraries"][k] for k in installed} == installed

    def rebuilt_by_another_version(meta, arrays):  # what a changed scikit-learn does to a state it once read
        check_array(np.array([[np.nan]]))

    monkeypatch.setattr(NaiveClassifier, "from_state", classmethod(lambda cls, meta, arrays:
                                                                   rebuilt_by_another_version(meta, arrays)))
    manifest["libraries"]["scikit-learn"] = "0.24.2"
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    _reseal(path)
    now = installed["scikit-learn"]
    with pytest.raises(LibraryVersionError, match=rf"state.json: scikit-learn {now} could not rebuild .*ValueError: "
                       r"Input .*saved with scikit-learn 0\.24\.2\. Its files match .* load it where scikit-learn "
                       r"0\.24\.2 is installed"):
        load_model(path)
    for recorded in (now, None):  # the same version, or a manifest from before versions were recorded: damage
        if recorded is None:
            del manifest["libraries"]
        else:
            manifest["libraries"]["scikit-learn"] = recorded
        manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
        _reseal(path)
        with pytest.raises(DamagedModelError, match="is damaged or was edited by hand") as caught:
            load_model(path)
        assert not isinstance(caught.value, LibraryVersionError)


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


# ------------------------------------------------------------------ bounded memory, array shapes
def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(_version(path) / "arrays.npz", allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _write_arrays(path: Path, arrays: dict[str, np.ndarray], *, compressed: bool = False) -> None:
    with open(_version(path) / "arrays.npz", "wb") as fh:
        (np.savez_compressed if compressed else np.savez)(fh, **arrays)
    _reseal(path)


def _no_array_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, reading any array's data fails the test: what is refused must be refused from the headers."""
    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("array data was read (allocated) before the declared sizes were checked")

    monkeypatch.setattr(np.lib.format, "read_array", refuse)


def test_a_member_declaring_a_huge_shape_is_refused_from_its_header(saved: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A member whose header declares shape (10**12,) gave an uncaught MemoryError: refused before allocating."""
    import zipfile

    path = _copy(saved, tmp_path)
    npz_path = _version(path) / "arrays.npz"
    arrays = _arrays(path)
    with zipfile.ZipFile(npz_path, "w") as zf:
        for key, arr in arrays.items():
            with zf.open(key + ".npy", "w") as member:
                if key == "meta/platt_A_":  # a header declaring 8 TB, followed by the 30 values
                    np.lib.format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False,
                                                                  "shape": (10**12,)})
                    member.write(arr.tobytes())
                else:
                    np.lib.format.write_array(member, arr)
    _reseal(path)
    _no_array_read(monkeypatch)
    with pytest.raises(DamagedModelError, match=r"arrays.npz is damaged: array 'meta/platt_A_' declares shape "
                                                r"\(1000000000000,\)"):
        load_model(path)


def test_a_compressed_member_that_would_expand_beyond_the_file_is_refused(saved: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A small compressed member expanding to hundreds of MB (13.7 MB -> 3.1 GB of RSS) is refused from the
    sizes its header declares, before any array is read."""
    path = _copy(saved, tmp_path)
    arrays = _arrays(path)
    arrays["meta/cv_scores_"] = np.zeros((50_000, 1_000))  # 400 MB of zeros: about 400 KB compressed
    _write_arrays(path, arrays, compressed=True)
    assert (_version(path) / "arrays.npz").stat().st_size < 2 << 20
    _no_array_read(monkeypatch)
    with pytest.raises(DamagedModelError, match=r"arrays.npz is damaged: its arrays declare more than \d+ bytes"):
        load_model(path)


def test_a_string_array_is_refused(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    arrays = _arrays(path)
    arrays["meta/C_"] = np.array(["1.0"] * 30)
    _write_arrays(path, arrays)
    with pytest.raises(DamagedModelError, match=r"array 'meta/C_' has dtype <U3, not plain numbers"):
        load_model(path)


@pytest.fixture(scope="module")
def saved_xw(demo, tmp_path_factory) -> Path:
    """gFun with X and W (a view with a mapper, a mapper scaler and word-class matrices), saved once."""
    model = GeneralizedFunnelling(views="xw", aggregation="mean", random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(demo[0])
    return save_model(model, tmp_path_factory.mktemp("saved-xw") / "xw")


@pytest.mark.parametrize("key", ["meta/platt_A_", "meta/platt_B_", "meta/intercept_", "meta/support_vectors_",
                                 "meta/dual_coef_", "mapper/w/platt_A_", "mapper/w/platt_B_",
                                 "mapper/w/support_vectors_", "mapper/w/C_", "mapper_scaler/w/mean",
                                 "mapper_scaler/w/scale", "scaler/mean", "scaler/scale", "meta_input/mean",
                                 "view/w/de/matrix",
                                 "view/w/sif/global", "view/x/de/coef", "view/x/en/platt_A", "view/x/it/vec/idf"])
def test_arrays_of_the_wrong_shape_are_refused_at_load_naming_file_and_array(saved_xw: Path, tmp_path: Path,
                                                                             key: str) -> None:
    """Every array is checked against the model when it loads (Platt parameters and support vectors against the
    classes and the meta-features, scalers, the views' matrices against their vocabularies): a damaged file is a
    DamagedModelError naming arrays.npz and the array, not a failure at predict time."""
    path = _copy(saved_xw, tmp_path)
    arrays = _arrays(path)
    arrays[key] = arrays[key][..., :-1]  # one value (or one column) short
    _write_arrays(path, arrays)
    with pytest.raises(DamagedModelError, match=rf"arrays.npz is damaged .*array '{key}' .*has shape"):
        load_model(path)


def test_an_array_of_the_wrong_dtype_is_refused_at_load(saved_xw: Path, tmp_path: Path) -> None:
    path = _copy(saved_xw, tmp_path)
    arrays = _arrays(path)
    arrays["mapper/w/support_"] = arrays["mapper/w/support_"].astype(np.float64)
    _write_arrays(path, arrays)
    with pytest.raises(DamagedModelError, match=r"array 'mapper/w/support_' .*has dtype float64, expected integers"):
        load_model(path)
    assert load_model(saved_xw).predict_proba is not None  # the undamaged model loads


# ------------------------------------------------------------------------------------------ hand edits that loaded
def _edit_state(path: Path, edit) -> None:
    state_path = _version(path) / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    edit(state)
    state_path.write_text(json.dumps(state), encoding="utf-8")
    _reseal(path)


def test_a_class_list_repeating_a_class_is_refused_at_load(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    classes = read_manifest(path)["classes"]
    twice = [classes[0], *classes[:-1]]

    def edit(state: dict) -> None:
        state["classes_"] = twice

    _edit_state(path, edit)
    _edit_manifest(path, classes=twice)
    with pytest.raises(DamagedModelError, match=rf"repeats the class\(es\) \['{classes[0]}'\]"):
        load_model(path)


def test_a_vocabulary_of_numbers_is_refused_at_load(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)

    def edit(state: dict) -> None:
        vectorizer = state["views"][0]["state"]["vectorizers"]["de"]
        vectorizer["vocabulary"] = list(range(len(vectorizer["vocabulary"])))

    _edit_state(path, edit)
    with pytest.raises(DamagedModelError, match=r"field 'views/0/state/vectorizers/de/vocabulary' holds int 0, not a "
                                                r"word"):
        load_model(path)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_non_finite_platt_parameter_of_the_meta_classifier_is_refused_at_load(saved: Path, tmp_path: Path,
                                                                                value: float) -> None:
    path = _copy(saved, tmp_path)
    arrays = _arrays(path)
    arrays["meta/platt_A_"] = arrays["meta/platt_A_"].copy()
    arrays["meta/platt_A_"][0] = value
    _write_arrays(path, arrays)
    with pytest.raises(DamagedModelError, match=r"array 'meta/platt_A_' holds NaN or infinite Platt parameters"):
        load_model(path)
