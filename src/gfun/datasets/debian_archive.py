"""The Debian archive's index files as the debtags loader reads them (:mod:`gfun.datasets.debtags`).

Finding a logical file (``Packages``, ``Translation-<lang>``) under its plain name or apt's own names in
``/var/lib/apt/lists``, decompressing it (lz4, gzip, xz or plain), splitting its deb822 paragraphs, and turning a
``Description`` field into a document's text.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = ["description_text", "parse_deb822"]

# compression suffixes, in order of preference for one logical file
_SUFFIXES = (".lz4", "", ".gz", ".xz")


# ------------------------------------------------------------------------------------------- files
def _find_files(directory: Path, name: str) -> list[Path]:
    """The file(s) holding ``name`` (e.g. ``Packages``) in ``directory``.

    The plain name wins (``name.lz4`` before ``name``); otherwise apt's ``<prefix>_<name>`` files are
    returned, one per prefix (the compressed one when both exist), sorted by name.
    """
    for suffix in _SUFFIXES:
        path = directory / (name + suffix)
        if path.is_file():
            return [path]
    found: dict[str, Path] = {}
    for suffix in reversed(_SUFFIXES):  # the preferred suffix is seen last and wins
        for path in directory.glob(f"*_{name}{suffix}"):
            if path.is_file():
                found[path.name[: len(path.name) - len(suffix)]] = path
    if not found:
        raise FileNotFoundError(
            f"debtags: no {name} file in {directory} (looked for {name}.lz4, {name}, {name}.gz, {name}.xz "
            f"and apt's *_{name}[.lz4|.gz|.xz])")
    return [found[k] for k in sorted(found)]


def _decompress(path: Path, raw: bytes) -> bytes:
    if path.name.endswith(".lz4"):
        import lz4.frame

        return lz4.frame.decompress(raw)
    if path.name.endswith(".gz"):
        return gzip.decompress(raw)
    if path.name.endswith(".xz"):
        return lzma.decompress(raw)
    return raw


def _read_file(path: Path) -> tuple[str, str]:
    """Decoded text of a (possibly compressed) index file and the sha256 of its bytes on disk."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = _decompress(path, raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"debtags: {path} is not valid UTF-8 ({exc})") from None
    return text, digest


def _signature(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in paths:
        st = p.stat()
        out.append((str(p.resolve()), st.st_mtime_ns, st.st_size))
    return tuple(out)


# ----------------------------------------------------------------------------------------- parsing
def parse_deb822(text: str, keys: Iterable[str] | None = None) -> Iterator[dict[str, str]]:
    """Yield the paragraphs of a deb822 text as dicts.

    Parameters
    ----------
    text : str
        The file's content. Lines are separated by ``"\\n"`` only; a line that is empty or blank ends a
        paragraph; a line starting with a space or a tab continues the previous field, and is appended to
        its value after a ``"\\n"`` with its indentation kept. A field line is split at its first ``:``;
        the value (not the name) is stripped.
    keys : iterable of str, optional
        Keep only these fields (faster on big files); a paragraph with none of them is yielded as an
        empty dict.
    """
    wanted = None if keys is None else frozenset(keys)
    rec: dict[str, str] = {}
    started = False
    last: str | None = None
    for line in text.split("\n"):
        if not line or line[0] in " \t":
            if not line or line.isspace():
                if started:
                    yield rec
                rec, started, last = {}, False, None
                continue
            if last is not None:
                rec[last] += "\n" + line
            continue
        if line.isspace():  # unreachable for ' '/'\t', kept for other blank characters
            if started:
                yield rec
            rec, started, last = {}, False, None
            continue
        key, _, value = line.partition(":")
        started = True
        if wanted is None or key in wanted:
            rec[key] = value.strip()
            last = key
        else:
            last = None
    if started:
        yield rec


def _parse_tags(value: str) -> list[str]:
    return sorted({t.strip() for t in value.replace("\n", " ").split(",") if t.strip()})


def description_text(value: str) -> str:
    """Document text from a ``Description[-<lang>]`` field value (as returned by :func:`parse_deb822`).

    The short description, ``"\\n"``, then the long description with one leading space removed from each
    line, ``"."`` lines made blank, trailing blanks removed and leading/trailing blank lines dropped.
    A description with no long part gives ``short + "\\n"``.
    """
    lines = value.split("\n")
    short = lines[0].strip()
    body = []
    for line in lines[1:]:
        if line[:1] == " ":
            line = line[1:]
        line = line.rstrip()
        body.append("" if line == "." else line)
    long_desc = "\n".join(body).strip("\n")
    return f"{short}\n{long_desc}" if long_desc else short + "\n"
