"""The tree Venn machine for a whole batch of test objects at once.

The Venn machine needs, for every test object x and tentative label j, the tree grown on
D ∪ {(x, j)} (x ineligible for thresholds) — B·K trees per batch. Each differs from the tree
grown on D (the *base*) only on x's path and below it, and growing even that path one (x, j)
at a time is dominated by the fixed cost of one split search per node. Two devices remove
almost all of it, without changing a single result:

1. **A certificate that a node's test cannot change.** With information gain or Gini and no
   missing values, adding x (weight 1, class j) to a node of weight N changes N·impurity by
   ΔE_p at the node and by ΔE_b in the one branch b that x enters, so for the chosen test T1
   and any other test T2 (whose branch impurities can only grow, ΔE ≥ 0):

       (N + 1)(gain'(T1) − gain'(T2)) ≥ N (gain(T1) − gain(T2)) − ΔE_b(T1).

   ΔE_b(T1) is exact (x's branch of T1 and its counts are known), gain(T2) is bounded by the
   best *other* admissible test of the base node (computed once per base tree; x cannot make
   a test admissible). When the right side exceeds a margin far above rounding (1e-7·N), T1
   stays the chosen test and x's child is the base child — no split search.
2. **Batched exact searches.** Every node that is not certified — x's leaf when x's label
   makes it impure, nodes whose certificate fails, and every node of a subtree regrown
   below a changed test — is searched in one call of the split finder per round, over all
   (x, j) at once, exactly as the level-wise grower batches a level.

Results equal :meth:`TransductiveEngine.tree_with` / :meth:`TransductiveEngine.leaves` bit
for bit (``tests/test_venn.py`` checks it). Limits: numeric and nominal attributes without
missing values, criterion ``info_gain`` or ``gini``, no ``collapse``/``cp``; otherwise the
caller falls back to the engine one (x, j) at a time.
"""

from __future__ import annotations

import numpy as np

from treecert.grow import (
    GrownNodes,
    _Batch,
    _class_dtype,
    _index_dtype,
    branch_known_weights,
    grow,
    route_rows,
)
from treecert.leaf import leaf_proba
from treecert.methods.venn_types import venn_row_atoms
from treecert.schema import Dataset
from treecert.tree import DecisionTree, Tree

_LN2 = np.log(2.0)
#: Trees on fewer training rows are not certified (see ``TreeVennBatch._cert``).
_CERT_MIN_ROWS = 64


# ------------------------------------------------------------------------------ impurity
def _node_impurity(counts: np.ndarray, gini: bool) -> np.ndarray:
    """N·impurity of count rows (..., K): entropy in bits or Gini (as the grower)."""
    total = counts.sum(axis=-1)
    if gini:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, total - (counts * counts).sum(axis=-1) / total, 0.0)
    return (_xlogx(total) - _xlogx(counts).sum(axis=-1)) / _LN2


def _xlogx(a):
    a = np.asarray(a, dtype=float)
    out = np.zeros(a.shape)
    np.log(a, out=out, where=a > 0)
    return out * a


def _delta_impurity(counts: np.ndarray, j: np.ndarray, gini: bool) -> np.ndarray:
    """Change of N·impurity (n,) when one instance of class j[i] joins count row i."""
    total = counts.sum(axis=1)
    cj = counts[np.arange(counts.shape[0]), j]
    if gini:
        sq = (counts * counts).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            before = np.where(total > 0, total - sq / total, 0.0)
        after = (total + 1) - (sq + 2 * cj + 1) / (total + 1)
        return after - before
    h = lambda m: _xlogx(m + 1) - _xlogx(m)  # noqa: E731
    return (h(total) - h(cj)) / _LN2


# ------------------------------------------------------------------------------ batched search
def evaluate_nodes(finder, nodes: list[tuple[np.ndarray, np.ndarray]]) -> list:
    """Best split (or None) of every node ``(rows, weights)`` — one batched call of the
    grower's scorer, equal to ``finder.best_split`` node by node (rows sorted ascending)."""
    if not nodes:
        return []
    lens = np.array([r.size for r, _ in nodes], dtype=np.int64)
    rows = np.concatenate([r for r, _ in nodes])
    w = np.concatenate([v for _, v in nodes])
    seg = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=seg[1:])
    node = np.repeat(np.arange(lens.size), lens)
    we = None if finder.eligible is None else w * finder.eligible[rows]
    S = V = Y = None
    if finder.numeric_idx.size:
        XT = finder.X[np.ix_(rows, finder.numeric_idx)].T
        S = np.empty(XT.shape, dtype=_index_dtype(rows.size))
        for k in range(XT.shape[0]):  # stable within each node, as the grower sorts
            S[k] = np.lexsort((XT[k], node))
        V = np.take_along_axis(XT, S, axis=1)
        Y = finder.y.astype(_class_dtype(finder.n_classes))[rows][S]
    choice = finder._evaluate(_Batch(seg, rows, w, we, S, V, Y))
    return [choice.split(g) for g in range(lens.size)]


