"""The batched transductive engine: x's leaf in the tree grown on D ∪ {(x, c)} for many
(x, c) at once — and, for leave-one-out, in the tree grown on (D − {x_i}) ∪ {(x_i, c)}.
(Not to be confused with batch TPCE, :mod:`treecert.methods.tpce_batch`, a method.)

Every such tree differs from the tree grown on D (the *base*) only on x's path and below
it, and growing even that path one (x, c) at a time is dominated by the fixed cost of one
split search per node. Four parts remove almost all of it without changing a single
result (``tests/test_batch_engine.py`` checks bit-identity with the naive reference):

1. **The competitor bound: a table of every other test's best case.** x is ineligible for
   thresholds, so the candidate tests of a node holding x are the base node's, and x only
   adds its class c (weight 1) to one branch of each. For each base node and each class
   change d, :class:`~treecert.transductive.certificates.Competitors` gives, vectorised over
   the nodes walked, the largest gain any test other than the chosen T1 can reach with d on
   whichever branch suits it best; T1's own gain with x is exact (x's branch of T1 is
   known). When T1 leads by more than 1e-9 (the grower compares gains rounded to 10
   decimals) it stays the chosen test and x's child is the base child. Leave-one-out swaps x
   for its own row r (same values, so the same side of every test, d = e_c − e_{y_r}): the
   new candidates are old tests with r replaced by x on r's side — a subset of what the
   table scores — unless r alone sets T1's threshold or T1's admissibility, which is checked
   (:meth:`BatchEngine._drop_safe`); with c = y_r nothing changes at all.
2. **Exact rescoring where x's position matters.** Where the table is not enough — a
   competitor close to T1 — every candidate of the node is rescored for x's actual
   position (:class:`~treecert.transductive.node_scores.NodeScores`): with a column's
   cuts sorted, those left of x and those right of it are two ranges, and prefix/suffix
   maxima give the best per column in O(1) per x. Exact ties of T1 with a later column
   splitting the rows identically are settled as the grower settles them (lower wins).
3. **The batched search.** Every node that is not certified — x's leaf when x's label
   makes it impure, nodes whose certificate fails, and every node of a subtree regrown
   below a changed test — is searched in one call of the grower's split finder per round,
   over all (x, c) at once, exactly as the level-wise grower batches a level
   (:func:`~treecert.transductive.node_search.evaluate_nodes`, in parts of at most
   :data:`~treecert.transductive.node_search.SEARCH_CELLS` rows × attributes, to bound
   memory); the Venn machine's subtrees without x hanging off the paths
   (:class:`~treecert.transductive.leaf_forest.LeafForest`) grow in the same rounds.
4. **The label search: one search shared by the labels of one x.** The nodes x's jobs
   search hold the same training rows R for every label that reaches them; R's cut tables
   are built once, kept per R (many x change a test to the same competitor), and only the
   side holding x is rescored per label, with the grower's arithmetic and choice
   (:mod:`treecert.transductive.label_search`; any criterion, J48's gain-ratio selection
   included, integer weights; elsewhere the batched search; large hanging nodes too).

The four live in :mod:`~treecert.transductive.certificates`,
:mod:`~treecert.transductive.node_scores`, :mod:`~treecert.transductive.node_search` and
:mod:`~treecert.transductive.label_search` (the Venn rows' repeated R: its sibling
:mod:`~treecert.transductive.sided_search`), the hanging subtrees in
:mod:`~treecert.transductive.leaf_forest`; the walk down the base tree's certified
tests (the competitor bound, then exact rescoring) in
:mod:`~treecert.transductive.base_walk`; this module follows x's paths with them. With
``gain_ratio`` the bound and the rescoring give way to
:class:`~treecert.transductive.ratio_scores.RatioScores` (J48's whole selection replayed on
intervals; complete data, integer weights, no leave-one-out swap). Missing values in D or
x (C4.5's fractional instances) go to the exact batched paths
(:mod:`~treecert.transductive.exact_paths`, every node on x's paths searched, a level of all
jobs per call). ``collapse``/``cp`` edit whole trees after growth: the subclass
:class:`~treecert.transductive.edited_trees.EditedEngine` grows a batch's trees as one DAG
and edits them (the engine front picks the subclass).

Memory is bounded by the training data, never by the number of test rows
(:mod:`~treecert.transductive.budget` gives the formula): certificate tables, rescoring
tables and the Venn machine's hanging leaves and splits are cached within byte budgets
(least recently used out, between batches) and a batch is grown in parts of at most
:data:`~treecert.transductive.budget.WALK_ENTRIES` rows × jobs (the exact paths'
:data:`~treecert.transductive.budget.PATH_ENTRIES`); the budgets change no result
(``tests/test_engine_budget.py``).
"""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.transductive import budget, engine_registry, held_out_folds, label_search, node_search
from treecert.transductive.base_walk import BaseWalk
from treecert.transductive.budget import key_bytes
from treecert.transductive.certificates import BaseTree, Competitors
from treecert.transductive.exact_paths import ReachedLeaves, mix_laplace, reach_leaves
from treecert.transductive.leaf_forest import LeafForest
from treecert.transductive.node_search import (
    appended_ranks,
    evaluate_nodes,
    feature_column,
    node_counts_stops,
    sorted_columns,
)
from treecert.tree.classifier import DecisionTree
from treecert.tree.grow import grow
from treecert.tree.segments import flat_nonzero


