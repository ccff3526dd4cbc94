"""The departures of OnlineSVMR from Algorithms 1-2 as printed (Wang & Vucetic): the table.

Each entry of :data:`DEPARTURES` is one setting of ``departures=`` (see
:mod:`refsvm.core.departures`); each departure's code is a module of this package, a mixin
of :class:`refsvm.ramp.online_svmr.OnlineSVMR`:

==================  =====================================================================
module              departure (settings)
==================  =====================================================================
pair_step           one exact step on a singular or nearly singular pair
                    (``singular_pairs``, ``pair_eta``, ``pair_eps``)
block_step          the cycle detector and the exact step on the block of a cycle
                    (``cycle_window``, ``cycle_set``, ``cycle_ratio``, ``cycle_eta``,
                    ``block_guesses``, ``block_kkt_tol``)
joint_steps         the loop history both read and the one call the printed loop makes
shrinking           steps 10-15 in rounds on a working set (``shrinking``)
keep_rows           parked kernel rows (``keep_rows``)
relative_stop       the gain rule relative to the dual objective (``relative_stop``)
warmup              the hinge-loss start (``warmup``)
rewarm              hinge stretches after a cascade of unlearnings (``rewarm``,
                    ``rewarm_after``, ``rewarm_growth``, ``rewarm_max``)
hold_out            no re-entry into V in the update an example left it (``hold_out``)
finish              the finishing step after the stream (``finish``)
intercept           the regularised bias, the kernel k + 1 (``intercept``)
removal_budget      Algorithm 2's budget grows with #SV (``budget_per_sv``)
step_budget         a budget on steps 10-15 per update, and Ctrl-C inside them
                    (``step_budget``)
==================  =====================================================================

The flags ``shrinking``, ``keep_rows``, ``relative_stop``, ``warmup`` and ``intercept``
gate a constructor parameter of the state (``shrinking``, ``keep_rows``,
``stop="relative"``, ``warmup``, ``fit_intercept``): True lets the parameter decide, False
turns the departure off whatever the parameter says.  ``departures="paper"`` turns every
departure off: both twins then run Algorithms 1-2 exactly as printed.  The settings of an
off departure (``cycle_set`` when ``cycle_window`` is 0, ...) keep their defaults in the
paper form: they are read by nothing.

Docs: ``docs/wang_vucetic.rst``, "Departures from the printed algorithm".
"""

from __future__ import annotations

from ...core.departures import Departure, flag, integer, nonnegative

__all__ = ["BLOCK_GUESSES_MAX", "CYCLE_SET_MAX", "CYCLE_WINDOW_MAX", "DEPARTURES",
           "REWARM_GROWTH_MAX", "STEP_BUDGET_MAX"]

#: The most steps of history the cycle detector keeps (the compiled twin's ring).
CYCLE_WINDOW_MAX = 64
#: The largest block a block step solves (3^k faces; the compiled twin's arrays).
CYCLE_SET_MAX = 8
#: The most faces of a block step's active-set search (the compiled twin's array).
BLOCK_GUESSES_MAX = 32
#: The largest growth of a rewarm stretch (a stretch ends before 2**59 arrivals: no
#: overflow in the twin's 64-bit count).
REWARM_GROWTH_MAX = 64
#: The largest factor of the step budget (a budget of at most 10^6 (|I| + 10)^2
#: iterations: a saved state cannot turn it into none).
STEP_BUDGET_MAX = 10**6

