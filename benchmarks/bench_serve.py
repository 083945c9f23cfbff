"""Load check of ``gfun serve``: requests per second and latency percentiles on 127.0.0.1.

Starts ``gfun serve --model MODEL`` on a free port (benchmarks/serve_page.py's :func:`running_server`), then for each
batch size (documents per request) and each number of concurrent clients sends ``POST /predict`` requests
built from real documents (``--docs``, JSONL) over keep-alive connections for ``--seconds`` seconds, the
language given or left to detection (then only documents whose language is detected among the model's).
Prints a table and writes it as CSV::

    python benchmarks/bench_serve.py --model /tmp/serve-model-x --docs /tmp/serve-run0/test.jsonl \\
        --csv results/bench-serve.csv

The client runs on the same machine (its CPU time is part of the load); the load average before and after is
printed with the table, since a shared machine slows every figure down. ``server_cpu_ms`` is the server
process's CPU time (user + system, all threads) per request: what a request costs whatever the load.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_page import running_server  # noqa: E402


def load_documents(path: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` documents of the JSONL file (id, lang, text), drawn at random over its languages."""
    docs = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            docs.append({"id": str(rec["id"]), "lang": rec["lang"], "text": rec["text"]})
    rng = np.random.default_rng(seed)
    return [docs[i] for i in rng.permutation(len(docs))[:n]]


def servable_without_lang(docs: list[dict[str, Any]], languages: list[str]) -> list[dict[str, Any]]:
    """The documents whose language the detector finds, confidently, among the model's (about 0.4% of debtags
    test documents are not: a request holding one is refused with 422, which would time an error path)."""
    from gfun.errors import LanguageDetectionError
    from gfun.text.langid import detect_languages

    keep = []
    for d in docs:
        try:
            if detect_languages([d["text"]])[0] in languages:
                keep.append(d)
        except LanguageDetectionError:
            pass
    return keep


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_clients(url: str, bodies: list[bytes], clients: int, seconds: float) -> tuple[list[float], int]:
    """``clients`` threads post the bodies in turn for ``seconds``; the latency of every request and the errors."""
    host, port = url.removeprefix("http://").split(":")
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def client(k: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        i = k
        mine = []
        while time.perf_counter() < stop:
            body = bodies[i % len(bodies)]
            i += clients
            t0 = time.perf_counter()
            conn.request("POST", "/predict", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            mine.append(time.perf_counter() - t0)
            if resp.status != 200:
                with lock:
                    errors[0] += 1
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a saved gfun model")
    ap.add_argument("--docs", required=True, help="JSONL documents (id, lang, text) in the model's languages")
    ap.add_argument("--batches", default="1,64", help="documents per request")
    ap.add_argument("--clients", default="1,4", help="concurrent clients")
    ap.add_argument("--langs", default="given,detected", help="language given in the request, or detected")
    ap.add_argument("--seconds", type=float, default=10.0, help="duration of each measurement")
    ap.add_argument("--csv", default=None, help="write the table as CSV here")
    args = ap.parse_args(argv)

    batches = [int(b) for b in args.batches.split(",")]
    docs = load_documents(args.docs, 64 * max(batches))
    load_before = os.getloadavg()
    rows = []
    with running_server(args.model, args=("--max-batch", str(max(batches)))) as url:
        with urllib.request.urlopen(url + "/model") as r:
            languages = json.load(r)["languages"]
        for mode in args.langs.split(","):
            pool = docs if mode == "given" else [{k: v for k, v in d.items() if k != "lang"}
                                                 for d in servable_without_lang(docs, languages)]
            for batch in batches:
                bodies = [json.dumps({"documents": pool[i:i + batch]}).encode()
                          for i in range(0, len(pool) - batch + 1, batch)][:64]
                run_clients(url, bodies[:2], 1, 0.5)  # warm-up
                for clients in (int(c) for c in args.clients.split(",")):
                    cpu0 = cpu_seconds(url.pid)
                    lat, errors = run_clients(url, bodies, clients, args.seconds)
                    cpu = cpu_seconds(url.pid) - cpu0
                    a = np.asarray(lat) * 1000
                    wall = args.seconds
                    rows.append({"batch": batch, "clients": clients, "lang": mode, "requests": len(a),
                                 "errors": errors, "rps": round(len(a) / wall, 2),
                                 "docs_per_s": round(len(a) * batch / wall, 1),
                                 "p50_ms": round(float(np.percentile(a, 50)), 1),
                                 "p95_ms": round(float(np.percentile(a, 95)), 1),
                                 "p99_ms": round(float(np.percentile(a, 99)), 1),
                                 "max_ms": round(float(a.max()), 1),
                                 "server_cpu_ms": round(1000 * cpu / len(a), 1)})
                    print(json.dumps(rows[-1]), flush=True)
    load_after = os.getloadavg()
    cols = list(rows[0])
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print(f"\ngfun serve on 127.0.0.1, model {args.model}, {os.cpu_count()} CPUs; load average (1/5/15 min) "
          f"before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
          f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}")
    print("  ".join(c.rjust(width[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).rjust(width[c]) for c in cols))
    if args.csv:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=cols + ["load_before", "load_after"])
            w.writeheader()
            for r in rows:
                w.writerow({**r, "load_before": round(load_before[0], 2), "load_after": round(load_after[0], 2)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
