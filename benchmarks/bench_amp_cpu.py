"""What bfloat16 autocast costs or saves on this CPU: multilingual-e5-small's forward pass in float32 and in bfloat16.

The B view runs its trainable layers in bfloat16 autocast when it was fitted with ``amp`` on (``"auto"``: on CUDA,
and on CPUs with AVX512-BF16 or AMX), and a loaded model extracts as it was fitted. This prints the seconds of the
whole encoder's forward pass over the first ``--docs`` test documents of the demo corpus (batches of 32, length
<= ``--max-length``, ``--threads`` torch threads), in each precision, ``--repeat`` times. To see a CPU without bfloat16
instructions on one that has them, run it again with ``ONEDNN_MAX_CPU_ISA=AVX2`` (oneDNN then runs bfloat16
products without the instructions)::

    python benchmarks/bench_amp_cpu.py
    ONEDNN_MAX_CPU_ISA=AVX2 python benchmarks/bench_amp_cpu.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="multilingual-e5-small")
    ap.add_argument("--docs", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--max-length", type=int, default=128)
    args = ap.parse_args(argv)
    import torch

    from gfun.datasets.demo import load_demo
    from gfun.encoders.resolver import load_encoder
    from gfun.neural.fine_tuning import cpu_has_bfloat16

    torch.set_num_threads(args.threads)
    model, tokenizer = load_encoder(args.model)
    model.eval()
    texts = list(load_demo()[1].texts[:args.docs])
    batches = [tokenizer(texts[i:i + 32], padding=True, truncation=True, max_length=args.max_length,
                         return_tensors="pt")
               for i in range(0, len(texts), 32)]
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "")
    print(f"{args.model}, {len(texts)} documents, {args.threads} threads; torch CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}, bfloat16 instructions {cpu_has_bfloat16()}"
          + (f", ONEDNN_MAX_CPU_ISA={isa}" if isa else ""))
    print(f"{'precision':10s} " + " ".join(f"{'run ' + str(r + 1):>8s}" for r in range(args.repeat)))
    for amp in (False, True):
        seconds = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
                for batch in batches:
                    model(**batch).last_hidden_state[:, 0].float()
            seconds.append(time.perf_counter() - t)
        print(f"{'bfloat16' if amp else 'float32':10s} " + " ".join(f"{s:7.3f}s" for s in seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
