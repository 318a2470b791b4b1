"""Showing a tree: J48-style text, Graphviz DOT, and a JSON summary.

Leaves show J48's ``class (weight/errors)`` and, when the caller passes the model's leaf
estimates, the class probabilities the model predicts there (``[setosa 0.96, ...]``), so
that a reader sees how sure a leaf is, not only which class it votes for.
"""

from __future__ import annotations

import json
import re

import numpy as np

from treecert.data.fileio import encodable
from treecert.data.schema import Schema
from treecert.tree.arrays import Tree
from treecert.tree.segments import flat_nonzero


def _fmt_num(v: float) -> str:
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.6e}"


def branch_labels(tree: Tree, schema: Schema, node: int, sep: str = " ") -> list[str]:
    """The test text of each branch of ``node``: ``petalwidth <= 0.6``, ``outlook = sunny``;
    ``sep=""`` gives the compact form of ``predict --explain``'s paths (``petalwidth<=0.6``)."""
    attr = schema.attributes[tree.feature[node]]
    name = attr.name

    def test(op: str, value: str) -> str:
        return f"{name}{sep}{op}{sep}{value}"

    if not np.isnan(tree.threshold[node]):
        t = _fmt_num(float(tree.threshold[node]))
        return [test("<=", t), test(">", t)]
    vb = tree.value_branch[tree.value_branch_ptr[node] : tree.value_branch_ptr[node + 1]]
    n_branches = int(np.diff(tree.children_ptr)[node])
    if n_branches == len(attr.values) and np.array_equal(vb, np.arange(len(vb))):
        return [test("=", v) for v in attr.values]
    labels = []
    for b in range(n_branches):
        vals = [attr.values[i] for i in flat_nonzero(vb == b)]
        if b == 1 and n_branches == 2 and np.sum(vb == 0) == 1:
            labels.append(test("!=", attr.values[int(flat_nonzero(vb == 0)[0])]))
        else:
            joined = ",".join(vals)
            labels.append(test("=", vals[0]) if len(vals) == 1 else test("in", f"{{{joined}}}"))
    return labels


def _weight_text(v: float) -> str:
    """A leaf's weight as J48 prints it: ``Utils.roundDouble(v, 2)`` (``Math.round`` of
    100 v, over 100) in Java's ``Double.toString``, whose digits Python's ``repr`` gives:
    ``13.0``, ``228.39``, ``0.04``."""
    return repr(float(np.floor(v * 100.0 + 0.5) / 100.0))


def _leaf_text(tree: Tree, schema: Schema, node: int) -> str:
    counts = tree.estimate_counts[node]
    total = float(tree.counts[node].sum())
    label = schema.classes[int(np.argmax(counts))]
    errors = total - float(tree.counts[node].max()) if total > 0 else 0.0
    if errors > 1e-6:  # J48: Utils.gr(numIncorrect, 0)
        return f"{label} ({_weight_text(total)}/{_weight_text(errors)})"
    return f"{label} ({_weight_text(total)})"


def _proba_text(schema: Schema, proba: np.ndarray | None, node: int) -> str:
    """``[setosa 0.96, versicolor 0.02, virginica 0.02]``: a leaf's estimates, or ""."""
    if proba is None:
        return ""
    return "[" + ", ".join(f"{c} {p:.3g}" for c, p in zip(schema.classes, proba[node],
                                                         strict=True)) + "]"


def to_text_with_estimates(tree: Tree, schema: Schema, leaf: str, alpha: float,
                           m: float) -> str:
    """:func:`to_text` with each leaf's probabilities under the ``leaf`` estimate — what
    ``treecert show`` prints and the estimator's ``export_text`` returns."""
    proba = tree.leaf_estimates(leaf, alpha=alpha, m=m)
    estimate = {"laplace": f"laplace (alpha={alpha:g})",
                "m_estimate": f"m_estimate (m={m:g})"}.get(leaf, leaf)
    return to_text(tree, schema, proba, estimate)


