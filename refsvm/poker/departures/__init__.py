"""POKER's departures from Fine & Scheinberg's printed method, one table, one module each.

``DEPARTURES`` (name -> :class:`refsvm.core.departures.Departure`) is the one home of
every setting below; the reference state and the compiled twin read them per instance
from ``state.departures`` (``departures=None`` the defaults, ``"paper"`` Fig. 1 as
printed, or a dict).  The modules of this package hold the code, each a mixin of
:class:`refsvm.poker.poker.POKERState`; the compiled twin has the paths' parts in C and
calls the others (the end of a chunk, the bias centring, the drivers of the joint
increment and of the decrement) on its own state, as plain functions:

===========================  =====================================  ==========================
module                       departure (settings)                   docs section
===========================  =====================================  ==========================
``forced_path``              the path that drives a set of alphas   "One factorisation ..."
``joint_increment``          ``joint_increment``                    "One factorisation ..."
``unlearning``               none: an extension called explicitly   "One factorisation ..."
``end_of_chunk``             ``end_check``, ``end_*``, ``polish*``  "Extreme C", "Fuzzing",
                             ``exact_check``, ``kkt_tol``,          "The exactness check"
                             ``*_ulps``, ``ulps_ck``
``bias_centring``            ``centre_bias``, ``bound_window``      "The readings chosen ..."
``regularise_fixed``         ``regularise_fixed``                   "One factorisation ..."
``duplicates``               ``duplicates``                         "Extreme C"
``refresh``                  ``refresh``, ``*_refresh``, ``doubt``  "One factorisation ..."
``column_cache``             ``column_cache``                       "Counters"
===========================  =====================================  ==========================

The levels of the exactness check (``kkt_tol`` of 1 + k_max alpha_max for g and of
alpha_max for y'alpha, capped above ``ulps_ck`` by ``kkt_ulps`` and ``h_ulps`` round-off
floors) and of the end check (``end_balance_tol`` c n for y'alpha, ``END_G_TOL`` (1 + k_max
c) for the kept g), and the verdicts on them, are the core's
(:func:`refsvm.core.exactness.kkt_levels`, :func:`~refsvm.core.exactness.kkt_verdict`),
computed from these settings.

A tolerance that only matters while its switch is on has ``paper`` equal to its default
(the switch turns it off).  The chunk decrement (``unlearning``) has no switch: it is an
extension the user calls (``unlearn``), it changes no number of Fig. 1, and in the paper
form it runs with every other departure off.
"""

from __future__ import annotations

from ...core.departures import Departure, flag, integer, nonnegative

__all__ = ["DEPARTURES"]

DEPARTURES = {
    "joint_increment": Departure(
        default=True, paper=False, check=flag,
        answers="an extension: a chunk's violators rise together with b adjustable (one path "
                "instead of Fig. 1's two); off, a chunk asked for jointly is refused"),
    "end_check": Departure(
        default=True, paper=False, check=flag,
        answers="a path that ends off the optimum through a singular active set reached by "
                "round-off is detected (PathError) instead of returned"),
    "end_balance_tol": Departure(
        default=1e-9, paper=1e-9, check=nonnegative,
        answers="|y'alpha| allowed at the end of a path, per unit of c and per example"),
    "end_cond": Departure(
        default=1e10, paper=1e10, check=nonnegative,
        answers="max|R| max(1, k_max) above which the end of a path checks the inverse"),
    "end_residual_tol": Departure(
        default=1e-3, paper=1e-3, check=nonnegative,
        answers="||M R - I||_max above which that inverse is formed afresh (or refused)"),
    "exact_check": Departure(
        default=True, paper=True, check=flag,
        answers="a path that ends off the optimum (KKT or y'alpha beyond kkt_tol of their "
                "scale, capped in round-off floors above ulps_ck) is not kept: the call is "
                "learned by another path, or rolled back with ExactnessError (a guard: it "
                "changes no number of a call that passes, on in the paper form)"),
    "kkt_tol": Departure(
        default=1e-9, paper=1e-9, check=nonnegative,
        answers="the exactness check's level: of 1 + k_max alpha_max for g, of alpha_max "
                "for y'alpha (IncrementalSVM's kkt_tol)"),
    "kkt_ulps": Departure(
        default=32, paper=32, check=integer(1, 2**20),
        answers="above ulps_ck the check fails for g beyond this many round-off floors "
                "eps (1 + |b| + k_max sum alpha)"),
    "h_ulps": Departure(
        default=32, paper=32, check=integer(1, 2**20),
        answers="above ulps_ck the check fails for |y'alpha| beyond this many eps sum alpha"),
    "ulps_ck": Departure(
        default=1e5, paper=1e5, check=nonnegative,
        answers="c k_max above which the check's levels are capped in round-off floors "
                "(IncrementalSVM's polish_above)"),
    "end_repair": Departure(
        default=True, paper=False, check=flag,
        answers="an end that fails the exactness check is refined once in doubled precision "
                "(the polish, at any c) and checked again before the call falls back"),
    "polish": Departure(
        default=True, paper=False, check=flag,
        answers="at large c k_max the g carried along the path drift by an ulp of c times k: "
                "g afresh, correctly rounded, at the end of an operation"),
    "polish_ck": Departure(
        default=1e9, paper=1e9, check=nonnegative,
        answers="c k_max above which the polish runs"),
    "centre_bias": Departure(
        default=True, paper=False, check=flag,
        answers="with I_s empty every b of an interval is optimal: its midpoint (LIBSVM's "
                "choice) instead of the end the path stopped at"),
    "bound_window": Departure(
        default=1e-10, paper=1e-10, check=nonnegative,
        answers="a margin vector within this times min(c, 1) of a bound counts as at it "
                "when the bias is centred"),
    "regularise_fixed": Departure(
        default=True, paper=False, check=flag,
        answers="a singular Q_ss left by the adjustable-bias path makes Eq. 3 unsolvable: "
                "alpha_s moves along its null vector first"),
    "duplicates": Departure(
        default=True, paper=False, check=flag,
        answers="a copy of a margin vector joins by the exact null direction instead of "
                "one carrying the round-off of R (an ulp of c at c = 1e12)"),
    "refresh": Departure(
        default=True, paper=False, check=flag,
        answers="the rank-one updates of R drift on ill-conditioned active sets: doubtful "
                "pivots re-solved, R afresh after small pivots, ill-conditioned shrinks and "
                "every refresh_every changes where its backward error is large"),
    "drift_refresh": Departure(
        default=1e-12, paper=1e-12, check=nonnegative,
        answers="backward error of M R above which the periodic probe forms R afresh"),
    "cond_refresh": Departure(
        default=1e6, paper=1e6, check=nonnegative,
        answers="max|R| max|M| above which a shrink is followed by a fresh R"),
    "small_pivot": Departure(
        default=1e-5, paper=1e-5, check=nonnegative,
        answers="a joining pivot below this fraction of its scale is followed by a fresh R"),
    "doubt": Departure(
        default=1e-6, paper=1e-6, check=nonnegative,
        answers="a pivot below this fraction of its scale is re-solved from a fresh R"),
    "shrink_eps": Departure(
        default=1e-14, paper=0.0, check=nonnegative,
        answers="a shrink with |R_pp| below this times max|R| is re-inverted instead (paper: "
                "only an exactly zero R_pp, a guard)"),
    "column_cache": Departure(
        default=True, paper=False, check=flag,
        answers="a speed-up: the kernel columns of examples that left I_s are kept "
                "(cache_size MB) and not evaluated again; off, every join evaluates its "
                "column"),
}