DEPARTURES = {
    "singular_pairs": Departure(
        default=True, paper=False, check=flag,
        answers="Eq. (14) takes about C steps on a pair of the same or the opposite point "
                "in feature space (an opposite-label duplicate)"),
    "pair_eta": Departure(
        default=1e-3, paper=0.0, check=nonnegative,
        answers="Eq. (14) zig-zags on a nearly singular pair, det <= pair_eta Q_pp Q_qq "
                "(0: off)"),
    "pair_eps": Departure(
        default=1e-12, paper=1e-12, check=nonnegative,
        answers="the round-off test of a singular pair or face of the pair and block steps"),
    "cycle_window": Departure(
        default=32, paper=0, check=integer(0, CYCLE_WINDOW_MAX),
        answers="steps 10-15 circle on a nearly singular block of 3 to 8 coordinates: "
                "the detector's window (0: off)"),
    "cycle_set": Departure(
        default=8, paper=8, check=integer(2, CYCLE_SET_MAX),
        answers="the most examples a detected cycle may visit (the block's size)"),
    "cycle_ratio": Departure(
        default=0.5, paper=0.5, check=nonnegative,
        answers="a cycle's gains shrink by less than this over the window"),
    "cycle_eta": Departure(
        default=1e-3, paper=1e-3, check=nonnegative,
        answers="a cycle's block is nearly singular: det H <= cycle_eta prod H_ii"),
    "block_guesses": Departure(
        default=24, paper=24, check=integer(0, BLOCK_GUESSES_MAX),
        answers="the faces a block step's active-set search tries before every face"),
    "block_kkt_tol": Departure(
        default=1e-9, paper=1e-9, check=nonnegative,
        answers="a block step's face search stops at a point meeting the box's KKT "
                "conditions to this relative tolerance"),
    "shrinking": Departure(
        default=True, paper=False, check=flag,
        answers="steps 10-15 apply Eq. (15) to all of I after every step: the parameter "
                "shrinking=True may run them in rounds on a working set"),
    "keep_rows": Departure(
        default=True, paper=False, check=flag,
        answers="a row released when alpha returns to 0 is rebuilt in full: the parameter "
                "keep_rows=True may park it"),
    "relative_stop": Departure(
        default=True, paper=False, check=flag,
        answers="the printed gain rule depends on the scale of the problem: the parameter "
                "stop='relative' may compare the gain with min_gain * D"),
    "warmup": Departure(
        default=True, paper=False, check=flag,
        answers="a stream can freeze a wrong early model: the parameter warmup > 0 may "
                "learn the first arrivals with the hinge loss"),
    "rewarm": Departure(
        default=0.05, paper=0.0, check=nonnegative,
        answers="on noisy streams the ramp updates cascade (a wide kernel: the same "
                "examples unlearned and relearned; noisy Checkerboard, gamma = 0.5) or "
                "freeze on a model that misses whole regions (Gauss, gamma = 2, C = 10): "
                "more than rewarm unlearnings per arrival start a hinge stretch (0: off)"),
    "rewarm_after": Departure(
        default=500, paper=500, check=integer(0, 2**62),
        answers="the examples seen before the rule of rewarm applies"),
    "rewarm_growth": Departure(
        default=4, paper=4, check=integer(2, REWARM_GROWTH_MAX),
        answers="a stretch ends at rewarm_growth times the examples seen when it starts: "
                "the fewer stretch ends, the fewer outliers Algorithm 2 drops at them"),
    "rewarm_max": Departure(
        default=4000, paper=4000, check=integer(0, 2**62),
        answers="a stretch holds the hinge model of its arrivals, O(its length) support "
                "vectors on noisy data (Gauss, 40,000 arrivals, C = 1: 13,500 where the "
                "ramp keeps 1,600): a stretch is at most rewarm_max arrivals long (0: no cap)"),
    "hold_out": Departure(
        default=True, paper=False, check=flag,
        answers="steps 16-27 cycle for ever when an example leaves V and re-enters it "
                "(Gauss stream, seed 0, C = 1, gamma = 0.5, example 956)"),
    "finish": Departure(
        default=True, paper=False, check=flag,
        answers="the online loop leaves coordinates slightly above 0: finish() may run "
                "steps 9-27 once more with a smaller gain threshold"),
    "intercept": Departure(
        default=True, paper=False, check=flag,
        answers="the zero-bias model needs many support vectors where the classes are not "
                "centred: the parameter fit_intercept=True may use the kernel k + 1"),
    "budget_per_sv": Departure(
        default=1.0, paper=0.0, check=nonnegative,
        answers="with a fixed budget m Algorithm 2 drops examples the model needs again "
                "(Gauss, C = 10, m = 100: 80.0 % against LIBSVM's 82.3 %): keep at least "
                "budget_per_sv * #SV examples with alpha = 0 (0: off)"),
    "step_budget": Departure(
        default=1000, paper=1000, check=integer(0, STEP_BUDGET_MAX),
        answers="steps 10-15 have no bound tied to |I| (a state whose kernel rows are not "
                "its rows' loops for ever): step_budget (|I| + 10)^2 iterations per update, "
                "then a RuntimeError; Ctrl-C cuts the update short (a guard: never off)"),
}
