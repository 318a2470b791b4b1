"""The Venn Probability Machine of Lindsay & Cox (ICDM 2004, section 4; Vovk, Shafer &
Nouretdinov, NIPS 2003).

For a test object x and every tentative label j:

1. learn the underlying model on D ∪ {(x, j)};
2. compute its forecasts for all n + 1 examples — **resubstitution** forecasts (each
   example's forecast by the model that was trained on it), the reading the paper implies
   ("we take the underlying learners' probability forecasts and discretise them");
3. assign every example a *type* by discretising those forecasts with Fayyad & Irani's MDL
   criterion against the labels (Weka's supervised ``Discretize``, as the paper did): the
   type is the tuple of the bins of the forecast columns (for two classes the column of
   class 1 alone, since p_0 = 1 − p_1; for K > 2 every column);
4. row j of the K×K Venn matrix M is the (weighted) class frequency among the examples of
   x's type, x included with label j.

The probability of label l is the column mean (1/K) Σ_j M_jl and the Venn interval is
[min_j M_jl, max_j M_jl] (``lower_<label>`` / ``upper_<label>``).

Options
-------
``base``: ``frequency`` (default; the plain tree as in the paper), ``laplace``,
``m_estimate`` (tree leaf estimates used as forecasts) or ``naive_bayes``.
``taxonomy``: ``forecast`` (default, steps 2–3) or ``leaf`` — the type of an example is the
leaf of the tree on D ∪ {(x, j)} it falls in, so row j is x's leaf's class frequencies with x
counted (the leaves come from :meth:`TransductiveEngine.leaves`, which grows only x's path).
``engine``: ``fast`` (default) or ``naive`` (whole trees, the reference; identical output).
Lindsay & Cox's protocol (:mod:`treecert.methods.venn_refit`): ``prune=ebp`` (J48's pruning,
and every other pruning method with its options, as the leaf methods take them) prunes each
tree on D ∪ {(x, j)}; ``x_threshold=true`` lets x be a threshold like any example;
``online=true`` predicts the test rows in order, each from the rows before it. The first two
take the exact path (one whole tree per (x, j), much slower: see that module).

Departures from the paper, and why
----------------------------------
* By default the tree on D ∪ {(x, j)} is grown with x *ineligible for thresholds* (x
  counts in the heuristic and in the leaves but never becomes a cut point or makes a test
  admissible), the rule of treecert's transductive engine (TPCE paper, section 3.2). It
  keeps a single test example from carving out its own leaf; the taxonomy is then not
  perfectly symmetric in the n + 1 examples, which Venn validity formally assumes
  (``x_threshold=true`` restores the symmetry, as the paper had it).
* By default the tree is unpruned; the paper's C4.5 was Weka's, pruned (``prune=ebp``).
* With unknown values x may reach several leaves; with ``taxonomy=leaf`` its row is the
  share-weighted mixture of those leaves' frequencies.
* Instance weights count in M and in the MDL discretisation; x has weight 1.

Cost: the Naive Bayes machine is incremental (counts and normal sums updated by one
instance; only the per-attribute precision, which depends on x, is recomputed). The tree
machine (``venn_fast``) grows the trees of a whole batch of (x, j) at once and discretises
all their forecasts in one segmented MDL per column. On complete data it walks the batched
transductive engine (certified tests, memoised hanging subtrees). With unknown values (in
the training data or in x) every forecast of a fractional example needs the whole tree, so
the trees of the batch are grown whole, together, as one DAG in which each distinct node is
grown once and nodes that differ only by x share their nominal tallies
(:mod:`treecert.transductive.venn_forest`); with ``taxonomy=leaf`` such rows take
the engine's exact batched paths. All give the same bits as ``engine=naive``.

Inductive variant: ``treecert calibrate MODEL DATA --method venn`` stores the model's
forecasts on DATA (or out-of-fold forecasts with ``--cv``); prediction then uses those
calibration examples plus (x, j) as the bag, with the model fixed (an inductive Venn
predictor, Lambrou et al. 2015) — no regrowing at prediction time.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.base import (
    Method,
    Prediction,
    per_label_columns,
    reading_state,
    state_numbers,
    stored_state,
)
from treecert.methods.binning import BASE_PASS_OPTIONS, make_base
from treecert.methods.leaf import PRUNE_DEFAULTS, PRUNE_OPTIONS, PrunesTree
from treecert.methods.naive_bayes import (
    NaiveBayes,
    nb_stats,
    softmax_rows,
    weka_precision,
    weka_round,
)
from treecert.methods.option_rules import TRANSDUCTIVE_MIN_LEAF
from treecert.methods.venn_fast import TreeVennBatch
from treecert.methods.venn_refit import (
    online_matrices,
    refit_matrices,
    tree_on_data,
    uses_refit,
)
from treecert.methods.venn_types import (  # noqa: F401 (the module's own names, kept)
    bag_venn_matrices,
    type_columns,
    venn_row,
    venn_rows_atoms,
)
from treecert.transductive.edited_trees import has_edits
from treecert.transductive.engine import check_engine
from treecert.transductive.engine_registry import HoldsSharedEngine
from treecert.tree.segments import flat_nonzero

TREE_BASES = ("frequency", "laplace", "m_estimate")


def summarise(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probability (column means), lower and upper (column min / max) of Venn matrices
    (n, K, K)."""
    return M.mean(axis=1), M.min(axis=1), M.max(axis=1)


