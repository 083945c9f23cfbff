"""Saving fitted models (gfun.persistence.saving): exact round trips, destinations, atomic replacement, no pickle."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from gfun.errors import UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.directory import FORMAT_VERSION
from gfun.persistence.loading import load_model, read_manifest
from gfun.persistence.saving import check_model_destination, save_model
from gfun.views.posteriors import PosteriorsView
from tests.unprivileged import as_unprivileged

LANGS = ["de", "en", "it"]  # the languages of the conftest sample


def _version(path: Path) -> Path:
    """The version folder that ``path``'s CURRENT pointer names."""
    return path / json.loads((path / "CURRENT").read_text(encoding="utf-8"))["version"]


def _flat_params(est: object) -> dict:
    """Every parameter, nested ones included, without the nested estimator objects (compared by their values)."""
    return {k: v for k, v in est.get_params(deep=True).items() if not hasattr(v, "get_params")}


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
    assert _flat_params(loaded) == _flat_params(model)
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
    assert loaded.meta.C_grid == (1.0, 10.0)


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
    assert manifest["config"]["meta"]["params"]["C_grid"] == [1.0, 10.0] and manifest["config"]["random_state"] == 0
    for fname in ("state.json", "arrays.npz"):
        assert manifest["files"][fname] == hashlib.sha256((_version(saved) / fname).read_bytes()).hexdigest()
        assert manifest["sizes"][fname] == (_version(saved) / fname).stat().st_size
    pointer = json.loads((saved / "CURRENT").read_text(encoding="utf-8"))
    assert pointer["manifest_sha256"] == hashlib.sha256((_version(saved) / "manifest.json").read_bytes()).hexdigest()
    assert json.loads((saved / ".gfun-model").read_text(encoding="utf-8"))["magic"] == "gfun model directory"
    json.loads((_version(saved) / "state.json").read_text(encoding="utf-8"))  # plain JSON
    with np.load(_version(saved) / "arrays.npz", allow_pickle=False) as npz:  # plain numeric arrays only
        assert all(npz[k].dtype != object for k in npz.files)


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

    custom = GeneralizedFunnelling(views=[('u', Unregistered(random_state=0))], random_state=0,
                                   meta=default_meta().set_params(C=1.0))
    custom.fit(demo[0].subset(range(0, len(demo[0]), 4)))
    with pytest.raises(ValueError, match="is not registered.*register_view"):
        save_model(custom, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


def test_save_refuses_object_arrays(models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    naive = models["naive"]
    meta, arrays = naive.get_state()
    arrays["oops"] = np.array([{"a": 1}], dtype=object)
    monkeypatch.setattr(naive, "get_state", lambda: (meta, arrays))
    with pytest.raises(TypeError, match="dtype object"):
        save_model(naive, tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------- destinations
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
    try:
        code, message = as_unprivileged(lambda: check_model_destination(ro / "m"))
    finally:
        shutil.rmtree(ro)
    assert code == 3 and message.startswith("PermissionError")
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


# ------------------------------------------------------------------- links, special files and concurrent saves
def test_a_current_that_is_a_symbolic_link_is_refused_before_the_fit_and_nothing_is_written_through(
        demo, models, tmp_path: Path) -> None:
    path = save_model(models["naive"], tmp_path / "m")
    old = _version(path).name
    victim = tmp_path / "victim.txt"
    victim.write_text("precious, outside the model directory")
    (path / "CURRENT").unlink()
    (path / "CURRENT").symlink_to(victim)
    with pytest.raises(FileExistsError, match=r"CURRENT is a symbolic link"):
        check_model_destination(path)  # before an expensive fit
    with pytest.raises(FileExistsError, match=r"CURRENT is a symbolic link"):
        save_model(models["fun"], path)
    assert victim.read_text() == "precious, outside the model directory"
    assert (path / "CURRENT").is_symlink() and (path / old / "state.json").is_file()  # the version is kept
    assert sorted(p.name for p in path.iterdir()) == [".gfun-model", "CURRENT", old]


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_a_current_that_is_a_fifo_or_dev_zero_is_refused_without_reading_it(models, tmp_path: Path,
                                                                            special: str) -> None:
    path = save_model(models["naive"], tmp_path / "m")
    old = _version(path).name
    (path / "CURRENT").unlink()
    if special == "fifo":
        os.mkfifo(path / "CURRENT")  # reading it would wait for a writer forever
    else:
        (path / "CURRENT").symlink_to("/dev/zero")  # reading it would never end
    # check_model_destination refuses first: the save below never runs on a version that would hang on it
    with pytest.raises(FileExistsError, match=r"CURRENT is (not a regular file|a symbolic link)"):
        check_model_destination(path)
    with pytest.raises(FileExistsError, match=r"CURRENT is (not a regular file|a symbolic link)"):
        save_model(models["fun"], path)
    assert (path / old / "state.json").is_file()


def _alarm(seconds: int):
    """A safety net: a call that would hang raises an error after ``seconds`` instead."""
    import signal

    class Hung(RuntimeError):  # not an OSError, which a save might catch
        pass

    def fire(signum, frame):
        signal.alarm(2)  # again, should the first one be swallowed
        raise Hung(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    return lambda: (signal.alarm(0), signal.signal(signal.SIGALRM, previous))


def test_a_current_replaced_by_a_fifo_during_the_fit_does_not_hang_the_save(models, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """check_model_destination passed before the fit; a FIFO that appears meanwhile is refused under the lock."""
    path = save_model(models["naive"], tmp_path / "m")
    old = _version(path).name
    naive = models["naive"]
    real_get_state = naive.get_state

    def get_state_then_swap():
        (path / "CURRENT").unlink()
        os.mkfifo(path / "CURRENT")
        return real_get_state()

    monkeypatch.setattr(naive, "get_state", get_state_then_swap)
    disarm = _alarm(20)
    try:
        with pytest.raises(FileExistsError, match=r"CURRENT is not a regular file"):
            save_model(naive, path)
    finally:
        disarm()
    assert stat.S_ISFIFO(os.lstat(path / "CURRENT").st_mode)
    assert sorted(p.name for p in path.iterdir()) == [".gfun-model", "CURRENT", old]  # no version folder left


def test_two_saves_into_the_same_new_directory_at_once_both_succeed(demo, models, tmp_path: Path) -> None:
    """The claim of a new directory (its marker) happens under the directory's lock: no save sees the other's
    temporary marker and refuses the directory after its fit; the last writer wins."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    failures = []
    for trial in range(12):
        target = tmp_path / f"new-{trial}"
        barrier = ctx.Barrier(2)
        errors = ctx.Queue()

        def save(name: str, barrier=barrier, errors=errors, target=target) -> None:
            barrier.wait()
            try:
                save_model(models[name], target)
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                errors.put(f"{type(exc).__name__}: {exc}")

        procs = [ctx.Process(target=save, args=(name,)) for name in ("naive", "fun")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        while not errors.empty():
            failures.append(errors.get())
        if not failures:
            assert read_manifest(target)["estimator"] in ("NaiveClassifier", "GeneralizedFunnelling")
            assert len([p for p in target.iterdir() if p.name.startswith("v-")]) == 1
            assert sorted(p.name for p in target.iterdir() if not p.name.startswith("v-")) == [".gfun-model",
                                                                                                "CURRENT"]
    assert failures == []
