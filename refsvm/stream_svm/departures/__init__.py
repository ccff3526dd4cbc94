"""StreamSVM's departures from the printed Algorithms 1 and 2 (Rai, Daumé,
Venkatasubramanian 2009), one module each beside the reference.

==================  =========  ======  ===================================================
name                default    paper   module
==================  =========  ======  ===================================================
``consistent_xi2``  True       False   :mod:`.consistent_xi2`: ξ² of the augmented center
==================  =========  ======  ===================================================

``departures="paper"`` (both twins) runs lines 1/3 and 9 as printed: ξ² = 1 at the start
and ξ² ← ξ²[1 − ½(1 − R/d)]² + [½(1 − R/d)]² with the R after line 8.  The lookahead
step of Algorithm 2 (line 7, "update w, R, ξ² to enclose the ball (w, R, ξ²) and all
points in S") is the exact minimum enclosing ball in either form
(:mod:`refsvm.stream_svm.enclosing_ball`): the paper prints no formula for it.  The
multiple balls of Sec. 4.3 have no printed algorithm and no printed form: their state
refuses ``consistent_xi2=False``.

Not departures: the linear form's w = s·v (a scaled vector, folded when s < FOLD: a
representation of the printed w, as in every linear twin of refsvm) and the lookahead
solver's tolerances TOL and QP_TOL (the paper asks for the exact ball; these say how
exactly it is computed).
"""

from __future__ import annotations

from ...core.departures import Departure, flag, resolve

__all__ = ["DEPARTURES", "FORMS", "resolve_form"]

#: The two forms of lines 3 and 9 (the states' and the estimator's ``form``).
FORMS = ("consistent", "printed")

DEPARTURES = {
    "consistent_xi2": Departure(
        default=True, paper=False, check=flag,
        answers="lines 3 and 9 as printed do not keep ξ² of the augmented center (line 9 "
                "takes the R after line 8): the printed ball leaves points it has seen outside"),
}


def resolve_form(departures, form="consistent"):
    """``departures`` resolved over :data:`DEPARTURES`, then ``form="printed"`` (the
    older spelling of ``{"consistent_xi2": False}``) applied on top; ``"consistent"``
    leaves the choice to ``departures``."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}; got {form!r}")
    settings = resolve(DEPARTURES, departures)
    if form == "printed":
        settings["consistent_xi2"] = False
    return settings