def _stopped(finder, rows, w, counts, depth) -> bool:
    """The grower's stopping rules (as :func:`treecert.engine._stop`)."""
    from treecert.engine import _stop

    return _stop(finder, rows, w, counts, depth)


def _same_split(split, tree: Tree, v: int) -> bool:
    if split is None or tree.feature[v] != split.feature:
        return False
    t = tree.threshold[v]
    if np.isnan(split.threshold) != np.isnan(t):
        return False
    if not np.isnan(t):
        return bool(split.threshold == t)
    vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
    return split.value_branch is not None and np.array_equal(split.value_branch, vb)


def grow_many(finder, roots: list[tuple[np.ndarray, np.ndarray, int]]) -> list[GrownNodes]:
    """Grow a tree from each root ``(rows, weights, depth)`` — rows sorted, no missing values
    among them — all at once: level by level, one batched split search per level.

    Each result equals ``grow(finder, rows, weights, depth=depth)`` node for node (same tests,
    counts, rows), with nodes numbered breadth-first.
    """
    X, y, K = finder.X, finder.y, finder.n_classes
    params = finder.params
    ml = float(params.min_leaf)
    # per root: node lists
    nodes: list[list[dict]] = [[] for _ in roots]
    frontier = []  # (root, node index in root)
    for r, (rows, w, depth) in enumerate(roots):
        nodes[r].append({"rows": rows, "w": w, "depth": depth, "children": []})
        frontier.append((r, 0))
    while frontier:
        active = []
        for r, i in frontier:
            nd = nodes[r][i]
            cnt = np.bincount(y[nd["rows"]], weights=nd["w"], minlength=K).astype(float)
            nd["counts"] = cnt
            total = cnt.sum()
            elig = nd["w"].sum() if finder.eligible is None else (
                nd["w"] * finder.eligible[nd["rows"]]).sum()
            stop = (total <= 0 or elig < 2 * ml
                    or cnt.max() >= total - 1e-9 * max(total, 1.0)
                    or (params.max_depth is not None and nd["depth"] >= params.max_depth))
            nd["split"] = None
            if not stop:
                active.append((r, i))
        splits = evaluate_nodes(finder, [(nodes[r][i]["rows"], nodes[r][i]["w"])
                                         for r, i in active])
        frontier = []
        for (r, i), split in zip(active, splits, strict=True):
            if split is None:
                continue
            nd = nodes[r][i]
            nd["split"] = split
            vals = X[nd["rows"], split.feature]
            if split.value_branch is None:
                branch = (vals > split.threshold).astype(np.int64)
            else:
                branch = split.value_branch[vals.astype(np.int64)]
            for b in range(split.n_branches):
                sel = branch == b
                nodes[r].append({"rows": nd["rows"][sel], "w": nd["w"][sel],
                                 "depth": nd["depth"] + 1, "children": []})
                nd["children"].append(len(nodes[r]) - 1)
                frontier.append((r, len(nodes[r]) - 1))
    out = []
    for lst in nodes:
        for nd in lst:  # nodes never searched (stopped) are leaves
            nd.setdefault("split", None)
        out.append(_to_grown(lst, K))
    return out


