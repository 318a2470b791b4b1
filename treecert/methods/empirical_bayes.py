"""Empirical-Bayes smoothing of leaf probabilities with belief intervals (Sutton-Charani,
"Evidential empirical Bayes correction of decision trees", IPMU 2020, sections 3–5).

Binary classes, as the paper and its reference code (lgi2p/empiricalBayesDecisionTrees):

1. Grow the tree; every non-empty leaf h has weighted counts n_h and n1_h of the positive
   class and the proportion p_h = n1_h / n_h.
2. Proportions 0 and 1 are clamped to 1e-3 and 1 − 1e-3 (``clamp``) *for the fit only*.
3. Fit Beta(α, β) by maximum likelihood to the artificial sample in which each p_h is
   repeated n_h times (leaf-size weighting, the code's ``target="global"``) — a weighted
   MLE, identical to ``MASS::fitdistr`` on the replicated sample (``fit=moments``: the
   method of moments instead; ``weighted=false``: one weight per leaf, ``"onLeaves"``).
4. Corrected leaf estimate (Eq. 2): p̂ = (n1 + α) / (n + α + β).
5. Belief function (Eq. 3) from the correction range d = |p̃ − p̂|, p̃ = n1/n:
   m({1, 0}) = d, m({1}) = p̃ − d/2, m({0}) = 1 − p̃ − d/2, i.e. the interval
   [p̃ − d/2, p̃ + d/2] (Eq. 4), **centred on the uncorrected p̃**; clipped to [0, 1] as the
   reference code does (the paper does not say; without clipping m({1}) < 0 for pure leaves).

What treecert outputs: ``proba`` is the corrected p̂ (Eq. 2); ``m_ignorance`` is d. The
bounds depend on ``interval``:

* ``interval=paper`` (default): Eq. 4 exactly, clipped. p̂ lies *outside* this interval
  whenever d > 0 (it is d away from its centre p̃) — the paper's construction, and the one
  its interval-valued metrics are computed on.
* ``interval=range``: the correction range itself, [min(p̃, p̂), max(p̃, p̂)] — the
  belief function with the same ignorance mass d whose credal set contains both p̃ and p̂
  (m({c}) = min(p̃_c, p̂_c)). The paper observes that its uncertain evaluations "correspond
  roughly to the intervals formed by the precise evaluations without and with Bayesian
  smoothing"; this interval is exactly that, and it contains the reported probability.

Positive class: the second declared class value (Weka's convention, independent of the
file's row order — the reference code takes the first label *appearing in the file*), or
``positive=LABEL``. It only names which parameter is α: the corrected probabilities and the
intervals do not depend on it (the Beta fit is symmetric).

Multi-class (treecert's extension, not in the paper): the leaf proportion vectors, each
coordinate clamped to [1e-3, 1 − 1e-3] and renormalised, are fitted by a leaf-size-weighted
Dirichlet(α_1..α_K) MLE (Minka's Newton iteration); p̂_c = (n_c + α_c)/(n + Σα). With d the
total-variation distance ½ Σ_c |p̃_c − p̂_c| (= |p̃ − p̂| for two classes), ``range`` gives
[Bel({c}), Pl({c})] = [min(p̃_c, p̂_c), min(p̃_c, p̂_c) + d] and ``paper`` gives
m({c}) = p̃_c − d/K, m(Ω) = d, i.e. [p̃_c − d/K, p̃_c − d/K + d], clipped; both reduce to the
binary definitions for K = 2.

Missing values: x reaching several leaves gets the share-weighted mixtures of p̃ and of p̂,
and d is computed from the mixtures. Empty leaves use their parent's counts (J48). A tree
whose non-empty leaves all have the same proportions (e.g. a single leaf) has no maximum-
likelihood prior; it is left uncorrected (α = 0, d = 0), as the reference code returns a
single-node tree unchanged.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.base import Method, Prediction, reading_state, stored_state
from treecert.methods.leaf import PRUNE_DEFAULTS, PRUNE_OPTIONS, PrunesTree
from treecert.tree.arrays import mix_leaves
from treecert.tree.classifier import DecisionTree

CLAMP = 1e-3


# ------------------------------------------------------------------------------ fitting
def leaf_sample(counts: np.ndarray, clamp: float = CLAMP) -> tuple[np.ndarray, np.ndarray]:
    """The paper's artificial sample from leaf class counts (H, K): clamped proportions
    (H', K) of the non-empty leaves and their weights n_h (H',)."""
    counts = np.asarray(counts, float)
    n = counts.sum(axis=1)
    keep = n > 0
    p = counts[keep] / n[keep, None]
    p = np.clip(p, clamp, 1.0 - clamp)
    p = p / p.sum(axis=1, keepdims=True)  # a no-op for two classes
    return p, n[keep]


def dirichlet_moments(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Method-of-moments Dirichlet (Beta for K = 2) from weighted proportion vectors:
    precision s = Σ_c m_c(1 − m_c) / Σ_c v_c − 1, α = s·m."""
    w = w / w.sum()
    m = w @ p
    v = w @ (p - m) ** 2
    s = float(np.sum(m * (1 - m)) / max(float(np.sum(v)), 1e-300) - 1.0)
    if not np.isfinite(s) or s <= 0:
        s = 1.0  # no spread left to fit (all proportions equal): a weak prior
    return s * m


