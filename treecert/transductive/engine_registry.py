"""The batched engines a process keeps: one per training set and learner, the last two.

Building an engine (a tree and its certificate tables) costs several plain trees, and the
methods that use one (:class:`HoldsSharedEngine`) run in chunks, possibly in parallel
workers: each process builds an engine once and finds it here for every later chunk.
"""

from __future__ import annotations

import hashlib

import numpy as np

from treecert.data.schema import Dataset
from treecert.tree.classifier import DecisionTree

#: Batched engines built in this process (:func:`shared_engine`), at most two.
_SHARED: dict = {}


def fingerprint(data: Dataset, learner: DecisionTree) -> str:
    """What a batched engine depends on: the training arrays and the learner."""
    h = hashlib.sha256()
    for a in (data.X, data.y, data.weights):
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(str(a.shape).encode())
    h.update(repr([(a.kind, len(a.values or ())) for a in data.schema.attributes]
                  + [data.schema.n_classes]).encode())
    h.update(repr(sorted(learner.get_params().items())).encode())
    return h.hexdigest()


def shared_engine(cls, data: Dataset, learner: DecisionTree):
    """``cls(data, learner)``, built once per process; the oldest of two is dropped, and
    every older engine's caches emptied (``release``: in a cross-validation the previous
    fold's engine is seldom used again, and its caches would double the peak memory; a
    dropped one may still be held by a fitted method)."""
    key = (cls.__name__, fingerprint(data, learner))
    if key not in _SHARED:
        for older in _SHARED.values():
            older.release()
        if len(_SHARED) >= 2:
            _SHARED.pop(next(iter(_SHARED)))
        _SHARED[key] = cls(data, learner)
    return _SHARED[key]


class HoldsSharedEngine:
    """Mixin for objects that use a batched engine: it is found lazily
    (:meth:`BatchEngine.shared <treecert.transductive.batch_engine.BatchEngine.shared>`) and
    left out of their pickled state, so parallel workers look it up in their own process
    instead of receiving a copy with every chunk."""

    def _shared_engine(self, cls, data: Dataset, learner: DecisionTree,
                       wanted: bool = True):
        """``cls.shared(data, learner)``, or None when not ``wanted`` or not supported."""
        if not hasattr(self, "_batch"):
            self._batch = (cls.shared(data, learner)
                           if wanted and cls.supports(data, learner) else None)
        return self._batch

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_batch", None)  # large; found again in the worker's cache
        return state
