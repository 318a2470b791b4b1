"""``collapse`` and ``cp`` in the batched engine: the leaves x reaches in the *edited* tree
on D ∪ {(x, c)} — grown, then J48's :func:`~treecert.tree.arrays.collapse`, then rpart's
:func:`~treecert.tree.arrays.prune_to_cp` — for a batch of jobs at once, bit for bit what
``engine=naive`` gives (a whole tree grown per job, edited by those very functions).

Both edits read whole subtrees, so the jobs' trees are grown whole, together, as the one
DAG of :func:`~treecert.transductive.venn_forest.grow_forest` (a node's (rows, weights)
grown once however many jobs' trees hold it; the K labels of one x and every x taking the
same branches share the subtrees off their paths). Then:

* **collapse** (J48): node v becomes a leaf iff the summed training errors of its
  subtree's leaves reach its own error less 1e-3. That is a property of v's subtree alone,
  so it is decided once per node of the DAG, for every job holding it. The sum is taken as
  :meth:`~treecert.tree.arrays.Tree.subtree_leaf_errors` takes it in any grown tree (node
  ids there increase from a parent to its children, and along the branches): a node's sum
  starts at 0.0 and adds its children's finished sums from the last branch to the first —
  so the comparison sees the same bits, with fractional weights too.
* **cp** (rpart, Breiman et al. 1984, ch. 10): weakest-link pruning at
  alpha = cp · R(root), iterated. It depends on the whole tree — alpha on the root's
  counts, which hold x's label, and every round prunes at the tree's global minimum of
  g(t) = (R(t) − R(T_t)) / (|leaves(T_t)| − 1) — so each job's tree is expanded from the
  (collapsed) DAG into a tree of its own, and the iteration of ``prune_to_cp`` is run for
  all jobs together, one round of every unfinished job per pass, with the same
  floating-point operations in the same order: R(T_t) summed as above, the job's minimum,
  ``weakest > alpha + 1e-12`` to stop and ``g <= weakest + 1e-12`` to prune. Not an
  equivalent bottom-up rule but the iteration itself, so its tolerances hold as they are.

x is then routed through its job's edited tree as prediction routes a row
(:func:`~treecert.tree.arrays.route_weighted`: C4.5's fractions for unknown values, leaves
listed in :meth:`~treecert.tree.arrays.TreeArrays.apply_weighted`'s order); the fractions
of an edited tree are the grown tree's (an edit keeps the counts of every node it keeps),
and x's weight in a leaf is its share, as
:meth:`~treecert.transductive.engine.TransductiveEngine.naive_leaves` reads it. The Venn
machine's forecast taxonomy reads every example's forecast from the same edited forest
(:func:`batch_forest`, called by :mod:`treecert.methods.venn_fast`).
"""

from __future__ import annotations

import numpy as np

from treecert.transductive import budget
from treecert.transductive.batch_engine import BatchEngine
from treecert.transductive.exact_paths import ReachedLeaves, mix_laplace
from treecert.transductive.venn_forest import Forest, grow_forest
from treecert.tree.arrays import route_weighted
from treecert.tree.classifier import DecisionTree
from treecert.tree.segments import _ranges, flat_nonzero, offsets

#: J48's collapse margin and prune_to_cp's tolerance (:mod:`treecert.tree.arrays`).
_COLLAPSE_MARGIN = 1e-3
_CP_TOL = 1e-12


def has_edits(learner: DecisionTree) -> bool:
    """Whether the learner edits its trees after growth (``collapse`` or ``cp``)."""
    return bool(learner.collapse or learner.cp > 0)


def node_errors(counts: np.ndarray) -> np.ndarray:
    """Training errors of every node: its weight less its majority class's, as
    :meth:`~treecert.tree.arrays.Tree.subtree_leaf_errors` and ``prune_to_cp`` compute
    them (a contiguous (N, K) array, summed row by row)."""
    counts = np.ascontiguousarray(counts)
    return counts.sum(axis=1) - counts.max(axis=1)


