"""Calibrated bagging: many bootstrap Laplace trees, a temperature fitted out of bag, and
the trees' votes as the certainty.

What each source is good at, put together:

* **Probabilities** — bagged trees with Laplace leaves, the best probability estimation
  trees of Provost & Domingos (2003; the ensemble the TPCE paper's section 4 compares
  against): ``trees`` bootstrap trees (default 50, not the TPCE paper's K — the averages of
  a few trees are coarse), probabilities averaged. Bootstrap samples are drawn as in
  :mod:`treecert.methods.bagging` (``numpy.random.RandomState(seed)``, a row drawn k times
  weighs k).
* **Calibration** — averaged Laplace leaves are under-confident, the more so the more
  classes (each leaf adds K·α to its denominator; the same effect that makes TPCE's Eq. 1
  under-confident). A single temperature t rescales the averaged probabilities,
  ``p_c ∝ p̄_c^t`` (temperature scaling, Guo et al. 2017, on log-probabilities), with t
  chosen to minimise the log-loss of the **out-of-bag** forecasts of the training rows:
  row i's forecast averages only the trees whose bootstrap sample left i out, so no row
  calibrates a forecast it helped to make (Breiman's out-of-bag estimate, 1996) — cross-
  fitting for free, without refitting. One parameter cannot overfit small data the way
  binning or isotonic steps do (Zadrozny & Elkan 2001; scikit-learn's warning for fewer
  than 1000 calibration rows). ``temperature=1`` switches it off.
* **Certainty** — the share of trees that vote for the predicted class, ties broken by
  the trees' mean probability of that class *before* the temperature:
  ``certainty = (votes + p̄_top) / (trees + 1)``, which orders instances by votes first
  and by ``p̄_top`` within equal votes (``p̄_top < 1``). Like TPCE's disagreement of K
  trees (Costa et al., section 3) it asks whether perturbed training sets change the
  *decision*, which ranks errors better than the probability alone
  (docs/certainty-quality.md). The tie-break uses the uncalibrated mean because the
  temperature, applied row by row, reorders rows of different shapes (K > 2) and ranked
  errors slightly worse. ``certainty=proba`` gives the calibrated top probability. The
  column ``vote_share`` holds votes / trees.

Options: ``trees`` (50), ``seed`` (1), ``alpha`` (Laplace α, 1), ``temperature`` (``oob``,
the default, or a number to fix t), ``certainty`` (``vote`` | ``margin`` | ``proba``;
``margin``: Breiman's margin, :func:`margin_certainty`, ``forest``'s default).

``treecert train --method calibrated_bagging`` (or ``calibrate``) stores the grown trees and
the temperature in the model file (:mod:`treecert.methods.ensemble`), so ``predict`` applies
them without regrowing; ``predict --method calibrated_bagging`` on any other model grows
them from its embedded training data.

References
----------
F. Provost and P. Domingos, "Tree induction for probability-based ranking", Machine
Learning 52(3), 2003. L. Breiman, "Out-of-bag estimation", 1996. C. Guo, G. Pleiss, Y. Sun
and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017, section 4.2.
W. Costa, S. Verwer and H. Blockeel, TPCE, section 3 (the
disagreement of perturbed trees as certainty).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from treecert.data.schema import Dataset
from treecert.errors import ConfigError
from treecert.methods.base import Method, Prediction, reading_state, stored_state
from treecert.methods.ensemble import (
    decode_trees,
    encode_trees,
    grow_bootstrap,
    per_tree_proba,
    stored_estimators,
)

#: Values of the ``certainty`` option.
CERTAINTIES = ("vote", "margin", "proba")
#: Range searched for the out-of-bag temperature.
T_MIN, T_MAX = 0.2, 10.0


def sharpen(proba: np.ndarray, t: float) -> np.ndarray:
    """``p_c^t / Σ_k p_k^t`` row-wise (t = 1: unchanged), computed on logs; rows of
    ``proba`` must be strictly positive."""
    return _sharpen_logs(np.log(proba), t)


def _sharpen_logs(logp: np.ndarray, t: float) -> np.ndarray:
    """:func:`sharpen` of the probabilities whose logs are ``logp``."""
    z = t * logp
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(proba: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
    """The t in [T_MIN, T_MAX] minimising the weighted log-loss of ``sharpen(proba, t)``.

    The loss is convex in t (a one-parameter multinomial logit on ``log proba``), so
    Newton's method from t = 1 with bisection safeguards finds the minimum; a minimum past
    either end is clamped there.

    Parameters
    ----------
    proba : (n, K) strictly positive forecasts, rows summing to 1.
    y : (n,) class codes.
    w : (n,) weights (default 1).
    """
    proba = np.asarray(proba, float)
    y = np.asarray(y, np.int64)
    w = np.ones(y.size) if w is None else np.asarray(w, float)
    if y.size == 0:
        return 1.0
    logp = np.log(proba)
    rows = np.arange(y.size)

    def grad_hess(t: float) -> tuple[float, float]:
        q = _sharpen_logs(logp, t)  # (the logs taken once, not at every step)
        mean = np.sum(q * logp, axis=1)  # E_q[log p]
        var = np.sum(q * logp**2, axis=1) - mean**2
        # d/dt of -log q_y = -(log p_y - E_q log p); second derivative Var_q(log p) >= 0
        return float(w @ (mean - logp[rows, y])), float(w @ np.maximum(var, 0.0))

    lo, hi = T_MIN, T_MAX
    if grad_hess(lo)[0] >= 0:
        return lo
    if grad_hess(hi)[0] <= 0:
        return hi
    t = 1.0
    for _ in range(100):
        g, h = grad_hess(t)
        if g > 0:
            hi = t
        else:
            lo = t
        step = t - g / h if h > 0 else np.nan
        t_new = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(t_new - t) <= 1e-10 * t:
            return float(t_new)
        t = t_new
    return float(t)


def vote_certainty(votes: np.ndarray, p_top: np.ndarray, n_trees: int) -> np.ndarray:
    """``(votes + p_top) / (n_trees + 1)``: ordered by votes, then by ``p_top`` in [0, 1)."""
    return (np.asarray(votes, float) + np.asarray(p_top, float)) / (n_trees + 1)


def margin_certainty(votes: np.ndarray, mean: np.ndarray, pred: np.ndarray,
                     n_trees: int) -> np.ndarray:
    """Breiman's margin of the predicted class: ``(v_pred - max_{c != pred} v_c + p̄_pred -
    max_{c != pred} p̄_c) / (n_trees + 1)``, ordered by the vote margin, then by the margin
    of the trees' mean probabilities (in [0, 1)) within equal vote margins.

    Parameters
    ----------
    votes : (n, K) how many trees vote for each class.
    mean : (n, K) the trees' mean probabilities.
    pred : (n,) the predicted class (the argmax of ``mean``).
    """
    votes = np.asarray(votes, float)
    mean = np.asarray(mean, float)
    rows = np.arange(pred.size)

    def runner_up(a: np.ndarray) -> np.ndarray:
        if a.shape[1] < 2:
            return np.zeros(a.shape[0])
        other = a.copy()
        other[rows, pred] = -np.inf
        return other.max(axis=1)

    return (votes[rows, pred] - runner_up(votes) + mean[rows, pred] - runner_up(mean)) / (
        n_trees + 1)


def oob_log_loss(proba: np.ndarray, y: np.ndarray, w: np.ndarray, t: float) -> float:
    """Weighted mean ``-ln sharpen(proba, t)[i, y_i]``: the loss :func:`fit_temperature`
    minimises, by which ``forest`` compares its leaf estimates out of bag."""
    if y.size == 0:
        return 0.0
    q = sharpen(proba, t)[np.arange(y.size), y]
    return float(-(w @ np.log(np.maximum(q, 1e-300))) / w.sum())


class CalibratedBaggingMethod(Method):
    """Bagged Laplace trees, out-of-bag temperature, vote certainty; options ``trees``,
    ``seed``, ``alpha``, ``temperature`` (oob | a number), ``certainty`` (vote | margin |
    proba)."""

    name = "calibrated_bagging"
    options: ClassVar[dict[str, type]] = {"trees": int, "seed": int, "alpha": float,
                                          "temperature": str, "certainty": str}
    defaults: ClassVar[dict] = {"trees": 50, "seed": 1, "alpha": 1.0, "temperature": "oob",
                                "certainty": "vote"}
    randomised = True

    def _check(self) -> float | None:
        o, name = self.opts, self.name
        if o["trees"] < 1:
            raise ConfigError(f"{name}: trees must be at least 1, got {o['trees']}.")
        if o["alpha"] is not None and not o["alpha"] > 0:
            raise ConfigError(f"{name}: alpha must be positive, got {o['alpha']}.",
                              "The temperature works on log-probabilities.")
        if o["certainty"] not in CERTAINTIES:
            raise ConfigError(f"{name}: unknown certainty '{o['certainty']}'.",
                              f"Choose {', '.join(CERTAINTIES[:-1])} or {CERTAINTIES[-1]}.")
        if o["temperature"] == "oob":
            return None
        try:
            t = float(o["temperature"])
        except ValueError:
            t = float("nan")
        if not np.isfinite(t) or t <= 0:
            raise ConfigError(
                f"{name}: temperature must be oob or a positive number, got "
                f"'{o['temperature']}'.")
        return t

    def alpha_candidates(self) -> tuple[float, ...]:
        """The Laplace α the leaves may use: the ``alpha`` option (``forest`` chooses among
        several out of bag when it is not given)."""
        return (float(self.opts["alpha"]),)

    def inputs(self, data: Dataset) -> Dataset:
        """The data as the trees see it (``forest`` codes a missing nominal value as a value
        of its own)."""
        return data

    def new_member(self, i: int):
        """Tree i of the ensemble (unfitted): a Laplace tree with the run's settings."""
        return self.new_tree(leaf="laplace", alpha=self.alpha_candidates()[0])

    def fit(self, data: Dataset) -> CalibratedBaggingMethod:
        fixed_t = self._check()
        labelled = self.inputs(data.subset(np.flatnonzero(data.y >= 0)))
        alphas = self.alpha_candidates()
        self.trees_, oob_sum, oob_n = grow_bootstrap(labelled, self.opts["trees"],
                                                     self.opts["seed"], self.new_member,
                                                     oob_alphas=alphas)
        seen = oob_n > 0
        y, w = labelled.y[seen], labelled.weights[seen]
        best = None
        # each α with its own temperature; the lowest out-of-bag log-loss wins, ties to the
        # first candidate
        for j, a in enumerate(alphas):
            oob = oob_sum[j, seen] / oob_n[seen, None]
            t = fit_temperature(oob, y, w) if fixed_t is None else fixed_t
            loss = oob_log_loss(oob, y, w, t) if len(alphas) > 1 else 0.0
            if best is None or loss < best[0]:
                best = (loss, a, t)
        _, self.alpha_, self.temperature_ = best
        for tree in self.trees_:
            tree.alpha = self.alpha_
        return self

    def calibrate_on(self, data: Dataset) -> dict:
        """Refit the temperature on held-out labelled ``data`` (``treecert calibrate MODEL
        DATA``) instead of out of bag; returns the state stored in the model file."""
        labelled = self.inputs(data.subset(np.flatnonzero(data.y >= 0)))
        mean = per_tree_proba(self.trees_, labelled).mean(axis=0)
        self.temperature_ = fit_temperature(mean, labelled.y, labelled.weights)
        return self.state()

    def state(self) -> dict:
        """What ``treecert train --method`` / ``calibrate`` store: the temperature, the
        leaves' α and the grown trees (:mod:`treecert.methods.ensemble`)."""
        return {"temperature": float(self.temperature_), "leaf_alpha": float(self.alpha_),
                "trees": encode_trees([t.tree_ for t in self.trees_])}

    def read_state(self, state: dict, model) -> None:
        """What a subclass stores beside the trees (none here)."""

    def adopt(self, model) -> CalibratedBaggingMethod:
        """A model that stores this spec's trees supplies them, their α and the temperature
        (nothing is grown); otherwise the trees are grown on the model's embedded training
        data and a stored temperature (a model calibrated before trees were stored)
        replaces the out-of-bag one."""
        state = stored_state(model, self.spec)
        if state is not None and "trees" in state:
            self._check()

            def load() -> list:
                return decode_trees(state["trees"], model.schema.n_classes)

            def load_alpha() -> float:
                a = float(state.get("leaf_alpha", self.alpha_candidates()[0]))
                if not (np.isfinite(a) and a > 0):
                    raise ValueError("leaf_alpha must be positive")
                return a

            self.alpha_ = reading_state(load_alpha, model.source)
            params = {**self.new_member(0).get_params(), "alpha": self.alpha_}
            self.trees_ = stored_estimators(reading_state(load, model.source), model.schema,
                                            params)
            reading_state(lambda: self.read_state(state, model), model.source)
        else:
            super().adopt(model)
        if state is not None:
            def load_t() -> float:
                t = float(state["temperature"])
                if not (np.isfinite(t) and t > 0):
                    raise ValueError("the temperature must be positive")
                return t

            self.temperature_ = reading_state(load_t, model.source)
        return self

    def predict(self, data: Dataset) -> Prediction:
        per_tree = per_tree_proba(self.trees_, self.inputs(data))
        mean = per_tree.mean(axis=0)
        proba = sharpen(mean, self.temperature_)
        rows = np.arange(proba.shape[0])
        pred = np.argmax(proba, axis=1)  # = argmax of the mean: t > 0 keeps each row's order
        K = proba.shape[1]
        votes = np.zeros((pred.size, K))
        np.add.at(votes, (np.broadcast_to(rows, per_tree.shape[:2]),
                          np.argmax(per_tree, axis=2)), 1)
        n = len(self.trees_)
        if self.opts["certainty"] == "vote":
            certainty = vote_certainty(votes[rows, pred], mean[rows, pred], n)
        elif self.opts["certainty"] == "margin":
            certainty = margin_certainty(votes, mean, pred, n)
        else:
            certainty = proba[rows, pred]
        return Prediction(proba, certainty=certainty,
                          columns={"vote_share": votes[rows, pred] / n})

    @property
    def size(self) -> int | float | None:
        return float(np.mean([t.tree_.n_leaves for t in self.trees_]))
