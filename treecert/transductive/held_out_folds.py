"""The folds of a cross-validation from one engine: where every job takes the exact
batched paths (:mod:`treecert.transductive.exact_paths`), a job's root may hold any
training rows, so the jobs of all folds — each root the rows outside its fold — share their
rounds: one batched search per depth for every fold, not one per fold and depth. Each root
holds its fold's training rows in their order, which is what fitting on them gives, so
every search, count and stop is that fit's, bit for bit."""

from __future__ import annotations

import itertools

import numpy as np

from treecert.data.schema import Dataset
from treecert.transductive import budget
from treecert.tree.classifier import DecisionTree
from treecert.tree.segments import flat_nonzero
from treecert.tree.split_search import counted_in_average


def serves(data: Dataset, learner: DecisionTree, train_sizes: list[int],
           certified: bool) -> bool:
    """Whether one engine on ``data`` serves folds whose training sets have
    ``train_sizes`` rows: not where its certificates apply (``certified``: they hold for the
    base tree of one training set), nor with collapse or cp (whole trees, edited); and the
    one thing of a training set that is not its rows, its size in J48's many-values rule
    (:func:`~treecert.tree.split_search.counted_in_average`), must count the same columns
    for every fold as for all the rows, which the engine's finder is built on."""
    if certified or learner.collapse or learner.cp > 0:
        return False
    nominal, n_values = data.schema.nominal_mask(), data.schema.n_values()
    multi, counted = counted_in_average(nominal, n_values, data.n_samples)
    return all(m == multi and np.array_equal(c, counted) for m, c in (
        counted_in_average(nominal, n_values, size) for size in train_sizes))


def assignment(n_rows: int, folds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """(each row's fold, -1 outside them; the folds' rows laid end to end; their folds)
    for ``folds``, lists of row indices: a job of ``rows[i]`` trains on the rows outside
    fold ``x_fold[i]``."""
    row_fold = np.full(n_rows, -1, dtype=np.int64)
    for f, rows in enumerate(folds):
        row_fold[rows] = f
    rows = np.concatenate(folds) if folds else np.zeros(0, np.int64)
    return row_fold, rows, row_fold[rows]


def split(pred, folds: list[np.ndarray]) -> list:
    """A prediction of the folds' rows laid end to end (:func:`assignment`), per fold."""
    bounds = np.cumsum([0] + [f.size for f in folds])
    return [pred.take(np.arange(lo, hi)) for lo, hi in itertools.pairwise(bounds)]


def cells_per_entry(schema) -> int:
    """What an exact-path search holds per training-row entry (:func:`pays`): 1, plus per
    numeric column its sorted values and its class cumsums (classes + 1)."""
    return 1 + int((~schema.nominal_mask()).sum()) * (schema.n_classes + 1)


def pays(n_rows: int, train_sizes: list[int], labels_per_row: int,
         cells_per_entry: int = 1) -> bool:
    """Whether one engine is worth it: where a fold's own call of the exact paths holds few
    cells — its jobs (test rows × labels a row) times its training rows times
    ``cells_per_entry``, what a search holds per entry (the function of that name: 1 +
    numeric columns × (classes + 1)), at most a quarter of
    :data:`~treecert.transductive.budget.CALL_ENTRIES` — a round's fixed cost dominates
    and sharing rounds pays (vote, nominal: 1.6x); past that one engine only makes calls
    that outgrow the caches (10 numeric columns: 1.2–1.3x slower from 300 rows on)."""
    return all((n_rows - m) * labels_per_row * (m + 1) * cells_per_entry
               <= budget.CALL_ENTRIES // 4 for m in train_sizes)


def check(engine, drop: np.ndarray, held_out: tuple[np.ndarray, np.ndarray]) -> None:
    """Refuse what the engine cannot serve: held-out folds together with dropped rows, or
    folds it does not serve (:func:`serves`)."""
    row_fold, job_fold = held_out
    sizes = [int((row_fold != f).sum()) for f in np.unique(job_fold).tolist()]
    if (drop >= 0).any() or not serves(engine.data, engine.learner, sizes, engine.certified):
        raise ValueError("held-out folds need the exact paths and no dropped row")


def roots(w: np.ndarray, held_out: tuple[np.ndarray, np.ndarray], part: np.ndarray
          ) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """The roots of the jobs ``part`` — each the training rows outside its fold, in order,
    then x (the i-th job's row ``n + i`` of the augmented finder, weight 1) last — and
    their keys, the folds (jobs of one fold hold the same rows). ``w``: the n rows'
    weights; ``held_out``: (each row's fold, each job's fold)."""
    row_fold, job_fold = held_out[0], held_out[1][part]
    n, out, kept = w.size, [], {}
    for i, f in enumerate(job_fold.tolist()):
        if f not in kept:
            rows = flat_nonzero(row_fold != f)
            kept[f] = (rows, np.concatenate([w[rows], [1.0]]))
        rows, fold_w = kept[f]
        out.append((np.concatenate([rows, [n + i]]), fold_w))
    return out, job_fold
