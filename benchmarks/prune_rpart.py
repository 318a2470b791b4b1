"""docs/pruning-rpart.md tables: treecert's cost-complexity pruning beside R's rpart.

rpart grows its trees with the loss matrix inside the splitting rule (altered priors), which
treecert does not do, so the two learners grow different trees from the same data. To compare
the *pruning* exactly, this script imports rpart's own trees into treecert:

1. R (``rpart`` 4.1.x, Debian ``r-cran-rpart``) grows the kyphosis tree with ``cp = 0``,
   ``minsplit = 10``, ``minbucket = 3``, no competitor/surrogate splits, with and without a
   loss matrix, and leave-one-out cross-validation (``xval = n``: every group is one row,
   so the random group assignment does not matter). It writes ``kyphosis.csv``, every tree
   (the full one and the 81 leave-one-out trees, grown with ``subset = -i``) node by node,
   the ``cptable``, and — from ``xpred.rpart`` with the same LOO groups — the LOO loss of
   each subtree computed both ways round: ``L[true, pred]`` and ``L[pred, true]``.
2. Python rebuilds every tree as a :class:`treecert.tree.Tree` (same tests, same counts),
   runs :func:`treecert.pruning.ccp.ccp_path` on the full tree and
   :func:`treecert.pruning.ccp.cv_path_losses` over the LOO trees, and compares: node risks, the
   α (= CP × root risk) sequence and sizes, and the cross-validated loss.
3. For reference, treecert's own gini tree on the exported CSV is pruned by LOO ccp.

Run from the repo root (needs ``Rscript`` with rpart)::

    python benchmarks/prune_rpart.py            # markdown report to stdout
    python benchmarks/prune_rpart.py --quick    # the same, outputs in a temporary directory

The data is rpart's own kyphosis (81 rows), exported by R; without ``Rscript`` the script
exits non-zero.

Outputs (``benchmarks/results/prune_rpart/``): ``kyphosis.csv``, ``kyphosis.arff``,
``kyphosis.loss.yaml``, ``trees_<config>.csv``, ``cptable_<config>.csv``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from run import add_quick, quick

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "prune_rpart"

#: The R side (rpart's own cross-validated pruning), run with Rscript.
R_SCRIPT = Path(__file__).with_suffix(".R")

FEATURES = ("Age", "Number", "Start")
LOSSES = {"loss": np.array([[0.0, 1.0], [4.0, 0.0]]), "none": 1.0 - np.eye(2)}


def markdown(df: pd.DataFrame) -> str:
    """A pipe table (no tabulate dependency); floats with 6 significant digits."""
    def cell(v) -> str:
        if isinstance(v, float | np.floating):
            return f"{v:.6g}"
        return str(v)

    head = "| " + " | ".join(df.columns) + " |"
    rule = "|" + "|".join("---:" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def run_r(out: Path) -> str:
    import shutil

    if shutil.which("Rscript") is None:
        print("prune_rpart.py: needs Rscript with rpart (apt-get install r-cran-rpart)",
              file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["Rscript", str(R_SCRIPT), str(out)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        sys.exit(f"Rscript failed:\n{proc.stderr}")
    return proc.stdout.strip()


def write_arff_and_loss(out: Path) -> None:
    df = pd.read_csv(out / "kyphosis.csv")
    lines = ["@relation kyphosis", ""]
    lines += [f"@attribute {c} numeric" for c in FEATURES]
    lines += ["@attribute Kyphosis {absent,present}", "", "@data"]
    lines += [",".join(str(v) for v in row) for row in df.itertuples(index=False)]
    (out / "kyphosis.arff").write_text("\n".join(lines) + "\n")
    (out / "kyphosis.loss.yaml").write_text(
        "# loss of predicting <column> when the truth is <row> (rpart: matrix(c(0,4,1,0),2))\n"
        "loss:\n  absent:  {absent: 0, present: 1}\n  present: {absent: 4, present: 0}\n")


def rpart_tree(rows: pd.DataFrame, class_factor: np.ndarray | None = None):
    """A treecert Tree with rpart's tests and counts. rpart numbers the children of node k
    2k and 2k+1 and lists nodes in preorder; ``ncat = -1`` sends ``x < index`` left,
    ``+1`` sends ``x >= index`` left. treecert's first child takes ``x <= threshold``."""
    from treecert.tree.arrays import Tree

    nodes = rows["node"].tolist()
    pos = {k: i for i, k in enumerate(nodes)}
    n = len(nodes)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, np.nan)
    children, ptr = [], [0]
    for i, r in enumerate(rows.itertuples(index=False)):
        if r.var != "<leaf>":
            feature[i] = FEATURES.index(r.var)
            threshold[i] = np.nextafter(float(r.index), -np.inf)
            left, right = pos[2 * r.node], pos[2 * r.node + 1]
            children += [left, right] if r.ncat < 0 else [right, left]
        ptr.append(len(children))
    counts = rows[["n_absent", "n_present"]].to_numpy(dtype=float)
    if class_factor is not None:
        counts = counts * class_factor
    tree = Tree(feature, threshold, np.array(ptr), np.array(children, dtype=np.int64),
                np.zeros(n + 1, dtype=np.int64), np.empty(0, dtype=np.int64), counts)
    tree.validate()
    return tree


