"""The cost of the frozen encoder's document vectors (the E and F views, the encoder baselines), setting by setting.

Encodes a sample of one debtags run's training documents with :class:`gfun.encoders.document_vectors.DocumentEncoder`
(no cache) for each setting (``max_length`` x ``quantize``), batches side by side in ``--n-jobs`` threads of one
torch thread each, and prints documents per second, process CPU seconds
per 1,000 documents, and the mean cosine of each setting's vectors to those of the first setting (what the setting
changes in the vectors). Precision ``int8`` is :data:`gfun.encoders.frozen.INT8_SCHEME` as this CPU runs it (the
feed-forward output projection in native bfloat16 where the CPU has bfloat16 dot products); ``int8-emulated`` computes
that projection's bfloat16 roundings in float32, as a CPU without them does. Time it on a quiet machine: another job
on the cores inflates torch timings.

Example::

    python benchmarks/bench_encoder.py --data-dir ../shared/data/debtags --sample 200 --n-jobs 2
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default="../shared/data/debtags")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--sample", type=int, default=400, help="training documents encoded per setting")
    ap.add_argument("--n-jobs", type=int, default=None, help="batches encoded side by side (one torch thread each)")
    ap.add_argument("--settings", default="512:fp32,512:int8,256:fp32,128:fp32",
                    help="comma-separated max_length:fp32|int8|int8-emulated")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    from gfun.datasets.registry import load_dataset
    from gfun.encoders.bfloat16 import BFloat16Linear, bfloat16_native
    from gfun.encoders.document_vectors import DocumentEncoder

    texts = list(load_dataset("debtags", data_dir=args.data_dir, run=args.run).train.texts)
    texts = [texts[i] for i in np.random.RandomState(0).permutation(len(texts))[:args.sample]]
    reference = None
    rows = []
    for setting in args.settings.split(","):
        length, precision = setting.split(":")
        if precision not in ("fp32", "int8", "int8-emulated"):
            ap.error(f"precision {precision!r}: expected fp32, int8 or int8-emulated")
        enc = DocumentEncoder(max_length=int(length), quantize=precision != "fp32", cache_dir=None, device="cpu",
                              n_jobs=args.n_jobs)
        frozen = enc._load()[2]
        if precision == "int8-emulated":
            for module in (m for layer in frozen.layers for m in layer.modules()):
                if isinstance(module, BFloat16Linear):
                    module.native = False
        cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        t0 = time.perf_counter()
        V = enc.encode(texts)
        wall = time.perf_counter() - t0
        cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0
        if reference is None:
            reference = V
        rows.append((setting, len(texts) / wall, 1000 * cpu / len(texts), float(np.mean(np.sum(V * reference, 1)))))
    print(f"debtags run {args.run}, {len(texts)} training documents, n_jobs {args.n_jobs}, native bfloat16 "
          f"products: {bfloat16_native()}")
    print(f"{'setting':17s} {'docs/s':>8s} {'cpu s/1000 docs':>16s} {'cosine to first':>16s}")
    for setting, rate, cpu, cos in rows:
        print(f"{setting:17s} {rate:8.1f} {cpu:16.1f} {cos:16.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
