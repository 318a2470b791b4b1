"""BENCHMARKS.md table "train": training time of treecert, Weka J48 and scikit-learn.

    python benchmarks/train_speed.py --sizes 5000 20000 100000 --repeat 2 --budget 30
    python benchmarks/train_speed.py --quick        # 2,000 rows, one run each

Synthetic data (numpy ``RandomState(0)``): n rows × 20 numeric attributes, 2 classes from a
noisy nonlinear rule; variant ``num+nom`` adds 5 nominal attributes (3–8 levels, two of them
informative). For every n the data is written as ARFF and CSV to a temporary directory, then
each tool is timed as a separate process (start-up + load + fit):

* treecert: ``python -m treecert train data.arff -o m.json --criterion gain_ratio``, this
  checkout's package;
* J48: ``java -cp weka.jar weka.classifiers.trees.J48 -U -M 2 -no-cv -v -t data.arff``
  (build only); "n/a" without Weka (``../shared/peers/setup.sh`` installs it);
* sklearn: ``python -c`` loading the CSV with pandas (nominals one-hot encoded) and fitting
  ``DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2)``;
* rpart (``--tools ... rpart``): ``Rscript`` reading the CSV, ``rpart(split="information",
  minbucket=2, cp=0, xval=0)``.

Each timing is the minimum over ``--repeat`` runs (fewer once a tool has used ``--budget``
seconds on one size). ``--csv PATH`` also writes every timing. Peers: see ``peers.py``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import peers
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
TOOLS = ("treecert", "j48", "sklearn", "rpart")
NOMINAL_LEVELS = (3, 4, 5, 6, 8)


def make_data(n: int, with_nominal: bool, seed: int = 0) -> pd.DataFrame:
    """20 numeric (x0..x19) [+ 5 nominal (c0..c4)] attributes and a 2-class ``class``."""
    rs = np.random.RandomState(seed)
    x = rs.randn(n, 20)
    score = np.sin(1.5 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.5 * (x[:, 3] ** 2 - 1) + 0.3 * x[:, 4]
    df = pd.DataFrame(x, columns=[f"x{i}" for i in range(20)])
    if with_nominal:
        for j, levels in enumerate(NOMINAL_LEVELS):
            codes = rs.randint(0, levels, n)
            if j < 2:  # c0, c1 carry signal
                score += 0.8 * rs.randn(levels)[codes]
            df[f"c{j}"] = np.array([f"v{k}" for k in range(levels)])[codes]
    score += 0.5 * rs.randn(n)
    df["class"] = np.where(score > 0, "pos", "neg")
    return df


def write_arff(df: pd.DataFrame, path: Path, relation: str) -> None:
    lines = [f"@relation {relation}", ""]
    for col in df.columns:
        if df[col].dtype.kind == "f":
            lines.append(f"@attribute {col} numeric")
        else:
            values = sorted(df[col].unique()) if col != "class" else ["neg", "pos"]
            lines.append(f"@attribute {col} {{{','.join(values)}}}")
    lines += ["", "@data", ""]
    with path.open("w") as fh:
        fh.write("\n".join(lines))
        df.to_csv(fh, header=False, index=False, float_format="%.6g", lineterminator="\n")


def treecert_command() -> tuple[list[str], dict]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "treecert"], env


def run_tool(tool: str, arff: Path, csv_path: Path, workdir: Path, timeout: float) -> dict:
    """One timed whole-process run; dict(seconds, leaves, size) or raises."""
    if tool == "treecert":
        base, env = treecert_command()
        cmd = [
            *base,
            "train",
            str(arff),
            "-o",
            str(workdir / "m.json"),
            "--criterion",
            "gain_ratio",
        ]
        proc, secs = peers.timed_run(cmd, timeout=timeout, env=env, cwd=workdir)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"exit {proc.returncode}: {' | '.join(tail)}")
        return {"seconds": secs, "leaves": None, "size": None}
    if tool == "j48":
        return peers.run_j48_build(arff, ("-U", "-M", "2"), timeout=timeout)
    if tool == "sklearn":
        return peers.run_sklearn_fit_csv(csv_path, timeout=timeout)
    if tool == "rpart":
        return peers.run_rpart_fit_csv(csv_path, timeout=timeout)
    raise ValueError(tool)


def fmt(x, spec: str = ".2f") -> str:
    return "n/a" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[5000, 20000, 100000])
    ap.add_argument("--variants", nargs="+", default=["num", "num+nom"], choices=["num", "num+nom"])
    ap.add_argument("--tools", nargs="+", default=["treecert", "j48", "sklearn"], choices=TOOLS)
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing (minimum kept)")
    ap.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="stop repeating once a tool has spent this many seconds on a size",
    )
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    ap.add_argument("--csv", type=Path, help="also write every timing here")
    add_quick(ap)
    args = ap.parse_args(argv)
    if quick(args):
        args.sizes, args.variants, args.repeat = [2000], ["num"], 1
    if not args.sizes or not args.variants:
        print("train_speed.py: nothing to run (no --sizes)", file=sys.stderr)
        return 1

    tools = list(args.tools)  # a missing peer keeps its column, as n/a
    runnable = list(tools)
    if "j48" in tools and not peers.weka_available():
        print(f"note: no java/{peers.WEKA_JAR}; J48 is n/a", file=sys.stderr)
        runnable.remove("j48")
    if "rpart" in tools and not peers.rpart_available():
        print("note: no Rscript/rpart; rpart is n/a", file=sys.stderr)
        runnable.remove("rpart")
    print("treecert command: " + " ".join(treecert_command()[0]), file=sys.stderr)

    rows: list[dict] = []
    broken: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="treecert-speed-") as tmp:
        tmpdir = Path(tmp)
        for variant in args.variants:
            for n in args.sizes:
                df = make_data(n, variant == "num+nom")
                stem = f"synth-{variant.replace('+', '-')}-{n}"
                arff, csv_path = tmpdir / f"{stem}.arff", tmpdir / f"{stem}.csv"
                write_arff(df, arff, stem)
                df.to_csv(csv_path, index=False, float_format="%.6g")
                for tool in tools:
                    best, spent, err = None, 0.0, None
                    for _ in range(max(1, args.repeat) if tool in runnable else 0):
                        try:
                            r = run_tool(tool, arff, csv_path, tmpdir, args.timeout)
                        except Exception as exc:
                            err = f"{type(exc).__name__}: {exc}"
                            break
                        spent += r["seconds"]
                        if best is None or r["seconds"] < best["seconds"]:
                            best = r
                        if spent > args.budget:
                            break
                    if best is None:
                        if tool in runnable and broken.get(tool) != err:
                            print(f"note: {tool} failed on {stem}: {err}"[:600], file=sys.stderr)
                        broken[tool] = err or "failed"
                        best = {"seconds": None, "leaves": None, "size": None}
                    rows.append(
                        {
                            "variant": variant,
                            "n": n,
                            "tool": tool,
                            **best,
                            "status": "ok" if best["seconds"] is not None else "n/a",
                        }
                    )
                    print(
                        f"  {stem:24s} {tool:9s} {fmt(best['seconds'], '.3f')} s",
                        file=sys.stderr,
                        flush=True,
                    )

    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        fields = ("variant", "n", "tool", "seconds", "leaves", "size", "status")
        with args.csv.open("w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
            wr.writeheader()
            for r in rows:
                wr.writerow({k: ("" if r[k] is None else f"{r[k]:.4f}"
                                 if isinstance(r[k], float) else r[k]) for k in fields})

    if all(r["seconds"] is None for r in rows):
        print("train_speed.py: no tool ran", file=sys.stderr)
        return 1
    print(table(rows, args.variants, args.sizes, tools))
    return 0


def table(rows: list[dict], variants: list[str], sizes: list[int], tools: list[str]) -> str:
    def get(variant, n, tool, key="seconds"):
        for r in rows:
            if (r["variant"], r["n"], r["tool"]) == (variant, n, tool):
                return r[key]
        return None

    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b

    peers_shown = [t for t in tools if t != "treecert"]
    head = ["variant", "n", *(f"{t} s" for t in tools)]
    if "treecert" in tools:
        head += [f"treecert/{t}" for t in ("j48", "sklearn") if t in tools]
    head += [f"{t} leaves" for t in peers_shown]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for variant in variants:
        for n in sizes:
            cells = [variant, str(n)] + [fmt(get(variant, n, t)) for t in tools]
            if "treecert" in tools:
                tc = get(variant, n, "treecert")
                cells += [
                    fmt(ratio(tc, get(variant, n, t))) for t in ("j48", "sklearn") if t in tools
                ]
            cells += [fmt(get(variant, n, t, "leaves"), "d") for t in peers_shown]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
