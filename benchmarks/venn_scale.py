"""The Venn machine on a larger synthetic problem: CPU time and peak memory of ``fit`` +
``predict`` for the plain tree and both Venn taxonomies, each in a fresh process.

    nice -n 10 python benchmarks/venn_scale.py [--train 5000] [--test 2000] [--attributes 10]

Synthetic two-class data with noisy labels (an interaction of three numeric attributes plus
Gaussian noise), values rounded to 2 decimals, so that many tests change when one instance
is added — the hard case for the batched engine's certificates.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np


def synthetic(n_train: int, n_test: int, p: int):
    from treecert.data.schema import Attribute, Dataset, Schema

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_train + n_test, p)).round(2)
    noise = rng.normal(size=n_train + n_test)
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + noise) > 0).astype(np.int64)
    schema = Schema(tuple(Attribute(f"a{j}", "numeric") for j in range(p)),
                    Attribute("class", "nominal", ("n", "p")))
    w = np.ones(n_train + n_test)
    return (Dataset(schema, X[:n_train], y[:n_train], w[:n_train]),
            Dataset(schema, X[n_train:], y[n_train:], w[n_train:]))


def one(spec: str, n_train: int, n_test: int, p: int) -> dict:
    from treecert.methods import make_method

    train, test = synthetic(n_train, n_test, p)
    t0 = time.process_time()
    make_method(spec).fit(train).predict(test)
    cpu = time.process_time() - t0
    return {"method": spec, "cpu_seconds": cpu,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=int, default=5000)
    ap.add_argument("--test", type=int, default=2000)
    ap.add_argument("--attributes", type=int, default=10)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.train, args.test, args.attributes)))
        return
    print("| method | CPU s | peak RSS MiB | × plain tree |\n|---|---|---|---|")
    base = None
    for spec in ("frequency", "venn", "venn:taxonomy=leaf"):
        out = subprocess.run([sys.executable, __file__, "--one", spec, "--train",
                              str(args.train), "--test", str(args.test), "--attributes",
                              str(args.attributes)], capture_output=True, text=True,
                             check=True).stdout
        r = json.loads(out)
        base = base or r["cpu_seconds"]
        print(f"| `{spec}` | {r['cpu_seconds']:.2f} | {r['peak_mib']:.0f} | "
              f"{r['cpu_seconds'] / base:.1f} |", flush=True)


if __name__ == "__main__":
    main()
