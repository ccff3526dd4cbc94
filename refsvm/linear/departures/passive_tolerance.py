"""RKPA's passive test relative to the scale of the loss (departure ``passive_rtol``).

The failure of the printed form: a round of RKPA / RKPAm is passive when the hinge loss
ℓ = 1 − y(zᵀφ(x) + b) is 0.  A point met again right after an exact step has ℓ = 0 in
exact arithmetic and ±1e-16 of the scale of its terms in floating point, so round-off
decides whether the round is passive; the twins round differently (fixed-order C loops
against NumPy), and RKPAm then adds γ z_p in one twin and not in the other.  With this
departure a round is passive when ℓ ≤ setting · (1 + |b| + Σ_i |z_i φ_i|), the scale of
the terms of y f(x); with the paper's setting 0 the test is the printed ℓ ≤ 0.

The stream that shows it: a point presented twice in a row
(``tests/linear/test_reduced_kernel_pa.py``, ``test_a_repeated_point_is_passive_in_both_twins``).

Docs: ``docs/lee_tseng_chen.rst``, "Departures".
"""

from __future__ import annotations

import numpy as np

__all__ = ["is_passive"]


def is_passive(z, b, phi, y, rtol):
    """True when the hinge loss of (φ, y) under (z, b) is at most
    rtol · (1 + |b| + Σ|z_i φ_i|) (rtol = 0: the printed ℓ ≤ 0)."""
    terms = z * phi
    loss = 1.0 - y * (float(terms.sum()) + b)
    return loss <= rtol * (1.0 + abs(b) + float(np.abs(terms).sum()))
