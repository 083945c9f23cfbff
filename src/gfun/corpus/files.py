"""The corpus file formats: JSONL and TSV read into records and written back, the class list, the escaping.

Files
-----
JSONL, one document per line::

    {"id": "doc-1", "lang": "en", "text": "...", "labels": ["a", "b"]}

Extra fields (for instance ``source``) are kept and written back. Language codes are normalised to
lower case without surrounding spaces (``EN`` and ``en`` are one language; a warning says when a code
was changed). A label must be a non-empty string (``""`` and ``"  "`` are refused). A record without a
``labels`` field (or with ``null``) in a file where other records have one is read as a document with
no label, negative for every class, and a warning names them (``on_missing_labels``). TSV has a header row
``id<TAB>lang<TAB>labels<TAB>text`` (further columns are kept as extra fields); labels are
separated by ``,`` and tabs, newlines and backslashes in the text are escaped as ``\\t``,
``\\n`` and ``\\\\``. Files ending in ``.gz`` are (de)compressed transparently; a byte-order mark at the start
of a file is ignored.

:class:`gfun.corpus.multilingual.MultilingualCorpus` builds a corpus from the records read here (``from_jsonl``,
``from_tsv``) and writes itself with these functions (``to_jsonl``, ``to_tsv``, ``save_classes``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from gfun.errors import CorpusFormatError

__all__ = ["TSV_LABEL_SEP", "check_tsv_writable", "read_classes", "read_jsonl_records", "read_records",
           "read_tsv_records", "write_classes", "write_jsonl_records", "write_tsv"]

#: The fields every record must have.
_REQUIRED = ("id", "lang", "text")
#: Separates the labels of a TSV row.
TSV_LABEL_SEP = ","


@contextlib.contextmanager
def _atomic_text(path: str | Path) -> Iterator[io.TextIOBase]:
    """A text stream whose content replaces ``path`` once complete (gzip-compressed for ``.gz``)."""
    from gfun.core.atomic import atomic_write

    with atomic_write(path) as raw:
        if Path(path).suffix == ".gz":
            with gzip.open(raw, "wt", encoding="utf-8", newline="\n") as fh:
                yield fh  # type: ignore[misc]
        else:
            fh = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            yield fh
            fh.flush()
            fh.detach()


def _iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)``; undecodable bytes raise a CorpusFormatError with the line number.

    ``-`` reads standard input. A truncated or damaged ``.gz`` file raises a CorpusFormatError naming it.
    """
    if str(path) == "-":
        yield from _decode_lines(sys.stdin.buffer, "-")
        return
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus file not found: {path}")
    if path.suffix != ".gz":
        with open(path, "rb") as fh:
            yield from _decode_lines(fh, path)
        return
    lineno = 0
    try:
        with gzip.open(path, "rb") as fh:
            for lineno, line in _decode_lines(fh, path):
                yield lineno, line
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise CorpusFormatError(f"truncated or damaged gzip file after {lineno} complete line(s) ({exc})",
                                path=path) from None


