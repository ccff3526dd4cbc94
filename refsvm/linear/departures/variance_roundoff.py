"""PAm's class variances with their rounding error bound (departure ``variance_roundoff``).

The failure of the printed form: the slides' unbiased variance
s = Σx²/(n−1) − n/(n−1)·m² is a difference of two terms of about the size of
A = Σx²/(n−1), whose rounding error is at most about 2(n + 2)ε·A.  For a feature that
is constant within a class so far the exact s is 0, but the computed one is a residue of
the cancellation (1e-17 where the values were equal, of either sign), and the quasi-LDA
direction (w_p)_i = ((m₊)_i − (m₋)_i)/((s₊)_i + (s₋)_i) turns it into a weight of 1e16:
one PAm update then ruins w.  With this departure a computed s within
``setting · (n + 2) · A`` is 0 (the feature gets (w_p)_i = 0, as a zero pooled variance
does); with the paper's setting 0 the variance is the printed formula, unchanged.

The stream that shows it: 40 examples in 3-D whose first feature is 0.1 in every
positive and −0.3 in every negative example (``tests/linear/test_departures.py``,
``test_the_printed_variance_of_a_constant_feature``): with the printed variance
(w_p)_1 = 8.9e15 and ‖w‖ = 3.8e15 after the pass (PAm-1, C = 1, γ = 0.1); with the
departure (w_p)_1 = 0 and ‖w‖ = 3.2.

Docs: ``docs/lee_tseng_chen.rst``, "Departures".
"""

from __future__ import annotations

import numpy as np

__all__ = ["variance"]


def variance(sumsq, n, mean, roundoff):
    """The slides' unbiased variance Σx²/(n−1) − n/(n−1)·m² (n ≥ 2), element-wise; with
    ``roundoff`` > 0 a value within ``roundoff · (n + 2) · Σx²/(n−1)`` is set to 0."""
    a = sumsq / (n - 1)
    s = a - n / (n - 1) * mean**2
    if roundoff == 0.0:
        return s
    return np.where(s > roundoff * (n + 2) * a, s, 0.0)
