"""The state formats of the IDSVM family and its read-outs (not the printed algorithm).

:func:`state_arrays`: the persistence format both twins share; :func:`optimum_of`: the
exact optimum a state holds in the core's layout (:mod:`refsvm.core.optimum`), and
:func:`state_arrays_from_optimum` / :func:`load_optimum`: this family's start from that
layout (SelfInit's end, LIBSVM's start, a POKER model), with its acceptance test;
:func:`kkt_diagnostics`: ``check()``'s recomputation of g from alpha and b.  The mixin
:class:`StateFormat` gives the reference state its read-outs (decision function, support
vectors, ``get_state``) and its persistence (``init_params``, ``save_state``,
``load_state``).  All are re-exported by :mod:`refsvm.idsvm.incremental_svm`.
"""

from __future__ import annotations

import numpy as np

from ..core import column_cache
from ..core.bordered import dot as _dot
from ..core.bordered import matvec as _matvec
from ..core.bordered import symmetrize
from ..core.departures import resolve
from ..core.exactness import (balance, g_dot2, kkt_levels, kkt_verdict, partition_of,
                              partition_violation)
from ..core.kernels import get_row, rows_from_state, rows_to_state, stack_rows
from ..core.optimum import optimum, optimum_problem
from .constants import ERROR, GONE, MARGIN, REST
from .departures import DEPARTURES

__all__ = ["COUNTERS", "StateFormat", "kkt_diagnostics", "load_optimum", "optimum_of",
           "state_arrays", "state_arrays_from_optimum"]


def kkt_diagnostics(K, alpha, y, g_kept, b, C, act, sv):
    """The diagnostics of ``check()``, shared by both twins: g of the active examples
    ``act`` recomputed from alpha and b alone (``K[r, j] = k(x_act[r], x_sv[j])``; the
    core's :func:`~refsvm.core.exactness.g_dot2`: Dot2 over the support vectors ``sv`` in
    id order, then y_i b and -1, so that the recomputation adds no round-off of its own
    even at C = 1e12), and against it

    - ``g_drift``: max |g_kept - g| (how far the kept g has drifted);
    - ``kkt``: the true KKT violation in margin units, independent of the kept g and of
      the sets: max over active i of -g_i (alpha_i = 0), |g_i| (0 < alpha_i < C),
      g_i (alpha_i = C), clipped at 0 (the partition the alphas imply);
    - ``h``: |sum_i y_i alpha_i| (Sum2) and ``h_rel`` = h / C."""
    g = g_dot2(alpha[sv] * y[sv], K, y[act], b)
    viol = np.maximum(partition_violation(partition_of(alpha[act], C), g), 0.0)
    h = abs(balance(y[act], alpha[act]))
    return {"g_drift": float(np.max(np.abs(g - g_kept[act]))) if act.size else 0.0,
            "h": h, "h_rel": h / C, "kkt": float(viol.max()) if act.size else 0.0}



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



def optimum_of(state):
    """The exact optimum ``state`` holds (either twin, at the end of an operation) in the
    core's layout (:func:`refsvm.core.optimum.optimum`), written from its persistence
    arrays: what another family's start reads (POKER's, ``refsvm/_exact_paths.py``)."""
    data = state.save_state()
    params = state.init_params()
    ns = int(np.asarray(data["S"]).shape[0])
    return optimum(C=params["C"], n_features=params["n_features"], sparse=params["sparse"],
                   rows=data, status=data["status"], alpha=data["alpha"], g=data["g"],
                   y=data["y"], kdiag=data["kdiag"], S=data["S"], KS=data["KS"],
                   R=data["Rinv"] if ns else None, b=data["b"], bias_sign=1.0,
                   k_max=data["kscale"], counters=data,
                   cache=(data["cache_ids"], data["cache_lengths"], data["cache_values"]),
                   copy=False)


