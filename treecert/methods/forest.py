"""A random forest of C4.5-family trees, calibrated out of bag, with the trees' votes as
the certainty.

``calibrated_bagging`` (:mod:`treecert.methods.calibrated_bagging`) with Breiman's second
source of diversity: every node of every tree searches its test among a random subset of
the attributes (``max_features``, default ``sqrt``: ⌊√F⌋ of F; Breiman 2001, section 4),
drawn per tree from its own seed (:func:`~treecert.methods.ensemble.tree_seed`). Bootstrap
samples alone grow trees that share their top tests; random subsets decorrelate them, which
sharpens the averaged probabilities and makes the votes a finer ranking of the errors,
most where there are many numeric attributes. Everything else is calibrated_bagging's:
Laplace leaves (α = 1), the mean of ``trees`` trees (default 100, scikit-learn's default),
one temperature fitted on the out-of-bag forecasts, and the certainty
``(votes + p̄_top) / (trees + 1)``.

Options: calibrated_bagging's (``trees`` 100, ``seed``, ``alpha``, ``temperature``,
``certainty``) and the tree's ``max_features`` (``sqrt``; ``all`` makes it
calibrated_bagging with 100 trees, apart from the seeds).

References
----------
L. Breiman, "Random forests", Machine Learning 45(1), 2001. L. Breiman, "Out-of-bag
estimation", 1996. C. Guo et al., "On calibration of modern neural networks", ICML 2017.
"""

from __future__ import annotations

from typing import ClassVar

from treecert.methods.calibrated_bagging import CalibratedBaggingMethod
from treecert.methods.ensemble import tree_seed
from treecert.tree.classifier import DecisionTree


class ForestMethod(CalibratedBaggingMethod):
    """Random forest of Laplace trees (``max_features`` sqrt), out-of-bag temperature, vote
    certainty; calibrated_bagging's options with ``trees`` 100."""

    name = "forest"
    defaults: ClassVar[dict] = {**CalibratedBaggingMethod.defaults, "trees": 100}
    #: The attribute subset when neither the spec nor the run chooses one.
    default_max_features: ClassVar[str] = "sqrt"

    def new_member(self, i: int):
        """Tree i: a Laplace tree drawing its attribute subsets from its own seed (the
        run's ``max_features``, else ``sqrt``)."""
        params = dict(self.tree_params)
        if params.get("max_features") is None:
            params["max_features"] = self.default_max_features
        return DecisionTree(**params, leaf="laplace", alpha=self.opts["alpha"],
                            random_state=tree_seed(self.opts["seed"], i))
