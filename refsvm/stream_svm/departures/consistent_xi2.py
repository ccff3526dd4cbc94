"""The consistent ξ² bookkeeping of Algorithm 1 (departure ``consistent_xi2``).

The failure of the printed form: line 3 sets ξ² = 1 and line 9 updates
ξ² ← ξ²[1 − ½(1 − R/d)]² + [½(1 − R/d)]² with the R *after* line 8.  The center is the
convex combination c = Σ_m λ_m φ̃(z_m) of the augmented points
φ̃(z_m) = [y_m φ(x_m); C^{-1/2} e_m], so the squared norm of its e-part is
ξ² = Σ_m λ_m² / C: 1/C for the first ball, and after c ← (1 − β)c + β φ̃(z_n) with
β = ½(1 − R/d) (the R *before* line 8, the step of Zarrabi-Zadeh & Chan, Eqs. 4-6)
ξ² ← (1 − β)² ξ² + β²/C.  The printed lines equal these in line 3 when C = 1 and
never in line 9 (its β is taken with the R after line 8); the printed ξ² is not the
center's, the distances of line 5 are not the distances to the center, and the printed
ball does not enclose the points it has accepted (at C = 0.25, 1 and 4 alike).

The stream that shows it: two Gaussian classes in 2-D, 200 points, centers ±(1, 0)
(``tests/stream_svm/test_departures.py``): with the printed lines a point it has seen
lies 0.045 (C = 1), 0.87 (C = 4) outside the ball; with this departure none lies outside
by more than rounding (4e-16).

Docs: ``docs/rai_daume_venkatasubramanian.rst``, "Algorithm 1" (the two forms of lines
3 and 9) and "Departures".
"""

from __future__ import annotations

__all__ = ["first_xi2", "next_xi2"]


def first_xi2(C):
    """ξ² of the first ball (one point, λ_1 = 1): 1/C (printed line 3: 1)."""
    return 1.0 / C


def next_xi2(xi2, beta, C):
    """ξ² after the center moves a fraction β toward the new point (printed line 9:
    ξ²[1 − β']² + β'² with β' from the R after line 8): (1 − β)² ξ² + β²/C."""
    return (1.0 - beta) ** 2 * xi2 + beta ** 2 / C
