"""Benchmark: gFun on a Dask ``LocalCluster`` of single-threaded workers against one process, tier by tier.

Each point (corpus x configuration x mode) is fitted in a fresh subprocess (see ``_measure.py``):

* ``local``: one process, ``--n-jobs`` threads (the same cores the cluster gets);
* ``dask``: a ``LocalCluster`` of ``--workers`` worker processes of one thread each, started before the fit (not
  timed), the fit and the prediction under ``joblib.parallel_config(backend="dask")``: the X view's languages and
  classes, the B view's frozen pass, the mappers' and the meta-classifier's folds and classes (exact) or passes
  over the vectors (Nystroem least squares) and ``select``'s candidates run on the workers; fine-tuning runs in the
  calling process.

Corpora: ``run0`` (debtags run 0, the protocol: 6,491 training documents) and ``all`` (``load_debtags(split="all")``:
100,286 training documents, 5,718 test documents); ``--docs`` keeps a uniform sample of at most that many training
documents (and ``--test-docs`` of test documents), for a quick check of the script. Both modes fit with the same
``random_state``: the ``same`` column says whether the two fits' test probabilities are the same bits.

Printed per point: the fit, each phase of it (``view_<letter>``, ``mapper_<letter>``, ``meta``; the B view split
into its frozen pass and its fine-tuning), the prediction, the speed-up of the cluster per phase, and, for the
cluster, the jobs the workers ran (count and seconds of computation per kind of job, from the task stream) and the
seconds the workers spent receiving data from one another; the phases' seconds on the workers are the
computation of the jobs that started within the phase. The M view's word vectors of the corpus are computed (and
cached) before the timed fits. The figures of the cost model in docs/benchmarks.md
("Running on a cluster") come from this table.

``--ddp-probe`` measures instead what torch's distributed data parallel training would give the B view's
fine-tuning on CPU workers: the time of one training step of the ``cpu`` preset (the top layer and the output layer
of multilingual-e5-small on frozen states, one thread) on the share of a batch of 32 documents that each of N
workers would take, and of an all-reduce of its gradients between two processes of this machine (gloo, loopback:
a floor for a real network), then the step time projected for N workers at 1 and 10 Gbit/s.

Usage::

    python benchmarks/bench_dask.py [--corpora run0,all] [--configs x,xm] [--modes local,dask] [--workers 2]
        [--n-jobs 2] [--docs N] [--test-docs N] [--word-vectors e5-subword] [--max-memory 2GB]
        [--out benchmarks/results/dask.csv]
    python benchmarks/bench_dask.py --corpora run0 --configs xmb           # the B view (about 10 min a fit)
    python benchmarks/bench_dask.py --corpora all --docs 3000 --test-docs 500 --configs xm --max-memory 1MB  # a check
    python benchmarks/bench_dask.py --ddp-probe
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure, run_isolated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: What Dask's nannies set to one thread in the process that starts a LocalCluster (``pre-spawn-environ``).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: Phases of ``GeneralizedFunnelling.timings_`` in the table, in the order of a fit.
PHASES = ("view_x", "view_m", "mapper_m", "view_b", "b_frozen", "b_tuning", "mapper_b", "meta")


def _corpus(point: dict):
    from gfun.datasets.debtags import load_debtags

    r = load_debtags(run=0, data_dir=point["data_dir"], split="all" if point["corpus"] == "all" else "protocol")
    train, test = r.train, r.test
    rng = np.random.RandomState(0)
    if point["docs"] and point["docs"] < len(train):
        train = train.subset(np.sort(rng.permutation(len(train))[:point["docs"]]))
    if point["test_docs"] and point["test_docs"] < len(test):
        test = test.subset(np.sort(rng.permutation(len(test))[:point["test_docs"]]))
    return train, test


def _job_kind(key: str) -> str:
    """The function of a joblib task's key (``batch_of_<function>_<n>_calls-<uuid>``)."""
    m = re.match(r"batch_of_(.+)_\d+_calls-", key)
    return m.group(1).strip("_") if m else key.rsplit("-", 1)[0]