def _to_grown(lst: list[dict], K: int) -> GrownNodes:
    n = len(lst)
    feature = np.array([-1 if nd["split"] is None else nd["split"].feature for nd in lst],
                       dtype=np.int64)
    threshold = np.array([np.nan if nd["split"] is None else nd["split"].threshold
                          for nd in lst], dtype=float)
    vb = [np.empty(0, np.int64) if nd["split"] is None or nd["split"].value_branch is None
          else np.asarray(nd["split"].value_branch, np.int64) for nd in lst]
    ch = [np.asarray(nd["children"], np.int64) for nd in lst]
    lens = np.array([nd["rows"].size for nd in lst], dtype=np.int64)
    return GrownNodes(
        feature=feature, threshold=threshold,
        children_ptr=np.concatenate([[0], np.cumsum([c.size for c in ch])]).astype(np.int64),
        children=np.concatenate([np.empty(0, np.int64), *ch]),
        value_branch_ptr=np.concatenate([[0], np.cumsum([v.size for v in vb])]).astype(np.int64),
        value_branch=np.concatenate([np.empty(0, np.int64), *vb]),
        counts=np.array([nd["counts"] for nd in lst], dtype=float).reshape(n, K),
        depth=np.array([nd["depth"] for nd in lst], dtype=np.int64),
        rows_ptr=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
        rows_idx=np.concatenate([np.empty(0, np.int64), *[nd["rows"] for nd in lst]]),
        rows_w=np.concatenate([np.empty(0), *[nd["w"] for nd in lst]]),
    )


# ------------------------------------------------------------------------------ the machine
class _Sub:
    """A tree grown on training rows alone (the base tree, or a subtree that a changed test
    created), shared by every (x, j) whose tree contains it."""

    def __init__(self, grown, n: int) -> None:
        self.tree = Tree.from_grown(grown)
        g = grown
        nn = self.tree.n_nodes
        self.rows = [g.rows_idx[g.rows_ptr[v]:g.rows_ptr[v + 1]] for v in range(nn)]
        self.w = [g.rows_w[g.rows_ptr[v]:g.rows_ptr[v + 1]] for v in range(nn)]
        self.depth = g.depth
        self.n_inst = np.diff(g.rows_ptr).astype(float)
        self.leaf_of_row = np.full(n, -1, dtype=np.int64)
        for v in np.flatnonzero(self.tree.is_leaf):
            self.leaf_of_row[self.rows[v]] = v
        self.leaves = np.flatnonzero(self.tree.is_leaf & (self.n_inst > 0))
        self.cert = None

    def child_of(self, v: int, x: np.ndarray) -> int:
        t = self.tree
        f = t.feature[v]
        if np.isnan(t.threshold[v]):
            b = t.value_branch[t.value_branch_ptr[v] + int(x[f])]
        else:
            b = int(x[f] > t.threshold[v])
        return int(t.children[t.children_ptr[v] + b])


