"""The ridge of RKPAm's within-class covariance, full or diagonal (departure ``shrinkage``).

The failure of the printed form: RKPAm's proximal model is the reduced-kernel Fisher
direction ũ_p = [COV(K(A₊, Ã)) + COV(K(A₋, Ã))]⁻¹ (M̃₊ − M̃₋).  The covariance of kernel
rows is singular early in a stream (rank below m̃ until m̃ examples of each class) and
numerically singular later (the spectrum of kernel-row covariances decays to round-off),
so the printed inverse does not exist, or amplifies round-off without bound: the twins
cannot agree, and the model is ruined by a γ z_p of norm 1e4 and more.  With this
departure the matrix is COV₊ + COV₋ + μI, μ = setting · trace(COV₊ + COV₋)/m̃ (its mean
variance; the regularised within-class scatter of kernel Fisher discriminants, Mika et al.
1999).  With the paper's setting 0 the matrix is the printed one, and a refresh at which
it is not positive definite leaves no proximal model until the next one.

The stream that shows it: XOR quadrants in 2-D, 120 points (seed 3), m̃ = 10, γ = 1.5,
proximal weight 0.1, covariance="full" (``tests/linear/test_departures.py``,
``test_rkpam_full_paper_form``): in the paper form there is no proximal model until
(n₊ − 1) + (n₋ − 1) ≥ m̃ (the rank of COV₊ + COV₋), and then ‖z‖ reaches 1.6e4, against
25 with the ridge.  On other seeds of the same stream the printed matrix is singular to
rounding: the reference's solve raises LinAlgError (seed 0), or the twins' answers part
(seed 1: ‖z‖ 4.5e3 and 3.2e12).

The diagonal covariance (the slides' quasi-KFD, ũ_i = (M̃₊ − M̃₋)_i / (s₊ + s₋)_i) fails
too, without any round-off: early in a stream a reduced point far from the first
examples has kernel values of 1e-10 in both classes, a genuine pooled variance of 1e-19
and a mean difference of 1e-10, so ũ_i is 1e9 and one update adds a γ z_p of norm 1e6 to
z, which the bounded PA steps never undo.  With this departure μ = setting · mean(s₊ + s₋)
is added to every pooled variance (the same ridge, on the diagonal).  The stream that shows
it: the 4 x 4 Checkerboard on [-2, 2)², 300 points (seed 0), the last 20 as the reduced set,
γ = 2, proximal weight 0.01 (``tests/linear/test_rkpam_diagonal_ridge.py``): ‖z‖ 1.2e5 in
the paper form, 9.5 with the ridge.  On the million-point Checkerboard (100 reduced points,
weight 0.01, six orders) the test error was 0.35-26 % in the paper form and 0.35-0.8 %
with the ridge.

Docs: ``docs/lee_tseng_chen.rst``, "Departures".
"""

from __future__ import annotations

__all__ = ["ridge"]


def ridge(trace, m, shrinkage):
    """μ = shrinkage · trace / m̃ (0 for the paper's setting)."""
    return shrinkage * trace / m
