"""Word vectors from ``.vec`` text files (fastText / MUSE format), read lazily for a vocabulary."""

from __future__ import annotations

import bz2
import gzip
import json
import logging
import lzma
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import numpy as np

from gfun.encoders._cache import gfun_cache_dir
from gfun.wordvectors.base import WordVectorSource, vocabulary_hash

__all__ = ["VecFileSource", "read_vec_header", "read_vec_subset"]

logger = logging.getLogger(__name__)

_SUFFIXES = ("", ".gz", ".xz", ".bz2")


#: Lines of a .vec file between two progress updates.
_PROGRESS_STEP = 10_000


def _open_binary(path: Path) -> IO[bytes]:
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def read_vec_header(path: str | os.PathLike[str]) -> tuple[int | None, int]:
    """Read the number of words (when the file declares it) and the dimension of a ``.vec`` file.

    Parameters
    ----------
    path : path-like
        ``.vec`` file, optionally ``.gz``/``.xz``/``.bz2`` compressed.

    Returns
    -------
    (n_words or None, dim)
    """
    with _open_binary(Path(path)) as fh:
        first = fh.readline().split()
    if len(first) == 2 and all(tok.isdigit() for tok in first):
        return int(first[0]), int(first[1])
    if len(first) < 2:
        raise ValueError(f"{path}: empty or malformed .vec file")
    return None, len(first) - 1


