"""Byte-for-byte comparison of the outputs of two versions of gfun (a refactoring must not change a bit).

``record`` fits configurations on the demo data (or on run 0 of a dataset with ``--dataset``/``--data-dir``) with
``gfun train``'s defaults (:func:`gfun.configuration.build_estimator`) and writes, for each, the bytes of
``decision_function``, ``predict_proba`` and ``predict`` on the test split, plus their SHA-256 in ``hashes.json``;
``--save-models`` also saves every fitted model, and ``--load-models DIR`` loads models saved by another version
(and the fixtures of ``tests/persistence/fixtures``) and records what they decide. ``compare`` diffs two
``hashes.json`` files and exits non-zero on any difference.

Run the old code with ``PYTHONPATH=<old worktree>/src``::

    git worktree add /tmp/base <commit>
    PYTHONPATH=/tmp/base/src python benchmarks/compare_outputs.py record /tmp/out-base --save-models /tmp/models-base
    python benchmarks/compare_outputs.py record /tmp/out-new --load-models /tmp/models-base
    python benchmarks/compare_outputs.py compare /tmp/out-base /tmp/out-new
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

#: The configurations of ``gfun demo --full`` (and the word vectors each needs).
DEMO = {"naive": None, "pooled": None, "fun": None, "x": None, "xp": None, "xw": None, "xmw": "e5-subword",
        "xmp": "e5-subword"}
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "persistence" / "fixtures"


def _outputs(model, docs) -> dict[str, np.ndarray]:
    out = {"decision_function": np.ascontiguousarray(model.decision_function(docs)),
           "predict": np.ascontiguousarray(model.predict(docs))}
    if hasattr(model, "predict_proba"):
        out["predict_proba"] = np.ascontiguousarray(model.predict_proba(docs))
    return out


def _record(hashes: dict, out: Path, key: str, arrays: dict[str, np.ndarray]) -> None:
    np.savez(out / f"{key}.npz", **arrays)
    hashes[key] = {name: f"{a.dtype}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()}" for name, a in arrays.items()}
    print(key, " ".join(f"{n}={h.rsplit(':', 1)[1][:12]}" for n, h in hashes[key].items()), flush=True)


def record(args: argparse.Namespace) -> None:
    import gfun
    from gfun.configuration import build_estimator, neural_view_params
    from gfun.datasets.registry import load_dataset
    from gfun.persistence.loading import load_model
    from gfun.persistence.saving import save_model

    print("gfun from", Path(gfun.__file__).parent, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_dataset(args.dataset, data_dir=args.data_dir, run=0)
    test = data.test
    configs = args.configs.split(",") if args.configs else list(DEMO)
    hashes: dict = {}
    for name in configs:
        est = build_estimator(name, n_jobs=args.n_jobs, random_state=0,
                              view_params=neural_view_params(DEMO.get(name)))
        est.fit(data.train)
        _record(hashes, out, f"{args.dataset}-{name}", _outputs(est, test))
        if args.save_models:
            save_model(est, Path(args.save_models) / f"{args.dataset}-{name}")
    if args.load_models:
        for path in sorted(Path(args.load_models).iterdir()):
            _record(hashes, out, f"loaded-{path.name}", _outputs(load_model(path), test))
    if args.fixtures:
        for path in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
            _record(hashes, out, f"fixture-{path.name}", _outputs(load_model(path), test))
    (out / "hashes.json").write_text(json.dumps(hashes, indent=1, sort_keys=True))


def compare(args: argparse.Namespace) -> int:
    a = json.loads((Path(args.a) / "hashes.json").read_text())
    b = json.loads((Path(args.b) / "hashes.json").read_text())
    bad = 0
    # a model saved by the first version and loaded by the second decides as the first version's fitted model
    a.update({f"loaded-{k}": v for k, v in a.items() if f"loaded-{k}" in b and f"loaded-{k}" not in a})
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key}: only in {'the first' if key in a else 'the second'}")
            continue
        for name in sorted(set(a[key]) | set(b[key])):
            same = a[key].get(name) == b[key].get(name)
            bad += not same
            print(f"{key:28s} {name:18s} {'identical' if same else 'DIFFERENT'}")
    print(f"{bad} difference(s)")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out")
    rec.add_argument("--configs", help=f"comma-separated (default: {','.join(DEMO)})")
    rec.add_argument("--dataset", default="demo")
    rec.add_argument("--data-dir")
    rec.add_argument("--n-jobs", type=int, default=1)
    rec.add_argument("--save-models")
    rec.add_argument("--load-models")
    rec.add_argument("--fixtures", action="store_true", help="also the saved models of tests/persistence/fixtures")
    cmp = sub.add_parser("compare")
    cmp.add_argument("a")
    cmp.add_argument("b")
    args = parser.parse_args()
    if args.command == "record":
        record(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