def to_text(tree: Tree, schema: Schema, proba: np.ndarray | None = None,
            estimate: str = "") -> str:
    """J48's printout: one line per branch, ``|   `` per depth, leaf ``class (n/errors)``,
    followed by the leaf's class probabilities when ``proba`` (n_nodes, n_classes) — the
    model's leaf estimates, named ``estimate`` in a last line — is given."""
    lines: list[str] = []

    def leaf(node: int) -> str:
        text = _leaf_text(tree, schema, node)
        return text + (" " + _proba_text(schema, proba, node) if proba is not None else "")

    def walk(node: int, depth: int) -> None:
        labels = branch_labels(tree, schema, node)
        for child, label in zip(tree.children_of(node), labels, strict=True):
            prefix = "|   " * depth + label
            if tree.feature[child] < 0:
                lines.append(f"{prefix}: {leaf(int(child))}")
            else:
                lines.append(prefix)
                walk(int(child), depth + 1)

    if tree.feature[0] < 0:
        lines.append(f": {leaf(0)}")
    else:
        walk(0, 0)
    lines.append("")
    lines.append(f"Number of Leaves  : \t{tree.n_leaves}")
    lines.append("")
    lines.append(f"Size of the tree : \t{tree.n_nodes}")
    if proba is not None and estimate:
        lines.append("")
        lines.append(f"Leaf probabilities: {estimate}")
    return "\n".join(lines) + "\n"


def _dot_label(*lines: str) -> str:
    """A DOT string label of several lines: each line escaped, then joined with DOT's
    centred line break ``\\n`` (written as the two characters backslash-n, which Graphviz
    turns into a new line; escaping the lines first keeps a backslash in a name literal).
    A line break in a name becomes that ``\\n`` too (each statement stays on one line), a
    lone surrogate is written as its escape ``\\udcff`` and a NUL (which no DOT reader
    takes) is dropped."""
    escaped = (re.sub(r"\r\n?|\n", r"\\n", encodable(s).replace("\x00", "")
                      .replace("\\", "\\\\").replace('"', '\\"'))
               for s in lines)
    return '"' + "\\n".join(escaped) + '"'


def to_dot(tree: Tree, schema: Schema, proba: np.ndarray | None = None) -> str:
    """Graphviz DOT: internal nodes show the attribute, edges the test, leaves the counts
    and, with ``proba`` (the model's leaf estimates), the class probabilities."""
    out = ["digraph treecert {", "  node [shape=box, fontname=Helvetica];"]
    for i in range(tree.n_nodes):
        counts = "[" + ", ".join(f"{c:g}" for c in tree.counts[i]) + "]"
        if tree.feature[i] < 0:
            lines = [_leaf_text(tree, schema, i), counts]
            if proba is not None:
                lines.append(_proba_text(schema, proba, i))
            out.append(f"  n{i} [label={_dot_label(*lines)}, style=rounded];")
        else:
            name = schema.attributes[tree.feature[i]].name
            out.append(f"  n{i} [label={_dot_label(name, counts)}];")
            for child, label in zip(tree.children_of(i), branch_labels(tree, schema, i),
                                    strict=True):
                test = label[len(name) :].strip()
                out.append(f"  n{i} -> n{child} [label={_dot_label(test)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def summary(tree: Tree, schema: Schema, params: dict, extra: dict | None = None) -> dict:
    """Keys ``nodes``, ``leaves``, ``depth``, ``params`` and a few more facts."""
    out = {
        "nodes": tree.n_nodes,
        "leaves": tree.n_leaves,
        "depth": tree.depth,
        "params": params,
        "classes": list(schema.classes),
        "class_attribute": schema.class_attribute.name,
        "attributes": [a.name for a in schema.attributes],
        "training_weight": float(tree.counts[0].sum()),
        "class_counts": dict(zip(schema.classes, tree.counts[0].tolist(), strict=True)),
        "split_attributes": sorted(
            {schema.attributes[f].name for f in tree.feature[tree.feature >= 0]}
        ),
    }
    if extra:
        out.update(extra)
    return out


def to_json_summary(tree: Tree, schema: Schema, params: dict, extra: dict | None = None) -> str:
    return json.dumps(summary(tree, schema, params, extra), indent=2, allow_nan=False) + "\n"