def read_vec_subset(
    path: str | os.PathLike[str],
    vocabulary: Sequence[str],
    *,
    fold_case: bool = True,
    max_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Stream a ``.vec`` file and keep only the vectors of a vocabulary.

    Memory is bounded by ``len(vocabulary) * dim`` floats whatever the size of the file; lines of
    words outside the vocabulary are split once and never parsed into numbers.

    Parameters
    ----------
    path : path-like
        ``.vec`` file (first line ``"<n> <dim>"`` optional), optionally compressed.
    vocabulary : sequence of str
        Words wanted, in row order.
    fold_case : bool
        A word absent from the file gets the vector of the first file word equal to it once
        lowercased (files list words by decreasing frequency, so the most frequent casing).
    max_rows : int, optional
        Read only the first ``max_rows`` words of the file (MUSE evaluates on the first 200,000).

    Returns
    -------
    matrix : numpy.ndarray
        float32, ``(len(vocabulary), dim)``, zero rows for words not found.
    found : numpy.ndarray
        bool, ``(len(vocabulary),)``.
    """
    from gfun.core.progress import Progress

    path = Path(path)
    n_file, dim = read_vec_header(path)
    total = min(x for x in (n_file, max_rows) if x is not None) if (n_file or max_rows) else 0
    exact: dict[str, list[int]] = {}
    lower: dict[str, list[int]] = {}
    for i, word in enumerate(vocabulary):
        exact.setdefault(word, []).append(i)
        if fold_case:
            lower.setdefault(word.lower(), []).append(i)
    matrix = np.zeros((len(vocabulary), dim), dtype=np.float32)
    found = np.zeros(len(vocabulary), dtype=bool)
    exact_done = np.zeros(len(vocabulary), dtype=bool)
    remaining = len(exact)
    n_rows = 0
    # a MUSE file has 200,000 lines: the log says how far the reading is (it stops once every word is found)
    with _open_binary(path) as fh, Progress(total, f"{path.name}", unit="lines", log=logger) as progress:
        for n_line, line in enumerate(fh):
            if n_line % _PROGRESS_STEP == 0 and n_line:
                progress.update(_PROGRESS_STEP)
            if n_line == 0:
                head = line.split()
                if len(head) == 2 and all(tok.isdigit() for tok in head):
                    continue
            n_rows += 1
            if max_rows is not None and n_rows > max_rows:
                break
            raw_word, _, rest = line.rstrip(b"\r\n").partition(b" ")
            word = raw_word.decode("utf-8", "replace")
            rows = exact.get(word)
            folded = lower.get(word.lower()) if fold_case else None
            if rows is None and folded is None:
                continue
            try:
                vec = np.array(rest.split(), dtype=np.float32)
            except ValueError:
                logger.warning("%s: unparsable line %d skipped", path, n_line + 1)
                continue
            if vec.shape != (dim,):
                logger.warning("%s: line %d has %d values, expected %d", path, n_line + 1, len(vec), dim)
                continue
            if not np.isfinite(vec).all():  # nan, inf, or a value beyond float32: every view it entered would be NaN
                bad = int(np.flatnonzero(~np.isfinite(vec))[0])
                raise ValueError(f"{path}, line {n_line + 1}: the vector of {word!r} has a non-finite value "
                                 f"({rest.split()[bad].decode('utf-8', 'replace')!r} in column {bad + 2}); fix or "
                                 "remove that line")
            if rows is not None:
                fresh = [r for r in rows if not exact_done[r]]
                if fresh:
                    matrix[fresh] = vec
                    found[fresh] = True
                    exact_done[fresh] = True
                    remaining -= 1
            if folded is not None:
                fresh = [r for r in folded if not found[r]]
                if fresh:
                    matrix[fresh] = vec
                    found[fresh] = True
            if remaining == 0:
                break
    return matrix, found


class VecFileSource(WordVectorSource):
    """Aligned vectors from one ``.vec`` file per language (e.g. MUSE's ``wiki.multi.<lang>.vec``).

    Parameters
    ----------
    files : str, path-like or mapping
        Either a mapping ``lang -> file``; or a template containing ``{lang}``
        (``"/data/muse/wiki.multi.{lang}.vec"``); or a folder searched for
        ``wiki.multi.<lang>.vec``, ``<lang>.vec`` or ``*.<lang>.vec`` (optionally compressed).
    fold_case : bool
        Fall back to the most frequent casing of a word missing from the file.
    max_rows : int, optional
        Use only the first ``max_rows`` words of each file.
    cache : bool
        Keep the extracted matrices as ``.npy`` in gfun's cache, keyed by file identity (path,
        size, modification time) and vocabulary hash, so that a second request does not re-read
        the file.
    cache_dir : path-like, optional
        gfun cache root (default ``$GFUN_CACHE`` or ``~/.cache/gfun``).
    """

    name = "vec"

    def __init__(
        self,
        files: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]],
        *,
        fold_case: bool = True,
        max_rows: int | None = None,
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        self.files = files
        self.fold_case = fold_case
        self.max_rows = max_rows
        self.cache = cache
        self.cache_dir = cache_dir
        self._dim: int | None = None

    def path_for(self, lang: str) -> Path:
        """Return the ``.vec`` file of a language.

        Raises
        ------
        FileNotFoundError
            When no file is configured or found for the language.
        """
        files = self.files
        if isinstance(files, Mapping):
            if lang not in files:
                raise FileNotFoundError(f"no .vec file configured for language {lang!r}")
            return Path(files[lang])
        text = os.fspath(files)
        if "{lang}" in text:
            path = Path(text.format(lang=lang))
            if not path.is_file():
                raise FileNotFoundError(f"no .vec file for language {lang!r}: {path} does not exist")
            return path
        folder = Path(text)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is neither a folder nor a template with '{{lang}}'")
        for stem in (f"wiki.multi.{lang}.vec", f"{lang}.vec"):
            for suffix in _SUFFIXES:
                if (folder / (stem + suffix)).is_file():
                    return folder / (stem + suffix)
        for suffix in _SUFFIXES:
            hits = sorted(folder.glob(f"*.{lang}.vec{suffix}"))
            if hits:
                return hits[0]
        raise FileNotFoundError(f"no .vec file for language {lang!r} in {folder}")

    @property
    def dim(self) -> int:
        if self._dim is None:
            files = self.files
            if isinstance(files, Mapping):
                first = next(iter(files.values()))
            elif "{lang}" in os.fspath(files):
                first = self.path_for("en")
            else:
                first = sorted(p for p in Path(files).iterdir() if ".vec" in p.name)[0]
            self._dim = read_vec_header(first)[1]
        return self._dim

    def _cache_path(self, path: Path, vocabulary: Sequence[str]) -> Path:
        stat = path.stat()
        key = vocabulary_hash(
            [
                str(path.resolve()),
                str(stat.st_size),
                str(stat.st_mtime_ns),
                str(self.fold_case),
                str(self.max_rows),
            ]
        )
        return (
            gfun_cache_dir(self.cache_dir, subdir="wordvectors")
            / f"vec-{key}-{vocabulary_hash(vocabulary)}.npz"
        )

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        path = self.path_for(lang)
        vocabulary = list(vocabulary)
        cached = self._cache_path(path, vocabulary) if self.cache else None
        if cached is not None and cached.is_file():
            with np.load(cached) as data:
                return data["matrix"], data["found"]
        matrix, found = read_vec_subset(path, vocabulary, fold_case=self.fold_case, max_rows=self.max_rows)
        self._dim = matrix.shape[1]
        if cached is not None:
            _save_npz(cached, matrix=matrix, found=found)
            cached.with_suffix(".json").write_text(
                json.dumps({"file": str(path), "lang": lang, "n_words": len(vocabulary)}), encoding="utf-8"
            )
        return matrix, found


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    """Write an ``.npz`` atomically (write to a temporary name, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, path)
