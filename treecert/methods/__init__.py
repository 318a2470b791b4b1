"""Certainty methods: every way of producing class probabilities, behind one interface.

``METHODS`` maps a snake_case name — the CLI value, the JSON ``"method"`` and the value in
result columns — to a :class:`~treecert.methods.base.Method` class. ``evaluate``, ``compare``
and ``predict --method`` look methods up here and nothing else, so a new method is one
module plus one line below (the registry itself lives in
:mod:`treecert.methods.base`, so that methods building other methods need not import this
package).
"""

from __future__ import annotations

from treecert.methods.bagging import BaggingMethod
from treecert.methods.base import (
    METHODS,
    Method,
    MethodSpec,
    Prediction,
    make_method,
    parse_method_spec,
)
from treecert.methods.binning import BinningMethod
from treecert.methods.calibrated_bagging import CalibratedBaggingMethod
from treecert.methods.certified_tree import CertifiedTreeMethod
from treecert.methods.empirical_bayes import EmpiricalBayesMethod
from treecert.methods.forest import ForestMethod
from treecert.methods.kk import KukarKononenkoMethod
from treecert.methods.leaf import FrequencyMethod, LaplaceMethod, MEstimateMethod
from treecert.methods.naive_bayes import NaiveBayesMethod
from treecert.methods.tpce import TpceMethod
from treecert.methods.tpce_batch import TpceBatchMethod
from treecert.methods.venn import VennMethod

METHODS.update({
    "frequency": FrequencyMethod,
    "laplace": LaplaceMethod,
    "m_estimate": MEstimateMethod,
    "tpce": TpceMethod,
    "tpce_batch": TpceBatchMethod,
    "kk": KukarKononenkoMethod,
    "bagging": BaggingMethod,
    "naive_bayes": NaiveBayesMethod,
    "binning": BinningMethod,
    "venn": VennMethod,
    "empirical_bayes": EmpiricalBayesMethod,
    "calibrated_bagging": CalibratedBaggingMethod,
    "forest": ForestMethod,
    "certified_tree": CertifiedTreeMethod,
})

__all__ = ["METHODS", "Method", "MethodSpec", "Prediction", "make_method", "parse_method_spec"]
