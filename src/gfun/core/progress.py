"""Progress a person can read on long steps: a bar on a terminal, log lines in a log, a callback for programs.

A long step (word vectors encoded one batch at a time, the epochs of a neural view, the folds of a kernel SVM)
reports through :class:`Progress` or :func:`progress_bar`, and the output follows where standard error goes:

* a terminal, with bars wanted: a tqdm bar (count, rate, time left);
* anything else (a file, a pipe, a notebook's captured stream): an INFO line on the step's logger every
  ``log_every`` seconds (``e5 word vectors [de]: 2,560 of 12,000 words (21%), 51 s, about 3 min left``), so that a
  log shows a long step moving while a short step adds nothing to its usual closing line;
* ``progress=callable``: called as ``progress(done, total)`` after every update (programs, notebooks, tests).

Bars are wanted when the step's own ``progress`` flag says so, or everywhere inside :func:`show_bars` (``True``),
which the ``gfun`` command turns on; ``show_bars(False)`` (``gfun -q``, which also raises logging to WARNING)
turns every bar off whatever the flags say. tqdm is imported only when a bar is drawn.

A terminal that reports no size (``script`` run without a terminal of its own, ``docker exec`` or ``ssh`` without
``-t``, some CI runners: 0 columns and 0 lines) still gets its bars, :data:`FALLBACK_SIZE` wide; tqdm alone draws
nothing there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Progress", "bars_wanted", "enable_hugging_face_bars", "format_duration", "hugging_face_bars_as_ours",
           "progress_bar", "show_bars", "stderr_is_terminal"]

logger = logging.getLogger(__name__)

#: Seconds between two progress log lines of a step (the first comes after this long).
LOG_EVERY = 10.0

#: Columns and lines assumed of a terminal that reports no size (tqdm would draw nothing there).
FALLBACK_SIZE = (80, 24)

#: ``None``: each step's ``progress`` flag decides; ``True``: a bar for every long step; ``False``: none at all.
_BARS: bool | None = None

ProgressArg = bool | Callable[[int, int], Any] | None


def stderr_is_terminal() -> bool:
    """Whether standard error is an interactive terminal (not a file or a pipe)."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextlib.contextmanager
def show_bars(enabled: bool | None) -> Iterator[None]:
    """Within the block: a bar for every long step (``True``), for none (``False``, what ``gfun -q`` sets), or as
    each step's own ``progress`` flag says (``None``, the default). Bars are drawn on a terminal only."""
    global _BARS
    saved, _BARS = _BARS, enabled
    try:
        yield
    finally:
        _BARS = saved


def bars_wanted(flag: Any = None) -> bool:
    """Whether a step whose ``progress`` argument is ``flag`` draws a tqdm bar now."""
    if _BARS is False or not stderr_is_terminal():
        return False
    return flag is True or _BARS is True


def progress_bar(iterable: Any, *, enabled: bool, desc: str, total: int | None = None) -> Any:
    """A tqdm progress bar over ``iterable`` when bars are wanted (:func:`bars_wanted`) and standard error is a
    terminal, else ``iterable`` itself.

    Redirected to a file or a pipe (``gfun -v train 2>log``), a bar would write every one of its updates; the
    callers log one line per phase (frozen pass, epoch, extraction) instead.
    """
    if not bars_wanted(enabled):
        return iterable
    return _tqdm(iterable, desc=desc, total=total)