class BatchEngine(BaseWalk):
    """Trees on D ∪ {(x, c)} — or (D − {row r}) ∪ {(x, c)} — for many jobs (x, c[, r]).

    Every such tree is a path of nodes holding x plus subtrees without x hanging off it.
    A subtree without x depends only on its training rows, so it is grown once (its leaves
    only, :class:`LeafForest`, memoised by its rows' derivation, :meth:`_child_key`) and
    shared; along the path the test is
    certified unchanged (module docstring: the competitor bound or exact rescoring) or found
    by the batched search.

    Parameters
    ----------
    data : labelled training Dataset without missing values.
    learner : the DecisionTree giving the growing parameters (collapse and cp:
        :class:`~treecert.transductive.edited_trees.EditedEngine`).
    """

    #: Trees on fewer training rows skip the competitor bound (an exact search costs less);
    #: tests set it to 0 to exercise the certificates on small data.
    cert_min_rows = 64
    #: Nodes lighter than this skip exact rescoring: the batched search costs less there.
    rescore_min_rows = 64
    #: Whether :meth:`estimates` applies collapse and cp (only the subclass that does).
    follows_edits = False

    def __init__(self, data: Dataset, learner: DecisionTree) -> None:
        self.data = data
        self.learner = learner
        self.params = learner.grow_params
        self.gini = learner.criterion == "gini"
        self.ratio = learner.criterion == "gain_ratio"
        self.n, self.K = data.n_samples, data.schema.n_classes
        self.y = data.y.astype(np.int64)
        self.w = data.weights.astype(float)
        self.finder = learner.make_finder(data, eligible=np.ones(self.n, dtype=bool))
        #: hanging subtrees' rows -> id in :attr:`leaf_sets` (bounded, between batches)
        self.memo = budget.ByteLRU(budget.LEAF_BYTES, on_evict=self._forget_leaf_set)
        self._next_leaf_set = 0
        self._rank_d: dict[int, np.ndarray] = {}  # numeric column -> stable ranks over D
        self._scores = budget.ByteLRU(budget.SCORE_BYTES)
        self._comp: Competitors | None = None
        self._t1 = None
        self._gains: tuple[np.ndarray, np.ndarray] | None = None
        self._labels_shared: bool | None = None  # the label search applies (:meth:`_search`)
        #: the label search's tables of searched rows (:class:`cut_tables.NodeTable`)
        self._tables = budget.ByteLRU(budget.TABLE_BYTES)
        #: x's nodes below changed tests: their training rows by key (:meth:`_x_child`),
        #: class counts and light flags by (key, x's weight) (``node_counts_stops``)
        self._x_nodes = budget.ByteLRU(budget.CHILD_BYTES)
        #: the Venn machine's hanging nodes' splits (:func:`label_search.search_alone`)
        self._splits = budget.ByteLRU(budget.SPLIT_BYTES)
        # Leave-one-out subtracts row r's weight from base counts: exact for integer weights.
        self.integral = bool(np.all(self.w == np.round(self.w)) and self.w.sum() < 2.0**50)
        self.certified = self.certifies(data, learner)
        rows, w = np.arange(self.n), self.w
        # the grower's own tree, walked by (x, c) on complete data (:meth:`grow_batch`)
        self.base_sub = (BaseTree(grow(self.finder, rows, w), self.n)
                         if not np.isnan(data.X).any() else None)
        #: leaves (counts, n_rows) of the subtrees hanging off x's paths (Venn machine)
        self.leaf_sets: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _forget_leaf_set(self, i: int) -> None:
        self.leaf_sets.pop(i, None)

    @classmethod
    def shared(cls, data: Dataset, learner: DecisionTree) -> BatchEngine:
        """The engine for ``data`` and ``learner``, built once per process.

        Methods hold it out of their pickled state, so parallel workers find it here after
        their first chunk instead of rebuilding it (a tree and its certificate tables) for
        every chunk.
        """
        return engine_registry.shared_engine(cls, data, learner)

    def release(self) -> None:
        """Empty every cache, which no result depends on: the registry does it when a
        newer engine is built, so that a cross-validation holds one fold's caches, not two."""
        for cache in (self.memo, self._scores, self._tables, self._x_nodes, self._splits):
            cache.clear()
        if self._comp is not None:
            self._comp.release()

    @staticmethod
    def supports(data: Dataset, learner: DecisionTree) -> bool:
        """Whether the batched engine applies: every learner setting, on labelled data
        (``collapse``/``cp``: :class:`~treecert.transductive.edited_trees.EditedEngine`)."""
        return data.n_samples > 0 and bool((data.y >= 0).all())

    @staticmethod
    def certifies(data: Dataset, learner: DecisionTree) -> bool:
        """Whether the certificates apply: data without missing values, with information
        gain or Gini (the competitor bound and exact rescoring), or with gain ratio and
        integer weights (its own rescoring, :mod:`treecert.transductive.ratio_scores`: exact
        admissibility sums).
        Elsewhere every node on x's paths is searched exactly
        (:mod:`treecert.transductive.exact_paths`)."""
        w = np.asarray(data.weights, float)
        return (data.n_samples > 0 and not np.isnan(data.X).any()
                and bool((data.y >= 0).all())
                and (learner.criterion in ("info_gain", "gini")
                     or bool(np.all(w == np.round(w)))))

    def hanging_leaves(self, rows: np.ndarray, w: np.ndarray, depth: int,
                       forest: LeafForest, grown: list, key: tuple) -> int:
        """Id in :attr:`leaf_sets` of the leaves of the tree grown on training ``rows``
        (sorted) at ``depth``, memoised by ``key`` (:meth:`_child_key`: equal keys, equal
        rows and weights); a new one is grown by ``forest`` as its tree ``len(grown)``,
        and (its id, its key) appended to ``grown``."""
        key = self._leaf_key(key, depth)
        got = self.memo.get(key)
        if got is None:
            got = self._next_leaf_set
            self._next_leaf_set += 1
            # kept until the next batch at least (jobs of this one refer to it)
            self.memo.put(key, got, key_bytes(key) + 100, shrink=False)
            forest.add(len(grown), rows, w, depth)
            grown.append((got, key))
        return got

    def _leaf_key(self, key: tuple, depth: int) -> tuple:
        """:attr:`memo`'s key of the subtree grown on the training rows of ``key`` at
        ``depth`` (which matters only under ``max_depth``)."""
        return (*key, depth if self.params.max_depth is not None else 0)

    # -------------------------------------------------------------- growing
    def grow_batch(self, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray | None = None,
                   *, paths_only: bool = True) -> list[dict]:
        """Follow x's path in the tree grown for every job i: x = ``Xq[i]`` with class
        ``labels[i]``, added to the training data — after removing training row
        ``drop[i]`` when that is >= 0 (leave-one-out; then ``Xq[i]`` is that row's values).

        x first walks the base tree, where each test is certified unchanged or searched
        exactly; from the first node whose test changes (``cut``, a base node) its path is
        grown explicitly, one batched exact search per step, and the subtrees without x
        hanging off it are grown (memoised, all together) when ``paths_only`` is false.
        Job i gets ``x_counts`` / ``x_inst`` (class counts and number of examples of x's
        leaf, x included), ``cut`` (-1: the structure did not change), ``base_leaf`` (x's
        leaf in the base tree when ``cut`` is -1) and ``hanging`` (ids in :attr:`leaf_sets`).
        """
        Xq = np.asarray(Xq, dtype=float)
        labels = np.asarray(labels, dtype=np.int64)
        J = Xq.shape[0]
        drop = np.full(J, -1, dtype=np.int64) if drop is None else np.asarray(drop, np.int64)
        order = self.walk_order(Xq)
        jobs = self._grow_in_order(Xq[order], labels[order], drop[order], paths_only)
        out: list = [None] * J
        for i, job in zip(order.tolist(), jobs, strict=True):
            out[i] = job
        return out

    def walk_order(self, Xq: np.ndarray) -> np.ndarray:
        """Jobs by the depth-first rank of x's leaf in the base tree (stably: one x's
        labels stay together). x's of one region walk the same nodes and change the same
        tests, so a part's searches share their tables and the next part finds the
        previous one's in the caches. Only the order of the work changes, never a result:
        each job's is its own."""
        leaf = self.base_sub.tree.apply(Xq) if self.base_sub is not None else None
        if leaf is None:  # no base tree to walk, or an unknown value: as they come
            return np.arange(Xq.shape[0])
        return np.argsort(self.base_sub.tree.preorder[leaf], kind="stable")

    @property
    def part_jobs(self) -> int:
        """Jobs of one part of :meth:`_grow_in_order` (bounded memory: a job's nodes hold
        up to every training row). A part's jobs share each search round and its tables, so
        callers that cut their own batches (the Venn machine) cut none smaller."""
        return max(1, budget.WALK_ENTRIES // (self.n + 1))

    def _grow_in_order(self, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray,
                       paths_only: bool) -> list[dict]:
        """:meth:`grow_batch` of jobs already in :meth:`walk_order` (callers that sort a
        larger batch once), in parts."""
        J = Xq.shape[0]
        if not paths_only:  # the previous batch's jobs are served: back within budget
            self.memo.shrink(keep=0)
        per = self.part_jobs
        # parts share one augmented finder (its ranks and value codes cost a pass over D)
        shared = max(per, budget.FINDER_X_CELLS // max(1, self.finder.numeric_idx.size))
        jobs: list[dict] = []
        for top in range(0, J, shared):
            end = min(J, top + shared)
            finder, rank = self._augmented(Xq[top:end], labels[top:end])
            for lo in range(top, end, per):
                hi = min(end, lo + per)
                jobs += self._grow_part(finder, rank, self.n + lo - top, Xq[lo:hi],
                                        labels[lo:hi], drop[lo:hi], paths_only)
        return jobs

    def _ranks(self, finder, Xq: np.ndarray) -> np.ndarray:
        """:func:`value_ranks` of the augmented finder, from D's ranks sorted once (unknown
        values rank last in row order, as a stable sort puts them)."""
        cols = finder.numeric_idx
        if "sorted" not in self._rank_d:
            self._rank_d["sorted"] = sorted_columns(self.data.X, cols)
            for k, f in enumerate(cols):  # shared with the Competitors tables
                self._rank_d[int(f)] = self._rank_d["sorted"][0][k]
        rank, values = self._rank_d["sorted"]
        return appended_ranks(rank, values, Xq[:, cols])

    def _grow_part(self, finder, rank: np.ndarray, first_x: int, Xq: np.ndarray,
                   labels: np.ndarray, drop: np.ndarray, paths_only: bool) -> list[dict]:
        """:meth:`grow_batch` of the jobs of one part, whose x rows are those of ``finder``
        (:meth:`_augmented`) from ``first_x`` on."""
        K = self.K
        J = Xq.shape[0]
        y_aug = finder.y
        base = self.base_sub
        jobs = [{"cut": -1, "base_leaf": -1, "hanging": []} for _ in range(J)]
        node = np.zeros(J, dtype=np.int64)
        walking = np.ones(J, dtype=bool)
        explicit: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        forest = None if paths_only else LeafForest(finder)
        grown: list = []  # (leaf-set id, memo key) of the forest's trees
        while True:
            pending = self._walk(node, walking, labels, drop, Xq, jobs)
            candidates = [(job, u, *self._with_x(u, first_x + job, int(drop[job])))
                          for job, u in pending]
            candidates += [(job, -1, *held) for job, held in explicit.items()]
            explicit = {}
            items = []
            for (job, u, rows, w, depth, key), cnt, stop in zip(
                    candidates, *node_counts_stops(finder, [c[2:5] for c in candidates],
                                                   x_last=True, keys=[c[5] for c in candidates],
                                                   memo=self._x_nodes),
                    strict=True):
                if not stop:
                    items.append((job, u, rows, w, depth, key))
                    continue
                if u >= 0:  # possible at a base node once a row is dropped
                    jobs[job]["base_leaf" if base.tree.is_leaf[u] else "cut"] = u
                self._end(jobs[job], cnt, rows.size)
            # the hanging subtrees grow a level in the same search as x's paths
            hanging = forest.open_nodes() if forest is not None else []
            if not items and not hanging:
                break
            splits = self._search(finder, items, rank, Xq, labels)
            if forest is not None:
                forest.advance(label_search.search_alone(finder, hanging, rank, self._splits))
            for (job, u, rows, w, depth, key), split in zip(items, splits, strict=True):
                if u >= 0:  # a node of the base tree
                    leaf = bool(base.tree.is_leaf[u])
                    if not leaf and base.tree.has_test(u, split):
                        node[job] = base.children_for(np.array([u]), Xq[job:job + 1])[0]
                        walking[job] = True
                        continue
                    jobs[job]["base_leaf" if split is None and leaf else "cut"] = u
                if split is None:  # a leaf: the base's, explicit, or a test x made inadmissible
                    cnt = np.bincount(y_aug[rows], weights=w, minlength=K).astype(float)
                    self._end(jobs[job], cnt, rows.size)
                    continue
                # no missing values: each branch is the rows on its side; x is the last row
                explicit[job] = self._x_child(finder, rows, w, depth, key, split)
                if forest is None:
                    continue
                # the other branches hang off x's path: their rows only if not yet grown
                column = feature_column(finder, split.feature)
                sides = None  # each training row's branch, found once for the node
                for b in range(split.n_branches):
                    if b == explicit[job][3][-1]:
                        continue
                    child = self._child_key(key, split, b)
                    got = self.memo.get(self._leaf_key(child, depth + 1))
                    if got is None:
                        if sides is None:
                            sides = _branch_sides(column, rows[:-1], split)
                        at = flat_nonzero(sides == b)
                        if not at.size:
                            continue
                        got = self.hanging_leaves(rows.take(at), w.take(at), depth + 1,
                                                  forest, grown, child)
                    jobs[job]["hanging"].append(got)
        if forest is not None:
            for (i, key), leaves in zip(grown, forest.leaves(len(grown)), strict=True):
                self.leaf_sets[i] = leaves
                self.memo.grow(key, leaves[0].nbytes + leaves[1].nbytes, shrink=False)
        return jobs

    def _x_child(self, finder, rows: np.ndarray, w: np.ndarray, depth: int, key: tuple,
                 split) -> tuple[np.ndarray, np.ndarray, int, tuple]:
        """x's child under ``split`` of a node of ``rows``/``w`` (x last) with ``key``: its
        rows (x last), weights, depth and key. The training rows on x's side depend on the
        node's key and the branch alone, so those of a node of at least
        :data:`~treecert.transductive.node_search.MEMO_ROWS` rows are kept by the child's
        key (:data:`~treecert.transductive.budget.CHILD_BYTES`): jobs that meet the same
        node below a changed test — every x on the same side of the same new tests — take
        them without another pass over the node (shuttle-shaped data: 24 175 such steps of
        300 test rows met 11 506 distinct children)."""
        column = feature_column(finder, split.feature)
        xv = column[rows[-1]]
        b = (int(xv > split.threshold) if split.value_branch is None
             else int(split.value_branch[int(xv)]))
        child = self._child_key(key, split, b)
        if rows.size <= node_search.MEMO_ROWS:  # x last: fewer training rows, one pass
            return (*_branch_rows(column, rows, w, split, b), depth + 1, child)
        got = self._x_nodes.get(child)
        if got is None:
            got = _branch_rows(column, rows[:-1], w[:-1], split, b)
            self._x_nodes.put(child, got, got[0].nbytes + got[1].nbytes + key_bytes(child)
                              + 200)
        return (np.concatenate((got[0], rows[-1:])), np.concatenate((got[1], w[-1:])),
                depth + 1, child)

    def _search(self, finder, items: list, rank: np.ndarray, Xq: np.ndarray,
                labels: np.ndarray) -> list:
        """The grower's split of every node ``(job, u, rows, w, depth)`` holding x (the last
        row): nodes of one x with the same training rows — its jobs differing only in x's
        class — searched together (the label search, :mod:`treecert.transductive.label_search`),
        where it covers the data; else the batched search of every node."""
        if self._labels_shared is None:
            self._labels_shared = label_search.covers(finder, self.w)
        if not self._labels_shared:
            return evaluate_nodes(finder, [(rows, w) for _, _, rows, w, _, _ in items], rank)
        return label_search.search_nodes(
            finder, [(rows, w, Xq[job], int(labels[job])) for job, _, rows, w, _, _ in items],
            rank, self._tables, [key for *_, key in items])

    def estimates(self, Xq: np.ndarray, labels: np.ndarray, drop: np.ndarray, *,
                  count_x: bool = True, alpha: float = 1.0, batch: int | None = None,
                  held_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Laplace estimate of x's leaf (or x's leaves, mixed by x's shares) for every job
        (:meth:`treecert.transductive.engine.TransductiveEngine.estimates`): certified
        walks where they apply, exact batched paths for the rest. Collapse and cp would be
        ignored here: refused (``edited_trees.EditedEngine`` follows them). ``batch``
        bounds the jobs of a walk and of a call of the exact paths (default: the budget's
        ``WALK_JOBS``, ``CALL_ENTRIES``). ``held_out = (row_fold, job_fold)``: job i trains
        on the rows r with ``row_fold[r] != job_fold[i]`` (:mod:`.held_out_folds`)."""
        if (self.learner.collapse or self.learner.cp > 0) and not self.follows_edits:
            raise ConfigError("this batched engine ignores collapse and cp.",
                              "Use TransductiveEngine (or edited_trees.EditedEngine).")
        J, K = Xq.shape[0], self.K
        out = np.empty((J, K))
        if held_out is not None:
            held_out_folds.check(self, drop, held_out)
        walk = (np.zeros(J, dtype=bool) if not self.certified
                else ~np.isnan(Xq).any(axis=1))
        idx = flat_nonzero(walk)
        idx = idx[self.walk_order(Xq[idx])]  # the walks' parts by region of the base tree
        # each exact path's root holds every training row: calls of CALL_ENTRIES at most
        sizes = (budget.WALK_JOBS, max(1, budget.CALL_ENTRIES // (self.n + 1)))
        walk_size, per = sizes if batch is None else (batch, min(batch, sizes[1]))
        for lo in range(0, idx.size, walk_size):
            part = idx[lo:lo + walk_size]
            jobs = self._grow_in_order(Xq[part], labels[part], drop[part], True)
            one = np.ones(part.size)  # a certified walk ends in one leaf, x's share 1
            reached = ReachedLeaves(
                np.arange(part.size), one,
                np.array([job["x_counts"] for job in jobs]).reshape(part.size, K), one,
                np.array([job["x_inst"] for job in jobs], dtype=float))
            out[part] = mix_laplace(reached, labels[part], part.size, K, count_x=count_x,
                                    alpha=alpha)
        idx = flat_nonzero(~walk)
        for lo in range(0, idx.size, per):
            part = idx[lo:lo + per]
            finder, rank = self._augmented(Xq[part], labels[part])
            # jobs that drop the same row (or none), or of one fold: the same rows
            roots, keys = ((self._roots(part.size, drop[part]), np.maximum(drop[part], -1))
                           if held_out is None else held_out_folds.roots(self.w, held_out, part))
            reached = reach_leaves(finder, roots, rank, root_keys=keys)
            out[part] = mix_laplace(reached, labels[part], part.size, K, count_x=count_x,
                                    alpha=alpha)
        return out

    def _augmented(self, Xq: np.ndarray, labels: np.ndarray):
        """The split finder over D followed by the jobs' x rows (ineligible), and its value
        ranks."""
        n, J = self.n, Xq.shape[0]
        X_aug = np.vstack([self.data.X, Xq])
        y_aug = np.concatenate([self.y, labels])
        elig = np.concatenate([np.ones(n, dtype=bool), np.zeros(J, dtype=bool)])
        finder = self.learner.make_finder(self.data, eligible=elig, X=X_aug, y=y_aug)
        return finder, self._ranks(finder, Xq)

    def _roots(self, J: int, drop: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every job's root: the training rows (less its dropped row) and x, weight 1."""
        n, out = self.n, []
        rows, w = np.arange(n + 1), np.concatenate([self.w, [1.0]])
        for i in range(J):
            rows[n] = n + i
            keep = rows != drop[i]
            out.append((rows[keep].copy(), w[keep]))
        return out

    def _with_x(self, u: int, q: int, r: int) -> tuple[np.ndarray, np.ndarray, int, tuple]:
        """Base node u's rows less row r, with x (row q, weight 1) last; its depth; and the
        key of its training rows (:meth:`_child_key`)."""
        base = self.base_sub
        rows, w = base.rows[u], base.w[u]
        if r >= 0:
            keep = rows != r
            if keep.all():
                r = -1
            else:
                rows, w = rows[keep], w[keep]
        return (np.concatenate([rows, [q]]), np.concatenate([w, [1.0]]), int(base.depth[u]),
                (max(r, -1), u))

    def _child_key(self, key: tuple, split, branch: int) -> tuple:
        """Key of the training rows of the child on ``branch`` of ``split`` of a node whose
        training rows have ``key``. A key is (r, u, its tests and branches): base node u's
        rows less row r (-1: none), then each step's branch. Equal keys name equal rows and
        weights (the converse may fail, losing only sharing), and hash in no time where the
        rows' bytes take longer than a search's arithmetic. Row r is forgotten once the
        branches leave it out: the child's rows are then those of the jobs that drop
        nothing, and share their key."""
        r = key[0]
        if r >= 0:
            v = self.data.X[r, split.feature]
            side = (int(v > split.threshold) if split.value_branch is None
                    else int(split.value_branch[int(v)]))
            r = r if side == branch else -1
        test = (float(split.threshold) if split.value_branch is None
                else split.value_branch.tobytes())
        return (r, *key[1:], int(split.feature), test, branch)

    @staticmethod
    def _end(job: dict, counts: np.ndarray, n_inst: float) -> None:
        job["x_counts"] = np.asarray(counts, dtype=float)
        job["x_inst"] = float(n_inst)


def _branch_sides(column: np.ndarray, rows: np.ndarray, split) -> np.ndarray:
    """Each row's branch under ``split`` (no missing values): a bool (right of a cut)
    or the value's branch."""
    vals = column[rows]
    if split.value_branch is None:
        return vals > split.threshold
    return split.value_branch[vals.astype(np.int64)]


def _branch_rows(column: np.ndarray, rows: np.ndarray, w: np.ndarray, split,
                 b: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows (and their weights) on branch ``b`` of ``split``, in order (no missing
    values)."""
    at = flat_nonzero(_branch_sides(column, rows, split) == b)
    return rows[at], w[at]
