"""The corpus file formats: JSONL and TSV read into records and written back, CSV and Parquet read, the class list,
the escaping.

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
``\\n`` and ``\\\\``. Of the columns only ``text`` is required to read a file: documents to label may lack
``id`` (numbered) and ``lang`` (detected). CSV is read as spreadsheets write it (fields quoted, no escaping), with
the columns of TSV; Parquet (with pyarrow, the ``experiments`` extra) has the fields of JSONL as columns.
:func:`read_records` tells JSONL, TSV and CSV apart by their first line (a JSON object, or a header row with tabs
or commas), not by the file's name, so standard input can hold any of them. Files ending in ``.gz`` are
(de)compressed transparently; a byte-order mark at the start of a file is ignored.

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

__all__ = ["PARQUET_SUFFIXES", "TSV_LABEL_SEP", "check_tsv_writable", "read_classes", "read_csv_records",
           "read_jsonl_records", "read_parquet_records", "read_records", "read_tsv_records", "sniff_format",
           "write_classes", "write_jsonl_records", "write_tsv"]

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


def read_jsonl_records(path: str | Path, lines: Iterable[tuple[int, str]] | None = None) -> list[dict[str, Any]]:
    """The records of a JSONL file (``.gz`` allowed, ``-`` standard input), each with its line number under
    ``"__line__"``; errors (invalid JSON, a lone surrogate, an id repeated in one language) name the file, line
    and field. ``lines``: the file's ``(line number, line)`` pairs when they were read already."""
    records = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in _iter_lines(path) if lines is None else lines:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            where = f"column {exc.colno}" if exc.msg.endswith(" at") else f"at column {exc.colno}"
            raise CorpusFormatError(f"invalid JSON ({exc.msg} {where})", path=path, line=lineno) from None
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


def _table_record(header: list[str], cells: list[str], *, escaped: bool) -> dict[str, Any]:
    """One row of a TSV or CSV file as a record: labels split at ``,``, an empty ``id`` or ``lang`` cell left out
    (numbered, or detected, where the documents are to be labelled), TSV cells unescaped."""
    rec: dict[str, Any] = {}
    for col, cell in zip(header, cells, strict=True):
        if col == "labels":
            rec[col] = cell.split(TSV_LABEL_SEP) if cell else []  # "a,,b": an empty label, refused
        elif col in ("id", "lang"):
            if cell.strip() or col == "lang":  # a blank language stays blank: detected or refused as such
                rec[col] = cell
        else:
            rec[col] = _unescape(cell) if escaped else cell
    return rec


def _check_header(header: list[str], path: str | Path, lineno: int, what: str) -> None:
    if "text" not in header:
        raise CorpusFormatError(f"the header row of the {what} has no 'text' column; found {header} (a {what} needs "
                                "a header row naming its columns: text, and optionally id, lang, labels)", path=path,
                                line=lineno)
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise CorpusFormatError(f"the header row of the {what} repeats column(s) {repeated}", path=path, line=lineno)


def _check_unique(rec: dict[str, Any], seen: dict[tuple[str, str], int], path: str | Path, lineno: int) -> None:
    if not rec.get("id") or _is_missing(rec.get("lang")):
        return
    key = (str(rec.get("lang")).strip().lower(), str(rec.get("id")))
    if key in seen:
        raise CorpusFormatError(f"duplicated id {key[1]!r} in language {key[0]!r} (first seen on line "
                                f"{seen[key]})", path=path, line=lineno, field="id")
    seen[key] = lineno


def read_tsv_records(path: str | Path, lines: Iterable[tuple[int, str]] | None = None) -> list[dict[str, Any]]:
    """The records of a TSV file with a header row naming its columns: ``text``, and optionally ``id``, ``lang``,
    ``labels`` (other columns become extra fields), unescaped, each with its line number under ``"__line__"``;
    errors name the file, line and field. ``lines``: the file's ``(line number, line)`` pairs when they were
    read already. A file without even a header row is an error (:func:`read_records` reads it as no record)."""
    header: list[str] | None = None
    records = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in _iter_lines(path) if lines is None else lines:
        if header is None:
            if not line.strip():
                continue
            header = [c.strip() for c in line.split("\t")]
            _check_header(header, path, lineno, "TSV file")
            continue
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise CorpusFormatError(f"expected {len(header)} tab-separated fields, found {len(cells)}",
                                    path=path, line=lineno)
        rec = _table_record(header, cells, escaped=True)
        _check_unique(rec, seen, path, lineno)
        rec["__line__"] = lineno
        records.append(rec)
    if header is None:
        raise CorpusFormatError("empty file (no header row)", path=path)
    return records


