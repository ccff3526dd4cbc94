"""Exact incremental / decremental SVM with bias (Cauwenberghs & Poggio), the reference.

This module is the readable twin of :mod:`refsvm._idsvm`.  It follows the
"adiabatic increments" of Cauwenberghs & Poggio (NIPS 2000), restored in
``ALGORITHMS.md`` section 6, line by line; ``docs/cauwenberghs_poggio.rst``
walks through the method beside this code.

Notation (the paper's)
----------------------
Q_ij = y_i y_j k(x_i, x_j); the model is f(x) = sum_j alpha_j y_j k(x_j, x) + b.
The saddle-point objective (Eq. 1) is
W = 1/2 sum_ij alpha_i Q_ij alpha_j - sum_i alpha_i + b sum_i y_i alpha_i,
and its KKT conditions (Eq. 2) are, with g_i = dW/dalpha_i = y_i f(x_i) - 1,

- R ("rest"):          alpha_i = 0,      g_i >= 0
- S (margin SVs):  0 <= alpha_i <= C, g_i  = 0
- E (error SVs):       alpha_i = C,      g_i <= 0
- and h = dW/db = sum_i y_i alpha_i = 0.

An example c enters with alpha_c = 0.  If g_c >= 0 it joins R and nothing
changes.  Otherwise alpha_c is raised in *adiabatic increments*: the margin
vectors stay on the margin (Delta g_s = 0, s in S) and h stays 0 (Eq. 3),
which fixes the other changes in proportion to Delta alpha_c (Eqs. 4-7):

    [Delta b; Delta alpha_S] = beta Delta alpha_c,   beta = -R [y_c; Q_Sc],
    Delta g_i = gamma_i Delta alpha_c,  gamma_i = Q_ic + sum_{j in S} Q_ij beta_j + y_i beta_b,

where R is the inverse of the bordered matrix [[0, y_S^T], [y_S, Q_SS]].
Each increment is the largest one that changes no set membership; the
example that limits it changes set, R grows or shrinks by a rank-one update
(Eqs. 8-9), and the loop repeats until c itself joins S (g_c = 0) or E
(alpha_c = C).  Unlearning runs the same loop with Delta alpha_c < 0 until
alpha_c = 0 (Sec. 4 of the paper); the exact leave-one-out decision of a
support vector is f(x_c) after unlearning it, and re-learning it restores the
model.

Choices for the degenerate cases (documented in the docs page)
--------------------------------------------------------------
* **S empty** (the first examples, examples of one class, or every support
  vector at a bound): the bordered matrix [[0]] is singular and alpha_c cannot
  move alone (h = 0); only b moves ("b-only increments"): Delta g_i = y_i Delta b,
  in the direction that helps (learning: raises g_c; unlearning: lets the
  examples that must compensate alpha_c reach the margin), until an example
  reaches the margin and joins S, or (learning) g_c reaches 0.
* **Bias when S is empty after an operation**: b is then not determined by
  the KKT conditions; every b in the interval [lo, hi] they allow is optimal.
  We move b to the midpoint of that interval, as LIBSVM does (to its finite
  end when the interval is half-infinite, e.g. while only one class has been
  seen: then every example lies on or beyond its margin and the model
  predicts that class).
* **Singular bordered matrix** (duplicates, linearly dependent margin
  vectors): an example can only reach the margin with a numerically zero
  pivot kappa = Q_ii + [y_i, Q_iS] beta^(i) if the direction that moves it
  and S together is a null direction of Q (then no g changes along it).  We
  never add such an example to S; we move along that null direction
  ("exchange") until a margin vector reaches a bound and leaves S, and then
  add the example, or until the example reaches its other bound (R <-> E).
  The result stays optimal (the dual objective does not change along a null
  direction; g is carried along all the same).  The example the exchange left
  dependent on S (the margin vector replaced, or i at its bound) has rate zero
  while S stays (for a PSD kernel a null vector v of the bordered matrix has
  sum v_j y_j phi(x_j) = 0, sum v_j y_j = 0), so it is no candidate until S
  changes otherwise: duplicates cannot replace each other forever.
* **Zero tests.**  A pivot (kappa of a joining example, gamma_c of the
  candidate c) is judged against its round-off scale
  |Q_ii| + |beta|' |M| |beta| (M the bordered matrix; an O(k) upper bound of
  it stands in while the pivot exceeds 1e-6 of the bound): below 1e-13 of it,
  or below 1e-14 max k(x, x), it is zero (c then cannot join S; its step is
  limited by the other events).  A rate |gamma_i| counts as zero below 1e-12 of
  the bound of its terms, sqrt(k_ii) (sqrt(k_cc) + sum_j sqrt(k_jj) |beta_j|)
  + |beta_b|, and |beta_s| < 1e-12 as well, so round-off never fabricates an
  event.  (These levels are round-off levels only because beta is refined,
  safeguard 1 below.)  Unlearning: an alpha_c below 1e-9 alpha_max (of the
  other examples) left when S empties is round-off and set to 0.
* **Examples exactly on the margin** on arrival (g_c >= -tol) join R.
* **Ties and anti-cycling** (least-index rule, as Bland's rule for the simplex
  method): the step taken is the smallest one, t_min; the events whose variable
  is within round-off of its bound at t_min (1e-12 alpha_max for an alpha,
  1e-12 (1 + k_max alpha_max) for a g, alpha_max the largest alpha) are tied;
  the candidate's own events go first (they end the operation), otherwise the
  tied margin vector or joining example with the *smallest example id* limits
  the step (in an exchange: the tied margin vector with the
  smallest id).  The order depends on nothing the path changes (not on the
  joining order of S), so sequences of zero steps at a degenerate point cannot
  repeat; both twins apply it identically, and ties within round-off never go
  by the last bit.

Safeguards (departures from the paper, issue 15)
------------------------------------------------
On noisy 2-D streams (a hundred margin vectors, bordered matrix condition ~1e11)
the paper's updates alone cycled or lost exactness; three additions make every
operation end exact or be undone:

1. **beta is refined** against the bordered matrix itself (``_refine``: at
   most N_REFINE corrections beta <- beta - R (M beta + m)), and R is
   refactorised from the kernel columns when that does not converge.
2. **g is never reset to 0** when an example reaches the margin; it keeps the
   value the increments gave it (0 within the tie window), so what the
   tolerances let pass stays visible.
3. **Check, repair, roll back** after every operation (``_guarded``): the KKT
   conditions on the kept g (O(n)); an example violating them by more than
   EPS_REPAIR (1 + k_max alpha_max) is unlearned and learned again (at most
   N_REPAIR times); a violation above EPS_KKT (1 + k_max alpha_max), |h| above
   EPS_KKT alpha_max, or a spent step budget (``max_steps``) undoes the
   operation exactly (``_rollback``) and raises :class:`ExactnessError`.

Tie windows and tolerances are relative to alpha_max and k_max (the size of the
terms of g = y f - 1), not to C.  Above C k_max = POLISH_CK they are moreover capped in
margin units by multiples of the round-off floor of g itself, eps (1 + |b| + k_max
sum alpha) (G_ULPS, REPAIR_ULPS, KKT_ULPS, H_ULPS; alpha windows by A_ULPS ulps of
alpha_max), the check after the operation reads the g the polish recomputed from alpha
and b, and the polish snaps ulp residues of margin vectors to their bound (SNAP_ULPS):
at C = 1e12, 1e-12 g_scale was one margin unit, and ties that wide left the path (not
only g) off by as much (docs, "Extreme C: tolerances in margin units").

Numerical hygiene
-----------------
Every ``refresh_every`` changes of S the drift of the updated inverse is
probed (``bordered_drift``, O(|S|^2)); above DRIFT_REFRESH the inverse is
recomputed from the cached kernel columns (LAPACK getrf/getri, no kernel
evaluations) and the largest deviation of the updated inverse from the fresh
one is recorded (``max_inverse_drift``).  :meth:`IncrementalSVMState.check` measures the
drift of g and of h against a recomputation from scratch.

References
----------
G. Cauwenberghs and T. Poggio, "Incremental and decremental support vector
machine learning", Advances in Neural Information Processing Systems 13
(NIPS 2000), pp. 409-415.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..core.bordered import (
    bordered_beta, bordered_drift, bordered_grow, bordered_matrix, bordered_pivot, bordered_shrink,
    bordered_start, grow_array, least_index_event, lu_inverse, pivot_bound, pivot_doubtful,
    pivot_is_zero, pivot_round_off_scale, symmetrize,
)
from ..core.bordered import dot as _dot
from ..core.bordered import matvec as _matvec
from ..core.kernels import Kernel, SparseRow, get_row, rows_from_state, rows_to_state, stack_rows
from ..core.stream import StreamLearner

__all__ = ["IncrementalSVMState", "kkt_diagnostics", "state_arrays", "state_arrays_from_optimum"]

# set membership codes (shared with the twin)
REST, MARGIN, ERROR, OUT, GONE = 0, 1, 2, 3, -1
#: |beta_s| below this is zero (beta is dimensionless: alpha_s per unit of alpha_c)
EPS_RATE = 1e-12
#: relative round-off level of gamma (see ``_sensitivities``)
EPS_GAMMA = 1e-12
#: events whose variable is within these of its bound at the smallest step are tied;
#: both are relative to the scale of the variables (see ``_scales``): alpha_max, the
#: largest alpha, and g_scale = 1 + k_max alpha_max (the size of the terms of g)
EPS_G = 1e-12           # times g_scale, for g
EPS_ALPHA = 1e-12       # times alpha_max, for alpha
#: an alpha_c left below this times alpha_max (of the other examples) when S empties
#: while unlearning is round-off
EPS_RESIDUE = 1e-9
#: a pivot below this fraction of its O(k) bound is judged against its exact O(k^2)
#: round-off scale |Q_ii| + |beta|'|M||beta| instead
EPS_DOUBT = 1e-6
#: a pivot below this fraction of its scale is numerically zero
EPS_PIVOT_SCALE = 1e-13
#: ... and so is one below this times max k(x, x) (exact zeros, e.g. x = 0 under a
#: homogeneous polynomial kernel, make the relative scale meaningless; treating such
#: a pivot as zero moves g by less than this times k_max per unit of alpha)
EPS_PIVOT_ABS = 1e-14

#: iterative refinement of beta (safeguard 1): at most N_REFINE corrections, until the
#: residual |M beta + m| is below EPS_RESID of (a bound of) its scale |M||beta| + |m| ...
N_REFINE = 3
EPS_RESID = 1e-14
#: ... and above EPS_REFACTOR of it after them, R is refactorised from the kernel columns
EPS_REFACTOR = 1e-10
#: every ``refresh_every`` changes of S, R is recomputed only when its backward error
#: (``bordered_drift``) is above this (POKER's rule: refsvm/poker/poker.py)
DRIFT_REFRESH = 1e-12
#: after each operation (safeguard 3) an example whose g violates its KKT condition by
#: more than EPS_REPAIR g_scale is unlearned and learned again (at most N_REPAIR times);
#: a violation above EPS_KKT g_scale left after that (or |h| above EPS_KKT alpha_max)
#: rolls the operation back and raises ExactnessError
EPS_REPAIR = 1e-11
N_REPAIR = 8
EPS_KKT = 1e-9
#: the adiabatic steps allowed per operation (repairs included) when max_steps is 0:
#: STEPS_PER_EXAMPLE (n + 10)
STEPS_PER_EXAMPLE = 50
#: above this C k_max the end of every operation is polished (``_polish``): one step of
#: iterative refinement of (b, alpha_S) on residuals summed in twice the working
#: precision, and every g recomputed so.  Below it the round-off of an alpha at C,
#: 1.1e-16 C k_max, moves g by less than 1e-11 and nothing is done (every ordinary C).
#: 1e5, not POKER's 1e9: at C k_max = 1e6 ... 1e9 the plain tolerances let census
#: operations end up to 13 round-off floors off the KKT conditions (docs, *Extreme C*)
POLISH_CK = 1e5
#: above POLISH_CK the g tolerances in margin units are capped by multiples of the
#: round-off floor of g = sum_j Q_ij alpha_j - 1 + y_i b itself,
#: g_floor = eps (1 + |b| + k_max sum_i alpha_i) (eps the unit round-off of float64):
#: an alpha of order C is held to an ulp of C, so g cannot be known better than that,
#: but EPS_G g_scale (1 at alpha_max = 1e12) and EPS_KKT g_scale (1e3) are thousands of
#: floors wide there, wide enough to tie an event 0.8 margin units away with the
#: candidate's own (the path then ended with two opposite copies at C and g = +1.5).
#: Tie windows: at most G_ULPS floors; repair above REPAIR_ULPS floors; roll back above
#: KKT_ULPS floors (the floor of tests/test_properties.py), or |h| above H_ULPS eps
#: sum_i alpha_i (h summed exactly, Sum2).  Below POLISH_CK nothing changes.
G_ULPS = 4
#: ... and likewise the windows in alpha: at most A_ULPS ulps of alpha_max (EPS_ALPHA
#: alpha_max is 4,500 of them: at alpha_max = 1e12 it tied the candidate's bound with a
#: margin vector's 0.7 away and the candidate's alpha then jumped by 0.7), and the
#: residue of alpha_c taken for 0 when S empties while unlearning (EPS_RESIDUE)
A_ULPS = 64
REPAIR_ULPS = 8
#: the end-of-operation polish sets a margin vector's alpha within SNAP_ULPS ulps of the
#: operation's alpha_max of 0 or C to that bound (an ulp of C left on a margin vector
#: by the path made the next unlearning find no event to limit its increment)
SNAP_ULPS = 4
KKT_ULPS = 32
H_ULPS = 32
#: unit round-off of float64
EPS_MACH = float(np.finfo(np.float64).eps)


class ExactnessError(RuntimeError):
    """A safeguard fired (the step budget ran out, or the KKT conditions could not be
    restored within EPS_KKT): the operation was rolled back, the state is exactly the
    one before it (``example`` is the id of the example that was being learned or
    unlearned)."""

    def __init__(self, message, example=-1):
        super().__init__(message)
        self.example = int(example)


def _two_sum(a, b):
    """Knuth's error-free sum, elementwise: a + b = s + e exactly (returns (s, e))."""
    t = a + b
    v = t - a
    return t, (a - (t - v)) + (b - v)