def _jobs(stream: list[dict], windows: dict[str, tuple[float, float]]
          ) -> tuple[dict, dict[str, float], dict[str, float]]:
    """Per kind of job: tasks, seconds computing, seconds receiving their inputs from other workers; the seconds the
    workers computed in each phase of the fit (``windows``: its start and end, wall clock); and per phase the
    seconds of its busiest worker (the phase's wall minus them is the time no worker computed for: the calling
    process's own work and waits; them minus the mean over workers is the imbalance)."""
    kinds: dict[str, dict[str, float]] = {}
    phases: dict[str, float] = {}
    per_worker: dict[tuple[str, str], float] = {}
    for task in stream:
        row = kinds.setdefault(_job_kind(task["key"]), {"tasks": 0, "compute_s": 0.0, "transfer_s": 0.0})
        row["tasks"] += 1
        for part in task.get("startstops", ()):
            seconds = part["stop"] - part["start"]
            if part["action"] == "compute":
                row["compute_s"] += seconds
                phase = next((p for p, (a, b) in windows.items() if a <= part["start"] < b), "other")
                phases[phase] = phases.get(phase, 0.0) + seconds
                key = (phase, str(task.get("worker", "")))
                per_worker[key] = per_worker.get(key, 0.0) + seconds
            elif part["action"] == "transfer":
                row["transfer_s"] += seconds
    busiest: dict[str, float] = {}
    for (phase, _), seconds in per_worker.items():
        busiest[phase] = max(busiest.get(phase, 0.0), seconds)
    return kinds, phases, busiest


def _windows(start: float, phases: dict[str, float]) -> dict[str, tuple[float, float]]:
    """The wall-clock window of each phase of a fit started at ``start`` (``timings_``, in the order they ran)."""
    out = {}
    for phase, seconds in phases.items():
        out[phase] = (start, start + seconds)
        start += seconds
    return out


def _phases(model) -> dict[str, float]:
    phases = dict(getattr(model, "timings_", {}))
    view_b = next((b.view for b in getattr(model, "branches_", []) if b.view.letter == "b"), None)
    if view_b is not None and "view_b" in phases:  # the frozen pass and the rest (fine-tuning, extraction)
        frozen = float(getattr(view_b.tuner_, "frozen_seconds_", 0.0) or 0.0)
        phases["b_frozen"], phases["b_tuning"] = frozen, phases["view_b"] - frozen
    return phases


def _warm(point: dict) -> dict:
    """Fill the caches a first fit fills (the M view's word vectors of the corpus's words), untimed."""
    from gfun.views import make_view

    train, test = _corpus(point)
    view = make_view("m", source=point["word_vectors"])
    view.fit_transform(train.texts, np.asarray(train.langs, dtype=object), train.Y.toarray())
    view.transform(test.texts, np.asarray(test.langs, dtype=object))
    return {"warm": True}