def compare(out: Path, config: str) -> str:
    from treecert.data.loading import load_dataset
    from treecert.pruning.ccp import ccp_path, cv_path_losses
    from treecert.pruning.common import node_risk

    L = LOSSES[config]
    data = load_dataset(out / "kyphosis.csv")
    assert data.schema.feature_names == list(FEATURES)
    assert data.schema.classes == ("absent", "present")
    trees = pd.read_csv(out / f"trees_{config}.csv")
    cpt = pd.read_csv(out / f"cptable_{config}.csv")
    full_rows = trees[trees["tree"] == 0]
    full = rpart_tree(full_rows)
    risk, _ = node_risk(full.counts, L)
    risk_ok = np.allclose(risk, full_rows["dev"].to_numpy())
    path = ccp_path(full, L)
    n = data.n_samples
    folds = []
    for i in range(1, n + 1):
        folds.append((rpart_tree(trees[trees["tree"] == i]), data.subset([i - 1]),
                      (n - 1) / n))
    total, _ = cv_path_losses(path, folds, L)
    root = float(cpt["root_risk"].iloc[0])
    order = np.arange(len(path.alphas))[::-1]  # rpart lists the root first
    rows = []
    for k, row in zip(order, cpt.itertuples(index=False), strict=False):
        rows.append({
            "rpart CP": row.CP, "treecert cp": path.cps[k],
            "rpart nsplit": int(row.nsplit), "treecert leaves - 1": int(path.leaves[k]) - 1,
            "rpart rel error": row._2, "treecert R/R(root)": path.risks[k] / root,
            "rpart xerror x root": row.xerror * root,
            "xpred: L[pred,true]": row.xpred_loss_pred_true,
            "xpred: L[true,pred]": row.xpred_loss_true_pred,
            "refits: L[true,pred] (R)": row.refit_loss_true_pred,
            "refits: treecert": total[k],
            "refit != xpred rows": int(row.refit_cells_differing_from_xpred),
        })
    table = pd.DataFrame(rows)
    same_len = len(cpt) == len(path.alphas)
    agree_alpha = same_len and np.allclose(table["rpart CP"], table["treecert cp"])
    agree_size = same_len and (table["rpart nsplit"] == table["treecert leaves - 1"]).all()
    tc_right = np.allclose(table["refits: treecert"], table["refits: L[true,pred] (R)"])
    rp_transposed = np.allclose(table["rpart xerror x root"], table["xpred: L[pred,true]"])
    rp_right = np.allclose(table["rpart xerror x root"], table["xpred: L[true,pred]"])
    lines = [
        f"### kyphosis, {'loss L = [[0, 1], [4, 0]]' if config == 'loss' else '0/1 loss'}",
        "",
        markdown(table),
        "",
        f"* node risks (rpart `dev` vs treecert `node_risk`) agree: {risk_ok}",
        f"* α sequence agrees (CP = α / R(root)): {agree_alpha}; sizes agree: {agree_size}",
        f"* treecert's LOO loss over rpart's refitted LOO trees = R's prune + predict on "
        f"the same trees, Σ L[true, pred]: {tc_right}",
        f"* rpart's xerror × root risk = Σ L[true, pred]: {rp_right}; "
        f"= Σ L[pred, true] (transposed): {rp_transposed}",
        "",
    ]
    return "\n".join(lines)


def treecert_own(out: Path) -> str:
    from treecert import api
    from treecert.data.loading import load_dataset
    from treecert.pruning.loss import read_loss

    data = load_dataset(out / "kyphosis.csv")
    L, _ = read_loss(out / "kyphosis.loss.yaml", data.schema.classes)
    model = api.train(data, criterion="gini", min_leaf=3)
    pruned = api.prune(model, "ccp", loss=L, cv=data.n_samples)
    seq = pd.DataFrame(pruned.pruning["sequence"])
    return "\n".join([
        "### treecert's own gini tree (`--criterion gini --min-leaf 3`), LOO ccp with the loss",
        "",
        markdown(seq),
        "",
        f"chosen: {pruned.pruning['after']['leaves']} leaves, α = "
        f"{pruned.pruning['alpha']:.6g}",
        "",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    add_quick(ap)
    args = ap.parse_args()
    if quick(args):
        import tempfile

        args.out = Path(tempfile.mkdtemp(prefix="treecert-prune-rpart-"))
    version = run_r(args.out)
    write_arff_and_loss(args.out)
    print(f"<!-- generated by benchmarks/prune_rpart.py; {version} -->\n")
    for config in ("loss", "none"):
        print(compare(args.out, config))
    print(treecert_own(args.out))


if __name__ == "__main__":
    main()
