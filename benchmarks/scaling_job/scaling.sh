#!/usr/bin/env bash
# Strong scaling of gFun-X (debtags split "all", --docs sample) on one many-core machine without internet:
# Dask LocalCluster of W single-thread workers (W = 16 8 4 2 1 by default) and one process with --n-jobs 16.
# Prepare the bundle first (benchmarks/scaling_job/README.md), then run from the repo root with OUT set:
#   BUNDLE=.dev2 DOCS=0 WORKERS="16 8 4 2" bash benchmarks/scaling_job/scaling.sh
# Writes to $OUT: scaling.log (everything printed), scaling.csv (all points, rewritten after each point),
# scaling.txt (summary table with speed-ups against W=1 when present).
# Overrides (env): DOCS, WORKERS (order kept), NJOBS (local point; empty: none), BUDGET (s for the whole job),
# PYTHON, SITE (wheel target), DATA (unpacked debtags folder), VERIFY (1: hash the full corpus once, ~10 s),
# BUNDLE (the folder with whl/ and data.tar.xz; default .dev2).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/../.." || exit 2
BUNDLE=${BUNDLE:-.dev2}
: "${OUT:?set OUT to the folder for the results}"
mkdir -p "$OUT"
DOCS=${DOCS:-25000}
WORKERS=${WORKERS:-"16 8 4 2 1"}
NJOBS=${NJOBS-16}
BUDGET=${BUDGET:-410}
PY=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
DATA=${DATA:-/tmp/debtags}
VERIFY=${VERIFY:-1}
EXPECTED=c682b5bc6fd78ad1a694f9caf23f750bb655a542b46df9337cb25a00ca3d564e
WORK=$(mktemp -d /tmp/scaling.XXXXXX)
T0=$SECONDS
exec > >(tee -a "$OUT/scaling.log") 2>&1
TEE_PID=$!
export PYTHONUNBUFFERED=1 PYTHONPATH="$SITE:$PWD/src" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export MPLBACKEND=Agg

echo "== scaling.sh $(date -u +%FT%TZ) on $(uname -n): nproc $(nproc), DOCS=$DOCS WORKERS='$WORKERS' NJOBS='$NJOBS' BUDGET=${BUDGET}s"
grep -m1 "model name" /proc/cpuinfo; free -g | head -2
echo "git: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed paths"
echo "threads: OMP=${OMP_NUM_THREADS-unset} MKL=${MKL_NUM_THREADS-unset} OPENBLAS=${OPENBLAS_NUM_THREADS-unset}"

echo "== installing wheels into $SITE"
rm -rf "$SITE"
timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
    --target "$SITE" "$BUNDLE"/whl/*.whl || { echo "FAILED: pip install"; exit 3; }

echo "== unpacking the debtags data into $DATA (lz4)"
rm -rf "$DATA"
timeout 120 "$PY" "$HERE/unpack.py" "$BUNDLE/data.tar.xz" "$DATA" || { echo "FAILED: unpack"; exit 4; }

timeout 120 "$PY" - <<'PYEOF' || { echo "FAILED: imports"; exit 5; }
import importlib, importlib.metadata as md, platform, sys
print("python", sys.version.split()[0], platform.machine(), sys.executable)
for m in ("numpy", "scipy", "sklearn", "pandas", "joblib", "threadpoolctl", "cloudpickle", "msgpack", "psutil",
          "tornado", "dask", "distributed", "zict", "tblib", "partd", "locket", "lz4", "Stemmer", "snowballstemmer",
          "stop_words", "gfun", "gfun.configuration", "gfun.datasets.debtags"):
    mod = importlib.import_module(m)
    print(f"  {m:22} {getattr(mod, '__version__', '')!s:12} {getattr(mod, '__file__', '')}")
import threadpoolctl
for p in threadpoolctl.threadpool_info():
    print("  blas:", p.get("internal_api"), p.get("version"), p.get("num_threads"), p.get("threading_layer", ""))
PYEOF
if [ "$VERIFY" = 1 ]; then
  got=$(timeout 120 "$PY" "$HERE/corpus_hash.py" "$DATA" | awk '{print $2}')
  if [ "$got" = "$EXPECTED" ]; then echo "corpus hash OK ($got): same documents as the full debtags folder"
  else echo "WARNING: corpus hash $got != expected $EXPECTED"; fi
fi
echo "setup took $((SECONDS - T0)) s"

POINTS=()
[ -n "$NJOBS" ] && POINTS+=("local $NJOBS")
for w in $WORKERS; do POINTS+=("dask $w"); done

summarize() {
  "$PY" - "$WORK" "$OUT" <<'PYEOF'
import glob, sys
import pandas as pd
work, out = sys.argv[1:]
files = sorted(glob.glob(f"{work}/*.csv"))
if not files:
    sys.exit(0)
df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
df.to_csv(f"{out}/scaling.csv", index=False)
df["cores"] = [w if m == "dask" else n for m, w, n in zip(df["mode"], df["workers"], df["n_jobs"])]
df = df.sort_values(["mode", "cores"])
base = df[(df["mode"] == "dask") & (df["cores"] == 1)]
cols = [c for c in ("mode", "cores", "n_train", "fit_s", "view_x_s", "meta_s", "predict_s", "cluster_start_s",
                    "peak_mb", "workers_peak_mb", "meta_method", "F1_macro", "F1_micro", "load_start", "load_end")
        if c in df]
t = df[cols].copy()
if len(base):
    for c in ("fit_s", "view_x_s", "meta_s"):
        t[f"speedup_{c[:-2]}"] = float(base[c].iloc[0]) / df[c]
    t["efficiency_fit"] = t["speedup_fit"] / t["cores"]
t["same_proba_bits"] = df["proba_sha256"] == df["proba_sha256"].iloc[0]
with pd.option_context("display.width", 250, "display.max_columns", 50, "display.float_format", "{:.2f}".format):
    text = t.to_string(index=False)
open(f"{out}/scaling.txt", "w").write(text + "\n")
print(text)
PYEOF
}

for p in "${POINTS[@]}"; do
  set -- $p
  mode=$1 n=$2
  left=$((BUDGET - (SECONDS - T0) - 8))
  if [ "$left" -lt 30 ]; then echo "== SKIPPED $mode $n: only ${left}s left of the ${BUDGET}s budget"; continue; fi
  if [ "$mode" = dask ]; then args=(--modes dask --workers "$n"); else args=(--modes local --n-jobs "$n"); fi
  echo "== $(date -u +%T) point: $mode $n, docs $DOCS, timeout ${left}s (t=$((SECONDS - T0))s)"
  s0=$SECONDS
  timeout -k 5 "$left" "$PY" benchmarks/bench_dask.py --data-dir "$DATA" --corpora all --configs x --docs "$DOCS" \
      "${args[@]}" --out "$WORK/$(printf '%s-%02d' "$mode" "$n").csv"
  rc=$?
  echo "== point $mode $n: exit $rc, $((SECONDS - s0)) s wall"
  [ $rc -eq 0 ] && summarize > /dev/null
done
echo "== summary (speed-ups against dask W=1 where it ran)"
summarize
echo "== done in $((SECONDS - T0)) s"
rm -rf "$WORK"
exec >&- 2>&-
for _ in $(seq 50); do kill -0 "$TEE_PID" 2>/dev/null || break; sleep 0.1; done