def _split(a):
    """Dekker's split, elementwise: a = hi + lo exactly, each half with at most 26 bits."""
    c = 134217729.0 * a                                   # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a, b):
    """Dekker's error-free product, elementwise: a * b = p + e exactly (finite inputs well
    inside the float range; e is 0 where the split overflowed)."""
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(e), e, 0.0)


def _dot2_add(p, s, a, b):
    """One term a * b of Dot2 (Ogita, Rump & Oishi 2005, Algorithm 5.3), elementwise: the
    sum so far is p + s, as if summed in twice the working precision.  The twin applies
    the same operations per element, in the same order of terms."""
    h, r = _two_product(a, b)
    p, q = _two_sum(p, h)
    return p, s + (q + r)


def kkt_diagnostics(K, alpha, y, g_kept, b, C, act, sv):
    """The diagnostics of ``check()``, shared by both twins: g of the active examples
    ``act`` recomputed from alpha and b alone (``K[r, j] = k(x_act[r], x_sv[j])``, Dot2
    over the support vectors ``sv`` in id order, then y_i b and -1, so that the
    recomputation adds no round-off of its own even at C = 1e12), and against it

    - ``g_drift``: max |g_kept - g| (how far the kept g has drifted);
    - ``kkt``: the true KKT violation in margin units, independent of the kept g and of
      the sets: max over active i of -g_i (alpha_i = 0), |g_i| (0 < alpha_i < C),
      g_i (alpha_i = C), clipped at 0;
    - ``h``: |sum_i y_i alpha_i| (Sum2) and ``h_rel`` = h / C."""
    yi = y[act]
    p = np.zeros(act.size)
    s = np.zeros(act.size)
    for j, i in enumerate(sv.tolist()):
        p, s = _dot2_add(p, s, yi * (alpha[i] * y[i]), K[:, j])
    p, q = _two_sum(p, yi * b)
    s = s + q
    p, q = _two_sum(p, np.full(p.shape, -1.0))
    g = p + (s + q)
    a = alpha[act]
    viol = np.where(a <= 0.0, np.maximum(-g, 0.0),
                    np.where(a >= C, np.maximum(g, 0.0), np.abs(g)))
    hp = hs = 0.0
    for i in act.tolist():
        hp, q = _two_sum(hp, y[i] * alpha[i])
        hs += q
    h = abs(hp + hs)
    return {"g_drift": float(np.max(np.abs(g - g_kept[act]))) if act.size else 0.0,
            "h": h, "h_rel": h / C, "kkt": float(viol.max()) if act.size else 0.0}


# event kinds (shared with the twin)
EV_C_MARGIN, EV_C_BOUND, EV_C_ZERO, EV_S_OUT, EV_JOIN = 0, 1, 2, 3, 4


def _first_event(events, tc, wc, cand, last=None):
    """The limiting event and the step: t_min, the smallest step of all, and among the
    events *at their bound at t_min within round-off* (t <= t_min + w, where the window
    w = eps / |rate| is the step that moves the variable by eps: EPS_ALPHA alpha_max
    for an alpha, EPS_G g_scale for a g) the one chosen by the least-index rule: the candidate's own
    events (``events`` of kinds EV_C_*, which end the operation) first, in their order;
    otherwise the tied margin vector or joining candidate (``cand``, ids ascending)
    with the smallest example id (Bland's rule; it prevents cycling through zero
    steps at degenerate points).  Ties within round-off thus never go by the last bit,
    so that the twins (whose kernels may differ in the last bit) take the same path;
    and no other variable passes its bound by more than eps.  ``last`` (an event or
    None) counts for t_min but is chosen only if no other event is tied."""
    tmin = min([e[0] for e in events] + ([float(tc.min())] if tc.size else [])
               + ([last[0]] if last is not None else []), default=np.inf)
    if not np.isfinite(tmin):
        return np.inf, -1, -1
    # (t, kind, id, window, priority): the candidate's own events have priority
    tied = [(t, kind, i, w, kind < EV_S_OUT) for t, kind, i, w in events]
    if tc.size:
        first = np.flatnonzero(tc <= tmin + wc)       # ids ascending: the least tied one
        if first.size:
            j = first[0]
            tied.append((tc[j], EV_JOIN, int(cand[j]), wc[j], False))
    best_kind, best_i = least_index_event(tied, tmin, fallback=last)
    return tmin, best_kind, best_i


#: the integer counters of the persistence format
COUNTERS = ("n_increments", "n_decrements", "n_iterations", "n_exchanges", "n_refresh_failed",
            "n_pivot_refresh", "n_s_changes", "n_refresh", "n_repairs", "n_rollbacks")
#: counters added after the first version of the format (0 when a saved state lacks them)
NEW_COUNTERS = ("n_repairs", "n_rollbacks")


def state_arrays(rows, sparse, *, alpha, g, y, kdiag, status, S, KS, Rinv, b, kscale,
                 cache_ids, cache_columns, counters, copy=True, cache_flat=None):
    """The persistence format of :class:`IncrementalSVMState`, shared by both twins: NumPy
    arrays and plain scalars only.  ``n_seen`` examples (ids 0..n_seen-1, unlearned ones
    included) as ``rows`` (see :func:`refsvm.core.kernels.rows_to_state`), their ``alpha``, ``g``, ``y``,
    ``kdiag`` and ``status``; the margin set ``S`` in joining order, its kernel columns
    ``KS`` (n_seen x |S|) and the inverse ``Rinv``; ``b``, ``kscale``; the column cache
    (``cache_ids`` oldest first, ``cache_lengths``, the columns end to end in
    ``cache_values``); the counters.  ``copy=False`` keeps ``KS`` and ``Rinv`` as given
    (already float64 arrays) when the format is only handed to a ``load_state``, which
    copies them into the state's own buffers; ``cache_flat`` = (lengths, values) gives the
    cache already end to end (``cache_columns`` is then ignored), kept as given under
    ``copy=False``."""
    n = len(alpha)
    big = np.array if copy else np.asarray
    if cache_flat is not None:
        lengths = np.array(cache_flat[0], dtype=np.int64).reshape(-1)
        values = big(cache_flat[1], dtype=np.float64).reshape(-1)
    else:
        cols = [np.asarray(c, dtype=np.float64) for c in cache_columns]
        lengths = np.array([c.shape[0] for c in cols], dtype=np.int64)
        values = np.concatenate(cols) if cols else np.zeros(0)
    data = {
        "n_seen": int(n),
        "alpha": np.array(alpha, dtype=np.float64), "g": np.array(g, dtype=np.float64),
        "y": np.array(y, dtype=np.float64), "kdiag": np.array(kdiag, dtype=np.float64),
        "status": np.array(status, dtype=np.int8),
        "S": np.array(S, dtype=np.int64).reshape(-1),
        "KS": big(KS, dtype=np.float64).reshape(n, len(S)),
        "Rinv": big(Rinv, dtype=np.float64),
        "b": float(b), "kscale": float(kscale),
        "cache_ids": np.array(cache_ids, dtype=np.int64).reshape(-1),
        "cache_lengths": lengths,
        "cache_values": values,
        "max_inverse_drift": float(counters["max_inverse_drift"]),
        "fresh": bool(counters["fresh"]), "n_kernel_evals": int(counters["n_kernel_evals"]),
        "refined": bool(counters.get("refined", False)),
    }
    data.update({name: int(counters[name]) for name in COUNTERS})
    data.update(rows_to_state(rows, sparse))
    return data