def _terminal_size() -> tuple[int, int]:
    """The columns and lines standard error's terminal reports (0 where it reports none, or cannot be asked)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor, or a closed one
        return 0, 0
    return size.columns, size.lines


def _tqdm(iterable: Any = None, **kw: Any) -> Any:
    """A tqdm bar on standard error, removed when done. Where the terminal reports no size, :data:`FALLBACK_SIZE`:
    tqdm would take it for -1 columns and -1 lines, and draw nothing."""
    from tqdm.auto import tqdm

    columns, lines = _terminal_size()
    return tqdm(iterable, leave=False, ncols=columns if columns > 0 else FALLBACK_SIZE[0],
                nrows=lines if lines > 0 else FALLBACK_SIZE[1], **kw)


def format_duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``1 h 05 min``: a duration as a person reads it."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """Progress of a step of ``total`` units: a bar, periodic log lines or a callback (see the module docstring).

    Parameters
    ----------
    total : int
        Units of work in the step (words, documents, folds...).
    desc : str
        What the step is, as the bar and the log lines name it (``"e5 word vectors [de]"``).
    unit : str
        The unit's name in the plural (``"words"``).
    progress : bool, callable or None
        ``True``: a bar when standard error is a terminal; a callable: called as ``progress(done, total)`` after
        every update; ``None``/``False``: bars only inside ``show_bars(True)``. Log lines are written whenever no
        bar is drawn.
    log : logging.Logger, optional
        Where the log lines go (default: this module's logger).
    log_every : float, optional
        Seconds between two log lines (default :data:`LOG_EVERY`; the first comes after this long, so a short step
        logs nothing).

    Examples
    --------
    >>> with Progress(len(words), "e5 word vectors [de]", unit="words") as p:  # doctest: +SKIP
    ...     for batch in batches:
    ...         encode(batch)
    ...         p.update(len(batch))
    """

    def __init__(self, total: int, desc: str, *, unit: str = "items", progress: ProgressArg = None,
                 log: logging.Logger | None = None, log_every: float | None = None) -> None:
        self.total = int(total)
        self.desc = desc
        self.unit = unit
        self.callback = progress if callable(progress) else None
        self.log = log or logger
        self.log_every = float(LOG_EVERY if log_every is None else log_every)
        self.done = 0
        self.started = time.perf_counter()
        self._last_log = self.started
        self._bar = None
        if bars_wanted(True if progress is True else None):
            self._bar = _tqdm(total=self.total, desc=desc, unit=unit.rstrip("s") or unit)

    def update(self, n: int = 1) -> None:
        """``n`` more units done."""
        self.done += int(n)
        if self._bar is not None:
            self._bar.update(int(n))
        elif self.log.isEnabledFor(logging.INFO):
            now = time.perf_counter()
            if now - self._last_log >= self.log_every and self.done < self.total:
                self._last_log = now
                self.log.info("%s", self.message(now))
        if self.callback is not None:
            self.callback(self.done, self.total)

    def message(self, now: float | None = None) -> str:
        """``desc: done of total unit (share), elapsed, about ... left``."""
        elapsed = (time.perf_counter() if now is None else now) - self.started
        text = f"{self.desc}: {self.done:,} of {self.total:,} {self.unit}"
        if self.total > 0:
            text += f" ({100 * self.done / self.total:.0f}%)"
        text += f", {format_duration(elapsed)}"
        if 0 < self.done < self.total:
            text += f", about {format_duration(elapsed * (self.total - self.done) / self.done)} left"
        return text

    def close(self) -> None:
        """Remove the bar (the caller logs the step's closing line)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@contextlib.contextmanager
def hugging_face_bars_as_ours() -> Iterator[None]:
    """transformers' own bars (``Loading weights``, ``Writing model shards``) follow gfun's rule within the block:
    none when standard error is not a terminal or inside ``show_bars(False)``."""
    hf_logging = sys.modules.get("transformers.utils.logging")
    off = (hf_logging is not None and hf_logging.is_progress_bar_enabled()
           and (_BARS is False or not stderr_is_terminal()))
    if off:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if off:
            enable_hugging_face_bars(hf_logging)


def enable_hugging_face_bars(hf_logging: Any) -> None:
    """Turn transformers' bars back on (``hf_logging`` is ``transformers.utils.logging``), without the warning
    huggingface_hub gives when it was imported with ``HF_HUB_DISABLE_PROGRESS_BARS=1`` (as under ``gfun -q``): its
    own bars then stay off whatever is asked, which is what that setting means."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Cannot enable progress bars")
        hf_logging.enable_progress_bar()

