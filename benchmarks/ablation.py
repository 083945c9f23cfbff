"""One lever at a time, on every corpus: what each change to a base configuration does where.

Each lever is a configuration of ``bench_pooled.py`` (a ``gfun experiment`` name, optionally with ``:param=value``
estimator parameters) that differs from the base configuration (``--base``, gFun-XPEF by default) by one choice: a
view left out or added, the meta-classifier's class weights or threshold rule, the aggregation. Every lever, the
base and the reference rows (``--baselines``: the peer ``encoder-tfidf`` and the CPU default ``xmp``) are fitted on
each run of each corpus (``bench_pooled.py``, one resumable CSV per corpus in ``--out``), and one Markdown report
(``<out>/ablation.md``, also printed) gives:

* per corpus and setting (many-shot; zero-shot where the corpus has languages without training documents), the
  base's scores and every other row's difference from them, with the paired t-test over runs (``+``/``-``:
  significantly above/below at p < .05; for ``unlabelled``, the share of the documents without any label that are
  given one, lower is better and the sign is that of the difference);
* the levers that help one corpus and hurt another: every (lever, measure) significantly above the base somewhere
  and significantly below it elsewhere.

Corpora (``--corpora``; data folders under ``--data-root``)::

    debtags       debtags, 7 training languages; fi, hu, nl, sv zero-shot
    debtags-rare  the tags ranked 74-150 of debtags, most documents without any; the same languages
    exceptius     EXCEPTIUS, one official split (runs differ by seed)
    sib200        SIB-200, every language trained (one split; runs differ by seed)
    sib200-zero   SIB-200 with nl, sv, da, fi, hu removed from training

Example (the frozen encoder's vectors and the views of each run cached, so that a lever that changes only the
meta-classifier costs the meta tier)::

    python benchmarks/ablation.py --data-root ../shared/data --runs 0-2 --vector-cache ~/.cache/gfun \\
        --view-cache /tmp/ablation-views --out results/ablation

With ``--view-cache`` the fit seconds of a row are those of what it did not find cached: run one quiet run without
it (``--runs 0``, a fresh ``--out``) for the cost of each row.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_pooled  # noqa: E402

from gfun.metrics.evaluation import UNLABELLED_FLAGGED as FLAGGED  # noqa: E402
from gfun.metrics.formatting import DISPLAY_NAMES as HEADERS  # noqa: E402
from gfun.metrics.measures import MEASURES  # noqa: E402

logger = logging.getLogger("ablation")



class Corpus(NamedTuple):
    """A corpus of the ablation: its dataset, its data folder under ``--data-root``, the languages removed from
    its training documents (a zero-shot setting for a dataset without one of its own)."""

    dataset: str
    folder: str
    zero_shot_langs: str | None = None


CORPORA: dict[str, Corpus] = {
    "debtags": Corpus("debtags", "debtags"),
    "debtags-rare": Corpus("debtags-rare", "debtags"),
    "exceptius": Corpus("exceptius", "exceptius"),
    "sib200": Corpus("sib200", "sib200"),
    "sib200-zero": Corpus("sib200", "sib200", "nl,sv,da,fi,hu"),
}

#: The levers tried by default, each with what it changes (from the base, gFun-XPEF).
LEVERS: dict[str, str] = {
    "pef": "without X (the per-language TF-IDF view)",
    "xef": "without P (the pooled TF-IDF view)",
    "xpf": "without E (the encoder vector alone)",
    "xpe": "without F (the encoder vector beside the pooled TF-IDF)",
    "xmpef": "with M (the encoder's subword vectors, mapped to posteriors)",
    "xpef:meta__class_weight=sqrt": "meta-classifier's classes weighted by the square roots of the balanced weights "
                                    "(gfun train's default)",
    "xpef:meta__class_weight=balanced": "meta-classifier's classes weighted by inverse frequency",
    "xpef:meta__threshold=k": "meta-classifier's thresholds chosen for K instead of F1",
    "xpef:meta__threshold=f1+k": "meta-classifier's thresholds chosen for the mean of F1 and K",
    "xpef:e__max_length=512:f__max_length=512": "E and F read 512 tokens (128 on a CPU by default)",
    "xpef:aggregation=mean": "the mean of every view's posteriors instead of `select`'s choice",
}
BASELINES = ("encoder-tfidf", "xmp")


def corpus_table(frame: pd.DataFrame, base: str, rows: Sequence[str], setting: str,
                 descriptions: dict[str, str]) -> tuple[list[str], dict[tuple[str, str], str]]:
    """Markdown lines of one corpus and setting: the base's means, then each row's mean difference from it with
    its significance mark; and the marks by (row, measure)."""
    s = frame[frame.setting == setting]
    measures = [m for m in (*MEASURES, FLAGGED) if m in s.columns and s[m].notna().any()]
    ref = s[s.config == base].set_index("run")
    runs = sorted(set(ref.index))
    lines = [f"| row ({len(runs)} run{'s' if len(runs) != 1 else ''}) | " + " | ".join(HEADERS[m] for m in measures)
             + " | fit s |", "|---|" + "---|" * (len(measures) + 1)]
    lines.append(f"| **{base}** (base) | " + " | ".join(f"{ref[m].mean():.3f}" for m in measures)
                 + f" | {ref.fit_s.mean():.0f} |")
    marks: dict[tuple[str, str], str] = {}
    for row in rows:
        c = s[s.config == row].set_index("run")
        if c.empty or row == base:
            continue
        cells = []
        for m in measures:
            common = c.index.intersection(ref.index)
            if not len(common):
                cells.append("-")
                continue
            sign = bench_pooled.significance_mark(c[m], ref[m])
            marks[(row, m)] = sign
            cells.append(f"{(c.loc[common, m] - ref.loc[common, m]).mean():+.3f}{sign}")
        name = f"{row} ({descriptions[row]})" if row in descriptions else row
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {c.fit_s.mean():.0f} |")
    return lines, marks


def disagreements(marks: dict[str, dict[tuple[str, str], str]]) -> list[str]:
    """The (row, measure) pairs significantly above the base on one corpus and below it on another, as lines
    ``- row, measure: up on A, B; down on C``. ``marks`` maps a corpus/setting name to its marks."""
    lines = []
    keys = sorted({k for m in marks.values() for k in m}, key=lambda k: (k[0], (*MEASURES, FLAGGED).index(k[1])))
    for row, measure in keys:
        up = [name for name, m in marks.items() if m.get((row, measure)) == "+"]
        down = [name for name, m in marks.items() if m.get((row, measure)) == "-"]
        if up and down:
            lines.append(f"- {row}, {HEADERS[measure]}: up on {', '.join(up)}; down on {', '.join(down)}")
    return lines


def report(frames: dict[str, pd.DataFrame], base: str, rows: Sequence[str], descriptions: dict[str, str]) -> str:
    """The Markdown report of :func:`corpus_table` for every corpus and setting, then :func:`disagreements`."""
    out = [f"# One lever at a time (base: {base})", ""]
    marks: dict[str, dict[tuple[str, str], str]] = {}
    for corpus, frame in frames.items():
        for setting in ("many", "zero"):
            if not ((frame.setting == setting) & (frame.config == base)).any():
                continue
            name = f"{corpus} {setting}-shot"
            lines, marks[name] = corpus_table(frame, base, rows, setting, descriptions)
            out += [f"## {name}", "", *lines, ""]
    out += ["## Levers that help one corpus and hurt another", ""]
    out += disagreements(marks) or ["- none: no lever is significantly above the base on one corpus and below it on "
                                    "another"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="debtags,debtags-rare,exceptius,sib200",
                    help=f"comma-separated, of {', '.join(CORPORA)}")
    ap.add_argument("--data-root", default="../shared/data", help="folder holding each corpus's data folder")
    ap.add_argument("--runs", default="0-2")
    ap.add_argument("--base", default="xpef")
    ap.add_argument("--levers", default=",".join(LEVERS), help="comma-separated configurations (bench_pooled.py's)")
    ap.add_argument("--baselines", default=",".join(BASELINES))
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--vector-cache", help="the frozen encoder's document-vector cache (bench_pooled.py)")
    ap.add_argument("--encoder-settings", choices=sorted(bench_pooled.ENCODER_SETTINGS), default="auto",
                    help="the E and F views' frozen pass (bench_pooled.py)")
    ap.add_argument("--view-cache", help="folder of the views fitted in each run, one subfolder per corpus")
    ap.add_argument("--out", required=True, help="folder of one resumable CSV per corpus and ablation.md")
    ap.add_argument("--report-only", action="store_true", help="write the report from the CSVs in --out, fit nothing")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logger.setLevel(logging.INFO)
    corpora = [c for c in args.corpora.split(",") if c]
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown:
        ap.error(f"unknown corpus {unknown}: choose from {', '.join(CORPORA)}")
    levers = [s for s in args.levers.split(",") if s]
    rows = [*[s for s in args.baselines.split(",") if s], *levers]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = {}
    for name in corpora:
        corpus = CORPORA[name]
        csv = out / f"{name}.csv"
        if not args.report_only:
            argv_corpus = ["--dataset", corpus.dataset, "--data-dir", str(Path(args.data_root) / corpus.folder),
                           "--runs", args.runs, "--configs", ",".join([args.base, *rows]),
                           "--n-jobs", str(args.n_jobs), "--out", str(csv)]
            if corpus.zero_shot_langs:
                argv_corpus += ["--zero-shot-langs", corpus.zero_shot_langs]
            if args.vector_cache:
                argv_corpus += ["--vector-cache", args.vector_cache]
            argv_corpus += ["--encoder-settings", args.encoder_settings]
            if args.view_cache:
                argv_corpus += ["--view-cache", str(Path(args.view_cache) / name)]
            logger.info("%s: %s", name, " ".join(argv_corpus))
            bench_pooled.main(argv_corpus)
        if csv.exists():
            frames[name] = pd.read_csv(csv)
    text = report(frames, args.base, rows, LEVERS)
    (out / "ablation.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
