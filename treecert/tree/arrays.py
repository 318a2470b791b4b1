"""The tree as flat numpy arrays (the estimator is :mod:`treecert.tree.classifier`).

Layout (the single source of truth; node ``0`` is the root, every child id > its parent's):

* ``feature[i]``: attribute tested at node i, -1 for a leaf.
* ``threshold[i]``: numeric test ``x <= threshold`` goes to the first child; NaN otherwise.
* ``children[children_ptr[i]:children_ptr[i+1]]``: child ids (CSR), in branch order.
* ``value_branch[value_branch_ptr[i]:value_branch_ptr[i+1]]``: for a nominal test, the branch
  of each declared value — the identity for C4.5 multiway tests, 0/1 for one-vs-rest binary
  tests. One representation serves both.
* ``counts[i]``: raw weighted training class counts at node i (every node, not only leaves);
  probabilities are derived by ``treecert.tree.leaf_estimates``.

A tree grown with J48's cut rule (``j48_cuts``, :mod:`treecert.tree.j48_cuts`) routes as
J48's ``C45Split.whichSubset`` does: ``x - threshold < 1e-6`` takes the first child.

Prediction follows C4.5: an unknown value sends the instance down every branch with weight
proportional to the branch's training weight, and the leaf distributions are summed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from treecert.tree.j48_cuts import j48_route_bounds
from treecert.tree.leaf_estimates import leaf_proba
from treecert.tree.segments import flat_nonzero, offsets


@dataclass
class TreeArrays:
    """The seven arrays of the layout above; :class:`Tree` and the grower's
    :class:`~treecert.tree.grow.GrownNodes` extend them."""

    feature: np.ndarray
    threshold: np.ndarray
    children_ptr: np.ndarray
    children: np.ndarray
    value_branch_ptr: np.ndarray
    value_branch: np.ndarray
    counts: np.ndarray


@dataclass
class Tree(TreeArrays):
    """A grown tree; see the module docstring for the array layout."""

    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    #: Route numeric tests as J48 (``x - threshold < 1e-6`` goes left), for trees grown with
    #: ``threshold="j48"``; the model file keeps it as that learner parameter.
    j48_cuts: bool = False

    @classmethod
    def from_grown(cls, g: TreeArrays) -> Tree:
        """The tree of a :class:`~treecert.tree.grow.GrownNodes` (its seven arrays)."""
        return cls(
            g.feature, g.threshold, g.children_ptr, g.children,
            g.value_branch_ptr, g.value_branch, g.counts,
        )

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        return int(self.feature.size)

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[1])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.feature < 0

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    def has_test(self, v: int, split) -> bool:
        """Whether ``split`` (a :class:`treecert.tree.split_search.Split` or None) is node
        ``v``'s test."""
        if split is None or self.feature[v] != split.feature:
            return False
        t = self.threshold[v]
        if np.isnan(split.threshold) != np.isnan(t):
            return False
        if not np.isnan(t):
            return bool(split.threshold == t)
        vb = self.value_branch[self.value_branch_ptr[v]:self.value_branch_ptr[v + 1]]
        return split.value_branch is not None and np.array_equal(split.value_branch, vb)

    @property
    def parent(self) -> np.ndarray:
        if "parent" not in self._cache:
            parent = np.full(self.n_nodes, -1, dtype=np.int64)
            n_children = np.diff(self.children_ptr)
            parent[self.children] = np.repeat(np.arange(self.n_nodes), n_children)
            self._cache["parent"] = parent
        return self._cache["parent"]

    @property
    def node_depth(self) -> np.ndarray:
        if "depth" not in self._cache:
            depth = np.zeros(self.n_nodes, dtype=np.int64)
            parent = self.parent
            for i in range(1, self.n_nodes):  # parents come first
                depth[i] = depth[parent[i]] + 1
            self._cache["depth"] = depth
        return self._cache["depth"]

    @property
    def depth(self) -> int:
        return int(self.node_depth.max()) if self.n_nodes else 0

    @property
    def preorder(self) -> np.ndarray:
        """Each node's rank in a depth-first walk (children in branch order): nodes of one
        subtree have consecutive ranks."""
        if "preorder" not in self._cache:
            rank = np.empty(self.n_nodes, dtype=np.int64)
            stack, seen = [0] if self.n_nodes else [], 0
            while stack:
                v = stack.pop()
                rank[v] = seen
                seen += 1
                stack += self.children_of(v)[::-1].tolist()
            self._cache["preorder"] = rank
        return self._cache["preorder"]

    def children_of(self, node: int) -> np.ndarray:
        return self.children[self.children_ptr[node] : self.children_ptr[node + 1]]

    @property
    def estimate_counts(self) -> np.ndarray:
        """Counts each node's estimate is read from: an empty node borrows its nearest
        non-empty ancestor's counts, as J48 does for empty leaves."""
        if "est" not in self._cache:
            est = self.counts.copy()
            totals = est.sum(axis=1)
            parent = self.parent
            for i in range(1, self.n_nodes):
                if totals[i] <= 0:
                    est[i] = est[parent[i]]
            self._cache["est"] = est
        return self._cache["est"]

    @property
    def branch_fraction(self) -> np.ndarray:
        """Share of its parent's training weight each node received (for unknown values)."""
        if "frac" not in self._cache:
            totals = self.counts.sum(axis=1)
            parent = self.parent
            frac = np.ones(self.n_nodes)
            ptot = np.zeros(self.n_nodes)
            has_parent = parent >= 0
            # Sum of sibling weights = total weight sent to the children of the parent.
            sums = np.zeros(self.n_nodes)
            np.add.at(sums, parent[has_parent], totals[has_parent])
            ptot[has_parent] = sums[parent[has_parent]]
            with np.errstate(invalid="ignore", divide="ignore"):
                frac[has_parent] = np.where(
                    ptot[has_parent] > 0, totals[has_parent] / ptot[has_parent], 0.0
                )
            self._cache["frac"] = frac
        return self._cache["frac"]

    # ------------------------------------------------------------------ routing
    def apply_weighted(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Route every row to the leaves it reaches.

        Returns parallel arrays ``(row, leaf, weight)``: row i reaches ``leaf`` with
        ``weight``; the weights of one row sum to 1. Rows without unknown values on their
        path reach exactly one leaf.
        """
        n = X.shape[0]
        leaf = self.apply(X)
        if leaf is not None:  # one leaf per row, listed in route_weighted's order
            if n == 1:  # (the engines route one row at a time through fresh trees)
                return np.zeros(1, dtype=np.int64), leaf, np.ones(1)
            row = np.argsort(self._depth_key[leaf], kind="stable")
            return row, leaf[row], np.ones(n)
        return self._route_unknown(X)

    def _route_unknown(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`apply_weighted` for rows already known to hold an unknown value (or
        none at all), with the per-edge fractions built once per tree."""
        n = X.shape[0]
        if "edge_frac" not in self._cache:
            self._cache["edge_frac"] = self.branch_fraction[self.children]
        frac = self._cache["edge_frac"] if n else np.empty(0)
        return route_weighted(X, np.arange(n), np.zeros(n, dtype=np.int64), frac,
                              self.feature, self.routing_threshold, self.children_ptr,
                              self.children, self.value_branch_ptr, self.value_branch)

    @property
    def routing_threshold(self) -> np.ndarray:
        """The bound each numeric test compares with ``x <= bound``: the threshold, or for
        :attr:`j48_cuts` the largest float x with ``x - threshold < 1e-6`` (J48's
        ``Utils.smOrEq``), so that every router keeps its one comparison."""
        if not self.j48_cuts:
            return self.threshold
        if "route_thr" not in self._cache:
            self._cache["route_thr"] = j48_route_bounds(self.threshold)
        return self._cache["route_thr"]

    def apply(self, X: np.ndarray) -> np.ndarray | None:
        """The leaf every row of ``X`` reaches, when no value of ``X`` is unknown (else
        None: a row with an unknown value may reach several; :meth:`apply_weighted`)."""
        if not X.shape[0] or np.isnan(X).any():
            return None
        if "descent" not in self._cache and self.feature[0] >= 0:
            nodes = (TreeArrays(self.feature, self.routing_threshold, self.children_ptr,
                                self.children, self.value_branch_ptr, self.value_branch,
                                self.counts) if self.j48_cuts else self)
            self._cache["descent"] = descent_tables(nodes)
        return descend_complete(X, self, self._cache.get("descent"))

    @property
    def _depth_key(self) -> np.ndarray:
        """Node depths as a small integer type, which numpy's stable sort sorts by radix:
        :meth:`apply_weighted` lists rows by the depth of their leaf."""
        if "depth_key" not in self._cache:
            depth = self.node_depth
            small = np.int16 if self.depth < np.iinfo(np.int16).max else np.int64
            self._cache["depth_key"] = depth.astype(small)
        return self._cache["depth_key"]

    def leaf_estimates(
        self, kind: str = "frequency", *, alpha: float = 1.0, m: float = 2.0
    ) -> np.ndarray:
        """Probability estimate of every node (n_nodes, n_classes) from its counts."""
        prior = self.counts[0] / self.counts[0].sum() if self.n_nodes else None
        return leaf_proba(self.estimate_counts, kind, alpha=alpha, m=m, prior=prior)

    def predict_proba(
        self, X: np.ndarray, kind: str = "frequency", *, alpha: float = 1.0, m: float = 2.0
    ) -> np.ndarray:
        """Class probabilities (n_samples, n_classes): the weighted sum of leaf estimates."""
        per_node = self.leaf_estimates(kind, alpha=alpha, m=m)
        leaf = self.apply(X)
        if leaf is not None:  # mix_leaves' sum of one leaf with weight 1: the same bits
            proba = per_node[leaf]
        else:
            proba = mix_leaves(self._route_unknown(X), per_node, X.shape[0])
        return proba / proba.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------------ editing
    def with_leaves(self, make_leaf: np.ndarray) -> Tree:
        """A new, compacted tree where the nodes in ``make_leaf`` (bool mask) become leaves
        and their descendants are dropped. Used by pruning; ``self`` is not modified."""
        keep = np.ones(self.n_nodes, dtype=bool)
        leafify = make_leaf.copy() & (self.feature >= 0)
        parent = self.parent
        for i in range(1, self.n_nodes):
            p = parent[i]
            if not keep[p] or leafify[p]:
                keep[i] = False
        new_id = np.full(self.n_nodes, -1, dtype=np.int64)
        new_id[keep] = np.arange(keep.sum())
        feature = self.feature.copy()
        threshold = self.threshold.copy()
        feature[leafify] = -1
        threshold[leafify] = np.nan
        kept = flat_nonzero(keep)
        ch_lists = [
            new_id[self.children_of(i)] if feature[i] >= 0 else np.empty(0, np.int64)
            for i in kept
        ]
        vb_lists = [
            self.value_branch[self.value_branch_ptr[i] : self.value_branch_ptr[i + 1]]
            if feature[i] >= 0
            else np.empty(0, np.int64)
            for i in kept
        ]
        ch_ptr = offsets([c.size for c in ch_lists])
        vb_ptr = offsets([v.size for v in vb_lists])
        return Tree(
            j48_cuts=self.j48_cuts,
            feature=feature[kept],
            threshold=threshold[kept],
            children_ptr=ch_ptr,
            children=np.concatenate([*ch_lists, np.empty(0, np.int64)]).astype(np.int64),
            value_branch_ptr=vb_ptr,
            value_branch=np.concatenate([*vb_lists, np.empty(0, np.int64)]).astype(np.int64),
            counts=self.counts[kept].copy(),
        )

    def subtree_leaf_errors(self) -> tuple[np.ndarray, np.ndarray]:
        """Per node: training errors of the subtree's leaves, and number of leaves."""
        errs_leaf = self.counts.sum(axis=1) - self.counts.max(axis=1)
        sub_err = np.where(self.is_leaf, errs_leaf, 0.0)
        sub_leaves = self.is_leaf.astype(float)
        parent = self.parent
        for i in range(self.n_nodes - 1, 0, -1):  # children after parents
            sub_err[parent[i]] += sub_err[i]
            sub_leaves[parent[i]] += sub_leaves[i]
        return sub_err, sub_leaves

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        return {
            "feature": self.feature.tolist(),
            "threshold": [None if np.isnan(t) else float(t) for t in self.threshold],
            "children_ptr": self.children_ptr.tolist(),
            "children": self.children.tolist(),
            "value_branch_ptr": self.value_branch_ptr.tolist(),
            "value_branch": self.value_branch.tolist(),
            "counts": self.counts.tolist(),
        }

    @classmethod
    def from_json(cls, obj: dict, n_classes: int) -> Tree:
        tree = cls(
            feature=np.asarray(obj["feature"], dtype=np.int64),
            threshold=np.array([np.nan if t is None else t for t in obj["threshold"]], float),
            children_ptr=np.asarray(obj["children_ptr"], dtype=np.int64),
            children=np.asarray(obj["children"], dtype=np.int64),
            value_branch_ptr=np.asarray(obj["value_branch_ptr"], dtype=np.int64),
            value_branch=np.asarray(obj["value_branch"], dtype=np.int64),
            counts=np.asarray(obj["counts"], dtype=float).reshape(-1, n_classes),
        )
        tree.validate()
        return tree

    def validate(self) -> None:
        """Check the array invariants; a model file that breaks them is corrupt."""
        n = self.n_nodes
        ok = (
            n >= 1
            and self.threshold.size == n
            and self.children_ptr.size == n + 1
            and self.value_branch_ptr.size == n + 1
            and self.counts.shape[0] == n
            and self.children_ptr[0] == 0
            and self.children_ptr[-1] == self.children.size
            and self.value_branch_ptr[-1] == self.value_branch.size
            and np.all(np.diff(self.children_ptr) >= 0)
            and np.all(self.counts >= 0)
        )
        if ok and self.children.size:
            parents = np.repeat(np.arange(n), np.diff(self.children_ptr))
            ok = bool(np.all(self.children > parents) and np.all(self.children < n))
            # each node once (bincount, not np.unique: that loads numpy.ma, 0.04 s)
            ok = ok and np.bincount(self.children, minlength=n).max() <= 1
        if ok:
            internal = self.feature >= 0
            ok = bool(np.all(np.diff(self.children_ptr)[internal] >= 2)) and bool(
                np.all(np.diff(self.children_ptr)[~internal] == 0)
            )
        if not ok:
            raise ValueError("tree arrays break the layout invariants")


def route_weighted(X: np.ndarray, row_of: np.ndarray, start: np.ndarray,
                   edge_frac: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                   children_ptr: np.ndarray, children: np.ndarray,
                   value_branch_ptr: np.ndarray, value_branch: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`TreeArrays.apply_weighted` for entries: entry k is row ``row_of[k]`` of ``X``
    starting at node ``start[k]`` of the node arrays given (the layout of
    :class:`TreeArrays`; a node may have several parents, so the fraction an unknown value
    sends down each child is per edge, ``edge_frac`` aligned with ``children``). Returns
    ``(entry, leaf, weight)``: the leaves each entry reaches, level by level; within a
    level the known-valued moves first, then the unknown ones' expansions in branch order —
    the order in which the mixtures of :func:`mix_leaves` add them up."""
    row = np.arange(row_of.size)
    node = np.asarray(start, dtype=np.int64)
    weight = np.ones(row.size)
    out_r, out_l, out_w = [], [], []
    # gathers index 1-D arrays with integer arrays (X flat): numpy 2's fastest gather,
    # ``take`` costs about twice as much, 2-D indexing or masks several times
    X_flat, p = (X.reshape(-1), X.shape[1]) if X.flags.c_contiguous else (None, 0)
    while row.size:
        f = feature[node]
        leaf = f < 0
        if leaf.any():
            out_r.append(row[leaf])
            out_l.append(node[leaf])
            out_w.append(weight[leaf])
            keep = ~leaf
            row, node, weight, f = row[keep], node[keep], weight[keep], f[keep]
        if not row.size:
            break
        vals = (X_flat[row_of[row] * p + f] if X_flat is not None
                else X[row_of[row], f])
        missing = np.isnan(vals)
        t = threshold[node]
        # numeric tests: value > threshold (False for a nominal test's NaN threshold, whose
        # entries are set below, and for an unknown value, which takes every branch)
        branch = (vals > t).astype(np.int64)
        nom = np.isnan(t)
        nom &= ~missing
        if nom.any():  # a nominal test's branch of the value (index 0 elsewhere: unread)
            codes = np.where(nom, vals, 0.0).astype(np.int64)
            at = np.where(nom, value_branch_ptr[node] + codes, 0)
            branch = np.where(nom, value_branch[at], branch)
        if not missing.any():  # one move each, every weight as it was (> 0)
            node = children[children_ptr[node] + branch]
            continue
        known = ~missing
        nxt_row = [row[known]]
        nxt_node = [children[children_ptr[node[known]] + branch[known]]]
        nxt_w = [weight[known]]
        m_node = node[missing]
        n_kids = children_ptr[m_node + 1] - children_ptr[m_node]
        first = np.repeat(children_ptr[m_node], n_kids)
        edge = first + np.arange(n_kids.sum()) - np.repeat(np.cumsum(n_kids) - n_kids,
                                                            n_kids)
        nxt_row.append(np.repeat(row[missing], n_kids))
        nxt_node.append(children[edge])
        nxt_w.append(np.repeat(weight[missing], n_kids) * edge_frac[edge])
        row = np.concatenate(nxt_row)
        node = np.concatenate(nxt_node)
        weight = np.concatenate(nxt_w)
        w_pos = weight > 0
        if not w_pos.all():
            row, node, weight = row[w_pos], node[w_pos], weight[w_pos]
    if not out_r:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    return np.concatenate(out_r), np.concatenate(out_l), np.concatenate(out_w)


#: Tree levels :func:`descend_complete` descends between two compactions of its rows.
_LEVELS_PER_PASS = 3


def descent_tables(nodes: TreeArrays) -> tuple:
    """The per-tree tables of :func:`descend_complete` for a tree that is not a single leaf
    (a :class:`Tree` keeps them in its cache): each node's child for either answer of a
    numeric test, with a leaf its own child (tested on column 0 against +inf), and which
    nodes test a nominal column."""
    feature, threshold = nodes.feature, nodes.threshold
    is_leaf = feature < 0
    ids = np.arange(feature.size)
    start = nodes.children_ptr[:-1]
    # pair[2 v + b]: the child of node v for a numeric test answered b (x > threshold)
    kids = np.append(nodes.children, 0)  # a leaf's index 0 exists without any child
    pair = np.stack([np.where(is_leaf, ids, kids[np.where(is_leaf, 0, start + b)])
                     for b in (0, 1)], axis=1).ravel()
    tested = np.where(is_leaf, 0, feature)
    bound = np.where(is_leaf, np.inf, threshold)
    nominal = ~is_leaf & np.isnan(threshold)
    return is_leaf, pair, tested, bound, nominal, bool(nominal.any())


def descend_complete(X: np.ndarray, nodes: TreeArrays, tables: tuple | None = None
                     ) -> np.ndarray:
    """The leaf each row of ``X`` reaches from the root, for rows without unknown values:
    ``x <= threshold`` takes the first child, a nominal value its ``value_branch``, as
    :func:`route_weighted` routes them (``tables``: :func:`descent_tables` of ``nodes``,
    built here when not given).

    Why a second routine: with no unknown value a row never splits, so the missing-value
    masks, expansions, concatenations and weights of :func:`route_weighted` are pure
    overhead, and a level is two gathers and a comparison (a third of the time for a
    million rows). A leaf is made its own child (tested on any column against +inf), so
    rows that reach one need not leave at once: the rows are compacted every
    :data:`_LEVELS_PER_PASS` levels rather than every level.
    """
    n, n_cols = X.shape
    if nodes.feature[0] < 0:
        return np.zeros(n, dtype=np.int64)
    flat = np.ascontiguousarray(X, dtype=np.float64).ravel()
    return descend_entries(flat, np.arange(0, n * n_cols, n_cols),
                           np.zeros(n, dtype=np.int64), nodes,
                           descent_tables(nodes) if tables is None else tables)


def descend_entries(flat: np.ndarray, at: np.ndarray, node: np.ndarray, nodes: TreeArrays,
                    tables: tuple) -> np.ndarray:
    """The leaf each entry reaches from its start ``node``, entry k being the row whose
    first value is ``flat[at[k]]`` (rows laid end to end, none unknown):
    :func:`descend_complete`'s loop, which a forest's trees laid end to end share
    (:func:`treecert.methods.ensemble.forest_leaves`)."""
    is_leaf, pair, tested, bound, nominal, any_nominal = tables
    leaf = np.empty(at.size, dtype=np.int64)
    entry = np.arange(at.size)
    while entry.size:
        for _ in range(_LEVELS_PER_PASS):
            vals = flat[at + tested[node]]
            nxt = pair[2 * node + (vals > bound[node])]
            if any_nominal:
                nom = nominal[node]
                if nom.any():
                    v = node[nom]
                    nxt[nom] = nodes.children[
                        nodes.children_ptr[v]
                        + nodes.value_branch[nodes.value_branch_ptr[v]
                                             + vals[nom].astype(np.int64)]]
            node = nxt
        done = is_leaf[node]
        if done.any():
            leaf[entry[done]] = node[done]
            keep = ~done
            at, node, entry = at[keep], node[keep], entry[keep]
    return leaf


def mix_leaves(applied: tuple[np.ndarray, np.ndarray, np.ndarray], per_node: np.ndarray,
               n_rows: int) -> np.ndarray:
    """Per row, the weighted sum of ``per_node[leaf]`` over the leaves it reaches —
    ``applied`` is :meth:`Tree.apply_weighted`'s ``(row, leaf, weight)``."""
    row, leaf, weight = applied
    out = np.zeros((n_rows, per_node.shape[1]))
    if row.size == n_rows:  # every row reaches one leaf: a plain scatter (the same bits)
        out[row] = weight[:, None] * per_node[leaf]
    else:
        np.add.at(out, row, weight[:, None] * per_node[leaf])
    return out


def prune_to_cp(tree: Tree, cp: float) -> Tree:
    """rpart's complexity parameter: cost-complexity pruning at alpha = cp * R(root).

    R is the weighted training misclassification count. Every internal node whose
    weakest-link value g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1) is <= alpha after its
    descendants have been pruned is collapsed (Breiman et al. 1984, ch. 10; rpart's ``cp``).
    """
    if cp <= 0 or tree.n_nodes == 1:
        return tree
    # g(t) <= R(t) <= R(root), so every cp >= 1 prunes to the root: clipped, a huge cp
    # gives that tree rather than an infinite alpha
    alpha = min(float(cp), 1.0) * (tree.counts[0].sum() - tree.counts[0].max())
    current = tree
    while True:
        sub_err, sub_leaves = current.subtree_leaf_errors()
        node_err = current.counts.sum(axis=1) - current.counts.max(axis=1)
        internal = ~current.is_leaf
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.where(internal, (node_err - sub_err) / (sub_leaves - 1), np.inf)
        weakest = g.min() if internal.any() else np.inf
        if not internal.any() or weakest > alpha + 1e-12:
            return current
        current = current.with_leaves(internal & (g <= weakest + 1e-12))


def collapse(tree: Tree) -> Tree:
    """J48's ``collapse``: a subtree that does not reduce training errors becomes a leaf.

    J48 applies it by default even with ``-U``; treecert only with ``collapse=True``.
    """
    sub_err, _ = tree.subtree_leaf_errors()
    node_err = tree.counts.sum(axis=1) - tree.counts.max(axis=1)
    return tree.with_leaves(~tree.is_leaf & (sub_err >= node_err - 1e-3))
