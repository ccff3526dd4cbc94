"""The departures of the IDSVM family from Cauwenberghs & Poggio's printed method.

Each departure is a named unit in this folder (a mixin of
:class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`; the compiled twin has the same
methods under the same names) and a setting of :data:`DEPARTURES`, chosen per state
with ``departures=`` (see :mod:`refsvm.core.departures`):

==================  ===========================  ======================================
unit                settings                     answers
==================  ===========================  ======================================
refinement.py       refine, refine_tol,          beta = -R m with an updated R is off by
                    refactor_above               ~1e-7 on ill-conditioned margin sets
repair.py           repair, repair_tol           a KKT violation a round-off rate let pass
balance_repair.py   repair_balance               y'alpha off its level after an operation
                                                 through a nearly singular R
exactness.py        check, kkt_tol               an operation that ended off the optimum
rollback.py         (with ``check``)             ... and left the state half-changed
polish.py           polish, polish_above,        at C k_max >> 1 the path's alphas are
                    tie_ulps, alpha_ulps,        not representable: g drifts, windows
                    repair_ulps, kkt_ulps,       wider than a margin unit
                    h_ulps
snapping.py         snap_ulps                    ulp residues of a bound left on S
drift_refresh.py    drift_refresh, drift_tol     the updated R drifts from M^-1
column_cache.py     column_cache                 (a speed-up: kernel columns kept)
bias_centring.py    centre_bias                  b undetermined when S is empty
steep_ties.py       steep_ties                   Bland's rule takes exponentially many
                                                 zero-length steps at a degenerate point
==================  ===========================  ======================================

``departures="paper"`` turns every one off: beta = -R m as printed, no repair (of g or of
y'alpha), no
polish or snap, no refresh of R, no cache, b left where the increments put it, ties
always by the least index.  The
exactness check (``check``) stays on in the paper form: it changes no number, it only
raises :class:`ExactnessError` (and the operation is rolled back) when an operation of
the printed method ends off the optimum; the step budget (``max_steps``) likewise.
Its levels -- ``kkt_tol`` of 1 + k_max alpha_max for g and of alpha_max for h, capped
above ``polish_above`` (with ``polish``) by ``kkt_ulps`` and ``h_ulps`` round-off floors
-- and its verdict are the core's (:func:`refsvm.core.exactness.kkt_levels`,
:func:`~refsvm.core.exactness.kkt_verdict`), computed from these settings.
The docs page (``docs/cauwenberghs_poggio.rst``, "Safeguards") measures each.
"""

from ...core.departures import Departure, flag, integer, nonnegative

__all__ = ["DEPARTURES"]

DEPARTURES = {
    "refine": Departure(
        default=3, paper=0, check=integer(0, 64),
        answers="beta = -R m with the updated R has residuals ~1e-7 on margin sets of "
                "condition ~1e11; rates flip sign and the loop cycles (corrections per beta)"),
    "refine_tol": Departure(
        default=1e-14, paper=1e-14, check=nonnegative,
        answers="refinement stops below this residual (of its terms' scale)"),
    "refactor_above": Departure(
        default=1e-10, paper=1e-10, check=nonnegative,
        answers="R is refactorised when refinement leaves a residual above this"),
    "repair": Departure(
        default=8, paper=0, check=integer(0, 1000),
        answers="a KKT violation a rate below its round-off level let pass: the example "
                "is unlearned and learned again (at most this many times per operation)"),
    "repair_tol": Departure(
        default=1e-11, paper=1e-11, check=nonnegative,
        answers="a violation above this (of 1 + k_max alpha_max) is repaired"),
    "repair_balance": Departure(
        default=True, paper=False, check=flag,
        answers="an operation through a nearly singular R (duplicates, homogeneous "
                "polynomial kernels) can end with |y'alpha| above the check's level: one "
                "Newton step on it through R's first column when it is"),
    "check": Departure(
        default=True, paper=True, check=flag,
        answers="an operation that ends off the optimum raises ExactnessError and is "
                "rolled back (a guard: it changes no number, on in the paper form)"),
    "kkt_tol": Departure(
        default=1e-9, paper=1e-9, check=nonnegative,
        answers="the exactness check's level (of 1 + k_max alpha_max; of alpha_max for h)"),
    "polish": Departure(
        default=True, paper=False, check=flag,
        answers="at C k_max above polish_above the path's alphas are not representable "
                "and g drifts: the end of each operation is refined in doubled precision, "
                "and the windows are capped in round-off units"),
    "polish_above": Departure(
        default=1e5, paper=1e5, check=nonnegative,
        answers="the C k_max above which the polish and the caps apply"),
    "tie_ulps": Departure(
        default=4, paper=4, check=integer(1, 2**20),
        answers="(polish) tie windows in g: at most this many round-off floors of g"),
    "alpha_ulps": Departure(
        default=64, paper=64, check=integer(1, 2**20),
        answers="(polish) windows in alpha: at most this many ulps of alpha_max"),
    "repair_ulps": Departure(
        default=8, paper=8, check=integer(1, 2**20),
        answers="(polish) repair above this many round-off floors of g"),
    "kkt_ulps": Departure(
        default=32, paper=32, check=integer(1, 2**20),
        answers="(polish) the check fails above this many round-off floors of g"),
    "h_ulps": Departure(
        default=32, paper=32, check=integer(1, 2**20),
        answers="(polish) the check fails for |h| above this many eps sum alpha"),
    "snap_ulps": Departure(
        default=4, paper=0, check=integer(0, 2**20),
        answers="(polish) an ulp of C left on a margin vector by the path made the next "
                "unlearning find no event: alphas this many ulps from a bound go to it"),
    "drift_refresh": Departure(
        default=True, paper=False, check=flag,
        answers="the rank-one updates of R drift from M^-1: every refresh_every changes "
                "of S the drift is probed and R recomputed above drift_tol"),
    "drift_tol": Departure(
        default=1e-12, paper=1e-12, check=nonnegative,
        answers="the backward error of R above which it is recomputed"),
    "column_cache": Departure(
        default=True, paper=False, check=flag,
        answers="(a speed-up) kernel columns of examples outside S kept for their return "
                "(cache_size MB); changes the kernel-evaluation count only"),
    "centre_bias": Departure(
        default=True, paper=False, check=flag,
        answers="with S empty the KKT conditions leave b in an interval: its midpoint "
                "(LIBSVM's choice) instead of where the increments left it"),
    "steep_ties": Departure(
        default=64, paper=0, check=integer(0, 2**30),
        answers="the least-index rule among events tied at t = 0 can take exponentially "
                "many zero-length steps (a stream that begins with one class): after this "
                "many in a row, the tied event with the fastest rate, leaving margin "
                "vectors first (0: least index always)"),
}
