"""The transductive engine: "grow the tree on D ∪ {(x, c)}" without growing the tree.

TPCE (Costa et al., section 3), Kukar & Kononenko's reliability and the Venn machine with the
leaf taxonomy only need *the leaves that x reaches* in the tree grown on D plus x with a
tentative label. Growth is top-down and deterministic, so they depend only on the nodes on
x's own paths: at each of them the test is chosen from the node's rows (x included,
ineligible for thresholds), the rows are routed, and only the children holding x are
followed. Siblings are never grown. :meth:`TransductiveEngine.leaves` (``engine=path``) does
this for one (x, c) with the exact batched paths of
:mod:`treecert.transductive.exact_paths`, which call the very functions the full learner
uses, on rows in the same order, so the result is identical to growing the whole tree —
which :meth:`naive_leaves` does, as the reference kept for tests and for users
(``engine=naive``).

Leave-one-out: the training set of fold i is D without row i, plus (x_i, c); the engine
serves it from the same arrays by dropping row i from the root (``drop_row``).

:class:`TransductiveEngine` is also the front the methods call: with ``engine=fast`` its
:meth:`~TransductiveEngine.estimates` serve every job from the batched engine
(:mod:`treecert.transductive.batch_engine`: certificates where they apply, exact batched
paths elsewhere). Whole-tree edits (``collapse``, ``cp``) need whole trees: the fast engine
grows a batch's trees together as one DAG and edits them
(:mod:`treecert.transductive.edited_trees`); the path engine follows only x's paths, so
:func:`check_engine_covers` refuses it for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.transductive import held_out_folds
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.edited_trees import EditedEngine, has_edits
from treecert.transductive.engine_registry import HoldsSharedEngine
from treecert.transductive.exact_paths import reach_leaves
from treecert.tree.arrays import Tree
from treecert.tree.classifier import DecisionTree
from treecert.tree.grow import branch_known_weights, grow, node_stops, route_rows
from treecert.tree.segments import flat_nonzero

#: Engines of :meth:`TransductiveEngine.estimates`, fastest first (identical results).
ENGINES = ("fast", "path", "naive")


def check_engine(engine: str, who: str, allowed: tuple[str, ...] = ENGINES) -> None:
    """A user error for an engine name outside ``allowed``."""
    if engine not in allowed:
        raise ConfigError(f"{who}: unknown engine '{engine}'.",
                          "Choose " + ", ".join(allowed) + ".")


def check_engine_covers(engine: str, learner: DecisionTree, who: str) -> None:
    """A user error, up front, for a whole-tree edit the path engine does not follow:
    ``collapse`` and ``cp`` act on the whole tree after it is grown, and ``engine=path``
    grows x's paths only (``fast`` grows the batch's whole trees and edits them, ``naive``
    one whole tree per (x, c)) — stated, not a quiet switch to another engine."""
    if engine == "path" and has_edits(learner):
        raise ConfigError(
            f"{who}: --collapse and --cp edit the whole tree after growth; engine=path "
            f"follows only x's paths.",
            "Use engine=fast (the default) or engine=naive, or leave out --collapse/--cp.")


@dataclass
class ReachedLeaf:
    """One leaf that x reaches: x's share of weight there and the leaf's class counts
    (``counts`` include x's share; ``counts_without_x`` do not)."""

    weight: float
    counts: np.ndarray
    counts_without_x: np.ndarray


class TransductiveEngine(HoldsSharedEngine):
    """Leaves reached by test instances in trees grown on the training data plus the
    instance with a tentative label.

    Parameters
    ----------
    data : training Dataset (rows with a missing class are ignored).
    learner : a :class:`DecisionTree` giving the growing parameters. Post-growth edits
        (``collapse``, ``cp``) depend on the whole tree: :meth:`estimates` grows the whole
        trees of a batch together and edits them; :meth:`leaves` grows one whole tree.
    """

    def __init__(self, data: Dataset, learner: DecisionTree) -> None:
        if learner.threshold == "j48":
            # J48's 1e-5 gap and its whole-training-set cut are not in the engines' cut
            # searches, which place the ineligible x between two training values
            raise ConfigError("the transductive engine (tpce, kk, venn) does not grow with "
                              "J48's cut rule (threshold j48).",
                              "Give the method threshold=lower, e.g. "
                              "--method 'tpce:threshold=lower'.")
        labelled = flat_nonzero(data.y >= 0)
        self.data = data.subset(labelled)
        self.learner = learner
        n, p = self.data.X.shape
        self.n = n
        self.X = np.vstack([self.data.X, np.zeros((1, p))])
        self.y = np.concatenate([self.data.y, [0]]).astype(np.int64)
        self.w = np.concatenate([self.data.weights.astype(float), [1.0]])
        eligible = np.ones(n + 1, dtype=bool)
        eligible[n] = False
        self.eligible = eligible
        self.finder = learner.make_finder(self.data, eligible=eligible, X=self.X, y=self.y)
        self.n_classes = self.data.schema.n_classes
        self.whole_tree_only = has_edits(learner)

    def _set_instance(self, x: np.ndarray, label: int, weight: float) -> None:
        """Write x into the spare last row. An engine unpickled from read-only memory
        (joblib memory-maps the arrays it sends to workers) first takes copies of its own."""
        if not (self.X.flags.writeable and self.y.flags.writeable
                and self.w.flags.writeable):
            self.X, self.y, self.w = self.X.copy(), self.y.copy(), self.w.copy()
            self.finder = self.learner.make_finder(self.data, eligible=self.eligible,
                                                   X=self.X, y=self.y)
        self.X[self.n] = x
        self.finder.row_written(self.n)
        self.y[self.n] = label
        self.w[self.n] = weight

    def _root(self, drop_row: int | None) -> tuple[np.ndarray, np.ndarray]:
        idx = np.arange(self.n + 1)
        if drop_row is not None:
            idx = np.delete(idx, drop_row)
        return idx, self.w[idx]

    def leaves(self, x: np.ndarray, label: int, *, weight: float = 1.0,
               drop_row: int | None = None, engine: str = "fast") -> list[ReachedLeaf]:
        """Leaves that ``x`` (with class ``label``) reaches in the tree grown on the training
        data plus x; ``drop_row`` removes one training row first (leave-one-out). With
        collapse/cp, one whole tree, edited (many jobs at once: :meth:`estimates`)."""
        if engine == "naive" or self.whole_tree_only:
            return self.naive_leaves(x, label, weight=weight, drop_row=drop_row)
        if engine != "fast":
            raise ConfigError(f"unknown engine '{engine}'.", "Choose fast or naive.")
        self._set_instance(x, label, weight)
        idx, w = self._root(drop_row)
        reached = reach_leaves(self.finder, [(idx, w)])
        out = []
        for share, cnt, x_w in zip(reached.share, reached.counts, reached.x_weight,
                                   strict=True):
            without = cnt.copy()
            without[label] -= x_w
            out.append(ReachedLeaf(float(share), cnt, np.maximum(without, 0.0)))
        return out

    # ------------------------------------------------------------------ many at once
    def estimates(self, X: np.ndarray, labels: np.ndarray, drop_rows: np.ndarray | None = None,
                  *, count_x: bool = True, alpha: float = 1.0, engine: str = "fast",
                  batch: int | None = None,
                  held_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Laplace estimate (:func:`leaf_estimate`) of x's leaf for every job i: x = ``X[i]``
        with class ``labels[i]``, training row ``drop_rows[i]`` removed when >= 0.
        ``held_out = (row_fold, job_fold)``: job i trains on the rows outside its fold
        (``engine="fast"``, where
        :func:`~treecert.transductive.held_out_folds.serves`).

        ``engine="fast"`` serves all jobs from
        :class:`treecert.transductive.batch_engine.BatchEngine` (with collapse/cp its
        subclass :class:`~treecert.transductive.edited_trees.EditedEngine`: the batch's
        whole trees, grown together and edited); ``"path"`` uses :meth:`leaves` one job
        at a time (not with collapse/cp), ``"naive"`` grows whole trees. All give identical
        results.
        """
        check_engine(engine, "estimates")
        check_engine_covers(engine, self.learner, "estimates")
        X = np.asarray(X, dtype=float)
        labels = np.asarray(labels, dtype=np.int64)
        J, K = X.shape[0], self.n_classes
        drop = np.full(J, -1, np.int64) if drop_rows is None else np.asarray(drop_rows, np.int64)
        if held_out is not None and engine != "fast":
            raise ValueError("held-out folds are served by the fast engine's exact paths only")
        if engine == "fast" and self._batch_engine() is not None:
            return self._batch.estimates(X, labels, drop, count_x=count_x, alpha=alpha,
                                         batch=batch, held_out=held_out)
        out = np.empty((J, K))
        for i in range(J):
            leaves = self.leaves(X[i], int(labels[i]), engine="naive" if engine == "naive"
                                 else "fast", drop_row=None if drop[i] < 0 else int(drop[i]))
            out[i] = leaf_estimate(leaves, K, count_x=count_x, alpha=alpha)
        return out

    @staticmethod
    def serves_held_out(data: Dataset, learner: DecisionTree, train_sizes: list[int],
                        labels_per_row: int, engine: str = "fast") -> bool:
        """Whether :meth:`estimates` serves a cross-validation's folds of ``data``
        (training sets of ``train_sizes`` rows, jobs of ``labels_per_row`` labels a test
        row) from one engine on all of it, and it pays: ``engine="fast"`` where every job
        takes the exact batched paths (:func:`~treecert.transductive.held_out_folds.serves`,
        :func:`~treecert.transductive.held_out_folds.pays`)."""
        return (engine == "fast" and BatchEngine.supports(data, learner)
                and held_out_folds.pays(data.n_samples, train_sizes, labels_per_row,
                                        held_out_folds.cells_per_entry(data.schema))
                and held_out_folds.serves(data, learner, train_sizes,
                                          BatchEngine.certifies(data, learner)))

    def loo_inductive(self, rows: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
        """Laplace class probabilities of training row i in the tree grown on the training
        data without it, for every i in ``rows`` — what refitting the learner on D − {i}
        and its ``predict_proba`` give, bit for bit (Kukar & Kononenko's inductive step
        under leave-one-out) — by exact batched paths that route row i through the tree
        grown on D − {i} without growing it (:func:`reach_leaves`, ``probe``): its rows
        are the refit's in the refit's order, so every search and count is the refit's."""
        from treecert.transductive import budget
        from treecert.transductive.exact_paths import mix_laplace
        from treecert.transductive.node_search import value_ranks
        from treecert.tree.split_search import SplitFinder

        rows = np.asarray(rows, dtype=np.int64)
        data, n, K = self.data, self.n, self.n_classes
        schema = data.schema
        # the refit's finder: every row eligible, J48's 0.3·N rule on n - 1 rows
        finder = SplitFinder(data.X, data.y, schema.nominal_mask(), schema.n_values(), K,
                             self.learner.grow_params, n_total_rows=n - 1)
        rank = None if np.isnan(data.X).any() else value_ranks(finder)
        w = self.w[:n]
        out = np.empty((rows.size, K))
        per = max(1, budget.PATH_ENTRIES // (n + 1))
        for lo in range(0, rows.size, per):
            part = rows[lo:lo + per]
            roots = [(np.delete(np.arange(n), i), np.delete(w, i)) for i in part]
            reached = reach_leaves(finder, roots, rank, probe=data.X[part])
            out[lo:lo + per] = mix_laplace(reached, np.zeros(part.size, np.int64), part.size,
                                           K, alpha=alpha, as_predicted=True)
        return out

    def _batch_engine(self):
        """The batched engine over the training data, or None where it does not apply."""
        cls = EditedEngine if self.whole_tree_only else BatchEngine
        return self._shared_engine(cls, self.data, self.learner)

    # ------------------------------------------------------------------ whole trees
    @property
    def base(self) -> tuple[Tree, object]:
        """The tree grown on the training data alone, with its per-node rows (lazily)."""
        if not hasattr(self, "_base"):
            idx = np.arange(self.n)
            grown = grow(self.finder, idx, self.w[idx])
            self._base = (Tree.from_grown(grown), grown)
        return self._base

    def tree_with(self, x: np.ndarray, label: int, *, weight: float = 1.0,
                  engine: str = "fast") -> Tree:
        """The whole tree grown on the training data plus (x, label), x ineligible.

        The fast engine starts from the base tree: a node whose rows are exactly the base
        node's rows (x absent, no weight changed) keeps the base subtree; on x's path the
        test is recomputed, and where it differs from the base the subtree is regrown from
        its rows. Identical to growing from scratch (``engine="naive"``). Post-growth edits
        (collapse, cp) are applied afterwards as the learner does.
        """
        self._set_instance(x, label, weight)
        idx, w = self._root(None)
        if engine == "naive":
            tree = Tree.from_grown(grow(self.finder, idx, w))
        else:
            base, grown = self.base
            asm = _Assembler(self.n_classes)
            self._assemble(asm, base, grown, idx, w, 0, 0)
            tree = asm.to_tree()
        return self.learner.edited(tree)

    def _same_rows(self, grown, node: int, nidx: np.ndarray, nw: np.ndarray) -> bool:
        lo, hi = grown.rows_ptr[node], grown.rows_ptr[node + 1]
        return (hi - lo == nidx.size and np.array_equal(grown.rows_idx[lo:hi], nidx)
                and np.array_equal(grown.rows_w[lo:hi], nw))

    def _assemble(self, asm: _Assembler, base: Tree, grown, nidx, nw, depth: int,
                  base_node: int | None) -> int:
        finder, K = self.finder, self.n_classes
        if base_node is not None and self._same_rows(grown, base_node, nidx, nw):
            return asm.copy_subtree(base, base_node)
        cnt = np.bincount(self.y[nidx], weights=nw, minlength=K).astype(float)
        split = None if node_stops(finder, nidx, nw, cnt, depth) else finder.best_split(nidx, nw)
        if split is None:
            return asm.add(-1, np.nan, np.empty(0, np.int64), cnt)
        if base_node is None or not base.has_test(base_node, split):
            sub = grow(finder, nidx, nw, depth=depth)
            return asm.copy_subtree(Tree.from_grown(sub), 0)
        node = asm.add(split.feature, split.threshold,
                       np.empty(0, np.int64) if split.value_branch is None
                       else split.value_branch, cnt)
        known = branch_known_weights(self.X, nidx, nw, split)
        kids = base.children_of(base_node)
        asm.children[node] = [
            self._assemble(asm, base, grown, cidx, cw, depth + 1, int(kid))
            for (cidx, cw), kid in zip(route_rows(self.X, nidx, nw, split, known), kids,
                                       strict=True)
        ]
        return node

    def naive_leaves(self, x: np.ndarray, label: int, *, weight: float = 1.0,
                     drop_row: int | None = None) -> list[ReachedLeaf]:
        """The reference: grow the whole tree on the training data plus x, then route x."""
        self._set_instance(x, label, weight)
        idx, w = self._root(drop_row)
        grown = grow(self.finder, idx, w)
        tree = Tree.from_grown(grown)
        if has_edits(self.learner):
            return self._route_edited(self.learner.edited(tree), x, label, weight)
        _rows, leaf, share = tree.apply_weighted(x[None, :])
        out = []
        for leaf_id, frac in zip(leaf, share, strict=True):
            lo, hi = grown.rows_ptr[leaf_id], grown.rows_ptr[leaf_id + 1]
            members = grown.rows_idx[lo:hi]
            x_w = float(grown.rows_w[lo:hi][members == self.n].sum())
            cnt = tree.counts[leaf_id].copy()
            without = cnt.copy()
            without[label] -= x_w
            out.append(ReachedLeaf(float(frac), cnt, np.maximum(without, 0.0)))
        return out

    def _route_edited(self, tree: Tree, x, label, weight) -> list[ReachedLeaf]:
        """Leaves of a pruned/collapsed tree; x's own share is re-derived by routing x with
        the training-time fractions (equal to the prediction-time ones)."""
        _rows, leaf, share = tree.apply_weighted(x[None, :])
        out = []
        for leaf_id, frac in zip(leaf, share, strict=True):
            cnt = tree.counts[leaf_id].copy()
            without = cnt.copy()
            without[label] -= frac * weight
            out.append(ReachedLeaf(float(frac), cnt, np.maximum(without, 0.0)))
        return out


class _Assembler:
    """Collects nodes (feature, threshold, value_branch, counts, children) into a Tree."""

    def __init__(self, n_classes: int) -> None:
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.value_branch: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.children: list[list[int]] = []
        self.n_classes = n_classes

    def add(self, feature, threshold, value_branch, counts) -> int:
        self.feature.append(int(feature))
        self.threshold.append(float(threshold))
        self.value_branch.append(value_branch)
        self.counts.append(counts)
        self.children.append([])
        return len(self.feature) - 1

    def copy_subtree(self, tree: Tree, node: int) -> int:
        """Append ``tree``'s subtree rooted at ``node``; returns the new id of its root."""
        new = self.add(tree.feature[node], tree.threshold[node],
                       tree.value_branch[tree.value_branch_ptr[node]:
                                         tree.value_branch_ptr[node + 1]],
                       tree.counts[node])
        self.children[new] = [self.copy_subtree(tree, int(c)) for c in tree.children_of(node)]
        return new

    def to_tree(self) -> Tree:
        n = len(self.feature)
        ch_ptr = np.zeros(n + 1, dtype=np.int64)
        ch_ptr[1:] = np.cumsum([len(c) for c in self.children])
        vb_ptr = np.zeros(n + 1, dtype=np.int64)
        vb_ptr[1:] = np.cumsum([v.size for v in self.value_branch])
        return Tree(
            feature=np.array(self.feature, dtype=np.int64),
            threshold=np.array(self.threshold, dtype=float),
            children_ptr=ch_ptr,
            children=np.array([c for cs in self.children for c in cs], dtype=np.int64),
            value_branch_ptr=vb_ptr,
            value_branch=np.concatenate([*self.value_branch, np.empty(0, np.int64)]).astype(
                np.int64),
            counts=np.array(self.counts, dtype=float).reshape(n, self.n_classes),
        )


def leaf_estimate(leaves: list[ReachedLeaf], n_classes: int, *, count_x: bool = True,
                  alpha: float = 1.0) -> np.ndarray:
    """Laplace estimate (n_c + alpha)/(n + K alpha) summed over reached leaves by x's share."""
    out = np.zeros(n_classes)
    for leaf in leaves:
        cnt = leaf.counts if count_x else leaf.counts_without_x
        # weight × (n_c + α) first, then / (n + Kα): the rounding the reference results have
        out += leaf.weight * (cnt + alpha) / (cnt.sum() + n_classes * alpha)
    return out / out.sum()