class _NBVenn:
    """Venn matrices with Naive Bayes as the underlying learner, updated by one instance."""

    def __init__(self, data: Dataset, discretize: bool) -> None:
        self.data = data
        self.K = data.schema.n_classes
        self.discretize = discretize
        self.X, self.y, self.w = data.X, data.y.astype(np.int64), data.weights.astype(float)
        schema = data.schema
        nominal = schema.nominal_mask()
        self.nominal_idx = flat_nonzero(nominal)
        self.numeric_idx = flat_nonzero(~nominal)
        self.n_values = [int(v) for v in schema.n_values()]
        # Counts of D alone; x's contribution is added per label.
        self.base = nb_stats(self.X, self.y, self.w, self.n_values, self.K, self.nominal_idx,
                             np.empty(0, np.int64), np.empty(0))
        self.codes = self.base.padded_codes(self.X)

    def forecasts(self, x: np.ndarray) -> np.ndarray:
        """Forecasts (K, n + 1, K) of D ∪ {(x, j)} by Naive Bayes learned on it, per j."""
        if self.discretize:
            return self._forecasts_refit(x)
        K, n = self.K, self.y.size
        Xa = np.vstack([self.X, x[None, :]])
        num = self.numeric_idx
        precision = np.array([weka_precision(Xa[:, f]) for f in num], dtype=float)
        Xr = weka_round(Xa[:, num], precision) if num.size else np.zeros((n + 1, 0))
        d_only = nb_stats(Xa[:n], self.y, self.w, self.n_values, K, self.nominal_idx, num,
                          precision)
        codes = np.vstack([self.codes, d_only.padded_codes(x[None, :])])
        L0 = d_only.log_joint(Xa, Xr, codes=codes)
        out = np.empty((K, n + 1, K))
        for j in range(K):
            stats = _add_instance(d_only, x, Xr[n], j)
            L = L0.copy()
            L[:, j] = stats.log_joint(Xa, Xr, classes=np.array([j]), codes=codes)[:, 0]
            out[j] = softmax_rows(L)
        return out

    def _forecasts_refit(self, x: np.ndarray) -> np.ndarray:
        """``discretize=true``: the MDL cut points depend on (x, j), so refit."""
        K = self.K
        Xa = np.vstack([self.X, x[None, :]])
        wa = np.concatenate([self.w, [1.0]])
        out = np.empty((K, Xa.shape[0], K))
        for j in range(K):
            ya = np.concatenate([self.y, [j]])
            aug = Dataset(self.data.schema, Xa, ya, wa, source=self.data.source)
            out[j] = NaiveBayes(discretize=True).fit(aug).predict_proba(Xa)
        return out


def _add_instance(stats, x: np.ndarray, xr: np.ndarray, j: int):
    """The statistics with (x, j) of weight 1 added last (as Weka adds instances)."""
    from dataclasses import replace

    class_w = stats.class_w.copy()
    class_w[j] += 1.0
    nominal = []
    for f, cnt in zip(stats.nominal_idx, stats.nominal, strict=True):
        c = cnt.copy()
        if not np.isnan(x[f]):
            c[j, int(x[f])] += 1.0
        nominal.append(c)
    sw, s1, s2 = stats.sw.copy(), stats.s1.copy(), stats.s2.copy()
    known = ~np.isnan(xr)
    sw[known, j] += 1.0
    s1[known, j] += xr[known]
    s2[known, j] += xr[known] * xr[known]
    return replace(stats, class_w=class_w, nominal=nominal, sw=sw, s1=s1, s2=s2)


