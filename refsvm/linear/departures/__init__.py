"""The linear family's departures from the printed algorithms (Lee, Tseng, Chen's slides
for the Perceptron, PA, PAm, RKPA and RKPAm; Bagnell's notes for the online linear SVM),
one module each beside the references.

========================  ==========  ======  =============================================
name                      default     paper   module (state)
========================  ==========  ======  =============================================
``variance_roundoff``     2 ε         0       :mod:`.variance_roundoff` (PAm, RKPAm diag.)
``passive_rtol``          1e-9        0       :mod:`.passive_tolerance` (RKPA, RKPAm)
``shrinkage``             0.1         0       :mod:`.shrinkage` (RKPAm, both covariances)
``refresh_growth``        1.1         1       :mod:`.refresh` (RKPAm, full covariance)
========================  ==========  ======  =============================================

Every state of the family (``PerceptronState``, ``PAState``, ``PAmState``,
``PegasosState``, ``ReducedKernelPAState``, ``ReducedKernelPAmState``, both twins) takes
``departures`` and keeps the resolved table; each reads the settings that concern it.
``departures="paper"`` runs the printed algorithms exactly, in both twins.

Not departures (decided with the papers):

- the Perceptron and PA / PA-I / PA-II have none: their states are the slides' lines;
- the online linear SVM's mini-batches, projection and averaging are Bagnell's own
  (his notes print the projection as an optional step of Algorithm 1, the average of
  the iterates as an optional output, and mini-batches with the averaged subgradient
  among his tricks): they stay parameters of ``PegasosState`` and of
  ``OnlineLinearSVM``, off unless asked for;
- w = s·v of the online linear SVM (a scaled vector, folded when s is small) is a
  representation of the printed w;
- the compiled twins' fused input checks (each row checked inside the pass) and RKPA's
  screen (a row passive for certain from K(Ã, x) alone) change no number: the tests
  compare them bit for bit with the unfused and unscreened computation;
- the estimator's choices that the slides leave open (the reduced set, ε, the
  covariance kind, freezing the proximal model) are parameters, not departures.
"""

from __future__ import annotations

import numpy as np

from ...core.departures import Departure, nonnegative

__all__ = ["DEPARTURES"]


def _growth(name, value):
    """A refresh growth factor: a finite number >= 1 (1: refresh at every example)."""
    value = nonnegative(name, value)
    if value < 1.0:
        raise ValueError(f"departure {name!r} must be a finite number >= 1; got {value!r}")
    return value


DEPARTURES = {
    "variance_roundoff": Departure(
        default=2.0 * float(np.finfo(np.float64).eps), paper=0.0, check=nonnegative,
        answers="PAm: the printed variance of a feature constant in a class is a "
                "cancellation residue (1e-17), which the quasi-LDA quotient turns into a "
                "weight of 1e16"),
    "passive_rtol": Departure(
        default=1e-9, paper=0.0, check=nonnegative,
        answers="RKPA/RKPAm: a point met again right after an exact step has a loss of "
                "±1e-16 of its terms' scale, so round-off decides between a passive round "
                "and an update (RKPAm: whether γ z_p is added), differently in each twin"),
    "shrinkage": Departure(
        default=0.1, paper=0.0, check=nonnegative,
        answers="RKPAm: full covariance: COV₊ + COV₋ of kernel rows is singular early in a "
                "stream and numerically singular later; its inverse amplifies round-off "
                "into a γ z_p of norm 1e4 and more; diagonal: a pooled variance of 1e-19 "
                "(a reduced point far from the first examples) makes ũ_i 1e9 and ruins z"),
    "refresh_growth": Departure(
        default=1.1, paper=1.0, check=_growth,
        answers="RKPAm full covariance: the printed COV₊ + COV₋ changes as a whole with "
                "every example (the normalisers 1/(n − 1)), an O(m̃³) solve per update; "
                "refreshing them when a class count grows by this factor makes it O(m̃²)"),
}