def _one(point: dict) -> dict:
    from joblib import parallel_config

    from gfun.configuration import build_estimator
    from gfun.metrics.evaluation import evaluate

    load_start = os.getloadavg()[0]
    train, test = _corpus(point)
    view_params = {"m": {"source": point["word_vectors"]}, "b": {"preset": "cpu", "device": "cpu"}}
    est = build_estimator(point["config"], random_state=0, n_jobs=point["n_jobs"], view_params=view_params)
    est.set_params(meta__max_memory=point["max_memory"], mapper__max_memory=point["max_memory"])
    jobs: dict = {}
    worker_s: dict[str, float] = {}
    busiest_s: dict[str, float] = {}
    starts: list[float] = []

    def fit():
        starts.append(time.time())
        return est.fit(train)

    if point["mode"] == "dask":
        import distributed

        t0 = time.perf_counter()
        threads = {k: os.environ.get(k) for k in THREAD_VARIABLES}
        torch_threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
        with distributed.LocalCluster(n_workers=point["workers"], threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster) as client:
            client.wait_for_workers(point["workers"])
            start_s = time.perf_counter() - t0
            # the nannies run in this process and set their workers' one thread in its environment too: torch,
            # imported later, would fine-tune on one thread, not on the local fit's
            for key, value in threads.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            if torch_threads is not None:
                sys.modules["torch"].set_num_threads(torch_threads)
            with distributed.get_task_stream(client) as stream, parallel_config(backend="dask"):
                model, pred, figures = measure(fit, lambda m: m.predict_proba(test))
            windows = _windows(starts[0], model.timings_)
            windows["predict"] = (starts[0] + figures["fit_s"], float("inf"))
            jobs, worker_s, busiest_s = _jobs(stream.data, windows)
        figures["cluster_start_s"] = start_s
        # the worker processes, reaped when the cluster closed
        figures["workers_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    else:
        model, pred, figures = measure(fit, lambda m: m.predict_proba(test))
    res = evaluate(test.Y, (pred > 0.5).astype(int), test.langs).loc["average"]
    return {**{k: v for k, v in point.items() if k != "data_dir"}, "n_train": len(train), "n_test": len(test),
            **figures, **{f"{k}_s": v for k, v in _phases(model).items()},
            "meta_method": model.meta_.method_ or "exact", "selected": "".join(model.selected_views_),
            "F1_macro": res["F1_macro"], "F1_micro": res["F1_micro"],
            "proba_sha256": hashlib.sha256(np.ascontiguousarray(pred).tobytes()).hexdigest(),
            **{f"workers_{k}_s": v for k, v in worker_s.items()},
            **{f"busiest_worker_{k}_s": v for k, v in busiest_s.items()}, "jobs": json.dumps(jobs),
            "load_start": load_start, "load_end": os.getloadavg()[0]}


def _table(df) -> str:
    """Per corpus and configuration: a row per phase, the seconds of each mode, the speed-up of the cluster and the
    seconds its workers computed in the phase (what the cost model splits into parallel and serial work)."""
    import pandas as pd

    lines = []
    for (corpus, config), sub in df.groupby(["corpus", "config"], sort=False):
        sub = sub.set_index("mode")
        rows = [p for p in ("fit", *PHASES, "predict") if f"{p}_s" in sub and sub[f"{p}_s"].notna().any()]
        table = pd.DataFrame({mode: [sub.loc[mode, f"{p}_s"] for p in rows] for mode in sub.index}, index=rows)
        if {"local", "dask"} <= set(sub.index):
            table["speed-up"] = table["local"] / table["dask"]
            workers = [sub.loc["dask"].get(f"workers_{p}_s", float("nan")) for p in rows]
            table["dask: on workers"] = workers
            table.loc["fit", "dask: on workers"] = sum(sub.loc["dask"].get(f"workers_{p}_s", 0.0) or 0.0
                                                       for p in rows if p not in ("fit", "predict")
                                                       and not p.startswith("b_"))
        first = sub.iloc[0]
        lines.append(f"== {corpus}: gFun-{config.upper()}, {int(first.n_train):,} training and {int(first.n_test):,} "
                     f"test documents; meta {first.meta_method}; select kept {first.selected} ==")
        with pd.option_context("display.width", 250, "display.float_format", "{:.2f}".format):
            lines.append(table.to_string())
        facts = [f"{mode}: peak {sub.loc[mode, 'peak_mb']:.0f} MB, F1M {sub.loc[mode, 'F1_macro']:.3f}, "
                 f"F1mu {sub.loc[mode, 'F1_micro']:.3f}, load {sub.loc[mode, 'load_start']:.1f}-"
                 f"{sub.loc[mode, 'load_end']:.1f}" for mode in sub.index]
        if "dask" in sub.index:
            facts.append(f"cluster: start {sub.loc['dask', 'cluster_start_s']:.1f} s (not in the fit), worker peak "
                         f"{sub.loc['dask', 'workers_peak_mb']:.0f} MB")
        if {"local", "dask"} <= set(sub.index):
            same = sub.loc["local", "proba_sha256"] == sub.loc["dask", "proba_sha256"]
            facts.append(f"test probabilities of the two fits: {'the same bits' if same else 'DIFFERENT'}")
        lines += facts
        if "dask" in sub.index:
            jobs = pd.DataFrame(json.loads(sub.loc["dask", "jobs"])).T
            if len(jobs):
                with pd.option_context("display.width", 250, "display.float_format", "{:.2f}".format):
                    lines.append("jobs on the workers:\n" + jobs.sort_values("compute_s", ascending=False)
                                 .to_string())
        lines.append("")
    return "\n".join(lines)


def _ddp_probe(args: argparse.Namespace) -> int:
    """Fine-tuning steps of the ``cpu`` preset on the share of a batch of 32 that each of N workers would take, an
    all-reduce of the gradients; the step time projected for N workers."""
    import torch
    import torch.multiprocessing as mp

    from gfun.encoders.frozen import encoder_layers, run_layers
    from gfun.encoders.resolver import load_encoder

    torch.set_num_threads(1)  # a single-threaded worker
    encoder, _ = load_encoder(args.encoder)
    layer = encoder_layers(encoder)[-1]
    hidden = encoder.config.hidden_size
    head = torch.nn.Linear(hidden, 73)
    params = [*layer.parameters(), *head.parameters()]
    n_params = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=5e-5)
    sizes = (1, 2, 4, 8, 16)

    def step_seconds(batch: int) -> float:
        states = torch.randn(batch, args.probe_length, hidden)
        mask = torch.ones(batch, args.probe_length, dtype=torch.long)
        target = (torch.rand(batch, 73) < 0.05).float()
        seconds = []
        for _ in range(5):
            t0 = time.perf_counter()
            out = run_layers(encoder, [layer], states, mask).mean(dim=1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(head(out), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seconds.append(time.perf_counter() - t0)
        return float(np.median(seconds[1:]))

    steps = {n: step_seconds(32 // n) for n in sizes}
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_allreduce_worker, args=(rank, 2, n_params, queue)) for rank in range(2)]
    for p in procs:
        p.start()
    allreduce = max(queue.get() for _ in procs)
    for p in procs:
        p.join()
    mb = 4 * n_params / 2**20
    lines = [f"trainable weights of a step (top layer + output layer of {args.encoder}): {n_params:,} "
             f"({mb:.1f} MB of gradients)",
             f"all-reduce of the gradients, 2 processes, gloo over loopback: {allreduce:.3f} s",
             f"a step on 32/N documents of {args.probe_length} tokens, 1 thread; the step of N workers with a ring "
             "all-reduce (2 (N-1)/N of the gradients each way, at least the loopback time):",
             "  N  docs/worker  compute  +1 Gbit/s  speed-up  +10 Gbit/s  speed-up"]
    for n in sizes:
        comm = [0.0 if n == 1 else max(allreduce, 2 * (n - 1) / n * 4 * n_params * 8 / bw) for bw in (1e9, 1e10)]
        t1, t10 = steps[n] + comm[0], steps[n] + comm[1]
        lines.append(f"  {n:<3}{32 // n:>11}  {steps[n]:7.3f}  {t1:9.3f}  {steps[1] / t1:8.2f}  {t10:10.3f}  "
                     f"{steps[1] / t10:8.2f}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _allreduce_worker(rank: int, world: int, n_params: int, queue) -> None:
    import torch
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    grad = torch.randn(n_params)
    seconds = []
    for _ in range(8):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(grad)
        seconds.append(time.perf_counter() - t0)
    dist.destroy_process_group()
    queue.put(float(np.median(seconds[2:])))


def main() -> int:
    from gfun.configuration import DEFAULT_WORD_VECTORS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--corpora", default="run0,all", help="run0 (6,491 training documents), all (100,286)")
    ap.add_argument("--configs", default="x,xm", help="view letters of gFun configurations (x, xm, xmb...)")
    ap.add_argument("--modes", default="local,dask")
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the cluster (one thread each; with 1, "
                    "joblib runs the jobs in the calling process instead)")
    ap.add_argument("--n-jobs", type=int, default=2, help="threads of the local fit")
    ap.add_argument("--docs", type=int, default=0, help="at most this many training documents (0: all)")
    ap.add_argument("--test-docs", type=int, default=0, help="at most this many test documents (0: all)")
    ap.add_argument("--word-vectors", default=DEFAULT_WORD_VECTORS, help="word vectors of the M view")
    ap.add_argument("--max-memory", default="2GB", help="memory budget of the exact kernel SVMs (meta-classifier, "
                    "mappers); beyond it, Nystroem least squares (1MB forces it at any size)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "dask.csv"))
    ap.add_argument("--ddp-probe", action="store_true", help="measure distributed fine-tuning instead (see above)")
    ap.add_argument("--encoder", default="multilingual-e5-small", help="--ddp-probe: the B view's encoder")
    ap.add_argument("--probe-length", type=int, default=200, help="--ddp-probe: tokens per document")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        point = json.loads(args.one)
        sys.stdout.write(json.dumps(_warm(point) if point.get("warm") else _one(point)) + "\n")
        return 0
    if args.ddp_probe:
        return _ddp_probe(args)
    import pandas as pd

    corpora = [c for c in args.corpora.split(",") if c]
    modes = [m for m in args.modes.split(",") if m]
    if not set(corpora) <= {"run0", "all"} or not set(modes) <= {"local", "dask"}:
        ap.error("--corpora takes run0 and all, --modes local and dask")
    if args.workers < 1:
        ap.error("--workers takes 1 or more")
    if args.workers == 1 and "dask" in modes:
        sys.stderr.write("--workers 1: joblib runs the jobs of a one-worker cluster in the calling process, with its "
                         "threads, so this dask point is not one of the scaling curve (see docs/benchmarks.md)\n")
    rows = []
    configs = [c for c in args.configs.split(",") if c]
    for corpus in corpora:
        if any("m" in c for c in configs):  # the word vectors of the corpus computed before any timed fit
            run_isolated(__file__, {"warm": True, "corpus": corpus, "data_dir": args.data_dir, "docs": args.docs,
                                    "test_docs": args.test_docs, "word_vectors": args.word_vectors})
        for config in configs:
            for mode in modes:
                point = {"corpus": corpus, "config": config, "mode": mode, "data_dir": args.data_dir,
                         "docs": args.docs, "test_docs": args.test_docs, "workers": args.workers,
                         "n_jobs": args.n_jobs, "word_vectors": args.word_vectors, "max_memory": args.max_memory}
                rows.append(run_isolated(__file__, point))
                sys.stderr.write(f"{corpus} {config} {mode}: {rows[-1]['n_train']} training documents, fit "
                                 f"{rows[-1]['fit_s']:.1f} s, predict {rows[-1]['predict_s']:.1f} s\n")
    df = pd.DataFrame(rows)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)
    sys.stdout.write(_table(df) + f"written to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
