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

from gfun.baselines.naive import NaiveClassifier, make_fun
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import DamagedModelError, ModelFormatError, UnregisteredViewError, UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.persistence.directory import FORMAT_VERSION
from gfun.persistence.loading import load_model, read_manifest
from gfun.persistence.saving import check_model_destination, save_model
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


# ----------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", ["gfun", "fun", "naive"])
def test_round_trip_gives_identical_predictions(demo, models, tmp_path: Path, name: str) -> None:
    _, test, _ = demo
    model = models[name]
    path = save_model(model, tmp_path / "m")
    assert path == tmp_path / "m"
    assert sorted(p.name for p in path.iterdir()) == [".gfun-model", "CURRENT", _version(path).name]
    assert sorted(p.name for p in _version(path).iterdir()) == ["arrays.npz", "manifest.json", "state.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["m"]  # no temporary file or directory left
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
    manifest = json.loads((_version(saved) / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == read_manifest(saved)
    assert manifest["format"] == "gfun-model" and manifest["format_version"] == FORMAT_VERSION
    assert manifest["estimator"] == "GeneralizedFunnelling"
    assert manifest["classes"] == models["gfun"].classes_ and manifest["languages"] == LANGS
    assert manifest["config"]["meta_C_grid"] == [1.0, 10.0] and manifest["config"]["random_state"] == 0
    for fname in ("state.json", "arrays.npz"):
        assert manifest["files"][fname] == hashlib.sha256((_version(saved) / fname).read_bytes()).hexdigest()
        assert manifest["sizes"][fname] == (_version(saved) / fname).stat().st_size
    pointer = json.loads((saved / "CURRENT").read_text(encoding="utf-8"))
    assert pointer["manifest_sha256"] == hashlib.sha256((_version(saved) / "manifest.json").read_bytes()).hexdigest()
    assert json.loads((saved / ".gfun-model").read_text(encoding="utf-8"))["magic"] == "gfun model directory"
    json.loads((_version(saved) / "state.json").read_text(encoding="utf-8"))  # plain JSON
    with np.load(_version(saved) / "arrays.npz", allow_pickle=False) as npz:  # plain numeric arrays only
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


def test_saving_over_a_non_model_directory_is_refused(models, tmp_path: Path) -> None:
    target = tmp_path / "important"
    target.mkdir()
    (target / "data.csv").write_text("keep me")
    with pytest.raises(FileExistsError, match=r"important: the directory is not empty .* it holds data.csv"):
        save_model(models["naive"], target)
    assert (target / "data.csv").read_text() == "keep me" and sorted(os.listdir(target)) == ["data.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["important"]
    a_file = tmp_path / "file.bin"
    a_file.write_bytes(b"x")
    with pytest.raises(NotADirectoryError, match="file.bin"):
        save_model(models["naive"], a_file)
    assert a_file.read_bytes() == b"x"


def test_unsaveable_models_are_refused_without_leftovers(demo, tmp_path: Path) -> None:
    with pytest.raises(NotFittedError):
        save_model(GeneralizedFunnelling(), tmp_path / "m")
    with pytest.raises(TypeError, match="cannot save"):
        save_model(PosteriorsView(), tmp_path / "m")
    class Unregistered(PosteriorsView):
        """A view class no one registered: a model with it cannot be saved (it could not be loaded)."""

    custom = GeneralizedFunnelling(views=[("u", Unregistered(random_state=0))], meta_C=1.0, random_state=0)
    custom.fit(demo[0].subset(range(0, len(demo[0]), 4)))
    with pytest.raises(ValueError, match="is not registered.*register_view"):
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


def test_save_refuses_object_arrays(models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    naive = models["naive"]
    meta, arrays = naive.get_state()
    arrays["oops"] = np.array([{"a": 1}], dtype=object)
    monkeypatch.setattr(naive, "get_state", lambda: (meta, arrays))
    with pytest.raises(TypeError, match="dtype object"):
        save_model(naive, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------------- issue 15: outputs
def _tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its content (to prove that nothing changed)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_foreign_directory_holding_a_manifest_json_is_refused_and_untouched(models, tmp_path: Path) -> None:
    webapp = tmp_path / "webapp"
    (webapp / "static").mkdir(parents=True)
    (webapp / "manifest.json").write_text('{"name": "my web app"}')
    (webapp / "index.html").write_text("<html></html>")
    (webapp / "static" / "app.js").write_text("alert(1)")
    before = _tree(webapp)
    with pytest.raises(FileExistsError, match=r"webapp: the directory is not empty .*index.html, manifest.json"):
        save_model(models["naive"], webapp)
    assert _tree(webapp) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["webapp"]


def test_a_users_old_backup_beside_the_model_is_never_deleted(models, tmp_path: Path) -> None:
    backup = tmp_path / ".m.old"
    backup.mkdir()
    (backup / "precious.txt").write_text("my backup")
    for name in ("naive", "fun", "naive"):
        save_model(models[name], tmp_path / "m")
    (tmp_path / "m" / "NOTES.md").write_text("notes beside the model")  # foreign files in a gfun directory stay
    save_model(models["fun"], tmp_path / "m")
    assert (backup / "precious.txt").read_text() == "my backup"
    assert (tmp_path / "m" / "NOTES.md").read_text() == "notes beside the model"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".m.old", "m"]
    assert len([p for p in (tmp_path / "m").iterdir() if p.name.startswith("v-")]) == 1


def test_the_current_directory_with_other_files_is_refused(models, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.jsonl").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileExistsError, match=r"cannot save a model to \.: .*train.jsonl"):
        check_model_destination(".")
    with pytest.raises(FileExistsError):
        save_model(models["naive"], ".")
    assert sorted(os.listdir(tmp_path)) == ["train.jsonl"]


def test_an_empty_directory_is_adopted(models, tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    save_model(models["naive"], target)
    assert load_model(target).classes_ == models["naive"].classes_
    with pytest.raises(FileExistsError, match="overwrite=True"):
        check_model_destination(target, overwrite=False)


def test_destinations_that_cannot_be_written_are_refused_before_anything_is_created(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(NotADirectoryError, match="exists and is not a directory"):
        check_model_destination(a_file)
    with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
        check_model_destination(a_file / "sub" / "m")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError, match="dangling"):
        check_model_destination(tmp_path / "dangling")
    check_model_destination(tmp_path / "new" / "deeper" / "m")  # a new path under a writable directory is fine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "file"]


def test_a_read_only_parent_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        try:
            with pytest.raises(PermissionError, match="not writable"):
                check_model_destination(ro / "m")
        finally:
            ro.chmod(0o755)
        return
    # as root every directory is writable: check as an unprivileged user in a forked child
    import tempfile

    ro = Path(tempfile.mkdtemp(dir="/tmp"))
    ro.chmod(0o755)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.setuid(65534)
            check_model_destination(ro / "m")
        except PermissionError as exc:
            os.write(write, str(exc).encode())
            code = 3
        finally:
            os._exit(code)
    os.close(write)
    try:
        _, status = os.waitpid(pid, 0)
        message = os.read(read, 4096).decode()
    finally:
        os.close(read)
        shutil.rmtree(ro)
    assert os.waitstatus_to_exitcode(status) == 3
    assert "not writable" in message and str(ro) in message


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_model_directories_honour_the_umask(models, tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        path = save_model(models["naive"], tmp_path / "m")
    finally:
        os.umask(old)
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode & 0o777
        assert mode == (0o777 if p.is_dir() else 0o666) & ~umask, (p, oct(mode))


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


def test_a_reader_always_finds_a_complete_model_when_a_save_replaces_the_one_it_reads(
        demo, models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gfun.persistence.loading as model_loading

    path = save_model(models["naive"], tmp_path / "m")
    first_version = _version(path).name
    real_read_state = model_loading._read_state
    calls = []

    def read_state_during_a_save(dir_fd, where, manifest):
        calls.append(where.name)
        if len(calls) == 1:  # the reader followed CURRENT to the old version; a save replaces it now
            save_model(models["fun"], path)
            assert not (path / first_version).exists()
        return real_read_state(dir_fd, where, manifest)

    monkeypatch.setattr(model_loading, "_read_state", read_state_during_a_save)
    loaded = load_model(path)
    assert calls[0] == first_version and calls[1] == _version(path).name
    np.testing.assert_array_equal(loaded.predict(demo[1]), models["fun"].predict(demo[1]))


def test_a_save_that_dies_before_the_swap_leaves_the_old_model(demo, models, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import gfun.persistence.saving as model_saving

    path = save_model(models["naive"], tmp_path / "m")
    old = _version(path).name

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(model_saving, "write_bytes_atomic", crash)
    with pytest.raises(KeyboardInterrupt):
        save_model(models["fun"], path)
    monkeypatch.undo()
    assert sorted(p.name for p in path.iterdir()) == [".gfun-model", "CURRENT", old]
    np.testing.assert_array_equal(load_model(path).predict(demo[1]), models["naive"].predict(demo[1]))
    # a save killed with SIGKILL leaves its half-written version folder: ignored by readers, removed by the next save
    leftover = path / "v-20260101T000000000000Z-0123abcd"
    leftover.mkdir()
    (leftover / "state.json").write_text("{")
    np.testing.assert_array_equal(load_model(path).predict(demo[1]), models["naive"].predict(demo[1]))
    save_model(models["fun"], path)
    assert not leftover.exists() and len([p for p in path.iterdir() if p.name.startswith("v-")]) == 1


# ----------------------------------------------------------------------------------------------- issue 15: loading
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


def test_state_flattening_helpers_round_trip_components() -> None:
    """put_state(s) / load_state(s): a component's arrays under a prefix, and back (the one flattening code)."""
    from gfun.core.state import load_state, load_states, prefixed, put_state, put_states, sub_arrays
    from gfun.text.tfidf import TfidfVectorizer

    vecs = {lang: TfidfVectorizer(lang, stopwords=False, stem=False).fit([f"{lang} cat", f"{lang} dog cat"])
            for lang in ("en", "it")}
    arrays: dict[str, np.ndarray] = {"other/x": np.zeros(1)}
    metas = put_states(vecs, "{}/vec/", arrays)
    assert sorted(arrays) == ["en/vec/idf", "it/vec/idf", "other/x"]
    loaded = load_states(TfidfVectorizer, metas, arrays, "{}/vec/")
    for lang, vec in vecs.items():
        assert loaded[lang].vocabulary_ == vec.vocabulary_
        np.testing.assert_array_equal(loaded[lang].transform(["cat dog"]).toarray(),
                                      vec.transform(["cat dog"]).toarray())
    single: dict[str, np.ndarray] = {}
    meta = put_state(vecs["en"], "a/b/", single)
    assert list(single) == ["a/b/idf"]
    assert load_state(TfidfVectorizer, meta, single, "a/b/").vocabulary_ == vecs["en"].vocabulary_
    assert sub_arrays(prefixed({"k": 1, "l": 2}, "p/"), "p/") == {"k": 1, "l": 2}
