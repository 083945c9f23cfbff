"""Tokenisation of scripts written without spaces: per-language macro-F1 on SIB-200 (20 languages).

Two settings, each with the code on ``PYTHONPATH`` (run it once with the old tree and once with the new one,
``--tag before`` / ``--tag after``):

* many-shot: train on the training split of all 20 languages, test on every language (Naive and gFun-X);
* zero-shot: gFun-XM trained on the 11 Latin-script languages, tested on the 9 others (M: word vectors
  ``--word-vectors``, by default ``e5-subword``, the mean of multilingual-e5-small's sub-word embeddings).

Each run adds its rows to ``--out`` (CSV: setting, config, tag, lang, F1_macro, F1_micro, n_test, fit_s) and
prints the per-language table of every tag found in the CSV side by side.

Usage::

    flock /tmp/gfun-heavy.lock env PYTHONPATH=<old tree>/src python benchmarks/bench_tokenisation.py --tag before
    flock /tmp/gfun-heavy.lock env PYTHONPATH=src python benchmarks/bench_tokenisation.py --tag after
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LATIN = ("en", "it", "da", "fr", "de", "es", "pt", "nl", "sv", "fi", "hu")
OTHER = ("zho_Hans", "jpn_Jpan", "tha_Thai", "kor_Hang", "rus_Cyrl", "arb_Arab", "hin_Deva", "ell_Grek", "heb_Hebr")
FIELDS = ("setting", "config", "tag", "lang", "F1_macro", "F1_micro", "n_test", "fit_s")


def _rows(setting: str, config: str, tag: str, df, fit_s: float) -> list[dict]:
    return [{"setting": setting, "config": config, "tag": tag, "lang": lang, "F1_macro": round(float(r.F1_macro), 4),
             "F1_micro": round(float(r.F1_micro), 4), "n_test": int(r.n_docs), "fit_s": round(fit_s, 1)}
            for lang, r in df.iterrows()]


def run(args: argparse.Namespace) -> list[dict]:
    from gfun.configuration import build_estimator, neural_view_params
    from gfun.datasets.sib200 import load_sib200
    from gfun.metrics.evaluation import evaluate

    out: list[dict] = []
    settings = args.settings.split(",")
    if "many-shot" in settings:
        data = load_sib200(args.data_dir, LATIN + OTHER)
        for name, config in (("Naive", "naive"), ("gFun-X", "x")):
            est = build_estimator(config, n_jobs=args.n_jobs, random_state=0)
            t0 = time.perf_counter()
            est.fit(data.train)
            fit_s = time.perf_counter() - t0
            df = evaluate(data.test.Y, est.predict(data.test), data.test.langs)
            out += _rows("many-shot", name, args.tag, df, fit_s)
            logging.warning("many-shot %s: average F1M %.3f (fit %.0f s)", name, df.loc["average", "F1_macro"], fit_s)
    if "zero-shot" in settings:
        data = load_sib200(args.data_dir, LATIN + OTHER, train_langs=LATIN)
        est = build_estimator("xm", view_params=neural_view_params(args.word_vectors), n_jobs=args.n_jobs,
                              random_state=0)
        t0 = time.perf_counter()
        est.fit(data.train)
        fit_s = time.perf_counter() - t0
        test = data.test.select([lang for lang in data.test.languages if lang not in LATIN])
        df = evaluate(test.Y, est.predict(test), test.langs)
        out += _rows("zero-shot", "gFun-XM", args.tag, df, fit_s)
        logging.warning("zero-shot gFun-XM: average F1M %.3f (fit %.0f s)", df.loc["average", "F1_macro"], fit_s)
    return out


def table(rows: list[dict]) -> str:
    """Per-language F1M of every (setting, config), one column per tag."""
    tags = list(dict.fromkeys(r["tag"] for r in rows))
    keys = list(dict.fromkeys((r["setting"], r["config"]) for r in rows))
    lines = []
    for setting, config in keys:
        sub = [r for r in rows if (r["setting"], r["config"]) == (setting, config)]
        langs = list(dict.fromkeys(r["lang"] for r in sub))
        langs = [lang for lang in langs if lang != "average"] + ["average"]
        lines.append(f"\n{setting} {config}: macro-F1 per language")
        lines.append("lang      " + "".join(f"{t:>10s}" for t in tags))
        for lang in langs:
            vals = {r["tag"]: r["F1_macro"] for r in sub if r["lang"] == lang}
            lines.append(f"{lang:10s}" + "".join(f"{float(vals[t]):10.3f}" if t in vals else f"{'-':>10s}"
                                                 for t in tags))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", default="after", help="name of this code version in the CSV (before, after, ...)")
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_SIB200",
                                                         str(ROOT.parent / "shared" / "data" / "sib200")))
    ap.add_argument("--settings", default="many-shot,zero-shot")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "tokenisation-sib200.csv"))
    ap.add_argument("--table-only", action="store_true", help="print the table of the CSV and exit")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr)
    path = Path(args.out)
    old = list(csv.DictReader(path.open(encoding="utf-8"))) if path.exists() else []
    if not args.table_only:
        new = run(args)
        done = {(r["setting"], r["config"], r["tag"]) for r in new}
        old = [r for r in old if (r["setting"], r["config"], r["tag"]) not in done] + new
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(old)
    sys.stdout.write(table(old) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
