"""Outputs that cannot destroy data and exits that stay clean, through the command line.

The model directory itself (marker, atomic swap, loading checks) is tested in ``tests/persistence/``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus, read_corpus, read_jsonl
from gfun.datasets.demo import load_demo
from gfun.errors import CorpusFormatError
from gfun.persistence.loading import load_model, read_manifest
from tests.unprivileged import as_unprivileged

LANGS = ("de", "en", "it")


def _first(corpus: MultilingualCorpus, n: int) -> MultilingualCorpus:
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in LANGS])
    return corpus.subset(np.sort(idx))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    train, test = load_demo()
    path = tmp_path_factory.mktemp("safe-out")
    _first(train, 40).to_jsonl(path / "train.jsonl")
    _first(test, 5).to_jsonl(path / "test.jsonl")
    return path


@pytest.fixture(scope="module")
def model(folder: Path) -> Path:
    assert main(["-q", "train", "--train", str(folder / "train.jsonl"), "--meta-C", "1", "--model",
                 str(folder / "model")]) == 0
    return folder / "model"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["-q", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------- gfun train --model
def test_train_refuses_a_foreign_directory_before_reading_or_fitting(folder: Path, tmp_path: Path, capsys) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "manifest.json").write_text('{"name": "pwa"}')
    (site / "train.jsonl").write_text((folder / "train.jsonl").read_text())
    before = _tree(site)
    # the training file does not even exist: the destination is checked first, before anything expensive
    code, _, err = _cli(capsys, "train", "--train", tmp_path / "missing.jsonl", "--model", site)
    assert code == 1 and "Traceback" not in err
    assert f"{site}: the directory is not empty" in err and "manifest.json, train.jsonl" in err
    code, _, err = _cli(capsys, "train", "--train", site / "train.jsonl", "--meta-C", "1", "--model", site)
    assert code == 1 and "not a gfun model directory" in err
    assert _tree(site) == before and sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_train_refuses_a_file_and_a_busy_current_directory(folder: Path, tmp_path: Path, capsys,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    a_file = tmp_path / "model.bin"
    a_file.write_bytes(b"data")
    code, _, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--model", a_file)
    assert code == 1 and "model.bin: it exists and is not a directory" in err and a_file.read_bytes() == b"data"
    code, _, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--model", a_file / "sub")
    assert code == 1 and "is a file, not a directory" in err
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--model", ".")
    assert code == 1 and "cannot save a model to ." in err and "model.bin" in err
    assert sorted(os.listdir(tmp_path)) == ["model.bin"]


def test_train_replaces_its_own_model_and_keeps_a_users_backup(folder: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / ".m.old").mkdir()
    (tmp_path / ".m.old" / "keep.txt").write_text("backup")
    for _ in range(2):
        code, _, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--meta-C", "1", "--model",
                            tmp_path / "m")
        assert code == 0, err
    assert (tmp_path / ".m.old" / "keep.txt").read_text() == "backup"
    assert read_manifest(tmp_path / "m")["estimator"] == "GeneralizedFunnelling"


# ------------------------------------------------------------------------------------------- gfun predict --output
def test_predict_refuses_to_overwrite_its_input(folder: Path, model: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "docs.jsonl"
    data.write_text((folder / "test.jsonl").read_text())
    before = data.read_bytes()
    for output in (data, tmp_path / "sub" / ".." / "docs.jsonl"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        code, _, err = _cli(capsys, "predict", "--model", model, "--input", data, "--output", output)
        assert code == 1 and "is the input file" in err
    assert data.read_bytes() == before


def test_predict_refuses_to_write_inside_a_model_directory(folder: Path, model: Path, capsys) -> None:
    before = _tree(model)
    version = json.loads((model / "CURRENT").read_text())["version"]
    for output in (model / "CURRENT", model / version / "manifest.json", model / "predictions.jsonl"):
        code, _, err = _cli(capsys, "predict", "--model", model, "--input", folder / "test.jsonl", "--output", output)
        assert code == 1 and "inside the gfun model directory" in err, err
    assert _tree(model) == before
    load_model(model)


def test_predict_dash_writes_stdout_and_reads_stdin(folder: Path, model: Path, tmp_path: Path, capsys,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(capsys, "predict", "--model", model, "--input", folder / "test.jsonl", "--output", "-")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == read_jsonl(folder / "test.jsonl").ids
    assert os.listdir(tmp_path) == []  # no file named "-"
    stdin = io.TextIOWrapper(io.BytesIO((folder / "test.jsonl").read_bytes()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out2, err = _cli(capsys, "predict", "--model", model, "--input", "-", "--output", "-")
    assert code == 0, err
    assert out2 == out


def test_predict_writes_a_fifo_in_place_and_keeps_a_symlink(folder: Path, model: Path, tmp_path: Path,
                                                            capsys) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = _cli(capsys, "predict", "--model", model, "--input", folder / "test.jsonl", "--output", fifo)
    reader.join(30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file renamed over it
    assert len(received[0].decode().splitlines()) == len(read_jsonl(folder / "test.jsonl"))
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    code, _, err = _cli(capsys, "predict", "--model", model, "--input", folder / "test.jsonl", "--output", link)
    assert code == 0, err
    assert link.is_symlink() and real.read_text().count("\n") == len(read_jsonl(folder / "test.jsonl"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "pipe", "real.jsonl"]


def test_a_truncated_gz_input_names_the_file(folder: Path, model: Path, tmp_path: Path, capsys) -> None:
    full = gzip.compress((folder / "test.jsonl").read_bytes())
    cut = tmp_path / "test.jsonl.gz"
    cut.write_bytes(full[: len(full) // 2])
    with pytest.raises(CorpusFormatError, match=r"test.jsonl.gz: truncated or damaged gzip file"):
        read_corpus(cut)
    code, _, err = _cli(capsys, "predict", "--model", model, "--input", cut, "--output", tmp_path / "p.jsonl")
    assert code == 1 and "test.jsonl.gz: truncated or damaged gzip file" in err and "Traceback" not in err
    (tmp_path / "junk.tsv.gz").write_bytes(b"this is not gzip at all")
    with pytest.raises(CorpusFormatError, match=r"junk.tsv.gz: truncated or damaged gzip"):
        read_corpus(tmp_path / "junk.tsv.gz")


# ------------------------------------------------------------------------------------------- clean exits
def test_keyboard_interrupt_while_importing_or_fitting_exits_130_with_one_line(
        folder: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import gfun.cli.main
    from gfun.funnelling.generalized import GeneralizedFunnelling

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(gfun.cli.main, "build_parser", interrupt)  # where the heavy imports happen
    code, out, err = _cli(capsys, "--version")
    assert code == 130 and err == "gfun: interrupted\n" and out == ""
    monkeypatch.undo()
    monkeypatch.setattr(GeneralizedFunnelling, "fit", interrupt)
    code, out, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--model", tmp_path / "m")
    assert code == 130 and err == "gfun: interrupted\n"
    assert not (tmp_path / "m").exists()


def test_an_interrupt_that_a_library_turns_into_another_error_still_exits_130(capsys,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import gfun.cli.main

    def numpy_like_import(argv):  # numpy reports a Ctrl-C during its C-extension import as an ImportError
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt as exc:
            raise ImportError("Importing the numpy C-extensions failed") from exc

    before = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(gfun.cli.main, "_main", numpy_like_import)
    assert main(["--version"]) == 130
    assert capsys.readouterr().err == "gfun: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is before

    def broken(argv):
        raise ImportError("a real import error")

    monkeypatch.setattr(gfun.cli.main, "_main", broken)
    with pytest.raises(ImportError, match="real"):  # without a Ctrl-C, other errors are not disguised
        main(["--version"])


_CHILD = ("import sys\nfrom gfun.cli.main import main\nsys.stderr.write('ready\\n'); sys.stderr.flush()\n"
          "sys.exit(main())")


@pytest.mark.parametrize("delay", [0.02, 0.15, 0.5])
def test_sigint_at_any_moment_of_gfun_train_exits_130_with_one_line(folder: Path, tmp_path: Path,
                                                                    delay: float) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, "-q", "train", "--train", str(folder / "train.jsonl"),
                             "--meta-C", "1", "--model", str(tmp_path / "m")],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stderr.readline() == b"ready\n"  # gfun's code runs: from here on, a Ctrl-C is handled
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:  # the training finished before the signal arrived
        pytest.skip("gfun train finished before the interrupt")
    assert proc.returncode == 130 and err.decode() == "gfun: interrupted\n", err.decode()


def test_help_and_version_import_nothing_heavy() -> None:
    code = ("import sys\nfrom gfun.cli.main import main\n"
            "for argv in (['--version'], ['--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "heavy = [m for m in ('pandas', 'scipy', 'sklearn', 'torch') if m in sys.modules]\n"
            "sys.stderr.write(repr(heavy))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.stdout.startswith("gfun ") and "usage: gfun" in res.stdout
    assert res.stderr == "[]"


def test_output_dev_stdout_appends_to_a_redirected_file_without_replacing_it(folder: Path, model: Path,
                                                                            tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("first line\n")
    inode = log.stat().st_ino
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with open(log, "a") as out:  # `gfun predict --output /dev/stdout >> log.jsonl`
        res = subprocess.run([sys.executable, "-c", "import sys\nfrom gfun.cli.main import main\nsys.exit(main())",
                              "-q", "predict", "--model", str(model), "--input", str(folder / "test.jsonl"),
                              "--output", "/dev/stdout"], stdout=out, stderr=subprocess.PIPE, text=True, env=env,
                             timeout=120)
    assert res.returncode == 0, res.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == "first line" and len(lines) == 1 + len(read_jsonl(folder / "test.jsonl"))
    assert all(json.loads(line)["id"] for line in lines[1:])  # predictions only, no summary line
    assert log.stat().st_ino == inode and os.listdir(tmp_path) == ["log.jsonl"]


# ------------------------------------------------------------------------------------------- links and rights
def test_predict_resolves_a_symlinked_output_before_checking_it(folder: Path, model: Path, tmp_path: Path,
                                                                capsys) -> None:
    """A link (or a linked folder) leading into a model directory is refused like the real path."""
    before = _tree(model)
    version = json.loads((model / "CURRENT").read_text())["version"]
    (tmp_path / "current.jsonl").symlink_to(model / "CURRENT")
    (tmp_path / "manifest.jsonl").symlink_to(model / version / "manifest.json")
    (tmp_path / "models").symlink_to(model)
    for output in (tmp_path / "current.jsonl", tmp_path / "manifest.jsonl", tmp_path / "models" / "out.jsonl"):
        code, _, err = _cli(capsys, "predict", "--model", model, "--input", folder / "test.jsonl", "--output", output)
        assert code == 1 and "inside the gfun model directory" in err, err
    assert _tree(model) == before
    load_model(model)
    data = tmp_path / "docs.jsonl"
    data.write_text((folder / "test.jsonl").read_text())
    (tmp_path / "docs-link.jsonl").symlink_to(data)
    code, _, err = _cli(capsys, "predict", "--model", model, "--input", data, "--output", tmp_path / "docs-link.jsonl")
    assert code == 1 and "is the input file" in err
    assert data.read_text() == (folder / "test.jsonl").read_text()


def test_train_refuses_a_linked_or_special_current_before_fitting(model: Path, tmp_path: Path, capsys) -> None:
    """The destination check reads nothing that could hang or never end; the training file is not even read."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for name, make in (("link", lambda c: c.symlink_to(victim)), ("fifo", os.mkfifo),
                       ("zero", lambda c: c.symlink_to("/dev/zero"))):
        m = tmp_path / name
        shutil.copytree(model, m, symlinks=True)
        (m / "CURRENT").unlink()
        make(m / "CURRENT")
        code, _, err = _cli(capsys, "train", "--train", tmp_path / "missing.jsonl", "--model", m)
        assert code == 1 and "Traceback" not in err and "missing.jsonl" not in err, err
        assert "CURRENT is" in err and ("symbolic link" in err or "not a regular file" in err), err
    assert victim.read_text() == "precious"


