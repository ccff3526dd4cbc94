"""POKER's state outside the printed method: storage of the examples and their kernel
values, persistence, the read-outs and the KKT check (Fine & Scheinberg's paths are in
:mod:`refsvm.poker.poker`, the departures in :mod:`refsvm.poker.departures`).

The exact sums the state's checks use (Neumaier's compensated sum, Dekker's error-free
products, so that a g recomputed at c = 1e12 is correctly rounded) are the core's
(:mod:`refsvm.core.active_set`), and so are g afresh, the balance and the KKT violation
of a partition that :meth:`POKERStorage.check` reports (:mod:`refsvm.core.exactness`).
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from ..core import column_cache
from ..core.active_set import neumaier_add
from ..core.exactness import balance, end_balance, g_exact, kkt_violation
from ..core.bordered import bordered_matrix
from ..core.kernels import Kernel, SparseRow, get_row, stack_rows
from ..core.margin_set import MarginSet
from ..core.departures import resolve
from ..core.engine import column
from ..core.optimum import OptimumError, PartitionArrays, optimum, read_optimum
from ..core.stream import StreamLearner
from .departures import DEPARTURES
from .partition import (BIAS, FIXED, FORCED, I_O, IDLE, JOINT, PENDING, PathError,
                        alpha_window)

__all__ = ["POKERStorage", "init_state", "load_optimum", "optimum_of",
           "neumaier_add"]   # neumaier_add: the core's, re-exported


class POKERStorage(PartitionArrays, StreamLearner):
    """The examples, their kernel values and the state's arrays (the core's
    :class:`PartitionArrays`, with POKER's own p, d and a0; see
    :class:`refsvm.poker.poker.POKERState` for the parameters)."""

    EXTRA_ARRAYS = ("p", "d", "a0")

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, cache_size=200.0, refresh_every=50, departures=None):
        super().__init__(n_features, sparse)
        self.margin = MarginSet(empty=0)  # I_s, KS and R (S, KS, R: its attributes)
        init_state(self, Kernel(kernel, gamma, degree, coef0), C, cache_size, refresh_every,
                   departures)

    @property
    def aw(self):
        """The tie window of an alpha event and the zero of y'alpha (:func:`alpha_window`)."""
        return alpha_window(self.C)

    # ------------------------------------------------------------------ persistence
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C, kernel=k.kind,
                    gamma=k.gamma, degree=k.degree, coef0=k.coef0, cache_size=self.cache_size,
                    refresh_every=self.refresh_every,
                    departures=dict(self.departures))

    def save_state(self):
        n = self.n
        X = stack_rows(self.rows, self.n_features, self.sparse)
        out = {"n": n, "y": self.y[:n].copy(), "alpha": self.alpha[:n].copy(),
               "g": self.g[:n].copy(), "kdiag": self.kdiag[:n].copy(),
               "status": self.status[:n].astype(np.int8), "b": float(self.b),
               "S": np.array(self.S, dtype=np.intp),
               **self._saved_KS_R(n),
               "kmax": float(self.kmax), "n_iterations": self.n_iterations,
               "n_exchanges": self.n_exchanges, "n_refresh": self.n_refresh,
               "n_chunks": self.n_chunks, "n_kernel_evals": self.kernel.n_evals,
               "n_s_changes": self.n_s_changes, "fresh": bool(self.fresh),
               **self._cache_arrays()}
        if self.sparse:
            out.update(X_data=X.data, X_indices=X.indices.astype(np.int32),
                       X_indptr=X.indptr.astype(np.int64))
        else:
            out["X"] = X
        return out

    def load_state(self, data):
        n = int(data["n"])
        if self.sparse:
            X = sp.csr_matrix((data["X_data"], data["X_indices"], data["X_indptr"]),
                              shape=(n, self.n_features))
            self.rows = [SparseRow(np.array(r.indices, np.int32), np.array(r.data))
                         for r in (get_row(X, i) for i in range(n))]
        else:
            X = np.asarray(data["X"], dtype=np.float64).reshape(n, self.n_features)
            self.rows = [X[i].copy() for i in range(n)]
        self.n = n
        self.y = np.array(data["y"], dtype=np.float64)
        self.alpha = np.array(data["alpha"], dtype=np.float64)
        self.g = np.array(data["g"], dtype=np.float64)
        self.kdiag = np.array(data["kdiag"], dtype=np.float64)
        self.status = np.array(data["status"], dtype=np.int8)
        self.p = np.zeros(n)
        self.d = np.zeros(n)
        self.a0 = np.zeros(n)
        self.b = float(data["b"])
        self.S = [int(i) for i in data["S"]]
        self.KS = np.array(data["KS"], dtype=np.float64).reshape(n, len(self.S))
        self.R = np.array(data["R"], dtype=np.float64)
        self.kmax = float(data["kmax"])
        self.n_iterations = int(data["n_iterations"])
        self.n_exchanges = int(data["n_exchanges"])
        self.n_refresh = int(data["n_refresh"])
        self.n_chunks = int(data["n_chunks"])
        self.kernel.n_evals = int(data["n_kernel_evals"])
        self.n_s_changes = int(data["n_s_changes"])
        self.fresh = bool(data["fresh"])
        self._cache_load(data["cache_ids"], data["cache_len"], data["cache_cols"])
        self.phase = IDLE

    def __reduce__(self):
        from ..core.stream import restore_state

        return (restore_state, (type(self), self.init_params(), self.save_state()))

    # ------------------------------------------------------------------ storage
    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def _append(self, x, y):
        """Store a new example (alpha = 0, status PENDING: not yet in the problem) and
        k(x, x).  Returns its id."""
        i = self._new_example(x, y, PENDING)
        self.kdiag[i] = self._k(i, i)
        self.kmax = max(self.kmax, float(abs(self.kdiag[i])))
        return i

    def _append_rows(self, X, y):
        """Store the rows of X (2-D array or CSR) with labels y; their ids (array)."""
        return np.array([self._append(get_row(X, r), float(y[r])) for r in range(X.shape[0])],
                        dtype=np.intp)

    def _k(self, a, b):
        """k(x_a, x_b) of two stored ids, counted."""
        return self.kernel(self.rows[a], self.rows[b])

    def _kernel_value(self, a, b):
        """k(x_a, x_b), not counted (diagnostics)."""
        return self.kernel.value(self.rows[a], self.rows[b])

    def _class_sums(self, ids, at_c):
        """F_r = sum_{j at c} c y_j k(x_ids[r], x_j) (SelfInit's trivial partition),
        compensated (``neumaier_add``: at c = 1e12 the terms cancel)."""
        F, Fc = [0.0] * len(ids), [0.0] * len(ids)         # compensated sums
        for j in at_c:
            for r, i in enumerate(ids):
                kv = self.kdiag[i] if i == j else self._k(i, j)
                F[r], Fc[r] = neumaier_add(F[r], Fc[r], self.C * self.y[j] * kv)
        return np.array([f + fc for f, fc in zip(F, Fc)])

    def _activate(self, ids):
        """The pending ``ids`` enter the problem at alpha = 0 (status I_o): their kernel
        values with I_s fill their rows of KS."""
        for i in ids:
            for j, s in enumerate(self.S):
                self.KS[i, j] = self._k(i, s)
            self.status[i] = I_O

    def _column(self, i, part=None):
        """k(x_l, x_i) for every id l (the engine's ``column``): the cached part (it
        leaves the cache), the entries given in ``part`` (ids, values: evaluated for the
        score of a new example, ``_f_of``), those known from KS (l in I_s) and k(x_i, x_i)
        are not evaluated again; NaN for an id outside the problem unless cached or given."""
        return column(self.n, i, self.status, self.kdiag[i], self.kernel, self.rows,
                      cached=self.cache.take(i), given=() if part is None else zip(*part),
                      margin=self.margin, zero_off=False)

    def _known(self, col):
        """A column as the paths use it: 0 where an entry is unknown (ids outside the problem)."""
        return np.where(np.isnan(col), 0.0, col)

    def _saved_KS_R(self, n):
        """{"KS": the kernel columns of I_s for the n examples, "R": the bordered inverse},
        copies of the state's own arrays (``save_state``; the twin's properties build
        fresh arrays, so it does not copy them twice)."""
        return {"KS": self.KS[:n, : len(self.S)].copy(), "R": self.R.copy()}

    # ------------------------------------------------------------------ factorisation
    def _bordered(self):
        """The bordered matrix [[0, y_S^T], [y_S, Q_SS]] from the cached columns."""
        return bordered_matrix(self.y, self.KS, self.S)

    def _refresh(self):
        """R afresh from the cached columns (doubtful pivots); False if M is singular."""
        if not self.S:
            return False
        try:
            self.R = self.margin.inverse(self.y)
        except np.linalg.LinAlgError:
            return False
        self.fresh = True
        self.n_refresh += 1
        return True

    def _inverse_residual(self):
        """max |M R - I| (M = [[0, y_s'], [y_s, Q_ss]]; O(|I_s|^3))."""
        return float(np.max(np.abs(self._bordered() @ self.R - np.eye(len(self.S) + 1))))

    # ------------------------------------------------------------------ sums over the model
    def _f_of(self, ids, values=False):
        """w'phi(x_j) for the new ids j, from the examples with alpha > 0 (the kernel
        values with I_s from KS for the ids in the problem, whose KS rows are filled;
        a pending id of a selection pool has none yet).  ``values``: also the support
        vectors off I_s and the kernel values evaluated with them, ``(f, sv_off, V)``
        with ``V[r, q] = k(x_sv_off[q], x_ids[r])`` (the joint increment's columns of F
        take them over, ``_f_columns``)."""
        n = self.n
        new = set(ids)
        sv = [l for l in range(n) if self.alpha[l] > 0.0 and self.status[l] >= 0
              and l not in new]
        pos = {s: j for j, s in enumerate(self.S)}
        off = [l for l in sv if l not in pos]
        q_of = {l: q for q, l in enumerate(off)}
        V = np.zeros((len(ids), len(off)))
        out = np.zeros(len(ids))
        for r, j in enumerate(ids):
            acc = comp = 0.0                  # a compensated sum (``neumaier_add``)
            known = self.status[j] >= 0
            for l in sv:
                kv = self.KS[j, pos[l]] if (known and l in pos) else self._k(l, j)
                if l in q_of:
                    V[r, q_of[l]] = kv
                acc, comp = neumaier_add(acc, comp, self.alpha[l] * self.y[l] * kv)
            out[r] = acc + comp
        if values:
            return out, np.array(off, dtype=np.intp), V
        return out

    def _y_alpha(self, ordered=False):
        """y'alpha over the examples in the problem: the terms at c exactly (c times
        an integer), plus the others (summed left to right when ``ordered``, the
        compiled order).  At c = 1e12 a plain sum keeps partial sums of order c and
        loses the low digits of the free alphas (2e-4 of a tau of 1.2: the extreme-C
        property test)."""
        n = self.n
        if ordered:
            return end_balance(self.status[:n], self.y[:n], self.alpha[:n], self.C)
        act = self.status[:n] >= 0
        a, y = self.alpha[:n][act], self.y[:n][act]
        at_c = a == self.C
        rest = ~at_c & (a != 0.0)
        return self.C * float(np.sum(y[at_c])) + float(y[rest] @ a[rest])

    # ------------------------------------------------------------------ stream API
    def step(self, x, y):
        """One example as a chunk of size 1; 1 if it was violated (the model changed)."""
        if self.sparse:
            X = sp.csr_matrix((x.data, x.indices, [0, x.indices.shape[0]]),
                              shape=(1, self.n_features))
        else:
            X = np.asarray(x, dtype=np.float64).reshape(1, -1)
        return int(self.add_chunk(X, [y]) > 0)

    def run(self, X, y, order):
        """The rows ``order`` of X as one AltPOKER chunk; 1 if the model changed."""
        order = np.asarray(order, dtype=np.intp)
        return int(self.add_chunk(X[order], np.asarray(y)[order]) > 0)

    # ------------------------------------------------------------------ selective sampling
    def dual_objective(self):
        """W(alpha) = e'alpha - 1/2 alpha'Q alpha (to be maximised), from the stored g:
        (Q alpha)_i = g_i - q_i with q the right-hand side of the system followed."""
        n = self.n
        act = np.flatnonzero((self.status[:n] >= 0) & (self.alpha[:n] > 0))
        if self.phase == FIXED:
            q = self.p[act] + self.u * self.d[act]
        else:
            q = -1.0 - self.y[act] * self.b
        a = self.alpha[act]
        return float(a.sum() - 0.5 * a @ (self.g[act] - q))

    def _trial_copy(self):
        """An independent copy for a look-ahead that is thrown away (dObj)."""
        return copy.deepcopy(self)

    def _backup(self):
        """An independent copy to put back if a chunk fails (the estimator's)."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ read-outs
    def active_ids(self):
        return np.flatnonzero(self.status[: self.n] >= 0)

    def support_ids(self):
        n = self.n
        return np.flatnonzero((self.status[:n] >= 0) & (self.alpha[:n] > 0.0))

    def support(self):
        """(ids, y_i alpha_i, rows) of the support vectors, ids ascending."""
        ids = self.support_ids()
        rows = stack_rows([self.rows[i] for i in ids], self.n_features, self.sparse)
        return ids, self.alpha[ids] * self.y[ids], rows

    def decision_function(self, X):
        """f(x) = sum_j alpha_j y_j k(x_j, x) - b (kernel values not counted)."""
        ids = self.support_ids()
        coef = self.alpha[ids] * self.y[ids]
        out = np.empty(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            out[r] = sum(c * self.kernel.value(self.rows[j], x) for j, c in zip(ids, coef))
        return out - self.b

    def get_state(self):
        n = self.n
        st = self.status[:n]
        return {"alpha": self.alpha[:n].copy(), "g": self.g[:n].copy(),
                "y": self.y[:n].copy(), "b": float(self.b),
                "status": st.astype(np.int8).copy(),
                "S_order": np.array(self.S, dtype=np.intp), "n_seen": n,
                "n_iterations": self.n_iterations, "n_exchanges": self.n_exchanges,
                "n_kernel_evals": self.n_kernel_evals, "n_chunks": self.n_chunks}

    def check(self, K=None):
        """KKT residuals of the system being followed (Eq. 3 at u on the fixed-bias
        path, Eq. 2 on the adjustable-bias path, Eq. 1 otherwise), from g recomputed
        from scratch (``K``: the Gram matrix of all ids, or None to evaluate it
        uncounted).  Returns a dict: g_drift (|g - g fresh|), kkt (largest violation of
        the partition's sign conditions and the box), balance (|y'alpha| where it must
        be 0, else 0), inverse_residual (||M R - I||)."""
        n = self.n
        act = np.flatnonzero(self.status[:n] >= 0)
        sv = act[self.alpha[act] > 0]
        if K is None:
            Ka = np.array([[self._kernel_value(i, j) for j in sv]
                           for i in act]).reshape(act.size, sv.size)
        else:
            Ka = np.asarray(K)[np.ix_(act, sv)]
        # g afresh, correctly rounded from the stored alpha, b, p, d and kernel values:
        # at C = 1e12 a product alpha_j k_ij carries a rounding error of 1e-4, and g is a
        # sum of such products that cancel to O(1); a plain matrix product would report
        # its own round-off as drift (docs/fine_scheinberg.rst, "Extreme C")
        ya, yv = self.alpha[sv] * self.y[sv], self.y[act]
        if self.phase == FIXED:
            g = g_exact(ya, Ka, yv, fixed=(self.p[act], self.u, self.d[act]))
        else:
            g = g_exact(ya, Ka, yv, self.b, bias_sign=-1.0)
        st = self.status[act]
        a = self.alpha[act]
        # (the members of F of a decrement are leaving: no conditions; of a joint
        # increment: g <= 0 and alpha = t c)
        free = st != FORCED if self.phase != JOINT else np.ones(act.size, dtype=bool)
        other = None
        if self.phase == JOINT:
            other = np.where(st == FORCED, np.maximum(g, 0.0)
                             + np.abs(a - self.a0[act] * self.t), 0.0)
        viol = kkt_violation(st, g, a, self.C, other)
        kkt = float(np.max(viol[free])) if free.any() else 0.0
        drift = float(np.max(np.abs(g - self.g[act])[free])) if free.any() else 0.0
        h = 0.0 if self.phase in (FIXED, BIAS) else abs(balance(self.y[act], a, exact=True))
        resid = self._inverse_residual() if self.S else 0.0
        return {"g_drift": drift, "kkt": kkt, "balance": h, "inverse_residual": resid}


def optimum_of(st):
    """The exact optimum the POKER state ``st`` holds (either twin, at the end of a path)
    in the core's layout (:func:`refsvm.core.optimum.optimum`), written from its
    persistence arrays: what another family's start reads (IncrementalSVM's,
    ``refsvm/_exact_paths.py``)."""
    data = st.save_state()
    rows = ({"rows": data["X"]} if "X" in data else
            {"rows_data": data["X_data"], "rows_indices": data["X_indices"],
             "rows_indptr": data["X_indptr"]})
    return optimum(C=st.C, n_features=st.n_features, sparse=st.sparse, rows=rows,
                   status=data["status"], alpha=data["alpha"], g=data["g"], y=data["y"],
                   kdiag=data["kdiag"], S=data["S"], KS=data["KS"], R=data["R"],
                   b=data["b"], bias_sign=-1.0, k_max=data["kmax"], counters=data,
                   cache=(data["cache_ids"], data["cache_len"], data["cache_cols"]),
                   copy=False)


def load_optimum(st, data, n_chunks=0, spent=0):
    """Start the POKER state ``st`` (either twin, freshly constructed) from the exact
    optimum ``data`` in the core's layout (IncrementalSVM's end, written by its
    ``optimum_of``): the partition, alpha, g, the margin set with its columns and R, the
    bias (here f = w'phi - b), k_max and the rows, with ``n_chunks`` chunks and ``spent``
    kernel evaluations more than the layout counts; R is not formed afresh, the column
    cache and the count of refreshes are not carried over.  A layout that is not an
    optimum's (:func:`refsvm.core.optimum.optimum_problem`) raises :class:`PathError`
    (the estimator's next path), the state untouched."""
    if st.n:
        raise ValueError("load_optimum needs a freshly constructed state")
    try:
        d = read_optimum(data, st.n_features, st.sparse, st.C)
    except OptimumError as exc:
        raise PathError(str(exc)) from None
    n = d["n"]
    out = {"n": n, "y": d["y"], "alpha": d["alpha"], "g": d["g"], "kdiag": d["kdiag"],
           "status": d["status"], "b": -d["b"], "S": d["S"], "KS": d["KS"],
           "R": d["R"], "kmax": d["k_max"], "n_iterations": d["n_iterations"],
           "n_exchanges": d["n_exchanges"], "n_refresh": 0, "n_chunks": int(n_chunks),
           "n_kernel_evals": d["n_kernel_evals"] + int(spent),
           "n_s_changes": d["n_s_changes"], "fresh": False,
           "cache_ids": np.zeros(0, dtype=np.intp), "cache_len": np.zeros(0, dtype=np.intp),
           "cache_cols": np.zeros(0)}
    if st.sparse:
        out.update(X_data=d["rows_data"], X_indices=d["rows_indices"],
                   X_indptr=d["rows_indptr"])
    else:
        out["X"] = d["rows"]
    st.load_state(out)


def init_state(st, kernel, C, cache_size, refresh_every, departures):
    """The state ``st`` before its first example, with ``kernel`` (both twins: the
    compiled one passes its compiled kernel; its declared attributes take the same
    assignments)."""
    st.departures = resolve(DEPARTURES, departures)
    st.refresh_every = int(refresh_every)
    st.n_s_changes = 0
    st.C = float(C)
    st.kernel = kernel
    st.cache_size = float(cache_size)
    st.cache = column_cache.ColumnCache()   # id -> kernel column (length = n then)
    st.rows = []
    st.n = 0
    st.y = np.zeros(0)
    st.alpha = np.zeros(0)
    st.g = np.zeros(0)                  # g = s - xi of the system being followed
    st.p = np.zeros(0)                  # Eq. 3: p (fixed-bias path only)
    st.d = np.zeros(0)                  # Eq. 3: d = -e - y b - p (idem)
    st.a0 = np.zeros(0)                 # alpha at the start of a decrement
    st.kdiag = np.zeros(0)
    st.status = np.zeros(0, dtype=np.int8)
    st.b = 0.0
    st.S = []                           # I_s, in joining order
    st.KS = np.zeros((0, 0))            # KS[i, j] = k(x_i, x_S[j])
    st.R = np.zeros((0, 0))             # inverse of [[0, y_s'], [y_s, Q_ss]]
    st.KF = np.zeros((0, 0))            # kernel columns of the removed set (decrement)
    st.F = np.zeros(0, dtype=np.intp)
    st.fresh = False
    st.kmax = 0.0
    st.phase = IDLE
    st.u = 1.0                          # parameter of the fixed-bias path
    st.tau = 0.0                        # y'alpha along the adjustable-bias path
    st.t = 0.0                          # parameter of the decrement
    st.dependent = []                   # left dependent by an exchange (see _join)
    st.n_iterations = 0
    st.n_exchanges = 0
    st.n_refresh = 0
    st.n_chunks = 0
    st.budget = -1                      # breakpoints left (dObj), -1: no limit
    st.breakpoint_hook = None
