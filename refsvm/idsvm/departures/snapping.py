"""Snapping ulp residues of a bound on the margin vectors (setting ``snap_ulps``).

The failure of the printed form it answers: at extreme C (above ``polish_above``) the
path leaves a margin vector an ulp of C away from 0 or C where it should sit at the
bound; the next unlearning then found no event to limit its increment (the C = 1e12
census of ``tests/idsvm/test_stress.py``).  At the end of a polished operation
(:mod:`.polish`) an alpha_s within ``snap_ulps`` ulps of the operation's alpha_max of 0
or C goes to that bound (0: off).

The snap itself is the core's (:func:`refsvm.core.exactness.snap_margin`).  Docs:
``docs/cauwenberghs_poggio.rst``, "Extreme C: the end-of-operation polish".
"""

from ...core.exactness import snap_margin

__all__ = ["Snapping"]


class Snapping:
    """Mixin of the IDSVM state."""

    def _snap(self, w):
        """Margin vectors with alpha within w of 0 or C go to that bound (S order);
        nothing when ``snap_ulps`` is 0."""
        if self.departures["snap_ulps"]:
            snap_margin(self.margin, self.alpha, self.C, w)