def state_arrays_from_optimum(data, C, n_features, sparse):
    """The persistence format of :class:`IncrementalSVMState` (:func:`state_arrays`) from
    an exact SVM solution in the persistence format of POKER's states
    (``refsvm.poker.poker.POKERState.save_state``, either twin), or None when that
    solution is not exact to this family's tolerance.

    The two methods keep the same things: the partition (POKER's I_o, I_s, I_c are R, S,
    E here, with the same codes), the kernel columns of the margin set in joining order,
    the inverse of the same bordered matrix [[0, y_S'], [y_S, Q_SS]] and g = y f - 1; only
    the sign of the bias differs (POKER's f = w'phi - b, here f = w'phi + b).  So the
    conversion carries them over (after one step of iterative refinement, below), and
    an incremental step from the result (``partial_fit``,
    ``unlearn``, ``loo_decisions``) continues from the batch optimum exactly as from the
    end of an incremental pass.  It is accepted when the KKT conditions on the kept g and
    the equality sum y_i alpha_i = 0 hold within the tolerances of every operation here
    (EPS_KKT of 1 + k_max alpha_max, and of alpha_max), the inverse has the size of the
    margin set, and C k_max is not above POLISH_CK (where this family's operations
    polish and cap their tolerances in round-off units)."""
    n = int(data["n"])
    status = np.array(data["status"], dtype=np.int8)
    if n == 0 or np.any((status != REST) & (status != MARGIN) & (status != ERROR)
                        & (status != GONE)):
        return None
    y = np.array(data["y"], dtype=np.float64)
    alpha = np.array(data["alpha"], dtype=np.float64)
    g = np.array(data["g"], dtype=np.float64)
    kdiag = np.array(data["kdiag"], dtype=np.float64)
    S = [int(i) for i in np.asarray(data["S"]).reshape(-1)]
    ns = len(S)
    kscale = float(np.max(np.abs(kdiag)))
    if C * kscale > POLISH_CK or sorted(S) != np.flatnonzero(status == MARGIN).tolist():
        return None
    KS = np.asarray(data["KS"], dtype=np.float64).reshape(n, ns)
    Rinv = np.asarray(data["R"], dtype=np.float64) if ns else np.zeros((1, 1))
    if Rinv.shape != (ns + 1, ns + 1) or not (np.all(np.isfinite(Rinv))
                                             and np.all(np.isfinite(g))):
        return None
    Rinv = symmetrize(Rinv)          # POKER's LU inverses are symmetric only to round-off
    b = -float(data["b"])
    if ns:
        # one step of iterative refinement of (b, alpha_S) on the residuals of the bordered
        # system, M [db; dalpha_S] = -[y'alpha; g_S] (as POKER's and this family's polish):
        # POKER ends its bias path when y'alpha is zero within its own window (up to
        # ~1e-9 alpha_max with a thousand alphas at C), wider than EPS_KKT here
        Sx = np.array(S, dtype=np.intp)
        r = np.concatenate(([_dot(y, alpha)], g[Sx]))
        sol = -_matvec(Rinv, r)
        new = alpha[Sx] + sol[1:]
        if not np.all((new > 0.0) & (new < C)):
            return None
        alpha[Sx] = new
        b += sol[0]
        g += y * (_matvec(KS, y[Sx] * sol[1:]) + sol[0])
    amax = float(alpha.max(initial=0.0))
    viol = np.where(status == REST, -g, np.where(status == ERROR, g, np.abs(g)))
    if float(viol.max()) > EPS_KKT * (1.0 + kscale * amax):
        return None
    if abs(_dot(y, alpha)) > EPS_KKT * amax:
        return None
    if sparse:
        from scipy.sparse import csr_matrix

        X = csr_matrix((data["X_data"], data["X_indices"], data["X_indptr"]),
                       shape=(n, int(n_features)))
    else:
        X = np.asarray(data["X"], dtype=np.float64).reshape(n, int(n_features))
    counters = {name: 0 for name in COUNTERS}
    counters.update(n_increments=n, n_iterations=int(data["n_iterations"]),
                    n_exchanges=int(data["n_exchanges"]), n_refresh=int(data["n_refresh"]),
                    n_s_changes=int(data["n_s_changes"]), max_inverse_drift=0.0,
                    fresh=bool(data["fresh"]), n_kernel_evals=int(data["n_kernel_evals"]))
    return state_arrays(X, sparse, alpha=alpha, g=g, y=y, kdiag=kdiag, status=status, S=S,
                        KS=KS, Rinv=Rinv, b=b, kscale=kscale,
                        cache_ids=np.asarray(data["cache_ids"]).reshape(-1),
                        cache_columns=None, counters=counters, copy=False,
                        cache_flat=(data["cache_len"], data["cache_cols"]))


