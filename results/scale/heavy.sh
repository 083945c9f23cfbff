#!/bin/bash
# everything heavy of the scale branch, in priority order, under ONE hold of the lock (called via flock)
cd /work/wt-scale
PY=/work/main/.venv/bin/python
R=results/scale
S=/work/wt-scale/src
log() { echo "$(date -u +%H:%M:%S) $1 load $(cat /proc/loadavg)"; }
sc() { name=$1; shift; log "start $name"; PYTHONPATH=$S $PY benchmarks/bench_scaling.py --classes "" --out $R/$name.csv "$@" > $R/$name.txt 2>&1; log "end $name"; git add $R && git commit -qm "results/scale: $name (bench run by heavy.sh)"; }
db() { name=$1; src=$2; shift 2; log "start $name"; PYTHONPATH=$src $PY benchmarks/bench_debtags.py --out $R/$name.csv "$@" > $R/$name.txt 2>&1; log "end $name"; git add $R && git commit -qm "results/scale: $name (bench run by heavy.sh)"; }
sc scaling-all-auto --corpus all --docs 6500,25000,all
sc scaling-protocol-exact --docs 1000,4000 --approximation none
sc scaling-protocol-nystroem --docs 1000,4000 --approximation nystroem-ls
db debtags-run0-scale $S --configs gfun-x-C1,gfun-x,gfun-xmw
sc scaling-all-exact --corpus all --docs 6500,12500 --approximation none
db debtags-run0-main /work/main/src --configs gfun-x-C1,gfun-x,gfun-xmw
log done
