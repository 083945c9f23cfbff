#!/usr/bin/env python3
"""Build the small debtags sample bundled with gfun (``gfun.datasets.demo.load_demo``).

The sample is the debtags protocol (:func:`gfun.datasets.debtags.load_debtags`) at a smaller scale:
five languages, at most 350 training and 150 test documents each, the 30 most frequent tags. The
output is deterministic (seeded sampling; gzip files written without a timestamp), so re-running the
script on the same archive files reproduces the committed files byte for byte.

Usage::

    python benchmarks/build_demo_data.py [--data-dir DIR] [--out src/gfun/datasets/data]

``DIR`` holds ``Packages.lz4`` and ``Translation-<lang>.lz4``; by default ``$GFUN_DATA/debtags``, else
``../shared/data/debtags`` next to the repository, else apt's ``/var/lib/apt/lists``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import sys
from pathlib import Path

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.debtags import load_debtags
from gfun.datasets.stats import debtags_stats, format_stats_table

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "src" / "gfun" / "datasets" / "data"
LANGS = ("en", "it", "da", "fr", "de")
N_TRAIN, N_TEST, N_CLASSES, RUN = 350, 150, 30, 0

logger = logging.getLogger("build_demo_data")


def default_data_dir() -> Path | None:
    """``$GFUN_DATA/debtags``, else ``../shared/data/debtags`` if present, else None (apt's lists)."""
    if os.environ.get("GFUN_DATA"):
        return Path(os.environ["GFUN_DATA"]) / "debtags"
    shared = ROOT.parent / "shared" / "data" / "debtags"
    return shared if shared.is_dir() else None


def write_jsonl_gz(corpus: MultilingualCorpus, path: Path) -> None:
    """Write ``corpus`` as gzip'd JSONL with a fixed header (no file name, mtime 0) for reproducibility."""
    payload = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in corpus.to_records())
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                compresslevel=9) as fh:
        fh.write(payload.encode("utf-8"))


README = """\
# gfun demo sample (Debian package descriptions with debtags)

Files: `demo_train.jsonl.gz`, `demo_test.jsonl.gz` (one JSON object per line: `id` = the binary package name,
`lang`, `source` = the source package, `text`, `labels`) and `demo_classes.json` (the class list,
in column order). Load them with `gfun.datasets.demo.load_demo()`.

Provenance: built by `benchmarks/build_demo_data.py` from the Debian 12 "bookworm" main archive index
files (`Packages`, `Translation-<lang>`), with the debtags protocol of `gfun.datasets.debtags` scaled
down: run (seed) {run}; languages {langs}; at most {n_train} training and {n_test} test documents per
language; the {n_classes} most frequent tags of the training documents. Training sets are non-parallel
(a source package is in at most one language's training set) and no test document shares its source
package with a training document.

Counts: {counts}.

Input files (sha256):
{checksums}

Licence: the texts are package descriptions from Debian main, redistributable under the Debian Free
Software Guidelines (DFSG) like the packages they describe; the non-English descriptions are
translations contributed to Debian by the Debian Description Translation Project (DDTP) for the same
use. The tags come from Debian's debtags database.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data-dir", type=Path, default=None, help="folder with Packages(.lz4), Translation-*")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    data_dir = args.data_dir or default_data_dir()
    r = load_debtags(RUN, data_dir, n_classes=N_CLASSES, max_train=N_TRAIN, max_test=N_TEST,
                     many_shot=LANGS, zero_shot=())
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_gz(r.train, out / "demo_train.jsonl.gz")
    write_jsonl_gz(r.test, out / "demo_test.jsonl.gz")
    r.train.save_classes(out / "demo_classes.json")
    tr, te = r.train.lang_counts(), r.test.lang_counts()
    counts = "; ".join(f"{g} {tr.get(g, 0)} train / {te.get(g, 0)} test" for g in LANGS)
    checksums = "\n".join(f"- `{name}`: {digest}" for name, digest in r.info["checksums"].items())
    (out / "demo_README.md").write_text(
        README.format(run=RUN, langs=" ".join(LANGS), n_train=N_TRAIN, n_test=N_TEST, n_classes=N_CLASSES,
                      counts=counts, checksums=checksums), encoding="utf-8", newline="\n")
    logger.info("demo sample written to %s\n%s", out, format_stats_table(debtags_stats(r)))
    total = sum((out / n).stat().st_size for n in ("demo_train.jsonl.gz", "demo_test.jsonl.gz",
                                                     "demo_classes.json", "demo_README.md"))
    logger.info("total size %.2f MB", total / 1e6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
