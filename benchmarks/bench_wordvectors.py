"""Time and peak memory to build aligned word vectors for the debtags TF-IDF vocabularies.

For run ``--run`` of the debtags protocol, the TF-IDF vocabulary of each many-shot language's
training set (unstemmed terms: word vectors need words) is built, then each word-vector source
builds its matrices twice, each time in a fresh process: once with an empty cache (cold) and once
reading the cache (warm).  Peak memory is the worker process's high-water resident set size (VmHWM).

Usage::

    python benchmarks/bench_wordvectors.py --source e5-subword --source e5 [--procrustes]
    python benchmarks/bench_wordvectors.py --source vec:/data/muse/wiki.multi.{lang}.vec

Needs ``../shared/data/debtags`` (or ``$GFUN_DATA``) and, for encoder sources, ``gfun[torch]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _vocabularies(data_dir: Path, run: int) -> dict[str, list[str]]:
    from gfun.datasets.debtags import load_debtags
    from gfun.text.tfidf import TfidfVectorizer

    r = load_debtags(run, data_dir)
    vocab: dict[str, list[str]] = {}
    for lang in r.many_shot:
        docs = [t for t, lg in zip(r.train.texts, r.train.langs, strict=True) if lg == lang]
        tfidf = TfidfVectorizer(lang, stem=False).fit(docs)
        vocab[lang] = [str(w) for w in tfidf.get_feature_names_out()]
    return vocab


def _peak_rss_mb() -> float:
    """Peak resident set size of this process (VmHWM: ru_maxrss keeps the parent's over exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(args: argparse.Namespace) -> None:
    """Build the matrices of every language in this process and print one JSON line."""
    import numpy as np

    started = time.perf_counter()
    from gfun.wordvectors import make_source
    from gfun.wordvectors.dictionaries import freedict_pairs
    from gfun.wordvectors.procrustes import ProcrustesAligned

    vocab = json.loads(Path(args.vocab_file).read_text(encoding="utf-8"))
    source = make_source(args.source[0], cache_dir=args.cache_dir)
    if args.procrustes:
        # pairs whose foreign word is in the language's vocabulary, at most 5000 foreign words
        dictionaries = {}
        for lang, words in vocab.items():
            if lang == "en":
                continue
            try:
                known = set(words)
                pairs = [(b, a) for a, b in freedict_pairs("en", lang) if b in known]
            except FileNotFoundError:
                continue
            keep = set(sorted({b for b, _ in pairs})[:5000])
            dictionaries[lang] = [p for p in pairs if p[0] in keep]
        source = ProcrustesAligned(source, dictionaries, pivot="en")
    rss_start = _peak_rss_mb()
    per_lang = {}
    for lang, words in vocab.items():
        t0 = time.perf_counter()
        mat = source.vectors(lang, words)
        per_lang[lang] = {
            "words": len(words),
            "seconds": round(time.perf_counter() - t0, 2),
            "oov": round(source.oov_share_[lang], 4),
            "finite": bool(np.isfinite(mat).all()),
        }
    out = {
        "source": args.source[0],
        "procrustes": args.procrustes,
        "total_seconds": round(time.perf_counter() - started, 1),
        "peak_rss_mb": round(_peak_rss_mb()),
        "rss_after_imports_mb": round(rss_start),
        "languages": per_lang,
    }
    if args.procrustes:
        out["procrustes_pairs"] = dict(source.n_pairs_)
    sys.stdout.write(json.dumps(out) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = Path(os.environ.get("GFUN_DATA", ROOT.parent / "shared" / "data")) / "debtags"
    parser.add_argument("--data-dir", type=Path, default=default_data)
    parser.add_argument("--run", type=int, default=0)
    parser.add_argument("--source", action="append", default=None, help="see `gfun embeddings align-eval`")
    parser.add_argument("--procrustes", action="store_true", help="refine onto English with FreeDict pairs")
    parser.add_argument("--cache-dir", default=None, help="cache root (default: a fresh temporary folder)")
    parser.add_argument("--vocab-file", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.source = args.source or ["e5-subword"]
    if args.worker:
        _worker(args)
        return

    t0 = time.perf_counter()
    vocab = _vocabularies(args.data_dir, args.run)
    sizes = {lang: len(words) for lang, words in vocab.items()}
    sys.stdout.write(
        f"debtags run {args.run}: TF-IDF vocabularies {sizes} (total {sum(sizes.values())}), "
        f"built in {time.perf_counter() - t0:.1f} s\n"
    )
    with tempfile.TemporaryDirectory(prefix="gfun-bench-") as tmp:
        vocab_file = Path(tmp) / "vocab.json"
        vocab_file.write_text(json.dumps(vocab), encoding="utf-8")
        for spec in args.source:
            cache = args.cache_dir or str(Path(tmp) / ("cache-" + str(abs(hash(spec)))))
            if args.cache_dir is None:
                # a fresh word-vector cache, but the converted encoder of the usual cache
                from gfun.encoders._cache import gfun_cache_dir

                Path(cache).mkdir(parents=True)
                encoders = gfun_cache_dir(subdir="encoders")
                encoders.mkdir(parents=True, exist_ok=True)
                (Path(cache) / "encoders").symlink_to(encoders)
            for label in ("cold", "warm"):
                cmd = [sys.executable, __file__, "--worker", "--source", spec, "--cache-dir", cache]
                cmd += ["--vocab-file", str(vocab_file)] + (["--procrustes"] if args.procrustes else [])
                wall = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                wall = time.perf_counter() - wall
                if proc.returncode != 0:
                    sys.stdout.write(f"{spec} {label}: failed\n{proc.stderr[-2000:]}\n")
                    break
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                langs = " ".join(
                    f"{k}:{v['seconds']}s/oov{100 * v['oov']:.1f}%" for k, v in res["languages"].items()
                )
                if "procrustes_pairs" in res:
                    langs += f" | Procrustes pairs {res['procrustes_pairs']}"
                sys.stdout.write(
                    f"{spec:<14} {'+procrustes' if args.procrustes else '':<11} {label}: "
                    f"build {res['total_seconds']:.1f} s (process wall {wall:.1f} s), peak RSS "
                    f"{res['peak_rss_mb']} MB (after imports {res['rss_after_imports_mb']} MB) | {langs}\n"
                )
                sys.stdout.flush()


if __name__ == "__main__":
    main()
