"""The vocabulary of POKER's paths (Fine & Scheinberg, Sec. 3): the partition codes, the
kinds of events that end a piece, their round-off windows and the least-index choice.

These are the printed method's own constants (a floating-point "becomes active" needs a
zero test and a tie window); the departures' settings live in
:data:`refsvm.poker.departures.DEPARTURES`.  The compiled twin reads these from here.
"""

from __future__ import annotations

from ..core.active_set import AT_C, AT_ZERO, GONE, IN_S, limiting_event

__all__ = ["I_O", "I_S", "I_C", "FORCED", "GONE", "PENDING", "IDLE", "FIXED", "BIAS",
           "UNLEARN", "JOINT", "EV_END", "EV_LEAVE", "EV_JOIN", "EV_FLIP", "EPS_G",
           "EPS_ALPHA", "EPS_ALPHA_ULP", "EPS_RATE", "EPS_ARATE", "EPS_PIVOT",
           "EPS_PIVOT_ABS", "alpha_window", "next_breakpoint", "CyclingError", "PathError",
           "JointIncrementError", "SingularActiveSetError"]

# partition codes: I_o, I_s, I_c and GONE are the core's (:mod:`refsvm.core.active_set`,
# shared with Cauwenberghs & Poggio's R, S, E); FORCED and PENDING are POKER's own
# (status < 0: not in the problem)
I_O, I_S, I_C = AT_ZERO, IN_S, AT_C
FORCED, PENDING = 3, -2
# what the state is doing (which system holds after every breakpoint)
IDLE, FIXED, BIAS, UNLEARN, JOINT = 0, 1, 2, 3, 4
# event kinds
EV_END, EV_LEAVE, EV_JOIN, EV_FLIP = 0, 1, 2, 3

#: events within these of their bound at the smallest step are tied
EPS_G = 1e-12           # for g
EPS_ALPHA = 1e-12       # times min(C, 1), for alpha (see ``alpha_window``)
#: ... and at least this times C (the round-off of alpha at large C)
EPS_ALPHA_ULP = 1e-14
#: relative round-off level of a rate dg_i against the bound of its terms
EPS_RATE = 1e-10
#: a rate dalpha_s below this times the largest one is zero
EPS_ARATE = 1e-12
#: a pivot below this fraction of its scale is zero ...
EPS_PIVOT = 1e-11
#: ... and so is one below this times max k(x, x)
EPS_PIVOT_ABS = 1e-14


def alpha_window(C, eps=EPS_ALPHA):
    """The round-off window of alpha at the bound c: ``eps`` c for c <= 1, ``eps`` for
    1 <= c <= eps / EPS_ALPHA_ULP, EPS_ALPHA_ULP c beyond.

    An alpha moved by w moves the g of the others by up to w k_max, so a window in
    alpha must not grow with c where round-off does not force it to (a window eps c at
    c = 1e12 would let an alpha of 1 count as 0); below it c's own round-off (about
    2e-16 c per operation, so EPS_ALPHA_ULP is 45 of them) would make true ties look
    distinct."""
    return max(eps * min(C, 1.0), EPS_ALPHA_ULP * C)


def next_breakpoint(t_end, w_end, ts, ws, ids, kinds):
    """The step and the event that limits it, by the core's least-index rule
    (:func:`refsvm.core.active_set.limiting_event`).

    ``t_end`` is the step to the end of the parameter (inf if none) and ``w_end`` its
    round-off window; ``ts, ws, ids, kinds`` the other events (step, window, example
    id, kind).  The end goes first (a priority event), then the tied event of the
    smallest example id.  Returns (step, kind, id): t_end when the end is chosen, else
    t_min; kind -1 when there is no event at all."""
    tmin, kind, who = limiting_event([(t_end, EV_END, -1, w_end)], ts=ts, ws=ws, ids=ids,
                                     kinds=kinds)
    return (t_end if kind == EV_END else tmin), int(kind), int(who)


class CyclingError(RuntimeError):
    """A path passed more breakpoints than any finite path of its size needs (50 (n + 10)):
    it cycles, on degenerate data (docs, "Fuzzing")."""


class PathError(RuntimeError):
    """A path (SelfInit, AltPOKER, the joint increment) ended with y'alpha = 0 or the sign
    conditions of the kept g lost, or with an inverse of the active set that a fresh one
    does not mend: a singular active set reached through round-off on degenerate data
    (fuzzing found it on rows of zeros with the linear kernel).  The state is not the
    optimum; the estimator learns the call again from its copy of the model, by another
    path (``refsvm.poker.estimators``)."""


class JointIncrementError(PathError):
    """:class:`PathError` of the joint increment, or its path did not end (cycling on
    degenerate data).  The estimator learns the chunk again by AltPOKER from its copy of
    the model (and if that fails too, by IncrementalSVM's path)."""


class SingularActiveSetError(PathError):
    """:class:`PathError` raised inside a path: a member left I_s and neither the
    rank-one downdate of R nor a fresh inverse of the smaller active set could be formed
    (a singular active set reached through round-off, e.g. chunks of 5 of a nearly
    constant RBF kernel, gamma = 1e-9, C = 1e6); or a piece of the path found no event
    to end it.  The state is not the optimum; the estimator learns the call again by
    another path, as for any :class:`PathError`."""
