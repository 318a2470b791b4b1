"""tests/test_empirical_bayes.py reference values: the empirical-Bayes prior fit, in R.

Writes ``tests/fixtures/eb/NAME_rpart_leaves.csv`` (leaf counts n0, n1 of an rpart tree) and
``tests/fixtures/eb/reference.csv`` (R's alpha, beta) for binary datasets of ``tests/data``.
Needs ``Rscript`` with rpart and MASS (Debian: ``apt-get install r-cran-rpart
r-cran-mass``); exits 2 without it. ``--quick``: diabetes only, written to a temporary
directory instead of the fixtures::

    python benchmarks/calibration_eb_reference.py

The recipe is lgi2p/empiricalBayesDecisionTrees' ``myLib.R``: ``rpart(class ~ .,
method="class", cp=0)`` (Gini, minsplit 20, minbucket 7), leaf counts from
``frame$yval2``, label "1" = the first class label appearing in the file, proportions 0/1
clamped to 1e-3 / 1 - 1e-3, ``MASS::fitdistr(rep(p1, n), dbeta, start=list(shape1=1,
shape2=10))``. On diabetes (the paper's "pima") it gives alpha = 0.4757, beta = 0.7689 with
28 leaves, the values of the reference code's own run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from run import add_quick, quick

from treecert.data.loading import load_dataset

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
OUT = ROOT / "tests" / "fixtures" / "eb"
DATASETS = ("diabetes", "credit-g", "ionosphere", "wdbc", "breast-cancer", "vote")

R_SCRIPT = r"""
library(rpart); library(MASS); options(warn=-1)
args <- commandArgs(trailingOnly=TRUE)
d <- read.csv(args[1], stringsAsFactors=TRUE)
first <- as.character(d$class[1])
d$class <- factor(ifelse(d$class == first, "1", "0"), levels=c("0","1"))
t <- rpart(class ~ ., data=d, method="class", cp=0)
leaves <- t$frame$var == "<leaf>"
y2 <- t$frame$yval2[leaves, 2:3, drop=FALSE]
write.csv(data.frame(n0=y2[,1], n1=y2[,2]), args[2], row.names=FALSE)
p1 <- y2[,2]/(y2[,1]+y2[,2]); n <- y2[,1]+y2[,2]
p1[p1==0] <- 1e-3; p1[p1==1] <- 1-1e-3
f <- fitdistr(rep(p1, n), dbeta, start=list(shape1=1, shape2=10))
cat(sprintf("%.10f,%.10f,%d,%s\n", f$estimate[1], f$estimate[2], sum(leaves), first))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    add_quick(ap)
    args = ap.parse_args()
    out_dir = OUT
    if quick(args):
        args.datasets = ["diabetes"]
        out_dir = Path(tempfile.mkdtemp(prefix="treecert-eb-reference-"))
    if not args.datasets:
        sys.exit("calibration_eb_reference.py: nothing to run (--datasets is empty)")
    if shutil.which("Rscript") is None:
        print("calibration_eb_reference.py: needs Rscript with rpart and MASS", file=sys.stderr)
        sys.exit(2)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "eb.R"
        script.write_text(R_SCRIPT)
        for name in args.datasets:
            data = load_dataset(DATA / f"{name}.arff")
            cols = {}
            for j, a in enumerate(data.schema.attributes):
                col = data.X[:, j]
                if a.is_nominal:
                    vals = np.asarray(a.values, dtype=object)
                    cols[a.name] = np.where(np.isnan(col), None,
                                            vals[np.nan_to_num(col).astype(int)])
                else:
                    cols[a.name] = col
            frame = pd.DataFrame(cols)
            frame["class"] = np.asarray(data.schema.classes, dtype=object)[data.y]
            csv = Path(tmp) / f"{name}.csv"
            frame.to_csv(csv, index=False, na_rep="NA")
            leaves = out_dir / f"{name}_rpart_leaves.csv"
            out = subprocess.run(["Rscript", str(script), str(csv), str(leaves)],
                                 capture_output=True, text=True, check=True).stdout
            alpha, beta, n_leaves, first = out.strip().split(",")
            rows.append({"dataset": name, "alpha": float(alpha), "beta": float(beta),
                         "leaves": int(n_leaves), "label_1": first})
            print(rows[-1])
    pd.DataFrame(rows).to_csv(out_dir / "reference.csv", index=False)


if __name__ == "__main__":
    main()