class VennMethod(HoldsSharedEngine, PrunesTree, Method):
    """The Venn Probability Machine; options ``base``, ``taxonomy`` (forecast|leaf),
    ``engine`` (fast|naive), the base's ``alpha``/``m``/``discretize``, and Lindsay & Cox's
    protocol (:mod:`treecert.methods.venn_refit`): the leaf methods' pruning options
    (``prune=ebp`` as J48 ships it, ...), ``x_threshold`` and ``online``."""

    name = "venn"
    random_subsets = False
    j48_cuts = False
    #: Lindsay & Cox's protocol. ``prune`` (and its options) and ``x_threshold=true`` take
    #: the exact path, one whole tree per (x, j): 3-46× the batched machine's CPU time.
    #: ``online=true``: one fit per test row (the rows before it learnt).
    LC_OPTIONS: ClassVar[dict[str, type]] = {**PRUNE_OPTIONS, "x_threshold": bool,
                                             "online": bool}
    options: ClassVar[dict[str, type]] = {"base": str, "taxonomy": str, "engine": str,
                                          **BASE_PASS_OPTIONS, **LC_OPTIONS}
    defaults: ClassVar[dict] = {"base": "frequency", "taxonomy": "forecast", "engine": "fast",
                                **PRUNE_DEFAULTS, "x_threshold": False, "online": False}
    rules: ClassVar[dict] = {"min_leaf": TRANSDUCTIVE_MIN_LEAF}

    def _check(self) -> None:
        o = self.opts
        if o["base"] not in (*TREE_BASES, "naive_bayes"):
            raise ConfigError(f"venn: unknown base '{o['base']}'.",
                              f"Choose one of: {', '.join((*TREE_BASES, 'naive_bayes'))}.")
        if o["taxonomy"] not in ("forecast", "leaf"):
            raise ConfigError(f"venn: unknown taxonomy '{o['taxonomy']}'.",
                              "Choose forecast or leaf.")
        if o["taxonomy"] == "leaf" and o["base"] == "naive_bayes":
            raise ConfigError("venn: taxonomy=leaf needs a tree base, not naive_bayes.")
        if o["base"] == "naive_bayes" and uses_refit(o):
            raise ConfigError("venn: prune and x_threshold apply to a tree base, not "
                              "naive_bayes.")
        self.prune_options()  # an unknown pruning method or a misplaced option: now
        check_engine(o["engine"], "venn", ("fast", "naive"))

    def _leaf_kwargs(self) -> dict:
        o = self.opts
        return {"kind": o["base"], "alpha": o.get("alpha", 1.0), "m": o.get("m", 2.0)}

    def fit(self, data: Dataset) -> VennMethod:
        from treecert.transductive.engine import TransductiveEngine

        self._check()
        data = data.subset(flat_nonzero(data.y >= 0))
        self.inductive_ = None
        self.data_ = data
        self.__dict__.pop("_batch", None)  # a refit: the machine of the old data
        if self.opts["base"] == "naive_bayes":
            self.nb_ = _NBVenn(data, bool(self.opts.get("discretize", False)))
        else:
            self.engine_ = TransductiveEngine(data, self.new_tree())
        return self

    @property
    def batch_(self) -> TreeVennBatch | None:
        """The batched tree machine (one per process), or None where it does not apply."""
        eng = self.engine_
        return self._shared_engine(TreeVennBatch, eng.data, eng.learner,
                                   self.opts["engine"] == "fast")

    # ------------------------------------------------------------------ inductive variant
    def calibrate(self, model, proba: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict:
        """Inductive Venn: keep the base model and its calibration forecasts."""
        self._check()
        if self.opts["taxonomy"] != "forecast":
            raise ConfigError("venn: calibration data needs taxonomy=forecast.")
        self.base_ = make_base(self.opts["base"], self.spec.options, self.tree_params)
        self.base_.adopt(model)
        self.inductive_ = (np.asarray(proba, float), np.asarray(y, np.int64),
                           np.asarray(w, float))
        return {"forecasts": self.inductive_[0].tolist(), "y": self.inductive_[1].tolist(),
                "weights": self.inductive_[2].tolist()}

    def adopt(self, model) -> VennMethod:
        state = stored_state(model, self.spec)
        if not isinstance(state, dict) or "forecasts" not in state:
            return super().adopt(model)
        self._check()
        self.base_ = make_base(self.opts["base"], self.spec.options, self.tree_params)
        self.base_.adopt(model)
        K = model.schema.n_classes

        def load():
            F = state_numbers(state["forecasts"], "forecasts", low=0, high=1).reshape(-1, K)
            y = state_numbers(state["y"], "y", integer=True)
            w = state_numbers(state["weights"], "weights", low=0)
            if not (F.shape[0] == y.size == w.size) or np.any((y < 0) | (y >= K)):
                raise ValueError("forecasts, labels and weights do not fit together")
            return F, y, w

        self.inductive_ = reading_state(load, model.source)
        return self

    # ------------------------------------------------------------------ prediction
    def _tree_matrix(self, x: np.ndarray) -> np.ndarray:
        eng = self.engine_
        K = eng.n_classes
        M = np.empty((K, K))
        if self.opts["taxonomy"] == "leaf":
            for j in range(K):
                row = np.zeros(K)
                for leaf in eng.leaves(x, j, engine=self.opts["engine"]):
                    row += leaf.weight * leaf.counts / leaf.counts.sum()
                M[j] = row / row.sum()
            return M
        d = self.data_
        Xa = np.vstack([d.X, x[None, :]])
        kw = self._leaf_kwargs()
        F = np.array([eng.tree_with(x, j, engine=self.opts["engine"]).predict_proba(
            Xa, kw["kind"], alpha=kw["alpha"], m=kw["m"]) for j in range(K)])
        return bag_venn_matrices([F], d.y.astype(np.int64), d.weights.astype(float), K)[0]

    def _tree_matrices(self, X: np.ndarray) -> np.ndarray:
        """Venn matrices of rows of X from the batch machine; with the leaf taxonomy, rows
        it does not walk (unknown values here or in the training data) take the engine's
        exact paths. ``engine=naive``: one (x, j) at a time."""
        K = self.engine_.n_classes
        out = np.empty((X.shape[0], K, K))
        if uses_refit(self.opts):  # Lindsay & Cox's protocol: whole trees per (x, j)
            return refit_matrices(self, X)
        batch = self.batch_
        if batch is None:
            for i in range(X.shape[0]):
                out[i] = self._tree_matrix(X[i])
            return out
        kw = self._leaf_kwargs()
        fast = np.ones(X.shape[0], dtype=bool)
        if self.opts["taxonomy"] == "leaf":
            fast = ~np.isnan(X).any(axis=1) & batch.walks
        if fast.any():
            out[fast] = batch.venn_matrices(X[fast], self.opts["taxonomy"], kw["kind"],
                                            kw["alpha"], kw["m"], type_columns(K))
        rest = flat_nonzero(~fast)
        if rest.size:  # x's leaves' frequencies mixed by x's shares: estimates with α = 0
            rows = self.engine_.estimates(np.repeat(X[rest], K, axis=0),
                                          np.tile(np.arange(K), rest.size), alpha=0.0)
            out[rest] = rows.reshape(rest.size, K, K)
        return out

    def matrices(self, data: Dataset) -> np.ndarray:
        """Venn matrices (n, K, K) of the rows of ``data``."""
        from treecert.parallel import map_chunks

        X = data.X
        if self.opts["online"] and self.inductive_ is None:
            return online_matrices(self, data)
        if self.inductive_ is not None:  # the bag: calibration examples, then x
            P = self.base_.predict(data).proba
            F0, y0, w0 = self.inductive_

            def work(lo, hi):
                return bag_venn_matrices((np.vstack([F0, P[i]])[None] for i in range(lo, hi)),
                                         y0, w0, F0.shape[1])
        elif self.opts["base"] == "naive_bayes":
            nb = self.nb_

            def work(lo, hi):
                return bag_venn_matrices((nb.forecasts(X[i]) for i in range(lo, hi)), nb.y,
                                         nb.w, nb.K)
        else:
            def work(lo, hi):
                return self._tree_matrices(X[lo:hi])

        K = data.schema.n_classes
        parts = map_chunks(work, X.shape[0], self.jobs)
        return np.concatenate(parts).reshape(-1, K, K) if parts else np.zeros((0, K, K))

    def predict(self, data: Dataset) -> Prediction:
        M = self.matrices(data)
        proba, lower, upper = summarise(M)
        columns = per_label_columns("venn", M, data.schema.classes) if self.explain else {}
        return Prediction(proba, lower=lower, upper=upper, columns=columns)

    @property
    def size(self) -> int | float | None:
        if getattr(self, "inductive_", None) is not None:
            return self.base_.size
        if self.opts["base"] == "naive_bayes":
            return None
        if self.opts["prune"] != "none":  # the pruned tree on D, as frequency:prune=… reports
            if not hasattr(self, "_pruned_size"):
                tree, _ = tree_on_data(self)
                self._pruned_size = float(tree.n_leaves)
            return self._pruned_size
        learner = self.engine_.learner
        if has_edits(learner):  # the edited tree's leaves, as a plain tree's size reports
            batch = self.batch_
            grown = (batch.base_sub.tree if batch is not None and batch.walks
                     else self.engine_.base[0])
            return learner.edited(grown).n_leaves
        if self.batch_ is not None and self.batch_.walks:  # the same tree, already grown
            return self.batch_.base_sub.tree.n_leaves
        if self.batch_ is not None and self.batch_.base_leaves is not None:  # grown in a forest
            return int(self.batch_.base_leaves)
        return self.engine_.base[0].n_leaves