def _edge_groups(parent: np.ndarray, branch: np.ndarray, child: np.ndarray,
                 child_level: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The edges (parent, child) in the order a subtree sum adds them: the deepest children
    first (a child's sum is finished before it is added), and at each level the last
    branch first. Within a group every parent appears once."""
    order = np.lexsort((-branch, -child_level))
    key = child_level[order] * (int(branch.max(initial=0)) + 1) + branch[order]
    cuts = flat_nonzero(np.diff(key)) + 1
    return [(parent[g], child[g]) for g in np.split(order, cuts) if g.size]


def _fold(init: np.ndarray, groups, open_: np.ndarray | None = None) -> np.ndarray:
    """Subtree sums: ``init`` at every node plus its children's sums, added in the order
    of ``groups`` (:func:`_edge_groups`) — only into nodes marked ``open_`` (the others
    keep ``init``: leaves of the current tree)."""
    s = init.copy()
    for p, c in groups:
        if open_ is None:
            s[p] += s[c]
        else:
            s[p] += np.where(open_[p], s[c], 0.0)  # x + 0.0 == x for the sums here (>= 0)
    return s


def _dag_edges(forest: Forest) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(parent, branch, child) of every edge of the forest's DAG."""
    n_kids = np.diff(forest.kid_ptr)
    parent = np.repeat(np.arange(n_kids.size), n_kids)
    branch = np.arange(forest.kids.size) - forest.kid_ptr[parent]
    return parent, branch, forest.kids


def _levels(forest: Forest, n_roots: int) -> np.ndarray:
    """Depth of every node of the DAG (``grow_forest`` shares nodes within a level only)."""
    level = np.zeros(forest.counts.shape[0], dtype=np.int64)
    front, depth = np.arange(n_roots), 0
    ptr = forest.kid_ptr
    while front.size:
        n_kids = ptr[front + 1] - ptr[front]
        if not n_kids.sum():
            break
        pos = _ranges(ptr[front], n_kids)
        depth += 1
        front = np.unique(forest.kids[pos])
        level[front] = depth
    return level


def collapse_marks(forest: Forest, n_roots: int) -> np.ndarray:
    """Nodes of the DAG that J48's collapse turns into leaves (:func:`collapse`): internal,
    and the summed errors of their subtree's leaves >= their own error − 1e-3."""
    err = node_errors(forest.counts)
    leaf = forest.feature < 0
    parent, branch, child = _dag_edges(forest)
    groups = _edge_groups(parent, branch, child, _levels(forest, n_roots)[child])
    sub_err = _fold(np.where(leaf, err, 0.0), groups)
    return ~leaf & (sub_err >= err - _COLLAPSE_MARGIN)


def _with_leaves(forest: Forest, leaf: np.ndarray) -> Forest:
    """The forest with the nodes in ``leaf`` made leaves (their children no longer
    reached; counts, fractions and estimates unchanged, as ``Tree.with_leaves`` keeps
    them)."""
    return Forest(forest.counts, np.where(leaf, -1, forest.feature),
                  np.where(leaf, np.nan, forest.threshold), forest.vb_ptr, forest.vb,
                  forest.kid_ptr, forest.kids, forest.frac, forest.est)


def _expand(forest: Forest, n_roots: int) -> tuple[Forest, np.ndarray, np.ndarray]:
    """Every job's tree (job i's rooted at node i of the DAG) as a tree of its own: a
    forest without shared nodes, levels in order, children in (parent, branch) order,
    job i's root at node i. Returns it with each node's ``parent`` and ``level``."""
    ptr = forest.kid_ptr
    orig, parent, level, frac = [np.arange(n_roots)], [np.full(n_roots, -1)], \
        [np.zeros(n_roots, np.int64)], []
    front_new = front_old = np.arange(n_roots)
    nxt, depth = n_roots, 0
    while True:
        open_ = forest.feature[front_old] >= 0
        po, pn = front_old[open_], front_new[open_]
        n_kids = ptr[po + 1] - ptr[po]
        total = int(n_kids.sum())
        if not total:
            break
        pos = _ranges(ptr[po], n_kids)
        depth += 1
        front_old = forest.kids[pos]
        front_new = nxt + np.arange(total)
        orig.append(front_old)
        parent.append(np.repeat(pn, n_kids))
        level.append(np.full(total, depth, np.int64))
        frac.append(forest.frac[pos])
        nxt += total
    orig, parent, level = (np.concatenate(a) for a in (orig, parent, level))
    kid_ptr = offsets(np.bincount(parent[n_roots:], minlength=nxt))
    tree = Forest(forest.counts[orig], forest.feature[orig], forest.threshold[orig],
                  forest.vb_ptr[orig], forest.vb, kid_ptr, np.arange(n_roots, nxt),
                  np.concatenate([np.empty(0), *frac]), forest.est[orig])
    return tree, parent, level


def prune_cp_all(forest: Forest, parent: np.ndarray, level: np.ndarray, n_roots: int,
                 cp: float) -> np.ndarray:
    """Nodes that :func:`~treecert.tree.arrays.prune_to_cp` turns into leaves, for every
    job's tree of an expanded forest (:func:`_expand`) at once: its iteration, one round
    of every job still pruning per pass (module docstring)."""
    counts = forest.counts
    N = counts.shape[0]
    err = node_errors(counts)
    job = np.empty(N, dtype=np.int64)
    job[:n_roots] = np.arange(n_roots)
    for d in range(1, int(level.max(initial=0)) + 1):  # levels in order: parents first
        at = flat_nonzero(level == d)
        job[at] = job[parent[at]]
    root = np.ascontiguousarray(counts[:n_roots])
    alpha = min(float(cp), 1.0) * (root.sum(axis=1) - root.max(axis=1))  # as prune_to_cp
    kids = np.arange(n_roots, N)
    branch = kids - forest.kid_ptr[parent[kids]]
    groups = _edge_groups(parent[kids], branch, kids, level[kids])
    by_level = [flat_nonzero(level == d) for d in range(1, int(level.max(initial=0)) + 1)]
    leaf = forest.feature < 0
    cut = np.zeros(N, dtype=bool)
    pruning = np.ones(n_roots, dtype=bool)
    alive = np.ones(N, dtype=bool)
    while True:
        open_ = alive & ~leaf
        sub_err = _fold(np.where(leaf, err, 0.0), groups, open_)
        sub_leaves = _fold(leaf.astype(float), groups, open_)
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.where(open_, (err - sub_err) / (sub_leaves - 1), np.inf)
        weakest = np.full(n_roots, np.inf)
        np.minimum.at(weakest, job, g)
        pruning &= ~(weakest > alpha + _CP_TOL)  # no internal node: inf, stops too
        if not pruning.any():
            return cut
        now = open_ & pruning[job] & (g <= weakest[job] + _CP_TOL)
        cut |= now
        leaf = leaf | now
        for at in by_level:  # below a new leaf nothing is left
            alive[at] = alive[parent[at]] & ~leaf[parent[at]]


def apply_edits(learner: DecisionTree, forest: Forest, J: int) -> Forest:
    """The grown trees of J jobs (job i's rooted at node i of ``forest``) edited as the
    learner edits a tree: collapse on the shared DAG, then cp on each job's own tree."""
    if learner.collapse:
        forest = _with_leaves(forest, collapse_marks(forest, J))
    if learner.cp > 0:
        forest, parent, level = _expand(forest, J)
        forest = _with_leaves(forest, prune_cp_all(forest, parent, level, J, learner.cp))
    return forest


def reach_edited(forest: Forest, X: np.ndarray, x_rows: np.ndarray) -> ReachedLeaves:
    """The leaves x reaches in each job's edited tree: job i's x is row ``x_rows[i]`` of
    ``X``, its tree rooted at node i; x's weight in a leaf is its share (weight 1 times
    the fractions, as ``naive_leaves`` reads an edited tree)."""
    J = x_rows.size
    entry, leaf, share = route_weighted(X, x_rows, np.arange(J), forest.frac,
                                        forest.feature, forest.threshold, forest.kid_ptr,
                                        forest.kids, forest.vb_ptr, forest.vb)
    by = np.argsort(entry, kind="stable")  # each job's leaves in apply_weighted's order
    entry, leaf, share = entry[by], leaf[by], share[by]
    return ReachedLeaves(entry, share, forest.counts[leaf], share,
                         forest.counts[leaf].sum(axis=1))


def walkable(engine: BatchEngine, Xq: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """Per job, whether its grown tree comes from ``engine``'s certified walk
    (:mod:`treecert.transductive.walked_trees`): certified complete training data, x
    complete, leave-one-out only with integer weights (the path's counts are then exact),
    no ``max_depth`` (the cut subtrees are grown from depth 0)."""
    ok = engine.certified and engine.params.max_depth is None
    return ok & ~np.isnan(Xq).any(axis=1) & ((drop < 0) | engine.integral)


def batch_forest(engine: BatchEngine, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray,
                 finder, rank) -> Forest:
    """Every job's edited tree, job i's rooted at node i: x = ``Xq[i]`` (row n + i of
    ``finder``, ``engine._augmented``) with class ``labels[i]``, training row ``drop[i]``
    removed when >= 0 — from the certified walk when every job walks (at most
    :data:`~treecert.transductive.budget.PATH_ENTRIES` / (n + 1) jobs: one part of
    ``grow_batch``), else grown whole (:func:`grow_forest`). Without edits, the whole
    trees as :func:`grow_forest` grows them."""
    from treecert.transductive.walked_trees import walked_forest

    J = labels.size
    if J and has_edits(engine.learner) and walkable(engine, Xq, drop).all():
        jobs = engine.grow_batch(Xq, labels, drop)
        forest = walked_forest(engine, jobs, labels, drop, finder, rank)
    else:
        forest = grow_forest(finder, engine._roots(J, drop), rank)
    return apply_edits(engine.learner, forest, J)


class EditedEngine(BatchEngine):
    """The batched engine for learners with ``collapse`` or ``cp``: every batch of jobs
    grown as one DAG of whole trees, edited, x routed (module docstring). On complete data
    the DAG comes from the certified walk (:mod:`treecert.transductive.walked_trees`:
    the base tree shared, x's path and the subtrees below a changed test per job);
    elsewhere (:func:`walkable`) from :func:`~treecert.transductive.venn_forest.grow_forest`'s
    whole trees."""

    follows_edits = True

    def estimates(self, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray, *,
                  count_x: bool = True, alpha: float = 1.0, batch: int | None = None,
                  held_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Laplace estimate of x's leaves in the edited tree of every job, as
        :meth:`BatchEngine.estimates` (the same arguments; ``batch``, default 256, bounds
        the jobs whose whole trees are grown together; no ``held_out``)."""
        if held_out is not None:
            raise ValueError("collapse and cp edit whole trees: no held-out folds")
        batch = 256 if batch is None else batch
        J, K, n = Xq.shape[0], self.K, self.n
        out = np.empty((J, K))
        walk = walkable(self, Xq, drop)
        # bounded memory: each job's root holds every training row (and one part of
        # grow_batch: x of job i is row n + i of the augmented finder)
        per = max(1, budget.PATH_ENTRIES // (n + 1))
        for group, size in ((flat_nonzero(walk), per), (flat_nonzero(~walk),
                                                          min(batch, per))):
            for lo in range(0, group.size, size):
                part = group[lo:lo + size]
                finder, rank = self._augmented(Xq[part], labels[part])
                forest = batch_forest(self, Xq[part], labels[part], drop[part], finder, rank)
                reached = reach_edited(forest, finder.X, n + np.arange(part.size))
                out[part] = mix_laplace(reached, labels[part], part.size, K,
                                        count_x=count_x, alpha=alpha)
        return out