def dirichlet_mle(p: np.ndarray, w: np.ndarray, *, tol: float = 1e-12,
                  max_iter: int = 500) -> np.ndarray:
    """Weighted maximum-likelihood Dirichlet parameters (Beta(α, β) for K = 2).

    Maximises Σ_h w_h log Dir(p_h; α) — the likelihood of the sample in which p_h is repeated
    w_h times — by Newton's method on α (the log-likelihood is concave in α; Minka 2000,
    "Estimating a Dirichlet distribution", section 1), with step halving to stay positive.

    Parameters
    ----------
    p : (H, K) proportions in (0, 1), rows summing to 1.
    w : (H,) positive weights.

    Returns
    -------
    (K,) α.
    """
    p = np.asarray(p, float)
    w = np.asarray(w, float)
    if p.ndim != 2 or p.shape[0] == 0:
        raise ConfigError("empirical_bayes: no non-empty leaf to fit the prior on.")
    total = w.sum()
    logp = (w @ np.log(p)) / total  # mean log proportion per class

    def loglik(a):
        from scipy.special import gammaln  # lazily: SciPy costs 0.25 s of every start-up

        return gammaln(a.sum()) - gammaln(a).sum() + ((a - 1) * logp).sum()

    if np.unique(p, axis=0).shape[0] < 2:
        # One distinct proportion vector: the likelihood grows without bound with the
        # precision, so there is no MLE. No correction (α = 0), as the reference code
        # returns a single-node tree unchanged.
        return np.zeros(p.shape[1])
    a = np.maximum(dirichlet_moments(p, w), 1e-3)
    ll = loglik(a)
    from scipy.special import digamma, polygamma

    for _ in range(max_iter):
        g = digamma(a.sum()) - digamma(a) + logp
        q = -polygamma(1, a)  # diagonal of the Hessian
        z = polygamma(1, a.sum())
        b = np.sum(g / q) / (1.0 / z + np.sum(1.0 / q))
        step = (g - b) / q  # H^{-1} g (Sherman-Morrison)
        t, cand, new_ll = 1.0, a, ll
        while t >= 1e-12:  # step halving: stay positive, do not decrease the likelihood
            cand = a - t * step
            if np.all(cand > 0) and (new_ll := loglik(cand)) >= ll - 1e-15 * abs(ll):
                break
            t /= 2
        if t < 1e-12 or not np.all(np.isfinite(cand)):
            break
        done = np.max(np.abs(cand - a) / cand) < tol
        a, ll = cand, new_ll
        if done:
            break
    return a


def fit_prior(leaf_counts: np.ndarray, *, fit: str = "mle", weighted: bool = True,
              clamp: float = CLAMP) -> np.ndarray:
    """Prior parameters (K,) from leaf class counts (H, K) — see the module docstring.

    For two classes the result is (β, α) in class order: α belongs to class 1 (the
    positive class by default).
    """
    p, n = leaf_sample(leaf_counts, clamp)
    w = n if weighted else np.ones_like(n)
    if p.shape[0] == 0:
        raise ConfigError("empirical_bayes: the tree has no non-empty leaf.")
    if fit == "mle":
        return dirichlet_mle(p, w)
    if fit == "moments":
        return dirichlet_moments(p, w)
    raise ConfigError(f"empirical_bayes: unknown fit '{fit}'.", "Choose mle or moments.")