def _decode_lines(fh: IO[bytes], path: str | Path) -> Iterator[tuple[int, str]]:
    for lineno, raw in enumerate(fh, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusFormatError(
                f"not valid UTF-8 (byte {exc.start} of the line: {raw[exc.start:exc.start + 4]!r})",
                path=path, line=lineno) from None
        if lineno == 1 and line.startswith("\ufeff"):  # a byte-order mark (Windows editors) is not content
            line = line[1:]
        yield lineno, line.rstrip("\n").rstrip("\r")


def _is_missing(value: Any) -> bool:
    """``None``, a float NaN (a missing value read by pandas) or a blank string."""
    return value is None or (isinstance(value, float) and value != value) or not str(value).strip()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_in(value: Any) -> str | None:
    """The first lone surrogate (JSON escapes such as ``\\ud800`` that encode no character) in a record."""
    if isinstance(value, str):
        m = _SURROGATE.search(value)
        return m.group() if m else None
    if isinstance(value, dict):
        value = list(value.keys()) + list(value.values())
    if isinstance(value, list):
        for v in value:
            found = _surrogate_in(v)
            if found:
                return found
    return None


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_TOO_DEEP = "invalid JSON (arrays or objects nested too deeply)"


def read_jsonl_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL file (``.gz`` allowed, ``-`` standard input), each with its line number under
    ``"__line__"``; errors (invalid JSON, a lone surrogate, an id repeated in one language) name the file, line
    and field."""
    records = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in _iter_lines(path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusFormatError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=path,
                                    line=lineno) from None
        except RecursionError:
            raise CorpusFormatError(_TOO_DEEP, path=path, line=lineno) from None
        if not isinstance(rec, dict):
            raise CorpusFormatError(f"expected a JSON object, got {type(rec).__name__}", path=path,
                                    line=lineno)
        if "\\u" in line:
            try:
                bad = _surrogate_in(rec)
            except RecursionError:
                raise CorpusFormatError(_TOO_DEEP, path=path, line=lineno) from None
            if bad:
                raise CorpusFormatError(f"not valid Unicode: the escape \\u{ord(bad):04x} is half of a "
                                        "surrogate pair and encodes no character", path=path, line=lineno)
        if rec.get("id") is not None and not _is_missing(rec.get("lang")):
            key = (str(rec.get("lang")).strip().lower(), str(rec["id"]))
            if key in seen:
                raise CorpusFormatError(f"duplicated id {key[1]!r} in language {key[0]!r} (first seen on "
                                        f"line {seen[key]})", path=path, line=lineno, field="id")
            seen[key] = lineno
        rec["__line__"] = lineno
        records.append(rec)
    return records


def write_jsonl_records(records: Iterable[dict[str, Any]], path: str | Path) -> None:
    """Write ``records`` as JSONL (``.gz`` compresses), replacing ``path`` only once every record is written (see
    :func:`gfun.core.atomic.atomic_write`): an error (a value that JSON cannot hold) leaves the previous file as it
    was."""
    with _atomic_text(path) as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def read_tsv_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a TSV file with header ``id, lang, labels, text`` (other columns become extra fields),
    unescaped, each with its line number under ``"__line__"``; errors name the file, line and field."""
    header: list[str] | None = None
    records = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in _iter_lines(path):
        if header is None:
            header = line.split("\t")
            missing = [c for c in _REQUIRED if c not in header]
            if missing:
                raise CorpusFormatError(f"header lacks column(s) {missing}; found {header}", path=path,
                                        line=lineno)
            continue
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise CorpusFormatError(f"expected {len(header)} tab-separated fields, found {len(cells)}",
                                    path=path, line=lineno)
        rec: dict[str, Any] = {}
        for col, cell in zip(header, cells, strict=True):
            if col == "labels":
                rec[col] = cell.split(TSV_LABEL_SEP) if cell else []  # "a,,b": an empty label, refused
            elif col in ("id", "lang"):
                rec[col] = cell
            else:
                rec[col] = _unescape(cell)
        key = (str(rec.get("lang")).strip().lower(), str(rec.get("id")))
        if rec.get("id") and not _is_missing(rec.get("lang")) and key in seen:
            raise CorpusFormatError(f"duplicated id {key[1]!r} in language {key[0]!r} (first seen on line "
                                    f"{seen[key]})", path=path, line=lineno, field="id")
        seen[key] = lineno
        rec["__line__"] = lineno
        records.append(rec)
    if header is None:
        raise CorpusFormatError("empty file (no header row)", path=path)
    return records


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a corpus file by its extension: TSV for ``.tsv`` (optionally ``.gz``), else JSONL (``-``:
    JSONL from standard input); see :func:`read_jsonl_records` and :func:`read_tsv_records`."""
    if Path(path).name.lower().removesuffix(".gz").endswith(".tsv"):
        return read_tsv_records(path)
    return read_jsonl_records(path)


def check_tsv_writable(corpus: Any, path: str | Path) -> None:
    """Refuse what :func:`read_tsv_records` could not read back from ``corpus`` (a
    :class:`~gfun.corpus.multilingual.MultilingualCorpus`): tabs or line breaks in ids, languages, labels or column
    names (texts and extra values are escaped), and ``,`` inside a label."""
    breaks = re.compile(r"[\t\n\r]")
    for name in corpus.extra:
        if breaks.search(str(name)):
            raise CorpusFormatError(f"the extra field name {name!r} contains a tab or line break, which TSV "
                                    "cannot hold; write JSONL instead", path=path)
    for i in range(len(corpus)):
        for fname, value in (("id", corpus.ids[i]), ("lang", corpus.langs[i])):
            if breaks.search(value):
                raise CorpusFormatError(f"document {corpus.ids[i]!r} ({corpus.langs[i]}): the {fname} {value!r} "
                                        "contains a tab or line break, which TSV cannot hold; write JSONL instead",
                                        path=path, field=fname)
        for lab in corpus.labels[i] if corpus.labelled else ():
            if breaks.search(lab) or TSV_LABEL_SEP in lab:
                raise CorpusFormatError(f"document {corpus.ids[i]!r} ({corpus.langs[i]}): the label {lab!r} contains "
                                        f"a tab, a line break or {TSV_LABEL_SEP!r}, which TSV cannot hold; write "
                                        "JSONL instead", path=path, field="labels")


def write_tsv(corpus: Any, path: str | Path) -> None:
    """Write ``corpus`` (a :class:`~gfun.corpus.multilingual.MultilingualCorpus`) as TSV, validated first
    (:func:`check_tsv_writable`), replacing ``path`` only once every row is written."""
    check_tsv_writable(corpus, path)
    cols = ["id", "lang"] + (["labels"] if corpus.labelled else []) + list(corpus.extra) + ["text"]
    with _atomic_text(path) as fh:
        fh.write("\t".join(cols) + "\n")
        for i in range(len(corpus)):
            row = [corpus.ids[i], corpus.langs[i]]
            if corpus.labelled:
                row.append(TSV_LABEL_SEP.join(corpus.labels[i]))
            row += [_escape(str(corpus.extra[k][i])) for k in corpus.extra]
            row.append(_escape(corpus.texts[i]))
            fh.write("\t".join(row) + "\n")


def write_classes(classes: Sequence[str], path: str | Path) -> None:
    """Write a class list as a JSON array (read back by :func:`read_classes`)."""
    Path(path).write_text(json.dumps(list(classes), ensure_ascii=False, indent=1) + "\n",
                          encoding="utf-8")


def read_classes(path: str | Path) -> list[str]:
    """Read a class list written by :meth:`gfun.corpus.multilingual.MultilingualCorpus.save_classes` (a JSON array
    of str)."""
    try:
        classes = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(f"invalid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise CorpusFormatError(_TOO_DEEP, path=path) from None
    except UnicodeDecodeError as exc:
        raise CorpusFormatError(f"not valid UTF-8 (byte {exc.start} of the file)", path=path) from None
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise CorpusFormatError("expected a JSON array of strings", path=path)
    return classes
