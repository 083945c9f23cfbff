"""What of a language's TF-IDF fit stays one job when a cluster counts its texts in blocks.

On a Dask cluster :class:`gfun.text.tfidf.MultilingualTfidf` cuts a language with more than the workers' share of
the documents into blocks (:func:`gfun.core.parallel.document_blocks`), counts each block as a job
(:meth:`~gfun.text.tfidf.TfidfVectorizer.count_block`) and merges the blocks' counts in one job per language
(:meth:`~gfun.text.tfidf.TfidfVectorizer.fit_blocks`, then the weighting). This prints, for the largest language of
debtags' ``split="all"`` (English, about 28,000 documents), the CPU seconds of one pass, of the counting in
``--blocks`` blocks (all of them, one after the other) and of the merge, the merge's share of one pass (what
``scaling_model.py --merge-share`` takes: the part of the largest language's TF-IDF that is still one job), and
whether the blocks give the one pass's bits::

    python benchmarks/bench_tfidf_blocks.py --data-dir ../shared/data/debtags [--blocks 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default="../shared/data/debtags")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from gfun.datasets.debtags import load_debtags
    from gfun.text.tfidf import TfidfVectorizer

    loaded = load_debtags(run=0, data_dir=args.data_dir, split="all")
    train = loaded[0] if isinstance(loaded, tuple) else loaded.train
    texts = [t for t, lang in zip(train.texts, train.langs, strict=True) if lang == args.lang]
    cuts = np.array_split(np.arange(len(texts)), args.blocks)
    print(f"{len(texts):,} {args.lang} documents, {args.blocks} blocks; CPU seconds")
    print("| repeat | one pass | counting the blocks | merge, pruning, weighting | merge share | same bits |")
    print("|---|---|---|---|---|---|")
    shares = []
    for rep in range(args.repeats):
        one = TfidfVectorizer(args.lang)
        t0 = time.process_time()
        expected = one.fit_transform(texts)
        one_s = time.process_time() - t0
        blocked = TfidfVectorizer(args.lang)
        t0 = time.process_time()
        blocks = [blocked.count_block([texts[i] for i in cut.tolist()]) for cut in cuts]
        count_s = time.process_time() - t0
        t0 = time.process_time()
        got = blocked._weight(blocked.fit_blocks(blocks))
        merge_s = time.process_time() - t0
        same = (got != expected).nnz == 0 and blocked.vocabulary_ == one.vocabulary_
        shares.append(merge_s / one_s)
        print(f"| {rep} | {one_s:.2f} | {count_s:.2f} | {merge_s:.2f} | {shares[-1]:.3f} | {same} |")
    print(f"\nmedian merge share: {float(np.median(shares)):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
