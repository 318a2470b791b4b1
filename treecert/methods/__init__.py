"""Certainty methods: every way of producing class probabilities, behind one interface.

``METHODS`` maps a snake_case name — the CLI value, the JSON ``"method"`` and the value in
result columns — to a :class:`~treecert.methods.base.Method` class. ``evaluate``, ``compare``
and ``predict --method`` look methods up here and nothing else, so a new method is one
module plus one line below (the registry itself lives in
:mod:`treecert.methods.base`, so that methods building other methods need not import this
package).
"""

from __future__ import annotations

from treecert.methods.base import (
    METHODS,
    Method,
    MethodSpec,
    Prediction,
    make_method,
    parse_method_spec,
)

# Each method's class is imported when it is first looked up (:class:`~treecert.methods.base.
# Registry`): a `evaluate --method frequency` need not import the transductive engines.
METHODS.register({
    "frequency": "treecert.methods.leaf:FrequencyMethod",
    "laplace": "treecert.methods.leaf:LaplaceMethod",
    "m_estimate": "treecert.methods.leaf:MEstimateMethod",
    "tpce": "treecert.methods.tpce:TpceMethod",
    "tpce_batch": "treecert.methods.tpce_batch:TpceBatchMethod",
    "kk": "treecert.methods.kk:KukarKononenkoMethod",
    "bagging": "treecert.methods.bagging:BaggingMethod",
    "naive_bayes": "treecert.methods.naive_bayes:NaiveBayesMethod",
    "binning": "treecert.methods.binning:BinningMethod",
    "venn": "treecert.methods.venn:VennMethod",
    "empirical_bayes": "treecert.methods.empirical_bayes:EmpiricalBayesMethod",
    "calibrated_bagging": "treecert.methods.calibrated_bagging:CalibratedBaggingMethod",
    "forest": "treecert.methods.forest:ForestMethod",
    "certified_tree": "treecert.methods.certified_tree:CertifiedTreeMethod",
})

__all__ = ["METHODS", "Method", "MethodSpec", "Prediction", "make_method", "parse_method_spec"]