def state_arrays_from_optimum(data, C, n_features, sparse, departures=None):
    """The persistence format of :class:`IncrementalSVMState` (:func:`state_arrays`) from
    an exact optimum in the core's layout (:mod:`refsvm.core.optimum`: SelfInit's end,
    or POKER's model, written by POKER's ``optimum_of``), or None when the layout is
    not an optimum's (:func:`~refsvm.core.optimum.optimum_problem`: shapes, codes, S
    against the status, finiteness, or another ``C``) or not exact to this family's
    tolerance: the acceptance test of this family's start.

    Both families keep the layout's objects: the partition (POKER's I_o, I_s, I_c are R,
    S, E here, with the same codes), the kernel columns of the margin set in joining
    order, the inverse of the same bordered matrix [[0, y_S'], [y_S, Q_SS]] and
    g = y f - 1.  So the start carries them over (after one step of iterative
    refinement, below), and an incremental step from the result (``partial_fit``,
    ``unlearn``, ``loo_decisions``) continues from the batch optimum exactly as from the
    end of an incremental pass.  It is accepted when the KKT conditions on the kept g and
    the equality sum y_i alpha_i = 0 hold within the tolerances of every operation here
    (``kkt_tol`` of 1 + k_max alpha_max, and of alpha_max, of the resolved ``departures``),
    and C k_max is not above ``polish_above`` (where this family's operations polish and
    cap their tolerances in round-off units)."""
    if optimum_problem(data, n_features, sparse, C) is not None:
        return None
    n = int(data["n"])
    status = np.array(data["status"], dtype=np.int8)
    if n == 0:
        return None
    y = np.array(data["y"], dtype=np.float64)
    alpha = np.array(data["alpha"], dtype=np.float64)
    g = np.array(data["g"], dtype=np.float64)
    kdiag = np.array(data["kdiag"], dtype=np.float64)
    S = [int(i) for i in np.asarray(data["S"]).reshape(-1)]
    ns = len(S)
    kscale = float(np.max(np.abs(kdiag)))
    d = resolve(DEPARTURES, departures)
    if C * kscale > d["polish_above"]:
        return None
    KS = np.asarray(data["KS"], dtype=np.float64).reshape(n, ns)
    Rinv = np.asarray(data["R"], dtype=np.float64) if ns else np.zeros((1, 1))
    Rinv = symmetrize(Rinv)          # POKER's LU inverses are symmetric only to round-off
    b = float(data["b"])
    if ns:
        # one step of iterative refinement of (b, alpha_S) on the residuals of the bordered
        # system, M [db; dalpha_S] = -[y'alpha; g_S] (as POKER's and this family's polish):
        # POKER ends its bias path when y'alpha is zero within its own window (up to
        # ~1e-9 alpha_max with a thousand alphas at C), wider than kkt_tol here
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
    # the levels of every operation here below polish_above (the core's; a NaN passes)
    levels = kkt_levels(d["kkt_tol"], kscale, amax)
    if kkt_verdict(float(viol.max()), abs(_dot(y, alpha)), levels):
        return None
    if sparse:
        from scipy.sparse import csr_matrix

        X = csr_matrix((data["rows_data"], data["rows_indices"], data["rows_indptr"]),
                       shape=(n, int(n_features)))
    else:
        X = np.asarray(data["rows"], dtype=np.float64).reshape(n, int(n_features))
    counters = {name: 0 for name in COUNTERS}
    counters.update(n_increments=n, n_iterations=int(data["n_iterations"]),
                    n_exchanges=int(data["n_exchanges"]), n_refresh=int(data["n_refresh"]),
                    n_s_changes=int(data["n_s_changes"]), max_inverse_drift=0.0,
                    fresh=bool(data["fresh"]), n_kernel_evals=int(data["n_kernel_evals"]))
    return state_arrays(X, sparse, alpha=alpha, g=g, y=y, kdiag=kdiag, status=status, S=S,
                        KS=KS, Rinv=Rinv, b=b, kscale=kscale,
                        cache_ids=np.asarray(data["cache_ids"]).reshape(-1),
                        cache_columns=None, counters=counters, copy=False,
                        cache_flat=(data["cache_lengths"], data["cache_values"]))


def load_optimum(state, data):
    """Start ``state`` (either twin, freshly constructed) from the exact optimum ``data``
    in the core's layout: True when this family accepts it
    (:func:`state_arrays_from_optimum`, with the state's ``C``, rows and departures) and
    the state now holds it; False, the state untouched, when it does not."""
    if state.get_state()["n_seen"]:
        raise ValueError("load_optimum needs a freshly constructed state")
    params = state.init_params()
    start = state_arrays_from_optimum(data, params["C"], params["n_features"],
                                      params["sparse"], params["departures"])
    if start is None:
        return False
    state.load_state(start)
    return True


class StateFormat:
    """Mixin of :class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`: read-outs and
    persistence."""

    # ------------------------------------------------------------------ prediction, state
    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

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
            "cached": self.cache.ids(),
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
                    max_steps=self.max_steps, departures=dict(self.departures))

    def save_state(self):
        """Everything learned, in the format both twins share (see :func:`state_arrays`)."""
        n, ns = self.n, len(self.S)
        cache_ids, cache_lengths, cache_values = self.cache.arrays()     # oldest first
        return state_arrays(
            stack_rows(self.rows, self.n_features, self.sparse), self.sparse,
            alpha=self.alpha[:n], g=self.g[:n], y=self.y[:n], kdiag=self.kdiag[:n],
            status=self.status[:n], S=self.S, KS=self.KS[:n, :ns],
            Rinv=self.Rinv if ns else np.zeros((1, 1)), b=self.b, kscale=self.kscale,
            cache_ids=cache_ids, cache_columns=None,
            counters=dict(n_increments=self.n_increments, n_decrements=self.n_decrements,
                          n_iterations=self.n_iterations, n_exchanges=self.n_exchanges,
                          n_refresh_failed=self.n_refresh_failed,
                          n_pivot_refresh=self.n_pivot_refresh, n_s_changes=self.n_s_changes,
                          n_refresh=self.n_refresh, max_inverse_drift=self.max_inverse_drift,
                          fresh=self.fresh, refined=self.refined,
                          n_kernel_evals=self.kernel.n_evals,
                          n_repairs=self.n_repairs, n_rollbacks=self.n_rollbacks),
            cache_flat=(cache_lengths, cache_values))

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
        self.cache = column_cache.ColumnCache.from_arrays(
            data["cache_ids"], data["cache_lengths"], data["cache_values"])
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
