"""The tree API of :class:`~treecert.estimator.TreecertClassifier`, as a scikit-learn user
reaches for it (``feature_importances_``, ``apply``, ``decision_path``, ``get_depth``,
``get_n_leaves``), and its model file (``save``, ``load``).

A mixin over the estimator's fitted state (``method_``, ``_predict_data``); the arithmetic
is in :mod:`treecert.tree.inspection`, the file in :mod:`treecert.estimator_model`.
"""

from __future__ import annotations

import numpy as np

from treecert.errors import ConfigError, ParameterError


class TreeAPIMixin:
    """The tree API and model file of the estimator (see the module docstring)."""

    # ---------------------------------------------------------------- the tree

    def _tree(self):
        """The tree the tree API reads (see TreecertClassifier's docstring), grown once."""
        self._check_fitted()
        if getattr(self, "_base_tree", None) is None:  # (absent if pickled by an older treecert)
            from treecert.evaluation.explain import explained_tree

            try:
                self._base_tree = explained_tree(self.method_)
            except ConfigError:
                raise ParameterError(
                    f"method {self.method_.spec.name!r} does not predict with one tree "
                    "(ensembles, naive_bayes and tpce_batch do not), so it has no depth, "
                    "leaves, decision paths or feature importances.",
                    "Use a tree method: frequency, laplace, m_estimate, empirical_bayes, "
                    "kk, tpce, binning or venn over a tree.",
                ) from None
        return self._base_tree

    @property
    def feature_importances_(self) -> np.ndarray:
        """See the estimator's docstring (Attributes). An ``AttributeError`` for a method
        without a single tree (so ``hasattr`` is False, as for scikit-learn's ensembles)."""
        from treecert.tree.inspection import feature_importances

        try:
            tree = self._tree()
        except ParameterError as exc:  # hasattr() is False, as for scikit-learn's ensembles
            raise AttributeError(str(exc)) from exc
        out = np.zeros(self.n_features_in_)
        out[self._used] = feature_importances(tree, self._used.size, self.criterion)
        return out

    def get_depth(self) -> int:
        """The tree's depth: the largest number of tests from the root to a leaf (0 for a
        tree that is one leaf)."""
        return self._tree().depth

    def get_n_leaves(self) -> int:
        """The tree's number of leaves."""
        return self._tree().n_leaves

    def apply(self, X) -> np.ndarray:
        """The leaf each row reaches (n_samples,), as a node id: the node's index in the
        model file's tree arrays and in :meth:`decision_path`'s columns (``n<id>`` in
        ``treecert show --format dot``).

        A row whose value of a tested attribute is missing goes down every branch of that
        test with the branch's share of the training weight (C4.5) and so reaches several
        leaves in part; ``apply`` gives the leaf holding the largest share of it (ties: the
        smallest id), the ``leaf`` column of ``treecert predict --explain``.
        """
        from treecert.evaluation.explain import heaviest_leaf

        tree = self._tree()
        data, _ = self._predict_data(X)
        return heaviest_leaf(tree, data.X)[0]

    def decision_path(self, X):
        """The nodes from the root to :meth:`apply`'s leaf of each row, as a
        ``scipy.sparse.csr_matrix`` of shape (n_samples, n_nodes) with ones where row i
        passes node j (scikit-learn's layout; a row with a missing value follows the path
        to its heaviest leaf, as :meth:`apply`)."""
        from treecert.tree.inspection import decision_path

        return decision_path(self._tree(), self.apply(X))

    # ---------------------------------------------------------------- model file

    def save(self, path, *, embed_data: bool = True) -> None:
        """Write the fitted estimator as ``treecert train``'s model file (JSON), which
        ``treecert predict`` serves with the same probabilities and :meth:`load` reads
        back. ``embed_data=False`` leaves the training rows out (``--no-embed-data``):
        then only the leaf methods and ``empirical_bayes`` predict from the file alone.
        With ``loss``, give ``treecert predict --loss`` the same matrix to get the same
        decisions. See :mod:`treecert.estimator_model` for what is stored."""
        from treecert.estimator_model import save

        self._check_fitted()
        save(self, path, embed_data=embed_data)

    @classmethod
    def load(cls, path):
        """A fitted estimator from a model file written by :meth:`save` or by ``treecert
        train`` / ``prune`` / ``calibrate``; it predicts as ``treecert predict`` does. A
        file of ``treecert train`` gives ``method`` the model's method, the tree
        parameters its settings, and takes its attributes as the columns of ``X``."""
        from treecert.estimator_model import load

        return load(cls, path)
