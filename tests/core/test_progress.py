"""Progress a person can read on long steps: bars on a terminal only, log lines with the time left
elsewhere, callbacks for programs, and nothing at all under ``gfun -q``."""

from __future__ import annotations

import io
import logging
import sys

import numpy as np
import pytest

from gfun.cli.main import main
from gfun.core.progress import Progress, bars_wanted, format_duration, progress_bar, show_bars


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0.4, 45, 89, 180, 3000, 3 * 3600 + 5 * 60)] == [
        "0 s", "45 s", "89 s", "3 min", "50 min", "3 h 05 min"]


def test_callback_and_log_lines_with_the_time_left(caplog: pytest.LogCaptureFixture) -> None:
    calls = []
    log = logging.getLogger("gfun.test-progress")
    with caplog.at_level(logging.INFO, logger=log.name):
        with Progress(10, "words [de]", unit="words", progress=lambda done, total: calls.append((done, total)),
                      log=log, log_every=0) as p:
            for _ in range(5):
                p.update(2)
    assert calls == [(2, 10), (4, 10), (6, 10), (8, 10), (10, 10)]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4 and lines[0].startswith("words [de]: 2 of 10 words (20%), ")  # none once done
    assert all(" left" in line for line in lines)
    # a short step (under log_every) logs nothing: its caller's closing line is enough
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=log.name), Progress(10, "quick", log=log) as p:
        p.update(10)
    assert not caplog.records


def test_bars_on_a_terminal_only_and_never_inside_show_bars_false(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [1, 2, 3]
    assert not bars_wanted(True)  # standard error captured: not a terminal
    with show_bars(True):
        assert progress_bar(items, enabled=False, desc="x") is items
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert bars_wanted(True) and not bars_wanted(None)
    with show_bars(True):  # the gfun command: a bar for every long step
        assert bars_wanted(None) and progress_bar(items, enabled=False, desc="x") is not items
        with Progress(3, "step", progress=None) as p:
            p.update(3)
        assert "step" in sys.stderr.getvalue()
    with show_bars(False):  # gfun -q: none, whatever a step asks for
        assert not bars_wanted(True) and progress_bar(items, enabled=True, desc="x") is items
    assert not bars_wanted(None)  # restored


def test_quiet_silences_progress_and_the_command_shows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a long step sees inside `gfun` on a terminal: bars and INFO lines; inside `gfun -q`: neither."""
    import gfun.cli.main

    seen = {}

    def command(args) -> int:
        seen[args.quiet] = (bars_wanted(None), logging.getLogger("gfun.wordvectors.encoder").isEnabledFor(logging.INFO))
        return 0

    monkeypatch.setattr(gfun.cli.main, "cmd_info", command)
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["info", "any"]) == 0 and main(["-q", "info", "any"]) == 0
    assert seen == {False: (True, True), True: (False, False)}
    assert not bars_wanted(None)  # left as it was


def test_rbf_svm_folds_log_the_time_left(caplog: pytest.LogCaptureFixture) -> None:
    from gfun.svm.kernel import RBFSVMOvR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    with caplog.at_level(logging.DEBUG, logger="gfun.svm.kernel"):
        RBFSVMOvR(C=1.0, cv=3, probability=True, verbose=True, random_state=0).fit(X, (X[:, :2] > 0).astype(int))
    assert all(r.levelno == logging.DEBUG for r in caplog.records if "fold" in r.getMessage())  # quick folds
    folds = [r.getMessage() for r in caplog.records if "fold" in r.getMessage()]
    assert len(folds) == 3 and all("60 documents" in m for m in folds)
    assert "about" in folds[0] and "left" in folds[0] and "left" not in folds[-1]


@pytest.mark.torch
def test_encoder_word_vectors_report_progress_within_a_language(tmp_path, caplog, monkeypatch) -> None:
    """Words encoded one at a time (e5, ~20 ms each): a callback per batch, log lines while it runs."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from gfun.wordvectors.encoder import EncoderWordVectors
    from tests.neural_fixtures import tiny_bert_folder

    words = [f"wort{i}" for i in range(23)] + ["haus", "katze"]
    folder = tiny_bert_folder(tmp_path / "bert", words * 3)
    pair = (transformers.AutoModel.from_pretrained(folder), transformers.AutoTokenizer.from_pretrained(folder))
    calls = []
    source = EncoderWordVectors(pair, batch_size=4, cache=False, progress=lambda d, n: calls.append((d, n)))
    matrix, found = source.lookup("de", words)
    assert matrix.shape == (25, 32) and found.all()
    assert calls[-1] == (25, 25) and len(calls) == 7 and [d for d, _ in calls] == sorted(d for d, _ in calls)
    # without a callback, the log shows the step moving (here every update: log_every patched to 0)
    import gfun.core.progress

    monkeypatch.setattr(gfun.core.progress, "LOG_EVERY", 0.0)
    with caplog.at_level(logging.INFO, logger="gfun.wordvectors.encoder"):
        EncoderWordVectors(pair, batch_size=4, cache=False).lookup("it", [w + "x" for w in words])
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("encoder:model:isolated [it]: 4 of 25 words (16%)") and "left" in m for m in lines), lines
    assert lines[-1].startswith("encoder:model:isolated [it]: 25 words (25 new) encoded in")


