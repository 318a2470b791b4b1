"""The numpy average ranks behind the AUC agree with scipy's ``rankdata(method="average")``,
which the command line no longer imports for them."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import rankdata

from treecert.evaluation.point_metrics import average_ranks


def test_ties_share_the_mean_of_their_ranks():
    assert average_ranks(np.array([3.0, 1.0, 3.0, 2.0, 3.0])).tolist() == [4, 1, 4, 2, 4]


@given(st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0, 7.0]) | st.floats(-1e6, 1e6),
                min_size=1, max_size=60))
def test_average_ranks_equal_scipys(values):
    x = np.array(values, dtype=float)
    np.testing.assert_array_equal(average_ranks(x), rankdata(x, method="average"))