def certificates(sub: _Sub, data: Dataset, params, gini: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node of ``sub``: weight N, gain of the chosen test, and its margin over every
    other admissible test (inf when it is the only one); NaN for leaves. Admissible: both
    sides of a numeric cut, or two values of a multiway test, or the value and the rest of
    a binary test, hold at least ``min_leaf`` weight (the grower's rules; x's weight never
    counts, so x changes no admissibility)."""
    tree, X, y = sub.tree, data.X, data.y.astype(np.int64)
    K = data.schema.n_classes
    ml = float(params.min_leaf)
    nn = tree.n_nodes
    internal = np.flatnonzero(~tree.is_leaf)
    N = tree.counts.sum(axis=1)
    ig1 = np.full(nn, np.nan)
    gap = np.full(nn, np.nan)
    if internal.size == 0:
        return N, ig1, gap
    G = internal.size
    pc = tree.counts[internal]
    e_par = _node_impurity(pc, gini)
    e_all = _node_impurity(tree.counts, gini)
    nonroot = np.flatnonzero(tree.parent >= 0)
    child_e = np.bincount(tree.parent[nonroot], weights=e_all[nonroot], minlength=nn)[internal]
    Ng = N[internal]
    ig1[internal] = (e_par - child_e) / Ng
    best = np.full(G, -np.inf)
    lens = np.array([sub.rows[v].size for v in internal])
    rows = np.concatenate([sub.rows[v] for v in internal])
    w = np.concatenate([sub.w[v] for v in internal])
    seg = np.repeat(np.arange(G), lens)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    feat = tree.feature[internal]
    thr = tree.threshold[internal]
    onehot = np.zeros((rows.size, K))
    onehot[np.arange(rows.size), y[rows]] = w
    for f, attr in enumerate(data.schema.attributes):
        vals = X[rows, f]
        mine = feat == f
        if not attr.is_nominal:
            order = np.lexsort((vals, seg))
            sv, sg = vals[order], seg[order]
            cum = np.cumsum(onehot[order], axis=0)
            off = np.zeros((G, K))
            off[1:] = cum[starts[1:] - 1]
            left = cum - off[sg]
            right = pc[sg] - left
            ok = np.zeros(rows.size, dtype=bool)
            ok[:-1] = (sg[:-1] == sg[1:]) & (sv[:-1] < sv[1:])
            ok &= (left.sum(axis=1) >= ml) & (right.sum(axis=1) >= ml)
            if mine.any():  # leave out the chosen cut itself
                t = thr[sg]
                nxt = np.r_[sv[1:], np.inf]
                ok &= ~(mine[sg] & (sv <= t) & (t < nxt))
            if ok.any():
                i = np.flatnonzero(ok)
                gains = (e_par[sg[i]] - _node_impurity(left[i], gini)
                         - _node_impurity(right[i], gini)) / Ng[sg[i]]
                np.maximum.at(best, sg[i], gains)
            continue
        V = len(attr.values)
        cnt = np.bincount((seg * V + vals.astype(np.int64)) * K + y[rows], weights=w,
                          minlength=G * V * K).reshape(G, V, K)
        bw = cnt.sum(axis=2)
        if not params.binary_splits:
            ok = ((bw >= ml).sum(axis=1) >= 2) & ~mine
            gains = (e_par - _node_impurity(cnt, gini).sum(axis=1)) / Ng
            best = np.where(ok, np.maximum(best, gains), best)
            continue
        rest = pc[:, None, :] - cnt
        okv = (bw >= ml) & (rest.sum(axis=2) >= ml)
        for g in np.flatnonzero(mine):
            v = internal[g]
            vb = tree.value_branch[tree.value_branch_ptr[v]:tree.value_branch_ptr[v + 1]]
            okv[g, vb == 0] = False
        gains = (e_par[:, None] - _node_impurity(cnt, gini)
                 - _node_impurity(rest, gini)) / Ng[:, None]
        best = np.maximum(best, np.where(okv, gains, -np.inf).max(axis=1))
    gap[internal] = ig1[internal] - best
    return N, ig1, gap


class TreeVennBatch:
    """Trees on D ∪ {(x, j)} for a batch of x and every label j.

    Every such tree is a path of nodes holding x plus subtrees without x hanging off it.
    A subtree without x depends only on its training rows, so it is grown once (``_Sub``,
    memoised by its rows) and shared; along the path the test is certified unchanged or
    found by a batched exact search (module docstring).

    Parameters
    ----------
    data : labelled training Dataset without missing values.
    learner : the DecisionTree giving the growing parameters (info_gain or gini, no
        collapse, cp = 0).
    """

    def __init__(self, data: Dataset, learner: DecisionTree) -> None:
        self.data = data
        self.learner = learner
        self.params = learner.grow_params
        self.gini = learner.criterion == "gini"
        self.n, self.K = data.n_samples, data.schema.n_classes
        self.finder = learner.make_finder(data, eligible=np.ones(self.n, dtype=bool))
        self.subs: list[_Sub | None] = []
        self.memo: dict[tuple, int] = {}
        self._pending: list = []
        rows, w = np.arange(self.n), data.weights.astype(float)
        self.subs.append(_Sub(grow(self.finder, rows, w), self.n))  # the grower's own tree
        self.memo[(rows.tobytes(), w.tobytes(), 0)] = self.base = 0

    @staticmethod
    def supports(data: Dataset, learner: DecisionTree) -> bool:
        return (learner.criterion in ("info_gain", "gini") and not learner.collapse
                and learner.cp <= 0 and not np.isnan(data.X).any())

    def sub(self, rows: np.ndarray, w: np.ndarray, depth: int) -> int:
        """Id of the tree grown on training ``rows`` (sorted) at ``depth`` (memoised). New
        trees are grown together by :meth:`grow_pending`."""
        key = (rows.tobytes(), w.tobytes(), depth if self.params.max_depth is not None else 0)
        if key not in self.memo:
            self.subs.append(None)
            self.memo[key] = len(self.subs) - 1
            self._pending.append((len(self.subs) - 1, rows, w, depth))
        return self.memo[key]

    def grow_pending(self) -> None:
        todo, self._pending = self._pending, []
        if todo:
            grown = grow_many(self.finder, [(r, w, d) for _, r, w, d in todo])
            for (s, *_), g in zip(todo, grown, strict=True):
                self.subs[s] = _Sub(g, self.n)

    def _cert(self, s: int):
        sub = self.subs[s]
        if sub.cert is None:
            if sub.rows[0].size >= _CERT_MIN_ROWS:
                sub.cert = certificates(sub, self.data, self.params, self.gini)
            else:  # small trees: an exact (batched) search costs less than certifying
                nn = sub.tree.n_nodes
                sub.cert = (sub.tree.counts.sum(axis=1), np.zeros(nn), np.full(nn, -np.inf))
        return sub.cert

    # -------------------------------------------------------------- growing
    def grow_batch(self, Q: np.ndarray, *, paths_only: bool) -> list[dict]:
        """Follow x's path in the tree on D ∪ {(x, j)} for every row x of ``Q`` and label j.

        x first walks the base tree, where each test is certified unchanged or searched
        exactly; from the first node whose test changes (``cut``, a base node) its path is
        grown explicitly, one batched exact search per step, and the subtrees without x
        hanging off it are grown (memoised, all together) when ``paths_only`` is false.
        Job b·K + j gets ``x_counts`` / ``x_inst`` (class counts and number of examples of
        x's leaf, x included), ``cut`` (-1: the structure did not change), ``base_leaf``
        (x's leaf in the base tree when ``cut`` is -1) and ``hanging`` (sub ids).
        """
        n, K = self.n, self.K
        B = Q.shape[0]
        J = B * K
        data = self.data
        X_aug = np.vstack([data.X, np.repeat(Q, K, axis=0)])
        labels = np.tile(np.arange(K), B)
        y_aug = np.concatenate([data.y.astype(np.int64), labels])
        elig = np.concatenate([np.ones(n, dtype=bool), np.zeros(J, dtype=bool)])
        finder = self.learner.make_finder(data, eligible=elig, X=X_aug, y=y_aug)
        Xq = X_aug[n:]
        base = self.subs[self.base]
        jobs = [{"cut": -1, "base_leaf": -1, "hanging": []} for _ in range(J)]
        node = np.zeros(J, dtype=np.int64)
        walking = np.ones(J, dtype=bool)
        explicit: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        while True:
            pending = self._walk(node, walking, labels, Xq, jobs)
            items = [(job, u, self._with_x(u, n + job)) for job, u in pending]
            for job, (rows, w, depth) in explicit.items():
                cnt = np.bincount(y_aug[rows], weights=w, minlength=K).astype(float)
                if _stopped(finder, rows, w, cnt, depth):
                    self._end(jobs[job], cnt, rows.size)
                else:
                    items.append((job, -1, (rows, w, depth)))
            explicit = {}
            if not items:
                break
            splits = evaluate_nodes(finder, [(rw[0], rw[1]) for _, _, rw in items])
            for (job, u, (rows, w, depth)), split in zip(items, splits, strict=True):
                if u >= 0:  # a node of the base tree
                    leaf = bool(base.tree.is_leaf[u])
                    if not leaf and _same_split(split, base.tree, u):
                        node[job] = base.child_of(u, Xq[job])
                        walking[job] = True
                        continue
                    if split is None and leaf:
                        jobs[job]["base_leaf"] = u
                        self._end(jobs[job], base.tree.counts[u] + np.eye(K)[labels[job]],
                                  base.n_inst[u] + 1)
                        continue
                    jobs[job]["cut"] = u
                if split is None:  # explicit leaf, or a base test x made inadmissible
                    cnt = np.bincount(y_aug[rows], weights=w, minlength=K).astype(float)
                    self._end(jobs[job], cnt, rows.size)
                    continue
                q = n + job
                for cr, cw in route_rows(X_aug, rows, w, split,
                                         branch_known_weights(X_aug, rows, w, split)):
                    if cr.size and cr[-1] == q:
                        explicit[job] = (cr, cw, depth + 1)
                    elif cr.size and not paths_only:
                        jobs[job]["hanging"].append(self.sub(cr, cw, depth + 1))
        self.grow_pending()
        return jobs

    def _with_x(self, u: int, q: int) -> tuple[np.ndarray, np.ndarray, int]:
        base = self.subs[self.base]
        return (np.concatenate([base.rows[u], [q]]), np.concatenate([base.w[u], [1.0]]),
                int(base.depth[u]))

    @staticmethod
    def _end(job: dict, counts: np.ndarray, n_inst: float) -> None:
        job["x_counts"] = counts
        job["x_inst"] = float(n_inst)

    def _walk(self, node, walking, labels, Xq, jobs):
        """Move walking jobs down certified tests of the base tree; returns the (job, node)
        pairs that need an exact search (jobs ending in a leaf that x cannot split are
        settled)."""
        ml = float(self.params.min_leaf)
        max_depth = self.params.max_depth
        min_gain = max(float(self.params.min_gain), 0.0)
        base = self.subs[self.base]
        tree = base.tree
        N, ig1, gap = self._cert(self.base)
        eye = np.eye(self.K)
        pending = []
        while walking.any():
            act = np.flatnonzero(walking)
            v = node[act]
            j = labels[act]
            leaf = tree.is_leaf[v]
            for job, vv, jj in zip(act[leaf], v[leaf], j[leaf], strict=True):
                walking[job] = False
                c = tree.counts[vv] + eye[jj]
                total = c.sum()
                stop = (tree.counts[vv].sum() < 2 * ml  # x's weight is not eligible
                        or c.max() >= total - 1e-9 * max(total, 1.0)
                        or (max_depth is not None and base.depth[vv] >= max_depth))
                if stop:
                    jobs[job]["base_leaf"] = int(vv)
                    self._end(jobs[job], c, base.n_inst[vv] + 1)
                else:
                    pending.append((int(job), int(vv)))
            act, v, j = act[~leaf], v[~leaf], j[~leaf]
            if not act.size:
                break
            child = np.array([base.child_of(int(vv), Xq[job])
                              for job, vv in zip(act, v, strict=True)], dtype=np.int64)
            d_b = _delta_impurity(tree.counts[child], j, self.gini)
            d_p = _delta_impurity(tree.counts[v], j, self.gini)
            Nv = N[v]
            ok = Nv * gap[v] - d_b > 1e-7 * np.maximum(Nv, 1.0)
            ok &= (Nv * ig1[v] + d_p - d_b) / (Nv + 1.0) > min_gain + 1e-7
            node[act[ok]] = child[ok]
            walking[act[~ok]] = False
            pending.extend((int(job), int(vv)) for job, vv in zip(act[~ok], v[~ok], strict=True))
        return pending

    # -------------------------------------------------------------- Venn rows
    def venn_matrices(self, Q: np.ndarray, taxonomy: str, kind: str, alpha: float,
                      m: float, columns: list[int]) -> np.ndarray:
        """Venn matrices (B, K, K) of the rows of ``Q``."""
        K = self.K
        B = Q.shape[0]
        jobs = self.grow_batch(Q, paths_only=(taxonomy == "leaf"))
        out = np.empty((B, K, K))
        for b in range(B):
            for j in range(K):
                job = jobs[b * K + j]
                if taxonomy == "leaf":  # the leaf's frequencies, normalised as the engine's
                    row = job["x_counts"] / job["x_counts"].sum()
                    out[b, j] = row / row.sum()
                    continue
                counts, n_inst, x_atom = self._atoms(job)
                values = self._forecasts(counts, j, kind, alpha, m)
                out[b, j] = venn_row_atoms(values, counts, n_inst, x_atom, columns)
        return out

    def _atoms(self, job):
        """(counts, n_inst, x_atom) of the groups of examples sharing a leaf of the tree on
        D ∪ {(x, j)}: the base leaves outside ``cut``, the hanging subtrees' leaves, and x's
        leaf with x."""
        base = self.subs[self.base]
        keep = base.leaves
        if job["cut"] >= 0:
            gone = np.zeros(base.tree.n_nodes, dtype=bool)
            gone[base.leaf_of_row[base.rows[job["cut"]]]] = True
            keep = keep[~gone[keep]]
        elif job["base_leaf"] >= 0:
            keep = keep[keep != job["base_leaf"]]
        parts_c = [base.tree.counts[keep]]
        parts_n = [base.n_inst[keep]]
        for s in job["hanging"]:
            sub = self.subs[s]
            parts_c.append(sub.tree.counts[sub.leaves])
            parts_n.append(sub.n_inst[sub.leaves])
        parts_c.append(job["x_counts"][None, :])
        parts_n.append(np.array([job["x_inst"]]))
        counts = np.vstack(parts_c)
        return counts, np.concatenate(parts_n), counts.shape[0] - 1

    def _forecasts(self, counts, j, kind, alpha, m):
        """Leaf estimates of the atoms, normalised exactly as ``Tree.predict_proba`` does."""
        prior = None
        if kind == "m_estimate":
            root = self.subs[self.base].tree.counts[0].copy()
            root[j] += 1.0
            prior = root / root.sum()
        est = leaf_proba(counts, kind, alpha=alpha, m=m, prior=prior)
        return est / est.sum(axis=1, keepdims=True)
