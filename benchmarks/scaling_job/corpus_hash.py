"""sha256 of load_debtags(split="all") documents (train, test, zero-shot: ids, langs, texts, labels, extras)."""
import hashlib
import json
import sys

from gfun.datasets.debtags import load_debtags


def digest(d):
    r = load_debtags(run=0, data_dir=d, split="all")
    h = hashlib.sha256(json.dumps(r.classes).encode())
    for c in (r.train, r.test, r.test_zeroshot):
        h.update(json.dumps([list(c.ids), list(c.langs), list(c.texts), [list(x) for x in c.labels],
                             {k: list(v) for k, v in sorted(c.extra.items())}]).encode())
    return h.hexdigest(), len(r.train), len(r.test), len(r.test_zeroshot), r.info["n_tagged_packages"]


for d in sys.argv[1:]:
    print(d, *digest(d), flush=True)
