"""Resumable experiment machinery: run settings, data of a run, a store of completed cells, scoring.

An experiment is a set of *cells*, each identified by a key such as ``{"run": 0, "config": "xm"}``
(plus ``iteration``, ``target`` or ``fraction`` for the zero-shot and learning-curve experiments). A cell
fits one estimator and writes the per-language, per-class contingency counts of its predictions to
``<out>/cells/<experiment>/<key>.csv`` (and ``.parquet`` when pyarrow is importable), atomically, as
soon as it finishes. A restarted experiment skips the cells whose CSV exists, and every table is computed
from the stored cells only, so an interrupted and a clean run give the same tables.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gfun.core.atomic import write_bytes_atomic
from gfun.experiments.keys import check_key_value
from gfun.metrics.evaluation import UNLABELLED_FLAGGED
from gfun.metrics.measures import CONTINGENCY_COLUMNS, MEASURES, measures_from_contingency

__all__ = ["CellStore", "ExperimentSettings", "QUICK_SAMPLE", "SCORE_COLUMNS", "UNLABELLED_COUNTS", "cell_scores",
           "drop_view_cache", "evaluate_cell", "experiment_estimator", "load_run", "open_experiment", "run_cells",
           "sample_corpus", "view_memory", "with_view_cache"]

logger = logging.getLogger(__name__)

#: Documents per language (train, test) and number of languages of ``--quick``.
QUICK_SAMPLE: tuple[int, int, int] = (60, 30, 3)
#: What :func:`cell_scores` gives per language: the measures, ``F1_macro_present`` and ``unlabelled_flagged`` (the
#: share of the test documents without any true label that get a predicted label).
SCORE_COLUMNS: tuple[str, ...] = (*MEASURES, "F1_macro_present", UNLABELLED_FLAGGED)
#: Columns of a cell beside the contingency counts (the same on every class row of a language): the language's test
#: documents without any true label, and how many of them got at least one predicted label.
UNLABELLED_COUNTS: tuple[str, str] = ("n_unlabelled", "n_unlabelled_flagged")


@dataclasses.dataclass
class ExperimentSettings:
    """What an experiment runs on; saved beside the results, checked when an experiment resumes.

    Attributes
    ----------
    dataset : str
        Registry name (see :func:`gfun.datasets.registry.load_dataset`).
    runs : int
        Number of runs; run ``r`` loads the dataset's run ``r`` (resampled splits where the dataset has
        them) and seeds every estimator with ``seed + r``.
    meta_C : float, "cv" or None
        C of the meta-classifier (of the linear SVMs of the SVM baselines); ``None``: each method's default
        (:func:`gfun.configuration.build_estimator`: 1 for gFun and Fun, ``"cv"`` for the SVM baselines).
    seed : int
    data_dir : str, optional
    sample : (n_train, n_test, n_languages), optional
        Sample this many training and test documents per language (seeded by run) from the first
        ``n_languages`` training languages (alphabetically); ``--quick`` uses :data:`QUICK_SAMPLE`.
    languages : list of str, optional
        Restrict the training and test languages to these.
    n_jobs : int, optional
    view_params : dict, optional
        Extra parameters per view letter (not compared on resume when not JSON-able).
    view_cache : str, optional
        Folder where the views fitted in a run are cached and reused by the other configurations of the run
        (``GeneralizedFunnelling(memory=...)``): ``x``, ``xm`` and ``xmw`` fit the X view once. ``None``:
        ``<out>/.view-cache``; ``""``: no cache. A run's entries are deleted when the next run starts, and the
        folder when the experiment completes. Not part of the results' identity.
    """

    dataset: str = "demo"
    runs: int = 1
    meta_C: float | str | None = "cv"
    seed: int = 0
    data_dir: str | None = None
    sample: tuple[int, int, int] | None = None
    languages: list[str] | None = None
    n_jobs: int | None = None
    view_params: dict | None = None
    view_cache: str | None = None

    def identity(self) -> dict[str, Any]:
        """The settings that determine the results (JSON-able), compared when resuming."""
        out = {"dataset": self.dataset, "meta_C": self.meta_C, "seed": self.seed,
               "sample": list(self.sample) if self.sample else None, "languages": self.languages}
        try:
            out["view_params"] = json.loads(json.dumps(self.view_params))
        except TypeError:
            out["view_params"] = "<not serialisable>"
        return out


def with_view_cache(settings: ExperimentSettings, out: Path) -> ExperimentSettings:
    """``settings`` with its view cache located (``<out>/.view-cache`` unless given or disabled)."""
    if settings.view_cache is None:
        return dataclasses.replace(settings, view_cache=str(out / ".view-cache"))
    return settings


def view_memory(settings: ExperimentSettings, run: int) -> Path | None:
    """The cache folder of the views fitted in ``run`` (``None`` when caching is off)."""
    return Path(settings.view_cache) / f"run={run}" if settings.view_cache else None


def experiment_estimator(settings: ExperimentSettings, config: Any, run: int, *, zero_shot: bool = False) -> Any:
    """The unfitted estimator of ``config`` in run ``run``: :func:`gfun.configuration.build_estimator` with the
    settings' meta C, view parameters and jobs, seeded ``seed + run``, sharing the run's view cache."""
    from gfun.configuration import PARALLEL_READERS, build_estimator, parse_config

    view_params = settings.view_params
    method = (parse_config(config) if isinstance(config, str) else config).method
    if settings.data_dir and method in PARALLEL_READERS:  # parallel="auto" reads the experiment's data folder
        view_params = {**(view_params or {})}
        view_params[method] = {"data_dir": settings.data_dir, **view_params.get(method, {})}
    return build_estimator(config, meta_C=settings.meta_C, random_state=settings.seed + run, n_jobs=settings.n_jobs,
                           view_params=view_params, memory=view_memory(settings, run), zero_shot=zero_shot)


def drop_view_cache(settings: ExperimentSettings, keep_run: int | None = None) -> None:
    """Delete the cached views of every run but ``keep_run`` (all of them when ``None``)."""
    import shutil

    if not settings.view_cache or not Path(settings.view_cache).is_dir():
        return
    for folder in Path(settings.view_cache).glob("run=*"):
        if keep_run is None or folder.name != f"run={keep_run}":
            shutil.rmtree(folder, ignore_errors=True)
    if keep_run is None:
        shutil.rmtree(settings.view_cache, ignore_errors=True)


def sample_corpus(corpus: Any, n_per_language: int, languages: Sequence[str], rng: np.random.RandomState) -> Any:
    """Up to ``n_per_language`` documents of each of ``languages``, drawn without replacement, in corpus order."""
    groups = corpus.by_language()
    idx: list[int] = []
    for lang in languages:
        members = groups.get(lang)
        if members is None or not len(members):
            continue
        take = min(n_per_language, len(members))
        idx.extend(rng.choice(members, take, replace=False).tolist())
    return corpus.subset(np.sort(np.asarray(idx, dtype=np.int64)))


def load_run(settings: ExperimentSettings, run: int, *, zero_shot_test: bool = True) -> tuple[Any, Any]:
    """Training and test corpora of one run.

    Parameters
    ----------
    settings : ExperimentSettings
    run : int
    zero_shot_test : bool
        Append the dataset's zero-shot test documents (languages without training data) to the test set.

    Returns
    -------
    train, test : MultilingualCorpus
    """
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.datasets.registry import load_dataset

    splits = load_dataset(settings.dataset, data_dir=settings.data_dir, run=run)
    train, test = splits.train, splits.test
    zs = splits.test_zeroshot if zero_shot_test else None
    langs = list(settings.languages) if settings.languages else None
    if settings.sample is not None:
        n_train, n_test, n_langs = settings.sample
        pool = langs or train.languages
        langs = sorted(pool)[:n_langs] if n_langs else sorted(pool)
        rng = np.random.RandomState(settings.seed + run)
        train = sample_corpus(train, n_train, langs, rng)
        test = sample_corpus(test, n_test, langs, rng)
        zs = None  # the quick/sampled setting keeps to the sampled languages
    elif langs:
        train, test = train.select(langs), test.select(langs)
        zs = zs.select(langs) if zs is not None else None
    if zs is not None and len(zs):
        test = MultilingualCorpus.concat([test, zs])
    logger.info("run %d: train %s; test %s", run, train, test)
    return train, test


def evaluate_cell(estimator: Any, train: Any, test: Any) -> pd.DataFrame:
    """Fit ``estimator`` on ``train`` and return per-language, per-class contingency counts on ``test``.

    Languages the fitted estimator cannot serve (:class:`gfun.errors.UnseenLanguageError`) get NaN
    counts. Columns: ``lang, class, TP, FP, FN, TN, n_unlabelled, n_unlabelled_flagged, n_train, fit_s,
    predict_s``; ``n_unlabelled`` and ``n_unlabelled_flagged`` (:data:`UNLABELLED_COUNTS`) count the language's
    test documents without any true label and those of them given a label; ``n_train`` is the number of
    training documents of the row's language (0: a zero-shot language).
    """
    from gfun.errors import UnseenLanguageError
    from gfun.metrics.evaluation import per_class_contingency, unlabelled_counts

    n_train = {lang: len(idx) for lang, idx in train.by_language().items()}
    t0 = time.perf_counter()
    estimator.fit(train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    frames = []
    for lang, idx in test.by_language().items():
        sub = test.subset(idx)
        try:
            pred = estimator.predict(sub)
            frame = per_class_contingency(sub.Y, pred, sub.langs, list(test.classes))
            frame = frame.assign(**dict(zip(UNLABELLED_COUNTS, unlabelled_counts(sub.Y, pred), strict=True)))
        except UnseenLanguageError:
            logger.debug("%s cannot serve language %s: NaN", type(estimator).__name__, lang)
            frame = pd.DataFrame({"lang": lang, "class": list(test.classes),
                                  **{c: math.nan for c in (*CONTINGENCY_COLUMNS, *UNLABELLED_COUNTS)}})
        frames.append(frame.assign(n_train=n_train.get(lang, 0)))
    out = pd.concat(frames, ignore_index=True)
    for c in (*CONTINGENCY_COLUMNS, *UNLABELLED_COUNTS):
        out[c] = out[c].astype(float)
    out["fit_s"] = fit_s
    out["predict_s"] = time.perf_counter() - t0
    return out


def _key_name(key: dict[str, Any]) -> str:
    return "__".join(f"{k}={check_key_value(k, v)}" for k, v in key.items())


def _parquet_available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class CellStore:
    """The completed cells of one experiment, one CSV (and Parquet) file per cell.

    Parameters
    ----------
    root : path
        Folder of the cells (created on first write).
    parquet : bool, optional
        Also write Parquet files (default: when pyarrow is importable).
    """

    def __init__(self, root: str | os.PathLike, parquet: bool | None = None) -> None:
        self.root = Path(root)
        self.parquet = _parquet_available() if parquet is None else parquet

    def path(self, key: dict[str, Any], suffix: str = ".csv") -> Path:
        """File of a cell."""
        return self.root / (_key_name(key) + suffix)

    def has(self, key: dict[str, Any]) -> bool:
        """Whether the cell is complete (its CSV, written last, exists)."""
        return self.path(key).is_file()

    def save(self, key: dict[str, Any], frame: pd.DataFrame) -> None:
        """Write a cell atomically: Parquet first (when enabled), then the CSV that marks it complete."""
        self.root.mkdir(parents=True, exist_ok=True)
        frame = frame.copy()
        for i, (k, v) in enumerate(key.items()):
            frame.insert(i, k, v)
        if self.parquet:
            write_bytes_atomic(self.path(key, ".parquet"), frame.to_parquet(None, index=False))
        write_bytes_atomic(self.path(key), frame.to_csv(index=False).encode("utf-8"))

    def load(self, key: dict[str, Any]) -> pd.DataFrame:
        """The stored frame of a cell (from its CSV)."""
        return pd.read_csv(self.path(key), keep_default_na=False, na_values=[""],
                           dtype={"lang": str, "class": str, "config": str})

    def load_all(self, keys: Iterable[dict[str, Any]]) -> pd.DataFrame:
        """The stored frames of ``keys`` concatenated, in the order given."""
        frames = [self.load(k) for k in keys]
        if not frames:
            raise ValueError("no cells to load")
        return pd.concat(frames, ignore_index=True)


def open_experiment(out: str | os.PathLike, name: str, settings: ExperimentSettings,
                    extra: dict[str, Any] | None = None, *, configs: Sequence[Any] = ()
                    ) -> tuple[Path, ExperimentSettings, CellStore]:
    """Start (or resume) experiment ``name`` in ``out``.

    First checks that the dataset can serve every configuration of ``configs`` (``upper`` needs a parallel
    corpus, and so do ``clesa`` and ``kcca`` by default; see
    :func:`gfun.configuration.check_configs_for_dataset`), then creates the folder, saves the
    settings (and ``extra``, more of what determines the results) as ``<name>-settings.json`` (or checks them
    against those of an earlier start, see :func:`write_settings`), locates the view cache
    (:func:`with_view_cache`) and opens the cell store ``<out>/cells/<name>``.

    Returns
    -------
    (out, settings, store)
    """
    from gfun.configuration import check_configs_for_dataset
    from gfun.datasets.registry import resolve_dataset_name

    check_configs_for_dataset(configs, resolve_dataset_name(settings.dataset), settings.view_params)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_settings(out / f"{name}-settings.json", settings, {"experiment": name, **(extra or {})})
    return out, with_view_cache(settings, out), CellStore(out / "cells" / name)


def run_cells(store: CellStore, cells: Sequence[tuple[dict[str, Any], Callable[[], pd.DataFrame]]], *,
              label: str = "experiment", settings: ExperimentSettings | None = None) -> dict[str, int]:
    """Compute the cells not stored yet, saving each as soon as it finishes.

    Parameters
    ----------
    store : CellStore
    cells : sequence of (key, compute)
        ``compute()`` returns the cell's contingency frame (see :func:`evaluate_cell`).
    label : str
        Name used in the progress log.
    settings : ExperimentSettings, optional
        The experiment's settings: its view cache is deleted once every cell is stored.

    Returns
    -------
    dict
        ``{"done": computed now, "skipped": found complete}``.
    """
    for key, _ in cells:  # every file name is checked before the first cell runs
        _key_name(key)
    done = skipped = 0
    total = len(cells)
    t_start = time.perf_counter()
    for i, (key, compute) in enumerate(cells, start=1):
        name = _key_name(key)
        if store.has(key):
            skipped += 1
            logger.info("%s [%d/%d] %s: already done, skipped", label, i, total, name)
            continue
        t0 = time.perf_counter()
        frame = compute()
        store.save(key, frame)
        done += 1
        logger.info("%s [%d/%d] %s: done in %.1f s (%.0f s elapsed)", label, i, total, name,
                    time.perf_counter() - t0, time.perf_counter() - t_start)
    if settings is not None:
        drop_view_cache(settings)
    return {"done": done, "skipped": skipped}


def cell_scores(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per-language measures from stored contingency counts.

    Parameters
    ----------
    frame : pandas.DataFrame
        Concatenated cells (columns ``keys``, ``lang``, ``class``, ``TP, FP, FN, TN``).
    keys : sequence of str
        Key columns identifying a cell (e.g. ``["run", "config"]``).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, language): the key columns, ``lang`` and :data:`SCORE_COLUMNS` (NaN for languages the
        cell could not serve; ``unlabelled_flagged`` NaN also where every test document has a label, or in cells
        stored without :data:`UNLABELLED_COUNTS`).
    """
    rows = []
    counted = all(c in frame.columns for c in UNLABELLED_COUNTS)
    for group, sub in frame.groupby([*keys, "lang"], sort=False):
        table = sub[list(CONTINGENCY_COLUMNS)].to_numpy(dtype=float)
        measures = dict.fromkeys(SCORE_COLUMNS, math.nan)
        if not np.isnan(table[:, 0]).any():
            measures.update(measures_from_contingency(table))
            n, flagged = sub[list(UNLABELLED_COUNTS)].iloc[0] if counted else (math.nan, math.nan)
            if n > 0:  # False for NaN
                measures[UNLABELLED_FLAGGED] = float(flagged) / float(n)
        rows.append({**dict(zip([*keys, "lang"], group, strict=True)), **measures})
    return pd.DataFrame(rows)


def write_settings(path: Path, settings: ExperimentSettings, extra: dict[str, Any]) -> None:
    """Save the settings of an experiment, or check them against those saved by an earlier start.

    Raises
    ------
    ValueError
        When ``path`` holds different settings (the stored cells would mix two experiments).
    """
    identity = {**settings.identity(), **extra}
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored != identity:
            diff = sorted(k for k in set(stored) | set(identity) if stored.get(k) != identity.get(k))
            raise ValueError(f"{path.parent} holds results of an experiment with other settings ({', '.join(diff)}); "
                             "use another --out folder")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, json.dumps(identity, indent=1).encode("utf-8"))