def belief(p_tilde: np.ndarray, p_hat: np.ndarray, interval: str
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower, upper (n, K) and the ignorance mass d (n,) of Eq. 3–4 (see the module
    docstring for ``interval`` = ``range`` or ``paper``)."""
    K = p_tilde.shape[1]
    d = 0.5 * np.abs(p_tilde - p_hat).sum(axis=1)
    if interval == "range":
        lower = np.minimum(p_tilde, p_hat)
        # = max(p~, p^) for two classes; the max guards against one ulp of rounding
        upper = np.maximum(lower + d[:, None], np.maximum(p_tilde, p_hat))
    elif interval == "paper":
        lower = p_tilde - d[:, None] / K
        upper = lower + d[:, None]
    else:
        raise ConfigError(f"empirical_bayes: unknown interval '{interval}'.",
                          "Choose range or paper.")
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0), d


# ------------------------------------------------------------------------------ method
class EmpiricalBayesMethod(PrunesTree, Method):
    """Empirical-Bayes corrected leaves with belief intervals; options ``positive``,
    ``fit`` (mle|moments), ``weighted``, ``clamp``, ``interval`` (paper|range), and the
    leaf methods' ``prune`` options (the prior is then fitted on the pruned tree's leaves,
    as for the paper's "pruned" trees)."""

    name = "empirical_bayes"
    options: ClassVar[dict[str, type]] = {"positive": str, "fit": str, "weighted": bool,
                                          "clamp": float, "interval": str, **PRUNE_OPTIONS}
    defaults: ClassVar[dict] = {"positive": "", "fit": "mle", "weighted": True,
                                "clamp": CLAMP, "interval": "paper", **PRUNE_DEFAULTS}

    @property
    def bounds_contain_proba(self) -> bool:
        """Eq. 4's interval is centred on the uncorrected p̃, so it need not contain p̂."""
        return self.opts["interval"] == "range"

    def _check(self, n_classes: int) -> None:
        if self.opts["interval"] not in ("range", "paper"):
            raise ConfigError(f"empirical_bayes: unknown interval '{self.opts['interval']}'.",
                              "Choose range or paper.")
        if self.opts["positive"] and n_classes != 2:
            raise ConfigError("empirical_bayes: positive= applies to two-class data only.")

    def _positive(self, classes: tuple[str, ...]) -> int:
        label = self.opts["positive"]
        if not label:
            return 1
        if label not in classes:
            raise ConfigError(f"empirical_bayes: positive class '{label}' is not a class.",
                              f"Classes: {', '.join(classes)}.")
        return classes.index(label)

    def _prior_from(self, tree) -> np.ndarray:
        leaves = tree.counts[tree.is_leaf]
        return fit_prior(leaves, fit=self.opts["fit"], weighted=self.opts["weighted"],
                         clamp=self.opts["clamp"])

    def _setup(self, estimator: DecisionTree, prior: np.ndarray | None = None):
        schema = estimator.schema_
        self._check(schema.n_classes)
        self.model_ = estimator
        self.positive_ = self._positive(schema.classes) if schema.n_classes == 2 else -1
        self.prior_ = self._prior_from(estimator.tree_) if prior is None else prior
        return self

    def fit(self, data: Dataset) -> EmpiricalBayesMethod:
        self._check(data.schema.n_classes)
        return self._setup(self._prune(self.new_tree(leaf="frequency").fit(data), data))

    def adopt(self, model) -> EmpiricalBayesMethod:
        """Reuse the stored tree (the prior is refitted from its leaves unless the model
        carries this calibration); tree options need the training data to regrow."""
        if any(k not in self.options for k in self.spec.options):
            return super().adopt(model)
        est = model.estimator
        tree = DecisionTree.from_tree(est.tree_, est.schema_,
                                      {**est.get_params(), "leaf": "frequency"})
        state = stored_state(model, self.spec)
        prior = None
        if state is None:  # a stored calibration holds the tree it was fitted on
            tree = self._prune_stored(tree, model)
        else:
            def load():
                a = np.asarray(state["prior"], float)
                if a.shape != (est.schema_.n_classes,) or not np.all(np.isfinite(a) & (a >= 0)):
                    raise ValueError("the prior does not fit the classes")
                return a

            prior = reading_state(load, model.source)
        return self._setup(tree, prior)

    def state(self) -> dict:
        """What ``treecert calibrate`` stores: the fitted prior (α per class)."""
        out = {"prior": self.prior_.tolist(), "fit": self.opts["fit"]}
        if self.positive_ >= 0:
            out["alpha"] = float(self.prior_[self.positive_])
            out["beta"] = float(self.prior_[1 - self.positive_])
            out["positive"] = self.model_.schema_.classes[self.positive_]
        return out

    def predict(self, data: Dataset) -> Prediction:
        tree = self.model_.tree_
        counts = tree.estimate_counts
        corrected = (counts + self.prior_) / (counts.sum(axis=1, keepdims=True)
                                              + self.prior_.sum())
        applied = tree.apply_weighted(data.X)
        p_tilde = mix_leaves(applied, tree.leaf_estimates("frequency"), data.n_samples)
        p_hat = mix_leaves(applied, corrected, data.n_samples)
        p_tilde /= p_tilde.sum(axis=1, keepdims=True)
        p_hat /= p_hat.sum(axis=1, keepdims=True)
        lower, upper, d = belief(p_tilde, p_hat, self.opts["interval"])
        return Prediction(p_hat, lower=lower, upper=upper, columns={"m_ignorance": d})

    @property
    def size(self) -> int | float | None:
        return self.model_.tree_.n_leaves