def test_an_output_the_user_may_not_write_is_refused_before_predicting(folder: Path, tmp_path: Path) -> None:
    """A read-only file, or another user's 0644 file, in a directory the user may write: refused by the check that
    runs before the model is loaded, and by the writer itself; never replaced by a rename."""
    import tempfile

    from gfun.cli.output import check_prediction_output, prediction_output

    def write(output: str) -> None:
        with prediction_output(output) as fh:
            fh.write("replaced\n")

    if os.geteuid() != 0:
        locked = tmp_path / "locked.jsonl"
        locked.write_text("keep\n")
        locked.chmod(0o444)
        with pytest.raises(PermissionError, match="locked.jsonl"):
            check_prediction_output(str(locked), str(folder / "test.jsonl"))
        with pytest.raises(PermissionError, match="locked.jsonl"):
            write(str(locked))
        assert locked.read_text() == "keep\n"
        return
    shared = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        shared.chmod(0o777)
        for name, mode in (("read-only.jsonl", 0o444), ("roots.jsonl", 0o644)):
            target = shared / name
            target.write_text("root's data\n")
            target.chmod(mode)
            for action in (lambda t=target: check_prediction_output(str(t), "-"), lambda t=target: write(str(t))):
                code, message = as_unprivileged(action)
                assert code == 3 and "PermissionError" in message and name in message, (name, message)
            assert target.read_text() == "root's data\n" and target.stat().st_uid == 0
        assert sorted(os.listdir(shared)) == ["read-only.jsonl", "roots.jsonl"]
    finally:
        shutil.rmtree(shared)
