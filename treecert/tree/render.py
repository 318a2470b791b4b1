"""Showing a tree: J48-style text, Graphviz DOT, and a JSON summary."""

from __future__ import annotations

import json

import numpy as np

from treecert.data.schema import Schema
from treecert.tree.arrays import Tree


def _fmt_num(v: float) -> str:
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.6e}"


def _branch_labels(tree: Tree, schema: Schema, node: int) -> list[str]:
    """The test text of each branch of ``node``: ``petalwidth <= 0.6``, ``outlook = sunny``."""
    attr = schema.attributes[tree.feature[node]]
    name = attr.name
    if not np.isnan(tree.threshold[node]):
        t = _fmt_num(float(tree.threshold[node]))
        return [f"{name} <= {t}", f"{name} > {t}"]
    vb = tree.value_branch[tree.value_branch_ptr[node] : tree.value_branch_ptr[node + 1]]
    n_branches = int(np.diff(tree.children_ptr)[node])
    if n_branches == len(attr.values) and np.array_equal(vb, np.arange(len(vb))):
        return [f"{name} = {v}" for v in attr.values]
    labels = []
    for b in range(n_branches):
        vals = [attr.values[i] for i in np.flatnonzero(vb == b)]
        if b == 1 and n_branches == 2 and np.sum(vb == 0) == 1:
            labels.append(f"{name} != {attr.values[int(np.flatnonzero(vb == 0)[0])]}")
        else:
            joined = ",".join(vals)
            labels.append(f"{name} = {vals[0]}" if len(vals) == 1 else f"{name} in {{{joined}}}")
    return labels


def _leaf_text(tree: Tree, schema: Schema, node: int) -> str:
    counts = tree.estimate_counts[node]
    total = float(tree.counts[node].sum())
    label = schema.classes[int(np.argmax(counts))]
    errors = total - float(tree.counts[node].max()) if total > 0 else 0.0
    if errors > 1e-6:
        return f"{label} ({total:.1f}/{errors:.1f})"
    return f"{label} ({total:.1f})"


def to_text(tree: Tree, schema: Schema) -> str:
    """J48's printout: one line per branch, ``|   `` per depth, leaf ``class (n/errors)``."""
    lines: list[str] = []

    def walk(node: int, depth: int) -> None:
        labels = _branch_labels(tree, schema, node)
        for child, label in zip(tree.children_of(node), labels, strict=True):
            prefix = "|   " * depth + label
            if tree.feature[child] < 0:
                lines.append(f"{prefix}: {_leaf_text(tree, schema, child)}")
            else:
                lines.append(prefix)
                walk(int(child), depth + 1)

    if tree.feature[0] < 0:
        lines.append(f": {_leaf_text(tree, schema, 0)}")
    else:
        walk(0, 0)
    lines.append("")
    lines.append(f"Number of Leaves  : \t{tree.n_leaves}")
    lines.append("")
    lines.append(f"Size of the tree : \t{tree.n_nodes}")
    return "\n".join(lines) + "\n"


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(tree: Tree, schema: Schema) -> str:
    """Graphviz DOT: internal nodes show the attribute, edges the test, leaves the counts."""
    out = ["digraph treecert {", "  node [shape=box, fontname=Helvetica];"]
    for i in range(tree.n_nodes):
        counts = ", ".join(f"{c:g}" for c in tree.counts[i])
        if tree.feature[i] < 0:
            label = f"{_dot_escape(_leaf_text(tree, schema, i))}\\n[{counts}]"  # a DOT line break
            out.append(f'  n{i} [label="{label}", style=rounded];')
        else:
            name = schema.attributes[tree.feature[i]].name
            out.append(f'  n{i} [label="{_dot_escape(name)}\\n[{counts}]"];')
            for child, label in zip(tree.children_of(i), _branch_labels(tree, schema, i),
                                    strict=True):
                test = label[len(name) :].strip()
                out.append(f'  n{i} -> n{child} [label="{_dot_escape(test)}"];')
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
