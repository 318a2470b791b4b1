"""Whole grown trees on D ∪ {(x, c)} from the certified walk, for the edits of
:mod:`treecert.transductive.edited_trees` on complete data.

On complete data the tree grown on D ∪ {(x, c)} is the base tree (grown on D once) except on
x's path: :meth:`~treecert.transductive.batch_engine.BatchEngine.grow_batch` walks x down
the base tree, keeping every test it certifies or finds unchanged, to ``cut`` — the first
node whose test changes (or that x's label lets split, or that stops once a row is dropped)
— or, when nothing changes, to x's leaf. Above ``cut`` a node's test and children are the
base node's: x and its class only add to the counts of the nodes on its path (and a
leave-one-out row, with x's values, leaves only those), and every child off the path holds
the base child's rows, so its subtree *is* the base subtree. Below ``cut`` the tree is the
one grown on cut's rows and x, at cut's depth.

:func:`walked_forest` writes exactly that as one DAG: per job a copy of each base node on x's
path with its counts changed (base counts + e_c − w_r·e_{y_r}: the grower's sums, since x is
the last row of every node it is in and leave-one-out is served only with integer weights),
the base tree's nodes shared by every job, and the subtrees below the cut nodes grown
together (:func:`~treecert.transductive.venn_forest.grow_forest`). The edits then run on it as
on any forest of whole trees. The searches are those of the certified walk plus the cut
subtrees — not the whole trees.
"""

from __future__ import annotations

import numpy as np

from treecert.transductive.node_search import branch_fractions
from treecert.transductive.venn_forest import Forest, grow_forest
from treecert.tree.segments import _ranges, flat_nonzero, offsets


def _child_slots(ptr: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``ptr[u]..ptr[u + 1]`` of every node u in ``nodes``, in order
    (:func:`~treecert.tree.segments._ranges`), and each position's offset within its node
    (its branch)."""
    n_kids = ptr[nodes + 1] - ptr[nodes]
    pos = _ranges(ptr[nodes], n_kids)
    return pos, pos - np.repeat(ptr[nodes], n_kids)


def walked_forest(engine, jobs: list[dict], labels: np.ndarray, drop: np.ndarray, finder,
                  rank) -> Forest:
    """Every job's grown tree, job i's rooted at node i (module docstring). ``jobs`` are
    :meth:`~treecert.transductive.batch_engine.BatchEngine.grow_batch`'s for the batch
    (one part: x of job i is row ``n + i`` of ``finder``), ``engine`` the BatchEngine."""
    J, n, K = labels.size, engine.n, engine.K
    base = engine.base_sub
    t = base.tree
    NB = t.n_nodes
    cut = np.array([job["cut"] for job in jobs], dtype=np.int64)
    end = np.where(cut >= 0, cut, np.array([job["base_leaf"] for job in jobs], np.int64))
    # the subtrees below the cut nodes, grown together
    cj = flat_nonzero(cut >= 0)
    sub = (grow_forest(finder, [engine._with_x(int(cut[i]), n + int(i), int(drop[i]))[:2]
                                for i in cj], rank) if cj.size else _no_trees(K))
    ND = sub.counts.shape[0]
    sub_root = np.full(J, -1, dtype=np.int64)
    sub_root[cj] = np.arange(cj.size)
    # x's path in the base tree: anc[i, d] is job i's node at depth d
    depth_end = t.node_depth[end]
    anc = np.full((J, int(depth_end.max(initial=0)) + 1), -1, dtype=np.int64)
    cur = end.copy()
    for k in range(anc.shape[1]):
        at = flat_nonzero(depth_end >= k)
        anc[at, depth_end[at] - k] = cur[at]
        cur[at] = t.parent[cur[at]]
    n_copies = depth_end + (cut < 0)  # the path above the cut, or down to x's leaf
    on = np.arange(anc.shape[1])[None, :] < n_copies[:, None]
    c_job, c_depth = np.nonzero(on)  # job-major, root first: copy k + 1 is k's x-child
    c_node = anc[on]
    C = c_node.size
    # counts: x's class added, a leave-one-out row's removed
    eye = np.eye(K)
    r = np.maximum(drop, 0)
    delta = eye[labels] - np.where(drop >= 0, engine.w[r], 0.0)[:, None] * eye[engine.y[r]]
    counts = np.vstack([t.counts[c_node] + delta[c_job], t.counts, sub.counts])
    # edges: a copy's children are the base node's, but for x's child (the next copy or
    # the job's cut subtree); then the base tree's and the cut subtrees'
    inner = flat_nonzero(t.feature[c_node] >= 0)
    pos, branch = _child_slots(t.children_ptr, c_node[inner])
    parent = np.repeat(inner, np.diff(t.children_ptr)[c_node[inner]])
    child = t.children[pos]
    x_child = anc[c_job[parent], c_depth[parent] + 1]
    target = C + child
    is_x = child == x_child
    nxt_copy = is_x & (c_depth[parent] + 1 < n_copies[c_job[parent]])
    target[nxt_copy] = parent[nxt_copy] + 1
    to_sub = is_x & ~nxt_copy
    target[to_sub] = C + NB + sub_root[c_job[parent[to_sub]]]
    b_parent = np.repeat(np.arange(NB), np.diff(t.children_ptr))
    s_parent = np.repeat(np.arange(ND), np.diff(sub.kid_ptr))
    e_parent = np.concatenate([parent, C + b_parent, C + NB + s_parent])
    e_branch = np.concatenate([branch, np.arange(t.children.size) - t.children_ptr[b_parent],
                               np.arange(sub.kids.size) - sub.kid_ptr[s_parent]])
    e_child = np.concatenate([target, C + t.children, C + NB + sub.kids])
    # job i's root first, at node i
    first = np.cumsum(n_copies) - n_copies
    roots = np.where(n_copies > 0, first, C + NB + sub_root)
    N = C + NB + ND
    rest = np.ones(N, dtype=bool)
    rest[roots] = False
    new_id = np.empty(N, dtype=np.int64)
    new_id[np.concatenate([roots, flat_nonzero(rest)])] = np.arange(N)
    old = np.empty(N, dtype=np.int64)
    old[new_id] = np.arange(N)
    e_parent, e_child = new_id[e_parent], new_id[e_child]
    by = np.lexsort((e_branch, e_parent))
    e_parent, e_branch, e_child = e_parent[by], e_branch[by], e_child[by]
    kid_ptr = offsets(np.bincount(e_parent, minlength=N))
    counts = counts[old]
    feature = np.concatenate([t.feature[c_node], t.feature, sub.feature])[old]
    threshold = np.concatenate([t.threshold[c_node], t.threshold, sub.threshold])[old]
    vb_ptr = np.concatenate([t.value_branch_ptr[c_node], t.value_branch_ptr[:NB],
                             sub.vb_ptr[:ND] + t.value_branch.size])[old]
    vb = np.concatenate([t.value_branch, sub.vb])
    frac = branch_fractions(e_parent, e_branch, counts.sum(axis=1)[e_child], N)
    # ``est``: the counts (no complete x or training row reaches an empty node)
    return Forest(counts, feature, threshold, vb_ptr, vb, kid_ptr, e_child, frac, counts)


def _no_trees(K: int) -> Forest:
    """A forest of no trees."""
    empty = np.empty(0, np.int64)
    return Forest(np.empty((0, K)), empty, np.empty(0), np.zeros(1, np.int64), empty,
                  np.zeros(1, np.int64), empty, np.empty(0), np.empty((0, K)))
