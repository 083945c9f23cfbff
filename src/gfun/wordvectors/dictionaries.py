"""Bilingual dictionaries: FreeDict dictd databases and plain word-pair files.

Debian ships FreeDict dictionaries as ``dict-freedict-<src>-<tgt>`` packages, installed as
``/usr/share/dictd/freedict-<src>-<tgt>.index`` and ``.dict.dz``.  The ``.index`` lists
``headword <TAB> offset <TAB> length`` (offset and length in dictd's base-64 digits) into the
uncompressed ``.dict`` text (``.dict.dz`` is gzip-compatible).  An entry starts with the headword
line (headword, pronunciation ``/.../``, part of speech ``<n>``), then, for each sense, a line of
comma-separated translations (``"2. x, y"`` when numbered) possibly followed by definition lines.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "DICTD_DIR",
    "ISO3",
    "find_freedict",
    "freedict_packages",
    "freedict_pairs",
    "read_dictd",
    "read_pairs",
    "split_pairs",
]

logger = logging.getLogger(__name__)

DICTD_DIR = Path("/usr/share/dictd")
#: ISO 639-1 -> the ISO 639-3 codes FreeDict uses in file names.
ISO3: dict[str, str] = {
    "en": "eng",
    "it": "ita",
    "fi": "fin",
    "de": "deu",
    "fr": "fra",
    "es": "spa",
    "pt": "por",
    "nl": "nld",
    "sv": "swe",
    "da": "dan",
    "hu": "hun",
    "pl": "pol",
    "nb": "nob",
}
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}
_SENSE = re.compile(r"^(\d+)\.\s+(.*)$")
_TRAILING_NUMBER = re.compile(r"\s+\d+\.\s*$")
_WIKI_LINK = re.compile(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]")
_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$")


def _b64_number(text: str) -> int:
    value = 0
    for char in text:
        value = value * 64 + _B64_VALUE[char]
    return value


def _headword(line: str) -> str:
    cut = len(line)
    for marker in (" /", " <"):
        pos = line.find(marker)
        if pos != -1:
            cut = min(cut, pos)
    return line[:cut].strip()


def _translations(line: str) -> list[str]:
    line = _TRAILING_NUMBER.sub("", _WIKI_LINK.sub(r"\1", line))
    line = _PARENS.sub(" ", line)
    return [part.strip() for part in re.split(r"[,;]", line) if part.strip()]


def parse_dictd_entry(text: str) -> tuple[str, list[str]]:
    """Parse one FreeDict dictd entry into its headword and translations.

    Parameters
    ----------
    text : str
        The entry as stored (headword line first).

    Returns
    -------
    (headword, translations)
        Translations in order, duplicates removed; definition lines are skipped.
    """
    lines = text.split("\n")
    head = _headword(lines[0])
    out: list[str] = []
    expect_translation = True
    for line in lines[1:]:
        if not line.strip():
            continue
        match = _SENSE.match(line)
        if match:
            out.extend(_translations(match.group(2)))
            expect_translation = False
        elif expect_translation and not line.startswith(" "):
            out.extend(_translations(line))
            expect_translation = False
    return head, list(dict.fromkeys(out))


def read_dictd(
    index: str | os.PathLike[str], data: str | os.PathLike[str] | None = None
) -> dict[str, list[str]]:
    """Read a dictd database into ``headword -> translations``.

    Parameters
    ----------
    index : path-like
        The ``.index`` file.
    data : path-like, optional
        The ``.dict`` or ``.dict.dz`` file (default: beside the index).

    Returns
    -------
    dict
        Headword -> translations (phrases included; see :func:`read_pairs` for filtering).
        Headwords with several entries get the union of their translations.
    """
    index = Path(index)
    if data is None:
        stem = index.with_suffix("")
        candidates = [stem.with_suffix(".dict.dz"), stem.with_suffix(".dict")]
        data = next((c for c in candidates if c.is_file()), candidates[0])
    data = Path(data)
    raw = gzip.open(data, "rb").read() if data.suffix == ".dz" else data.read_bytes()
    entries: dict[str, list[str]] = {}
    for line in index.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0].startswith("00database") or parts[0].startswith("00-database"):
            continue
        offset, length = _b64_number(parts[1]), _b64_number(parts[2])
        text = raw[offset : offset + length].decode("utf-8", "replace")
        head, trans = parse_dictd_entry(text)
        if not head or not trans:
            continue
        known = entries.setdefault(head, [])
        known.extend(t for t in trans if t not in known)
    return entries


def _single_words(entries: dict[str, list[str]], *, lowercase: bool) -> list[tuple[str, str]]:
    pairs = []
    for head, trans in entries.items():
        for t in trans:
            a, b = (head.lower(), t.lower()) if lowercase else (head, t)
            if _WORD.match(a) and _WORD.match(b):
                pairs.append((a, b))
    return pairs


def read_pairs(
    path: str | os.PathLike[str], *, lowercase: bool = True, single_words: bool = True
) -> list[tuple[str, str]]:
    """Read word pairs from a dictd ``.index`` or a pair file.

    Parameters
    ----------
    path : path-like
        A dictd ``.index`` file, or a text file with one pair per line (``src<TAB>tgt``, or
        ``src tgt`` separated by a space as in MUSE's dictionaries).
    lowercase : bool
        Lowercase both words.
    single_words : bool
        Keep only pairs of single alphabetic words (hyphens and apostrophes allowed).

    Returns
    -------
    list of (str, str)
        Unique pairs in file order.
    """
    path = Path(path)
    if path.suffix == ".index":
        entries = read_dictd(path)
        pairs = (
            _single_words(entries, lowercase=lowercase)
            if single_words
            else [(h, t) for h, ts in entries.items() for t in ts]
        )
        return list(dict.fromkeys(pairs))
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) < 2:
            continue
        a, b = fields[0].strip(), fields[1].strip()
        if lowercase:
            a, b = a.lower(), b.lower()
        if single_words and not (_WORD.match(a) and _WORD.match(b)):
            continue
        pairs.append((a, b))
    return list(dict.fromkeys(pairs))


def find_freedict(src: str, tgt: str, *, dictd_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """Return the ``.index`` of the FreeDict ``src -> tgt`` database, or None when not installed.

    Parameters
    ----------
    src, tgt : str
        ISO 639-1 (``"en"``) or 639-3 (``"eng"``) codes.
    dictd_dir : path-like, optional
        Where dictd databases live (default ``$GFUN_DICTD_DIR`` or ``/usr/share/dictd``).
    """
    folder = Path(dictd_dir or os.environ.get("GFUN_DICTD_DIR") or DICTD_DIR)
    name = f"freedict-{ISO3.get(src, src)}-{ISO3.get(tgt, tgt)}.index"
    path = folder / name
    return path if path.is_file() else None


def freedict_pairs(
    src: str,
    tgt: str,
    *,
    dictd_dir: str | os.PathLike[str] | None = None,
    both_directions: bool = True,
) -> list[tuple[str, str]]:
    """All single-word ``(src, tgt)`` pairs of the installed FreeDict databases.

    Parameters
    ----------
    src, tgt : str
        ISO 639-1 codes, e.g. ``"en"``, ``"it"``.
    dictd_dir : path-like, optional
        See :func:`find_freedict`.
    both_directions : bool
        Also add the reversed pairs of the ``tgt -> src`` database when installed.

    Returns
    -------
    list of (str, str)

    Raises
    ------
    FileNotFoundError
        When neither direction is installed (the message names the Debian package).
    """
    pairs: list[tuple[str, str]] = []
    forward = find_freedict(src, tgt, dictd_dir=dictd_dir)
    if forward is not None:
        pairs.extend(read_pairs(forward))
    backward = find_freedict(tgt, src, dictd_dir=dictd_dir) if both_directions else None
    if backward is not None:
        pairs.extend((a, b) for b, a in read_pairs(backward))
    if forward is None and backward is None:
        raise FileNotFoundError(_missing_dictionary_message(src, tgt, both_directions=both_directions))
    return list(dict.fromkeys(pairs))


def freedict_packages(src: str, tgt: str, *, both_directions: bool = True) -> tuple[list[str], list[str] | None]:
    """The Debian packages that would install the FreeDict ``src -> tgt`` database (and, with
    ``both_directions``, the ``tgt -> src`` one, which :func:`freedict_pairs` reads reversed).

    Returns
    -------
    candidates : list of str
        The package names gfun would read, ``dict-freedict-<src3>-<tgt3>`` first.
    available : list of str or None
        Those of them the local package index knows (``apt-cache pkgnames``); None without ``apt-cache``.
    """
    a, b = ISO3.get(src, src), ISO3.get(tgt, tgt)
    candidates = [f"dict-freedict-{a}-{b}"] + ([f"dict-freedict-{b}-{a}"] if both_directions else [])
    known = _apt_package_names("dict-freedict-")
    return candidates, None if known is None else [n for n in candidates if n in known]


def _apt_package_names(prefix: str) -> set[str] | None:
    """Names of the packages starting with ``prefix`` in the local apt index, or None without one."""
    import shutil
    import subprocess

    apt_cache = shutil.which("apt-cache")
    if apt_cache is None:
        return None
    try:
        done = subprocess.run([apt_cache, "pkgnames", prefix], capture_output=True, text=True, timeout=20,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    names = set(done.stdout.split())
    return names if done.returncode == 0 and names else None


def _missing_dictionary_message(src: str, tgt: str, *, both_directions: bool = True) -> str:
    """What to do when no FreeDict database for ``src``-``tgt`` is installed: the real package and the command."""
    candidates, available = freedict_packages(src, tgt, both_directions=both_directions)
    pairs = "give word pairs with --dictionary FILE (one 'source<TAB>target' pair per line)"
    head = f"no FreeDict dictionary for {src}-{tgt} is installed"
    if available == []:
        return f"{head}, and Debian has none ({' and '.join(candidates)} do not exist): {pairs}"
    packages = available or candidates
    also = f" (or {', '.join(packages[1:])})" if len(packages) > 1 else ""
    return (f"{head}: install the Debian package {packages[0]}{also}, e.g. `apt-get install {packages[0]}` "
            f"as root, or {pairs}")


def split_pairs(
    pairs: Sequence[tuple[str, str]],
    n_test: int,
    *,
    seed: int = 0,
    restrict_to: Iterable[str] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Split pairs into training and held-out test pairs by *source word*.

    All translations of a test source word go to the test side, so no test word is seen by an
    alignment trained on the training side.

    Parameters
    ----------
    pairs : sequence of (str, str)
    n_test : int
        Number of distinct test source words (fewer when there are not enough).
    seed : int
        Seed of the random choice.
    restrict_to : iterable of str, optional
        Draw test words only from these source words (e.g. those a source covers).

    Returns
    -------
    (train_pairs, test_pairs)
    """
    sources = sorted({a for a, _ in pairs})
    if restrict_to is not None:
        allowed = set(restrict_to)
        sources = [s for s in sources if s in allowed]
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(len(sources), size=min(n_test, len(sources)), replace=False).tolist())
    test_words = {sources[i] for i in chosen}
    train = [p for p in pairs if p[0] not in test_words]
    test = [p for p in pairs if p[0] in test_words]
    return train, test