def read_csv_records(path: str | Path, lines: Iterable[tuple[int, str]] | None = None) -> list[dict[str, Any]]:
    """The records of a CSV file (comma-separated, fields quoted as spreadsheets write them, a quoted field may
    hold line breaks) with a header row naming its columns, as :func:`read_tsv_records` reads a TSV file (texts
    are not unescaped: CSV quotes instead); each record's ``"__line__"`` is the line its row starts on."""
    import csv

    numbered = iter(_iter_lines(path) if lines is None else lines)
    starts: list[int] = []

    def feed() -> Iterator[str]:
        for lineno, line in numbered:
            starts.append(lineno)
            yield line + "\n"

    reader = csv.reader(feed(), strict=True)
    header: list[str] | None = None
    records = []
    seen: dict[tuple[str, str], int] = {}
    consumed = 0
    try:
        for row in reader:
            lineno = starts[consumed] if consumed < len(starts) else len(starts)
            consumed = len(starts)
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [c.strip() for c in row]
                _check_header(header, path, lineno, "CSV file")
                continue
            if len(row) != len(header):
                raise CorpusFormatError(f"expected {len(header)} comma-separated fields, found {len(row)} (a field "
                                        "holding a comma must be quoted)", path=path, line=lineno)
            rec = _table_record(header, row, escaped=False)
            _check_unique(rec, seen, path, lineno)
            rec["__line__"] = lineno
            records.append(rec)
    except csv.Error as exc:
        raise CorpusFormatError(f"not valid CSV ({exc})", path=path, line=starts[-1] if starts else None) from None
    return records


def read_parquet_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a Parquet file (one row a document; columns as in JSONL: ``text``, and optionally ``id``,
    ``lang``, ``labels`` as a list of strings or one ``,``-separated string), each with its row number + 1 under
    ``"__line__"``; reading needs pyarrow (the ``experiments`` extra).

    Raises
    ------
    gfun.errors.MissingDependencyError
        Without pyarrow, naming the extra.
    CorpusFormatError
        A file pyarrow cannot read, or without a ``text`` column.
    """
    from gfun.core.optional import require_optional

    require_optional("pyarrow", purpose="reading Parquet files")
    import pyarrow.parquet as pq

    if not Path(path).exists():
        raise FileNotFoundError(f"corpus file not found: {path}")
    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        raise CorpusFormatError(f"cannot be read as Parquet ({exc})", path=path) from None
    if rows and "text" not in rows[0]:
        raise CorpusFormatError(f"the Parquet file has no 'text' column; found {list(rows[0])}", path=path)
    records = []
    for i, row in enumerate(rows):
        rec = {k: v for k, v in row.items() if not _is_missing_cell(v)}
        if isinstance(rec.get("labels"), str):
            rec["labels"] = rec["labels"].split(TSV_LABEL_SEP) if rec["labels"] else []
        rec["__line__"] = i + 1
        records.append(rec)
    return records


def _is_missing_cell(value: Any) -> bool:
    """A null (or NaN) cell of a table: the field is absent."""
    return (value is None or (isinstance(value, float) and value != value)
            or type(value).__name__ in ("NAType", "NaTType"))  # pandas' missing values


#: File name endings of the formats :func:`read_records` reads.
PARQUET_SUFFIXES = (".parquet", ".pq")
_JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


def sniff_format(path: str | Path, first: str | None) -> tuple[str, str]:
    """``(format, why)``: how :func:`read_records` reads a file whose first non-blank line is ``first`` (``None``:
    no such line): ``"jsonl"`` when that line starts with ``{`` (or the name ends in ``.jsonl``), ``"tsv"`` when it
    is a header row with tabs, ``"csv"`` when it is one with commas, and a header of one column is read as TSV."""
    name = Path(str(path)).name.lower().removesuffix(".gz")
    if first is None:
        return "jsonl", "the file holds no line"
    head = first.lstrip("\ufeff").lstrip()
    if head.startswith("{"):
        return "jsonl", "its first line starts with '{'"
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl", f"its name ends in {Path(name).suffix}"
    if "\t" in head:
        return "tsv", "its first line holds tab-separated column names"
    if "," in head:
        return "csv", "its first line holds comma-separated column names"
    if head.startswith("["):
        return "jsonl", "its first line starts with '['"
    return ("csv" if name.endswith(".csv") else "tsv"), "its first line is a header row of one column"


_FORMAT_NAMES = {"jsonl": "JSONL", "tsv": "TSV", "csv": "CSV", "parquet": "Parquet"}


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a corpus file (``.gz`` allowed; ``-``: standard input), its format told by its content:
    JSONL when the first line is a JSON object, TSV or CSV when it is a header row naming the columns with tabs or
    commas (``text``, and optionally ``id``, ``lang``, ``labels`` and extra fields), Parquet for ``.parquet``;
    see :func:`read_jsonl_records`, :func:`read_tsv_records`, :func:`read_csv_records` and
    :func:`read_parquet_records`. An error says which format the file was read as, and why.
    """
    if Path(str(path)).name.lower().endswith(PARQUET_SUFFIXES):
        return read_parquet_records(path)
    lines = list(_iter_lines(path))
    first = next((line for _, line in lines if line.strip()), None)
    fmt, why = sniff_format(path, first)
    reader = {"jsonl": read_jsonl_records, "tsv": read_tsv_records, "csv": read_csv_records}[fmt]
    try:
        return reader(path, lines)
    except CorpusFormatError as exc:
        raise CorpusFormatError(f"{exc.reason} (read as {_FORMAT_NAMES[fmt]}: {why})", path=exc.path,
                                line=exc.line, field=exc.field) from None


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