class IncrementalSVMState(StreamLearner):
    """Exact incremental/decremental SVM state (reference twin).

    Parameters
    ----------
    n_features : int
    sparse : bool
        Whether rows are :class:`refsvm.core.kernels.SparseRow` (CSR input).
    C : float
        Box constraint 0 <= alpha_i <= C.
    kernel, gamma, degree, coef0 :
        Kernel (see :class:`refsvm.core.kernels.Kernel`).
    tol : float
        An arriving example with g_c >= -tol counts as on or beyond its margin
        and joins R without any change.
    refresh_every : int
        Probe the drift of the inverse of the bordered matrix after this many
        changes of the margin set S, and recompute it when the drift is above
        DRIFT_REFRESH (0 = never).
    cache_size : float
        Megabytes of kernel columns kept for examples outside S (see
        :meth:`_cache_put`); 0 disables the cache.
    max_steps : int
        Adiabatic steps allowed per operation (one example learned or unlearned,
        its repairs included); 0: ``STEPS_PER_EXAMPLE * (n + 10)``.  When they run
        out the operation is rolled back and :class:`ExactnessError` raised.

    Notes
    -----
    Examples get ids 0, 1, 2, ... in the order they are learned; unlearned
    ids are never reused.  Every operation is atomic: when a safeguard fires
    (:class:`ExactnessError`) the state is exactly the one before the operation
    (an example that could not be learned leaves no trace but the kernel
    evaluations it cost).  Memory: the examples, O(n) per-example numbers,
    the kernel columns of the margin vectors (``n x |S|``, which every increment
    needs to compute gamma) and the ``(|S|+1)^2`` inverse.

    References
    ----------
    Cauwenberghs & Poggio, NIPS 2000, Eqs. 1-9.

    Examples
    --------
    ``step`` returns 1 when the example changed the model; after every step the
    KKT conditions hold (``check`` recomputes g from scratch):

    >>> import numpy as np
    >>> from refsvm.idsvm.incremental_svm import IncrementalSVMState
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.2], [2., 2.]])
    >>> y = np.array([-1., 1., -1., 1., 1.])
    >>> st = IncrementalSVMState(2, C=10.0, kernel="linear")
    >>> [st.step(X[i], y[i]) for i in range(5)]   # the last two lie beyond their margin
    [1, 1, 1, 0, 0]
    >>> st.get_state()["S"]                        # the margin support vectors
    array([0, 1, 2])
    >>> bool(st.check()["g_drift"] < 1e-12)
    True

    Unlearning an example gives exactly the model learned without it, and the
    leave-one-out decisions f_{-i}(x_i) are exact:

    >>> first4 = IncrementalSVMState(2, C=10.0, kernel="linear")
    >>> first4.run(X, y, range(4))                 # examples that changed the model
    3
    >>> st.unlearn([4])
    >>> bool(np.allclose(st.decision_function(X), first4.decision_function(X)))
    True
    >>> np.round(st.loo_decisions(), 3)
    array([-1.   ,  1.   , -0.615,  1.   ])
    """

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-12, refresh_every=100, cache_size=200.0, max_steps=0):
        super().__init__(n_features, sparse)
        self.max_steps = int(max_steps)
        self._steps_left = 0                         # of the operation under way
        self._amax0 = 0.0                            # alpha_max when it started
        self.cache_size = float(cache_size)
        self.C = float(C)
        self.tol = float(tol)
        self.refresh_every = int(refresh_every)
        self.cache_bytes = int(float(cache_size) * 2**20)
        self.cache = OrderedDict()                   # id -> (kernel column, its length)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows = []
        self.n = 0                                   # ids handed out so far
        self.y = np.zeros(0)
        self.alpha = np.zeros(0)
        self.g = np.zeros(0)                         # g_i = y_i f(x_i) - 1  (Eq. 2)
        self.kdiag = np.zeros(0)                     # k(x_i, x_i)
        self.status = np.zeros(0, dtype=np.int8)
        self.b = 0.0
        self.S = []                                  # margin vectors, in joining order
        self.KS = np.zeros((0, 0))                   # KS[i, j] = k(x_i, x_{S[j]})
        self.Rinv = np.zeros((1, 1))                 # inverse of [[0, y_S'], [y_S, Q_SS]]
        self.kscale = 0.0                            # max k(x_i, x_i): scale of the rates
        self.n_increments = 0
        self.n_decrements = 0
        self.n_iterations = 0                        # adiabatic steps (all operations)
        self.n_exchanges = 0                         # degenerate exchanges (null directions)
        self.n_refresh_failed = 0                    # refreshes skipped: singular S
        self.n_pivot_refresh = 0                     # R refactorised: beta not refinable
        self.n_repairs = 0                           # KKT repairs (unlearn + learn again)
        self.n_rollbacks = 0                         # operations rolled back
        self.fresh = False                           # R inverted from scratch, S unchanged since
        self.refined = False                         # the last pass's beta needed a correction
        self._joined = None                          # (see _change_membership), per operation
        self.n_s_changes = 0
        self.n_refresh = 0
        self.max_inverse_drift = 0.0

    # ------------------------------------------------------------------ storage
    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def _store(self, x, y):
        """Append an example with alpha = 0 and status OUT; returns its id (no g yet)."""
        if self.sparse:
            x = SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
        else:
            x = np.array(x, dtype=np.float64)
        c = self.n
        self.rows.append(x)
        self.n += 1
        self.y = grow_array(self.y, self.n)
        self.alpha = grow_array(self.alpha, self.n)
        self.g = grow_array(self.g, self.n)
        self.kdiag = grow_array(self.kdiag, self.n)
        self.status = grow_array(self.status, self.n, GONE)
        if self.KS.shape[0] < self.n:
            KS = np.zeros((self.y.shape[0], self.KS.shape[1]))
            KS[: self.KS.shape[0]] = self.KS
            self.KS = KS
        self.y[c] = y
        self.alpha[c] = 0.0
        self.status[c] = OUT
        return c

    def _column(self, c, known=None):
        """k(x_i, x_c) for every id i (0 for unlearned ids), kernel-evaluating only the
        active ids not already known: from the column cache (the first L ids, if c's
        column is cached; it leaves the cache) or from ``known`` (an id -> value map)."""
        col = np.zeros(self.n)
        cached, L = self.cache.pop(c, (None, 0))
        for i in range(self.n):
            if self.status[i] == GONE:
                continue
            if i == c:
                col[i] = self.kdiag[c]
            elif i < L:
                col[i] = cached[i]
            elif known is not None and i in known:
                col[i] = known[i]
            else:
                col[i] = self.kernel(self.rows[i], self.rows[c])
        return col

    def _cache_put(self, i, col):
        """Keep the kernel column of i (which just left S, or ended a learning step in E
        or R) for a later return to S.  The cache holds at most cache_size MB of columns
        of the current length n; the oldest entries go first."""
        self.cache.pop(i, None)
        max_cols = self.cache_bytes // (8 * max(self.n, 1))
        if max_cols < 1:
            return
        self.cache[i] = (np.array(col[: self.n]), self.n)
        while len(self.cache) > max_cols:
            self.cache.popitem(last=False)

    def _known_from_S(self, i):
        """k(x_i, x_s) for the margin vectors s, read from their cached columns."""
        return {s: self.KS[i, j] for j, s in enumerate(self.S)}

    def _s_pos(self, i):
        return self.S.index(i)

    # ------------------------------------------------------------------ inverse R
    def _grow_inverse(self, i, beta_i, kappa, col):
        """Add example i to S: R <- [[R, 0], [0, 0]] + [beta; 1][beta; 1]^T / kappa  (Eq. 8)."""
        ns = len(self.S)
        if ns == 0:
            # S = {i}: [[0, y_i], [y_i, Q_ii]]^-1 = [[-Q_ii, y_i], [y_i, 0]]
            self.Rinv = bordered_start(self.y[i], self.kdiag[i])
        else:
            self.Rinv = bordered_grow(self.Rinv, beta_i, kappa)
        KS = np.zeros((self.KS.shape[0], ns + 1))
        KS[:, :ns] = self.KS[:, :ns]
        KS[: self.n, ns] = col
        self.KS = KS
        self.S.append(i)
        self.status[i] = MARGIN
        self.fresh = False
        self._s_changed()

    def _shrink_inverse(self, pos):
        """Remove the margin vector at position ``pos`` of S:
        R_ij <- R_ij - R_ik R_kj / R_kk  (Eq. 9), row and column k dropped."""
        ns = len(self.S)
        if ns == 1:
            self.Rinv = np.zeros((1, 1))
        else:
            # None: the reduced matrix is (nearly) singular, rebuilt below
            R = bordered_shrink(self.Rinv, pos + 1, EPS_RATE)
        self.KS = np.delete(self.KS, pos, axis=1)
        del self.S[pos]
        self.fresh = False
        if ns > 1 and R is None:
            self.Rinv = self._invert_bordered()
            self.fresh = True
        elif ns > 1:
            self.Rinv = R
        self._s_changed()

    def _bordered(self):
        """The bordered matrix [[0, y_S^T], [y_S, Q_SS]] from the cached columns."""
        return bordered_matrix(self.y, self.KS, self.S)

    def _invert_bordered(self):
        """Its inverse by LU (LinAlgError when singular), made exactly symmetric: the
        rank-one updates keep it so, and the twin reads R's rows as its columns."""
        return symmetrize(lu_inverse(self._bordered()))

    def _s_changed(self):
        """Every ``refresh_every`` changes of S the drift of R is probed (O(|S|^2)); R is
        recomputed (O(|S|^3)) only above DRIFT_REFRESH."""
        self.n_s_changes += 1
        if self.refresh_every and len(self.S) and self.n_s_changes % self.refresh_every == 0:
            if not bordered_drift(self.Rinv, self.y, self.KS, self.S) <= DRIFT_REFRESH:
                self.refresh_inverse()

    def refresh_inverse(self):
        """Recompute R from the cached kernel columns; record the drift of the updated R."""
        if not self.S:
            return 0.0
        try:
            fresh = self._invert_bordered()
        except np.linalg.LinAlgError:
            # numerically singular S (degenerate data): keep the updated inverse
            self.n_refresh_failed += 1
            return 0.0
        scale = np.max(np.abs(fresh))
        drift = float(np.max(np.abs(fresh - self.Rinv)) / scale) if scale > 0 else 0.0
        self.max_inverse_drift = max(self.max_inverse_drift, drift)
        self.Rinv = fresh
        self.fresh = True
        self.n_refresh += 1
        return drift

    def _fresh_inverse(self):
        """Recompute R from the cached columns unless it is fresh already (beta could not
        be refined with it, see ``_beta``); returns whether R changed."""
        if self.fresh or not self.S:
            return False
        try:
            self.Rinv = self._invert_bordered()
        except np.linalg.LinAlgError:
            return False
        self.fresh = True
        self.n_pivot_refresh += 1
        return True

    def _pivot_bound(self, i, beta):
        """An O(k) upper bound of ``_pivot_scale`` for a positive semi-definite kernel:
        |Q_ii| + 2 |beta_b| sum_j |y_j beta_j| + (sum_j sqrt(k_jj) |beta_j|)^2."""
        S = np.array(self.S, dtype=np.intp)
        return pivot_bound(self.kdiag[i], beta, self.y[S], np.sqrt(np.abs(self.kdiag[S])))

    def _pivot_scale(self, i, beta):
        """|Q_ii| + |beta|' |M| |beta| (M the bordered matrix): the round-off scale of the
        pivot kappa_i = Q_ii + m' beta^(i) = Q_ii - m' M^-1 m computed with an inverse
        accurate to a backward error |dM| <= eps |M|."""
        return pivot_round_off_scale(self.kdiag[i], beta, self._bordered())

    # ------------------------------------------------------------------ sensitivities
    def _beta(self, i):
        """beta^(i) = -R [y_i; Q_Si]  (Eq. 5), from the cached columns of S.

        Safeguard 1 (a departure from the paper, which multiplies by the updated R):
        beta is refined against the bordered matrix M itself (:meth:`_refine`), and if
        R has drifted so far that refinement does not converge, R is refactorised from
        the kernel columns and beta computed again.  With a margin set of ~100 points in
        two dimensions M has a condition number ~1e11; beta = -R m alone then has
        residuals |M beta + m| ~1e-7, and rates computed from it flip sign at random:
        the adiabatic loop cycled (issue 15).  Refined, the residual is at round-off."""
        m = self._m_of(i)
        beta, rel = self._refine(bordered_beta(self.Rinv, m), m)
        if rel > EPS_REFACTOR and self._fresh_inverse():
            beta, _ = self._refine(bordered_beta(self.Rinv, m), m)
        return beta, m

    def _m_of(self, i):
        """m = [y_i; Q_Si] (the cached columns of S at i)."""
        S = np.array(self.S, dtype=np.intp)
        m = np.empty(len(S) + 1)
        m[0] = self.y[i]
        m[1:] = self.y[S] * self.y[i] * self.KS[i, : len(S)]
        return m

    def _resid_scale(self, m, beta):
        """max|m| + max(1, k_max) sum|beta|: a bound of max(|M||beta| + |m|), the scale of
        the residual's terms (|M_ab| <= max(1, k_max))."""
        return float(np.max(np.abs(m))) + max(1.0, self.kscale) * _dot(np.abs(beta),
                                                                        np.ones(beta.size))

    def _refine(self, beta, m):
        """Iterative refinement of beta = -M^-1 m: rho = M beta + m (M from the cached
        kernel columns, O(k^2)), beta <- beta - R rho, at most N_REFINE times, until
        max|rho| <= EPS_RESID (max|m| + max(1, k_max) sum|beta|) (a bound of the scale
        max(|M||beta| + |m|) of the residual's terms, from the first beta).  Returns
        (beta, the relative residual)."""
        M = self._bordered()
        smax = self._resid_scale(m, beta)
        if smax == 0.0:
            return beta, 0.0
        for it in range(N_REFINE + 1):
            # M's rows taken as the columns of M' (M is symmetric up to the kernel's
            # round-off): the twin's order, which reads them contiguously
            rho = _matvec(M.T, beta) + m
            beta, rmax, done = self._correct(beta, rho, smax, it == N_REFINE)
            if done:
                break
        return beta, rmax / smax

    def _correct(self, beta, rho, smax, last):
        """One step of the refinement of beta from its residual rho = M beta + m:
        (beta, max|rho|, done), done when max|rho| <= EPS_RESID smax or this was the
        ``last`` check, else beta - Rinv rho (:meth:`_refine`, :meth:`_beta_gamma`)."""
        rmax = float(np.max(np.abs(rho)))
        if rmax <= EPS_RESID * smax or last:
            return beta, rmax, True
        return beta + bordered_beta(self.Rinv, rho), rmax, False

    def _beta_gamma(self, c, col):
        """beta^(c) (Eq. 5), refined as :meth:`_beta` does, and gamma (Eq. 7) from it: the
        pass of the adiabatic loop.  gamma of a margin vector is the residual of its row,
        gamma_{S_a} = (M beta + m)_{a+1} (M's row 0: y_S' beta_S + y_c), so the sweep over
        every example that gamma needs anyway also yields the residual of the margin rows
        (M read by rows instead of by columns: the same matrix up to the kernel's
        round-off): while beta needs no correction, no separate O(|S|^2) pass over M.
        After a pass whose beta needed one (``refined``) the first residual is computed
        against M (O(|S|^2), as :meth:`_refine`) instead, before the O(n |S|) sweep, and
        the sweep checks the corrected beta.  The same bound of the residual's scale, the
        same N_REFINE and EPS_REFACTOR as :meth:`_refine`.  Returns (beta, m, gamma)."""
        m = self._m_of(c)
        for attempt in range(2):
            beta = bordered_beta(self.Rinv, m)
            smax = self._resid_scale(m, beta)
            if smax == 0.0:
                return beta, m, self._gamma(c, col, beta)
            explicit = self.refined
            for it in range(N_REFINE + 1):
                if explicit:
                    rho = _matvec(self._bordered().T, beta) + m      # as _refine
                else:
                    gamma = self._gamma(c, col, beta)
                    rho = self._residual_from_gamma(c, beta, gamma)
                beta, rmax, done = self._correct(beta, rho, smax, it == N_REFINE)
                if done:
                    break
                explicit = False
            self.refined = it > 0
            if explicit:
                gamma = self._gamma(c, col, beta)
            if attempt or not rmax / smax > EPS_REFACTOR or not self._fresh_inverse():
                return beta, m, gamma

    def _residual_from_gamma(self, c, beta, gamma):
        """M beta + m read from gamma = self._gamma(c, col, beta): row 0 y_S' beta_S + y_c,
        row a + 1 gamma_{S_a} (M by rows: gamma_s = Q_sc + sum_j Q_sj beta_j + y_s beta_b)."""
        S = np.array(self.S, dtype=np.intp)
        return np.concatenate(([_dot(self.y[S], beta[1:]) + self.y[c]], gamma[S]))

    def _gamma(self, c, col, beta):
        """gamma_i = Q_ic + sum_{j in S} Q_ij beta_j + y_i beta_b for every id (Eq. 7)."""
        n, ns = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        w = beta[1:] * self.y[S]
        inner = self.y[c] * col[:n] + _matvec(self.KS[:n, :ns], w) + beta[0]
        return self.y[:n] * inner

    # ------------------------------------------------------------------ the adiabatic loop
    def _adiabatic(self, c, sign, col):
        """Move alpha_c up (sign=+1, learning) or down to 0 (sign=-1, unlearning) in the
        largest increments that change no membership (Sec. 2.2), updating the sets.

        Each pass: the sensitivities (Eqs. 5-7), the limiting event (Sec. 2.2), the
        increment (Eqs. 3-7), the membership change (Eqs. 8-9); the twin has the same
        four steps.  Each pass spends one step of the operation's budget (see
        :meth:`_snapshot`); when it is spent, :class:`ExactnessError`."""
        # examples left dependent on S by an exchange (see _join), or whose rate proved to
        # be round-off (see _change_membership): no candidates until S changes
        dependent = []
        # the example that just joined S by a plain join and the marks before it
        self._joined = None
        while True:
            if self._steps_left <= 0:
                raise ExactnessError("the step budget of the operation ran out (cycling?)", c)
            self._steps_left -= 1
            self.n_iterations += 1
            sens = self._sensitivities(c, sign, col)
            t, kind, i = self._limiting_event(c, sign, sens, dependent)
            self._increment(c, sign, t, sens)
            if self._change_membership(c, sign, col, t, kind, i, sens, dependent):
                return

    def _sensitivities(self, c, sign, col):
        """How every variable moves per unit step of alpha_c (sign = +1 up, -1 down):
        (beta, r, aS, rb, rate_tol, kscale_c) with Delta b = rb t, Delta alpha_S = aS t,
        Delta g_i = r_i t (Eqs. 4-7); rate_tol_i is the round-off level below which
        |r_i| counts as zero, kscale_c the round-off scale of the pivot gamma_c."""
        y, n, ns = self.y, self.n, len(self.S)
        kscale_c = 0.0
        if ns == 0:
            # b-only increment: Delta g_i = y_i Delta b, Delta b = sign * y_c * t
            rb = sign * y[c]
            return None, y[:n] * rb, np.zeros(0), rb, np.zeros(n), kscale_c
        S = np.array(self.S, dtype=np.intp)
        beta, m, gamma = self._beta_gamma(c, col)                # Eqs. 5, 7
        if sign > 0:
            # the pivot gamma_c = Q_cc + m' beta and its scale (the O(|S|) bound unless
            # the pivot is small against it: then the exact O(|S|^2) scale)
            kappa_c = bordered_pivot(self.kdiag[c], m, beta)
            kscale_c = self._pivot_bound(c, beta)
            if pivot_doubtful(kappa_c, kscale_c, EPS_DOUBT):
                kscale_c = self._pivot_scale(c, beta)
        r = sign * gamma
        aS = sign * beta[1:]
        rb = sign * beta[0]
        # |gamma_i| below round-off of its terms (|Q_ic| + sum_j |Q_ij beta_j| + |beta_b|)
        # counts as zero: examples dependent on S have gamma = 0 exactly, and must not
        # fabricate events from round-off.  The terms are bounded per example by
        # |k(x_i, x_j)| <= sqrt(k_ii k_jj): sqrt(k_ii) (sqrt(k_cc) + sum_j sqrt(k_jj)
        # |beta_j|) + |beta_b| (beta refined: its own round-off is not R's)
        kr = np.sqrt(np.abs(self.kdiag[:n]))
        rate_tol = EPS_GAMMA * (kr * (kr[c] + _dot(np.abs(beta[1:]), kr[S])) + abs(beta[0]))
        return beta, r, aS, rb, rate_tol, kscale_c

    def _scales(self, c=-1):
        """(alpha_max, g_scale, alpha_max without c): the largest alpha of the learned
        examples (so also c's), 1 + k_max alpha_max, the size of the terms of
        g = y f - 1, and the largest alpha of the others.  The tie windows and the
        exactness tolerances are relative to these, not to C: at C = 1e12 on separable
        data every alpha may stay small (issue 15)."""
        a = self.alpha[: self.n]                        # (alpha >= 0; 0 if none)
        amax = float(a.max(initial=0.0))
        other = amax
        if 0 <= c < a.size:
            other = float(max(a[:c].max(initial=0.0), a[c + 1:].max(initial=0.0)))
        return amax, 1.0 + self.kscale * amax, other

    def _extreme(self):
        """Whether the operation is polished and the g tolerances capped (C k_max above
        POLISH_CK)."""
        return self.C * self.kscale > POLISH_CK

    def _mass(self):
        """sum_i alpha_i over the stored examples, summed left to right (as the twin)."""
        s = 0.0
        for a in self.alpha[: self.n].tolist():
            s += a
        return s

    def _g_tol(self, eps, ulps, amax, mass):
        """A tolerance on g: eps g_scale = eps (1 + k_max alpha_max), and above POLISH_CK
        at most ``ulps`` round-off floors eps_mach (1 + |b| + k_max mass) (see G_ULPS)."""
        tol = eps * (1.0 + self.kscale * amax)
        if self._extreme():
            tol = min(tol, ulps * EPS_MACH * (1.0 + abs(self.b) + self.kscale * mass))
        return tol

    def _a_tol(self, eps, amax):
        """A tolerance on alpha: eps alpha_max, and above POLISH_CK at most A_ULPS ulps
        of alpha_max (see A_ULPS)."""
        tol = eps * amax
        if self._extreme():
            tol = min(tol, A_ULPS * EPS_MACH * amax)
        return tol

    def _limiting_event(self, c, sign, sens, dependent):
        """The largest increment t >= 0 that changes no membership (Sec. 2.2) and the
        event that limits it: (t, kind, id), chosen by :func:`_first_event`."""
        _, r, aS, _, rate_tol, kscale_c = sens
        ns = len(self.S)
        S = np.array(self.S, dtype=np.intp)
        st = self.status[: self.n]
        amax, gscale, aother = self._scales(c)
        ea = self._a_tol(EPS_ALPHA, amax)
        eg = self._g_tol(EPS_G, G_ULPS, amax, self._mass() if self._extreme() else 0.0)
        events = []                                      # (t, kind, id, window), fixed order
        if sign > 0:
            # c reaches the margin; with a numerically zero pivot gamma_c (c dependent on
            # S: alpha_c moves along a null direction and g_c does not change) c cannot
            # join S, and the step is limited by the other events instead (the test of
            # the pivot in _join: relative to its round-off scale, refined beta)
            if ns == 0 or r[c] > max(EPS_PIVOT_SCALE * kscale_c, EPS_PIVOT_ABS * self.kscale):
                events.append((max(-self.g[c] / r[c], 0.0), EV_C_MARGIN, c,
                               eg / abs(r[c])))
            if ns > 0:                                            # alpha_c reaches C
                events.append((max(self.C - self.alpha[c], 0.0), EV_C_BOUND, c, ea))
        elif ns > 0:                                              # alpha_c reaches 0
            events.append((max(self.alpha[c], 0.0), EV_C_ZERO, c, ea))
        for pos in range(ns):                                     # margin vectors hit 0 or C
            s, a = S[pos], aS[pos]
            if a > EPS_RATE:
                events.append((max((self.C - self.alpha[s]) / a, 0.0), EV_S_OUT, s,
                               ea / abs(a)))
            elif a < -EPS_RATE:
                events.append((max(-self.alpha[s] / a, 0.0), EV_S_OUT, s, ea / abs(a)))
        # E members rising to g = 0, R members falling to g = 0 (ids ascending)
        cand = np.flatnonzero(((st == ERROR) & (r > rate_tol)) | ((st == REST) & (r < -rate_tol)))
        if dependent:
            cand = cand[~np.isin(cand, dependent)]
        tc = np.maximum(-self.g[cand] / r[cand], 0.0)
        wc = eg / np.abs(r[cand])
        best_t, best_kind, best_i = _first_event(events, tc, wc, cand)
        if best_kind < 0 and sign < 0 and self.alpha[c] <= self._a_tol(EPS_RESIDUE, max(aother, self._amax0)):
            # unlearning, S emptied by events tied with alpha_c ~ 0: alpha_c (a round-off
            # residue of h = 0) cannot move alone; it is 0
            best_t, best_kind, best_i = 0.0, EV_C_ZERO, c
        if best_kind < 0:
            # (round-off at a degenerate point: at C = 1e12, unlearning after a residue of
            # an ulp of C was left on a margin vector) rolled back like the safeguards
            raise ExactnessError("no event limits the increment (unbounded: round-off at a "
                                 "degenerate point)", c)
        return best_t, best_kind, best_i

    def _increment(self, c, sign, t, sens):
        """Apply the increment t: alpha_c, alpha_S, b and every g outside S (Eqs. 3-7)."""
        _, r, aS, rb, _, _ = sens
        n = self.n
        st = self.status[:n]
        if self.S:
            S = np.array(self.S, dtype=np.intp)
            self.alpha[c] = min(max(self.alpha[c] + sign * t, 0.0), self.C)
            self.alpha[S] += aS * t
            # a variable tied with the limiting one may pass its bound by <= eps
            self.alpha[S] = np.minimum(np.maximum(self.alpha[S], 0.0), self.C)
        self.b += rb * t
        move = st != MARGIN
        move &= st != GONE
        self.g[:n][move] += r[move] * t

    def _change_membership(self, c, sign, col, t, kind, i, sens, dependent):
        """The membership change of the limiting event (the sets and the inverse, Eqs.
        8-9).  Returns True when the operation on c is over.

        An example that joined S and leaves it again at the next pass by a zero step
        returns S, alpha, b and g to exactly where they were before its join: its rate
        (the sign of gamma_i that made it a candidate) contradicts its new beta_i, i.e.
        both are round-off (i nearly dependent on S while c moves along a near-null
        direction).  It is then held back like an example left dependent by an exchange
        (no candidate until S changes otherwise), with the marks of that S restored;
        otherwise the same join and leave would repeat for ever (issue 15, noisy
        streams).

        Safeguard 2 (a departure): g is never set to 0 when an example reaches the margin
        (joins or leaves S); it keeps the value the increments gave it, which is 0 within
        the tie window.  g then stays the true y f - 1 to round-off, so that what the
        tolerances let pass is seen by the check after the operation (safeguard 3)
        instead of hidden as drift."""
        beta, r, aS, _, _, kscale_c = sens
        joined, self._joined = self._joined, None
        if kind == EV_C_MARGIN:
            if self.alpha[c] <= 0.0:
                self.alpha[c] = 0.0
                self.status[c] = REST
                self._cache_put(c, col)
            elif not self.S:
                self._grow_inverse(c, None, None, col)
            else:
                self._grow_inverse(c, beta, r[c] * sign, col)
            return True
        if kind == EV_C_BOUND:
            self.alpha[c] = self.C
            self.status[c] = ERROR
            self._cache_put(c, col)
            return True
        if kind == EV_C_ZERO:
            self.alpha[c] = 0.0
            return True
        if kind == EV_S_OUT:
            pos = self._s_pos(i)
            self._leave_margin(pos, aS[pos] > 0)
            if joined is not None and joined[0] == i and t == 0.0:
                dependent[:] = joined[1] + [i]      # back to the S before i joined
            else:
                dependent.clear()
            return False
        # EV_JOIN
        changes = self.n_s_changes
        marks = list(dependent)
        dep = self._join(i)
        # S changed: the marks go, unless S only swapped one member for a dependent one
        # (an exchange of one margin vector for i: the same span)
        swapped = self.n_s_changes - changes == 2 and dep >= 0 and dep != i
        if self.n_s_changes != changes and not swapped:
            dependent.clear()
        if dep < 0 and self.n_s_changes - changes == 1:
            self._joined = (i, marks)               # a plain join: i is the last of S
        if dep >= 0:
            dependent.append(dep)
        return False

    def _leave_margin(self, pos, to_error):
        """The margin vector S[pos] leaves S at a bound: alpha = C (E) or 0 (R)."""
        s = self.S[pos]
        if to_error:
            self.alpha[s] = self.C
            new = ERROR
        else:
            self.alpha[s] = 0.0
            new = REST
        self._cache_put(s, self.KS[: self.n, pos])
        self._shrink_inverse(pos)
        self.status[s] = new

    def _join(self, i):
        """Example i (in R or E, g_i = 0) joins S; degenerate pivots go through an exchange.

        Returns the example the exchange left dependent on the final S (-1 if none): the
        last margin vector it replaced by i, or i itself if alpha_i reached its other
        bound.  Its rate is zero while S stays as it is (a numerically zero pivot is
        taken as exact linear dependence: for a positive semi-definite kernel, a
        singular bordered matrix has a null vector v with sum_j v_j y_j phi(x_j) = 0,
        sum_j v_j y_j = 0, so gamma_i = 0 for every increment), so it is no candidate
        until S changes (which keeps two duplicates from replacing each other forever)."""
        col_i = None
        dep = -1
        while True:
            if not self.S:
                self._grow_inverse(i, None, None, col_i if col_i is not None else self._column(i))
                return dep
            known = self._known_from_S(i)
            beta_i, m = self._beta(i)
            kappa = bordered_pivot(self.kdiag[i], m, beta_i)   # Schur complement = gamma_i^(i)
            scale = self._pivot_bound(i, beta_i)
            if pivot_doubtful(kappa, scale, EPS_DOUBT):
                scale = self._pivot_scale(i, beta_i)
            # numerically zero relative to the terms it is computed from?
            if not pivot_is_zero(kappa, scale, self.kscale, EPS_PIVOT_SCALE, EPS_PIVOT_ABS):
                self._grow_inverse(i, beta_i, kappa,
                                   col_i if col_i is not None else self._column(i, known))
                return dep
            # degenerate: [alpha_i, alpha_S] moves along a null direction of Q
            self.n_exchanges += 1
            if col_i is None:
                col_i = self._column(i, known)
            d = 1.0 if self.status[i] == REST else -1.0
            aS = d * beta_i[1:]
            S = np.array(self.S, dtype=np.intp)
            ea = self._a_tol(EPS_ALPHA, self._scales()[0])
            events = []
            for pos in range(len(S)):
                s, a = S[pos], aS[pos]
                if a > EPS_RATE:
                    events.append((max((self.C - self.alpha[s]) / a, 0.0), EV_S_OUT, s,
                                   ea / abs(a)))
                elif a < -EPS_RATE:
                    events.append((max(-self.alpha[s] / a, 0.0), EV_S_OUT, s, ea / abs(a)))
            # the margin vector with the least id among the tied ones leaves; alpha_i
            # reaching its other bound only when no margin vector is tied
            # (alpha_i's room: i may have moved in an earlier exchange of this join)
            room = max(self.C - self.alpha[i], 0.0) if d > 0 else max(self.alpha[i], 0.0)
            best_t, _, best_s = _first_event(events, np.zeros(0), np.zeros(0), None,
                                             last=(room, EV_C_BOUND, -1, ea))
            best_pos = self._s_pos(best_s) if best_s >= 0 else -1
            t = best_t
            self.alpha[i] += d * t
            self.alpha[S] += aS * t
            self.alpha[S] = np.minimum(np.maximum(self.alpha[S], 0.0), self.C)
            self.b += d * beta_i[0] * t
            # a null direction up to round-off: g follows it (gamma^(i), Eq. 7) all the same
            n = self.n
            st = self.status[:n]
            r = d * self._gamma(i, col_i, beta_i)
            move = (st != MARGIN) & (st != GONE)
            self.g[:n][move] += r[move] * t
            if best_pos < 0:                             # alpha_i reached its other bound
                if d > 0:
                    self.alpha[i] = self.C
                    self.status[i] = ERROR
                else:
                    self.alpha[i] = 0.0
                    self.status[i] = REST
                self._cache_put(i, col_i)
                return i
            dep = int(S[best_pos])
            self._leave_margin(best_pos, aS[best_pos] > 0)
            # and try again to add i to the smaller S

    def _polish(self):
        """At large C (C k_max above ``POLISH_CK``), g afresh at the end of an operation.

        The path is exact in exact arithmetic, but its intermediate alphas need not be
        representable: at C = 1e12 float64 holds an alpha of order C to an ulp of C
        (1.2e-4), each increment leaves alpha_S and b that far off, and g, updated by
        the exact rates, drifts from the true y f - 1 by that much times k, step after
        step (the census of degenerate streams found 28 times the round-off floor
        32 eps sum|alpha| k_max).  The end of an operation therefore (as POKER's
        ``_polish``, docs/fine_scheinberg.rst, "Extreme C"):

        1. sums g_s (s in S) and h = sum_i y_i alpha_i from the stored alpha and b in
           twice the working precision (Dot2, :func:`_dot2_add`; the terms of the error
           vectors first, ids ascending, then those of S in its order, y_i b and -1);
        2. takes one step of iterative refinement of (b, alpha_S) on these residuals,
           [db; dalpha_S] = -R [h; g_S] (the bordered system, Eq. 3), kept only if every
           alpha_S stays in [0, C], no alpha_s moves by more than EPS_KKT alpha_max (a
           correction of round-off, not of the path; alpha_max the larger of now and
           when the operation began: unlearning an alpha of C leaves residues of an
           ulp of C on the small alphas left, which only that scale lets go) and the
           residual,
           max(k_max |h|, max|g_S|) summed again so, is smaller than before: with a
           nearly singular S the updated R can be far from M^-1 (on the noisy stream
           at C = 1e12, 126 margin vectors in two dimensions, ||M R - I|| reached 20)
           and its corrections, accepted, made the next operation cycle;
        3. recomputes every g (learned examples) the same way.

        O(n (|E| + |S|)) flops; the kernel columns of the error vectors come from the
        column cache (the entries missing are evaluated and counted, the column is
        cached again).  Below POLISH_CK nothing is done."""
        if self.C * self.kscale <= POLISH_CK:
            return
        n = self.n
        st = self.status[:n]
        act = np.flatnonzero(st >= 0)
        if not act.size:
            return
        # 0. ulp residues on the margin vectors go to their bound (as POKER's window):
        #    an alpha_s within SNAP_ULPS ulps of the operation's alpha_max of 0 or C
        #    (and again after the refinement below, which may leave such residues)
        w = SNAP_ULPS * EPS_MACH * max(self._scales()[0], self._amax0)
        self._snap(w)
        y = self.y[act]
        pe = np.zeros(act.size)                          # Dot2 over the error vectors
        se = np.zeros(act.size)
        for j in np.flatnonzero(st == ERROR):
            col = self._column(int(j), self._known_from_S(int(j)))
            self._cache_put(int(j), col)
            pe, se = _dot2_add(pe, se, y * (self.alpha[j] * self.y[j]), col[act])

        def exact_g(rows):
            """g of act[rows]: the sum over E continued over S, y_i b and -1."""
            p, s, yr = pe[rows], se[rows], y[rows]
            ids = act[rows]
            for pos, j in enumerate(self.S):
                p, s = _dot2_add(p, s, yr * (self.alpha[j] * self.y[j]), self.KS[ids, pos])
            p, q = _two_sum(p, yr * self.b)
            s = s + q
            p, q = _two_sum(p, np.full(p.shape, -1.0))
            s = s + q
            return p + s

        if self.S:
            S = np.array(self.S, dtype=np.intp)
            rows = np.searchsorted(act, S)

            def residual():
                """[h; g_S] and its size max(k_max |h|, max|g_S|) (h by Sum2, ids
                ascending; h is in units of alpha, g in units of k alpha)."""
                hp = hs = 0.0
                for i in act.tolist():
                    hp, q = _two_sum(hp, self.y[i] * self.alpha[i])
                    hs += q
                r = np.empty(S.size + 1)
                r[0] = hp + hs
                r[1:] = exact_g(rows)
                return r, max(self.kscale * abs(r[0]), float(np.max(np.abs(r[1:]))))

            r, size = residual()
            sol = bordered_beta(self.Rinv, r)            # -R [h; g_S]
            new = self.alpha[S] + sol[1:]
            amax = max(self._scales()[0], self._amax0)     # (the scale of the operation)
            # (a step that leaves the box by no more than the snap window w is clipped
            # into it: margin vectors at alpha = 0 or C exactly, as after a snap)
            if (size > 0.0 and np.all((new >= -w) & (new <= self.C + w))
                    and not np.any(np.abs(sol[1:]) > EPS_KKT * amax)):
                old, b = self.alpha[S].copy(), self.b
                self.alpha[S] = np.minimum(np.maximum(new, 0.0), self.C)
                self.b += sol[0]
                if residual()[1] >= size:
                    # no better: R is too far from M^-1 (S nearly singular) to help
                    self.alpha[S] = old
                    self.b = b
            self._snap(w)
        self.g[act] = exact_g(np.arange(act.size))

    def _snap(self, w):
        """Margin vectors with alpha within w of 0 or C go to that bound (S order)."""
        for j in self.S:
            if self.alpha[j] <= w:
                self.alpha[j] = 0.0
            elif self.alpha[j] >= self.C - w:
                self.alpha[j] = self.C

    def _centre_bias(self):
        """With S empty the KKT conditions leave b in an interval [lo, hi]; take its
        midpoint (LIBSVM's choice), or its finite end (one class seen so far)."""
        if self.S:
            return
        n = self.n
        st, y = self.status[:n], self.y[:n]
        v = self.b - y * self.g[:n]                      # the b that puts i on its margin
        low = ((st == REST) & (y > 0)) | ((st == ERROR) & (y < 0))
        high = ((st == REST) & (y < 0)) | ((st == ERROR) & (y > 0))
        lo = np.max(v[low]) if low.any() else -np.inf
        hi = np.min(v[high]) if high.any() else np.inf
        if np.isfinite(lo) and np.isfinite(hi):
            new = 0.5 * (lo + hi)
        elif np.isfinite(lo):
            new = lo
        elif np.isfinite(hi):
            new = hi
        else:
            return
        db = new - self.b
        self.b = new
        act = st != GONE
        self.g[:n][act] += y[act] * db

    # ------------------------------------------------------------------ public operations
    def _learn(self, c, col=None, known=None):
        """Learn the stored example c (status OUT, alpha_c = 0, g_c up to date)."""
        if self.g[c] >= -self.tol:                       # on or beyond its margin: R
            self.status[c] = REST
            return
        if col is None:
            col = self._column(c, known)
        self._adiabatic(c, +1.0, col)

    # ------------------------------------------------------------------ safeguard 3
    # (a departure from the paper): every operation that moves alpha ends with a check
    # of the KKT conditions on the kept g (O(n)); the examples that violate them by more
    # than EPS_REPAIR g_scale (what a rate below its round-off level let pass) are
    # unlearned and learned again, worst first; what is left above EPS_KKT g_scale (or
    # |h| above EPS_KKT alpha_max), or a spent step budget, rolls the operation back.
    def _snapshot(self, keep):
        """Start an operation: its step budget, and what it rolls back to (the first
        ``keep`` examples, the margin set, R, b; O(n + |S|^2))."""
        n = self.n
        self._steps_left = (self.max_steps if self.max_steps > 0
                            else STEPS_PER_EXAMPLE * (n + 10))
        self._amax0 = self._scales()[0]
        return dict(n=keep, amax=self._scales()[0],
                    mass=self._mass() if self._extreme() else 0.0, alpha=self.alpha[:keep].copy(),
                    g=self.g[:keep].copy(), status=self.status[:keep].copy(), b=self.b,
                    S=list(self.S), Rinv=self.Rinv.copy(), kscale=self.kscale,
                    fresh=self.fresh, refined=self.refined, n_s_changes=self.n_s_changes,
                    n_refresh=self.n_refresh, max_inverse_drift=self.max_inverse_drift)

    def _rollback(self, snap):
        """Put the state back as :meth:`_snapshot` saw it.  The kernel columns of the
        margin set then: those still in S are kept, the others recomputed (from the
        column cache first, in the order of S); cached columns are cut to the examples
        kept.  Only the kernel-evaluation count shows that the operation happened."""
        n = snap["n"]
        kept = {s: self.KS[:n, j].copy() for j, s in enumerate(self.S)}
        del self.rows[n:]
        self.n = n
        for i in list(self.cache):
            col, L = self.cache[i]
            if i >= n:
                del self.cache[i]
            elif L > n:
                self.cache[i] = (col[:n].copy(), n)
        self.alpha[:n] = snap["alpha"]
        self.alpha[n:] = 0.0
        self.g[:n] = snap["g"]
        self.g[n:] = 0.0
        self.status[:n] = snap["status"]
        self.status[n:] = GONE
        self.b = snap["b"]
        self.kscale = snap["kscale"]
        S = snap["S"]
        KS = np.zeros((self.KS.shape[0], len(S)))
        for j, s in enumerate(S):
            KS[:n, j] = kept[s] if s in kept else self._column(s)
        self.S = list(S)
        self.KS = KS
        self.Rinv = snap["Rinv"]
        for name in ("fresh", "refined", "n_s_changes", "n_refresh", "max_inverse_drift"):
            setattr(self, name, snap[name])
        self.n_rollbacks += 1

    def _worst_violation(self):
        """(id, violation) of the example that violates its KKT condition most on the kept
        g: -g in R, g in E, |g| in S (learned examples only; the least id on ties)."""
        n = self.n
        if not n:
            return -1, 0.0
        st, g = self.status[:n], self.g[:n]
        v = np.where(st == REST, -g, np.where(st == ERROR, g, np.where(st == MARGIN,
                                                                         np.abs(g), -np.inf)))
        i = int(np.argmax(v))
        return i, float(v[i])

    def _repair_and_check(self, c, amax0, mass0=0.0):
        """Safeguard 3 after an operation on c (see above); ExactnessError if the
        conditions cannot be restored.  The scales are those of the larger of the
        alphas now and ``amax0``, ``mass0`` (alpha_max and sum alpha before the
        operation): the round-off of g and h is that of the alphas they were computed
        with.  Above POLISH_CK g is the one ``_polish`` recomputed from alpha and b, h
        is summed exactly, and the tolerances are capped by multiples of the round-off
        floor (REPAIR_ULPS, KKT_ULPS, H_ULPS): the check sees the true KKT residual."""
        extreme = self._extreme()
        for it in range(N_REPAIR + 1):
            v, worst = self._worst_violation()
            amax = max(self._scales()[0], amax0)
            mass = max(self._mass(), mass0) if extreme else 0.0
            if worst <= self._g_tol(EPS_REPAIR, REPAIR_ULPS, amax, mass) or it == N_REPAIR:
                break
            self.n_repairs += 1
            col = self._unlearn_one(v)
            self._centre_bias()
            self._learn(v, col=col)
            self._polish()
            self._centre_bias()
        amax = max(self._scales()[0], amax0)
        mass = max(self._mass(), mass0) if extreme else 0.0
        n = self.n
        act = self.status[:n] >= 0
        htol = EPS_KKT * amax
        if extreme:
            hp = hs = 0.0                                # Sum2, ids ascending (as _polish)
            for i in np.flatnonzero(act).tolist():
                hp, q = _two_sum(hp, self.y[i] * self.alpha[i])
                hs += q
            h = abs(hp + hs)
            htol = min(htol, H_ULPS * EPS_MACH * mass)
        else:
            h = abs(_dot(self.y[:n][act], self.alpha[:n][act]))
        if worst > self._g_tol(EPS_KKT, KKT_ULPS, amax, mass):
            raise ExactnessError(f"a KKT condition is violated by {worst:.3g} (example {v}) "
                                 f"after {N_REPAIR} repairs", c)
        if h > htol:
            raise ExactnessError(f"sum_i y_i alpha_i = {h:.3g} is not zero", c)

    def _guarded(self, c, keep, operation):
        """Run ``operation`` on c as one atomic operation: snapshot, the operation, the
        bias interval, safeguard 3; rolled back on ExactnessError (re-raised, saying so)."""
        snap = self._snapshot(keep)
        try:
            operation()
            self._polish()
            self._centre_bias()
            self._repair_and_check(c, snap["amax"], snap["mass"])
        except ExactnessError as exc:
            self._rollback(snap)
            raise ExactnessError(
                f"IncrementalSVM: example {c}: {exc}; the operation was rolled back (the "
                "state is exactly the one before it)", c) from None

    def step(self, x, y):
        """Learn one example (x, y), y = +1 or -1: the model is exact afterwards.
        Returns 1 when the model changed, 0 when the example joined R and b stayed.
        Atomic: on :class:`ExactnessError` the example is not learned (and not stored)."""
        b0 = self.b
        c = self._store(x, float(y))
        self.kdiag[c] = self.kernel.self_value(self.rows[c])
        self.kscale = max(self.kscale, abs(self.kdiag[c]))
        # g_c = y_c f(x_c) - 1 from the support vectors (Eq. 2)
        known = {}
        f = self.b
        for i in range(c):
            if self.status[i] == MARGIN or self.status[i] == ERROR:
                kv = self.kernel(self.rows[i], self.rows[c])
                known[i] = kv
                f += self.alpha[i] * self.y[i] * kv
        self.g[c] = self.y[c] * f - 1.0
        ns = len(self.S)
        for j in range(ns):                               # extend the cached columns of S
            self.KS[c, j] = known[self.S[j]]
        if self.g[c] >= -self.tol:                       # on or beyond its margin: R
            self.status[c] = REST
            self._centre_bias()
        else:
            self._guarded(c, c, lambda: self._learn(c, known=known))
        self.n_increments += 1
        # unchanged: c joined R and b stayed (S empty: the interval of b may have moved)
        return 1 if (self.status[c] != REST or self.b != b0) else 0

    def _unlearn_one(self, c):
        """Bring alpha_c to 0 (Sec. 4); c keeps status OUT and an up-to-date g_c."""
        st = self.status[c]
        if st == REST:
            self.status[c] = OUT
            return None
        if st == MARGIN:
            pos = self._s_pos(c)
            col = self.KS[: self.n, pos].copy()
            self._shrink_inverse(pos)
        else:
            col = self._column(c, self._known_from_S(c))
        self.status[c] = OUT
        self._adiabatic(c, -1.0, col)
        return col

    def unlearn(self, ids):
        """Remove the examples with these ids exactly (decremental unlearning), one after
        the other; each removal is atomic (on :class:`ExactnessError` the ids before
        the failing one are unlearned, the others not)."""
        ids = [int(i) for i in ids]
        for c in ids:
            self._guarded(c, self.n, lambda: self._remove(c))
            self.n_decrements += 1

    def _remove(self, c):
        self._unlearn_one(c)
        self.status[c] = GONE
        self.cache.pop(c, None)
        self.alpha[c] = 0.0
        self.g[c] = 0.0

    def loo_decisions(self):
        """Exact leave-one-out decisions f_{-i}(x_i) for every learned example (ids
        ascending): a support vector is unlearned, f(x_c) read off g_c, and re-learned."""
        ids = np.flatnonzero(self.status[: self.n] >= 0)
        out = np.empty(ids.shape[0])
        for r, c in enumerate(ids):
            if self.status[c] == REST:
                out[r] = self.y[c] * (self.g[c] + 1.0)
                continue
            snap = self._snapshot(self.n)             # one budget for both halves
            try:
                col = self._unlearn_one(c)
                self._polish()
                self._centre_bias()
                self._repair_and_check(c, snap["amax"], snap["mass"])
                out[r] = self.y[c] * (self.g[c] + 1.0)
                self._learn(c, col=col)
                self._polish()
                self._centre_bias()
                self._repair_and_check(c, snap["amax"], snap["mass"])
            except ExactnessError as exc:
                self._rollback(snap)
                raise ExactnessError(
                    f"IncrementalSVM: leave-one-out of example {c}: {exc}; the model was "
                    "rolled back to the one before it", c) from None
        return out

    # ------------------------------------------------------------------ prediction, state
    def decision_function(self, X):
        """f(x) = sum_{j in S u E} alpha_j y_j k(x_j, x) + b for every row of X
        (prediction is not counted in ``n_kernel_evals``)."""
        sv = [i for i in range(self.n) if self.status[i] in (MARGIN, ERROR)]
        m = X.shape[0]
        out = np.empty(m)
        for r in range(m):
            x = get_row(X, r)
            f = self.b
            for i in sv:
                f += self.alpha[i] * self.y[i] * self.kernel.value(self.rows[i], x)
            out[r] = f
        return out

    def support_ids(self):
        """Ids of the support vectors (S u E), ascending."""
        st = self.status[: self.n]
        return np.flatnonzero((st == MARGIN) | (st == ERROR))

    def support_rows(self):
        """The support vectors as a 2-D array or CSR matrix (ids ascending)."""
        ids = self.support_ids()
        return stack_rows([self.rows[i] for i in ids], self.n_features, self.sparse)

    def support(self):
        """(ids, y_i alpha_i, rows) of the support vectors S u E, ids ascending."""
        ids = self.support_ids()
        return ids, self.alpha[ids] * self.y[ids], self.support_rows()

    def active_ids(self):
        """Ids learned and not unlearned, ascending."""
        return np.flatnonzero(self.status[: self.n] >= 0)

    def get_state(self):
        n = self.n
        st = self.status[:n]
        return {
            "alpha": self.alpha[:n].copy(),
            "g": self.g[:n].copy(),
            "y": self.y[:n].copy(),
            "b": float(self.b),
            "status": st.astype(np.int8).copy(),
            "S": np.flatnonzero(st == MARGIN),
            "E": np.flatnonzero(st == ERROR),
            "R": np.flatnonzero(st == REST),
            "S_order": np.array(self.S, dtype=np.intp),
            "Rinv": self.Rinv.copy() if self.S else np.zeros((1, 1)),
            "n_seen": n,
            "n_increments": self.n_increments,
            "n_decrements": self.n_decrements,
            "n_iterations": self.n_iterations,
            "n_exchanges": self.n_exchanges,
            "n_refresh_failed": self.n_refresh_failed,
            "n_pivot_refresh": self.n_pivot_refresh,
            "n_repairs": self.n_repairs,
            "n_rollbacks": self.n_rollbacks,
            "cached": np.array(list(self.cache.keys()), dtype=np.intp),
            "n_refresh": self.n_refresh,
            "refined": bool(self.refined),
            "max_inverse_drift": self.max_inverse_drift,
            "n_kernel_evals": self.n_kernel_evals,
        }

    # ------------------------------------------------------------------ persistence
    def init_params(self):
        """The constructor's keyword arguments (persistence protocol)."""
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    kernel=self.kernel.kind, gamma=self.kernel.gamma,
                    degree=self.kernel.degree, coef0=self.kernel.coef0, tol=self.tol,
                    refresh_every=self.refresh_every, cache_size=self.cache_size,
                    max_steps=self.max_steps)

    def save_state(self):
        """Everything learned, in the format both twins share (see :func:`state_arrays`)."""
        n, ns = self.n, len(self.S)
        cache = list(self.cache.items())                 # oldest first
        return state_arrays(
            stack_rows(self.rows, self.n_features, self.sparse), self.sparse,
            alpha=self.alpha[:n], g=self.g[:n], y=self.y[:n], kdiag=self.kdiag[:n],
            status=self.status[:n], S=self.S, KS=self.KS[:n, :ns],
            Rinv=self.Rinv if ns else np.zeros((1, 1)), b=self.b, kscale=self.kscale,
            cache_ids=[i for i, _ in cache], cache_columns=[col[:L] for _, (col, L) in cache],
            counters=dict(n_increments=self.n_increments, n_decrements=self.n_decrements,
                          n_iterations=self.n_iterations, n_exchanges=self.n_exchanges,
                          n_refresh_failed=self.n_refresh_failed,
                          n_pivot_refresh=self.n_pivot_refresh, n_s_changes=self.n_s_changes,
                          n_refresh=self.n_refresh, max_inverse_drift=self.max_inverse_drift,
                          fresh=self.fresh, refined=self.refined,
                          n_kernel_evals=self.kernel.n_evals,
                          n_repairs=self.n_repairs, n_rollbacks=self.n_rollbacks))

    def load_state(self, data):
        """Restore what either twin's ``save_state`` returned (into a fresh state)."""
        n = int(data["n_seen"])
        self.rows = rows_from_state(data, n, self.sparse)
        self.n = n
        cap = max(n, 16)
        for name in ("alpha", "g", "y", "kdiag"):
            a = np.zeros(cap)
            a[:n] = data[name]
            setattr(self, name, a)
        self.status = np.full(cap, GONE, dtype=np.int8)
        self.status[:n] = data["status"]
        self.S = [int(i) for i in data["S"]]
        ns = len(self.S)
        self.KS = np.zeros((cap, ns))
        self.KS[:n] = np.asarray(data["KS"]).reshape(n, ns)
        self.Rinv = symmetrize(data["Rinv"])
        self.b = float(data["b"])
        self.kscale = float(data["kscale"])
        self.cache = OrderedDict()
        lengths = np.asarray(data["cache_lengths"])
        values = np.asarray(data["cache_values"], dtype=np.float64)
        start = 0
        for i, L in zip(np.asarray(data["cache_ids"]).tolist(), lengths.tolist()):
            self.cache[int(i)] = (values[start:start + L].copy(), int(L))
            start += L
        for name in COUNTERS:
            setattr(self, name, int(data[name] if name in data or name not in NEW_COUNTERS
                                    else 0))
        self.max_inverse_drift = float(data["max_inverse_drift"])
        self.fresh = bool(data["fresh"])
        self.refined = bool(data.get("refined", False))      # (not in the first formats)
        self.kernel.n_evals = int(data["n_kernel_evals"])

    def __reduce__(self):
        from ..core.stream import restore_state

        return (restore_state, (type(self), self.init_params(), self.save_state()))

    def check(self):
        """Diagnostics (costs kernel evaluations, not counted), g recomputed from alpha
        and b alone (see :func:`kkt_diagnostics`): ``g_drift`` (largest |g_i kept - g_i
        recomputed|), ``kkt`` (the true KKT violation in margin units), ``h`` = |sum y_i
        alpha_i| and ``h_rel`` = h / C, and ``inverse_residual`` ||M R - I||_max of the
        bordered matrix."""
        n = self.n
        act = np.flatnonzero(self.status[:n] >= 0)
        sv = self.support_ids()
        K = np.array([[self.kernel.value(self.rows[i], self.rows[j]) for j in sv] for i in act])
        out = kkt_diagnostics(K.reshape(act.size, sv.size), self.alpha[:n], self.y[:n],
                              self.g[:n], self.b, self.C, act, sv)
        if self.S:
            E = self._bordered() @ self.Rinv - np.eye(len(self.S) + 1)
            out["inverse_residual"] = float(np.max(np.abs(E)))
        else:
            out["inverse_residual"] = 0.0
        return out