def test_reading_a_large_vec_file_logs_how_far_it_is(tmp_path, caplog, monkeypatch) -> None:
    """A MUSE .vec file (200,000 lines) is streamed for each language: the log shows the reading move."""
    import gfun.core.progress
    import gfun.wordvectors.vecfile as vecfile

    monkeypatch.setattr(gfun.core.progress, "LOG_EVERY", 0.0)
    monkeypatch.setattr(vecfile, "_PROGRESS_STEP", 100)
    path = tmp_path / "wiki.multi.xx.vec"
    path.write_text("500 2\n" + "".join(f"w{i} {i} 1\n" for i in range(500)), encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="gfun.wordvectors.vecfile"):
        matrix, found = vecfile.read_vec_subset(path, ["w450", "nowhere"])
    assert found.tolist() == [True, False] and matrix[0].tolist() == [450.0, 1.0]
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("wiki.multi.xx.vec: 100 of 500 lines (20%)") and len(lines) == 4, lines


# ---------------------------------------------------------------------------------------------- a real terminal
def run_in_terminal(argv: list[str], *, size: tuple[int, int] | None = None, env: dict | None = None,
                    timeout: float = 120) -> bytes:
    """What ``argv`` writes to a pseudo-terminal (its stdin, stdout and stderr): ``size`` (lines, columns) as a
    window reports it, or none at all (0 x 0), as under ``script`` started without a terminal of its own."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import subprocess
    import termios
    import time

    master, slave = pty.openpty()
    if size is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal (EIO)
                break
            if not data:
                break
            out += data
    finally:
        os.close(master)
        proc.kill() if proc.poll() is None else None
        proc.wait(timeout=30)
    return out


_STEP = ("import time\n"
         "from gfun.core.progress import Progress, show_bars\n"
         "with show_bars(True), Progress(20, 'step', unit='words') as p:\n"
         "    for _ in range(20):\n"
         "        time.sleep(0.03)\n"
         "        p.update(1)\n")


@pytest.mark.parametrize("size", [None, (24, 100)], ids=["no-size", "24x100"])
def test_a_bar_is_drawn_in_a_terminal_with_or_without_a_size(size: tuple[int, int] | None) -> None:
    """The bar updates in place (carriage returns), also where the terminal reports no size (0 x 0: ``script`` run
    without a terminal, ``docker exec`` without ``-t``), where tqdm alone measures -1 columns and draws nothing."""
    out = run_in_terminal([sys.executable, "-c", _STEP], size=size)
    frames = [f for f in out.decode("utf-8").split("\r") if f.startswith("step:")]
    assert len(frames) >= 3, out  # the first frame and at least two updates, each after a carriage return
    assert frames[0].startswith("step:   0%|") and "/20 [" in frames[-1]
    assert all(len(f.rstrip()) <= (size[1] if size else 80) for f in frames), frames  # one line of the terminal


def test_gfun_train_draws_its_bars_in_a_terminal(tmp_path) -> None:
    """A real command: the M view's .vec files read under ``gfun train`` in a terminal without a size draw a bar
    per file; with -q none."""
    import os

    from gfun.datasets.demo import load_demo
    from tests.synthetic_vectors import write_vec_files

    train, _ = load_demo()
    idx = np.concatenate([ix[:20] for lang, ix in train.by_language().items() if lang in ("de", "en")])
    train.subset(np.sort(idx)).to_jsonl(tmp_path / "train.jsonl")
    write_vec_files(tmp_path / "vectors", langs=("de", "en"))
    env = {**os.environ, "GFUN_CACHE": str(tmp_path / "cache")}  # the files are read, not found in a cache
    argv = [sys.executable, "-m", "gfun.cli.main", "train", "--train", str(tmp_path / "train.jsonl"), "--views", "xm",
            "--word-vectors", f"vec:{tmp_path / 'vectors'}", "--model", str(tmp_path / "model")]
    out = run_in_terminal(argv, env=env)
    assert b"\rwiki.multi.de.vec:   0%|" in out and b"\rwiki.multi.en.vec:   0%|" in out, out
    assert b"model saved to" in out
