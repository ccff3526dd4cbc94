"""The validators of saved states: one per state class, shared by every way a state comes in.

A model file, a pickle and a state handed to ``load_state`` are input: the compiled twins
index memory with the saved ids, lengths and counts, and a step that meets NaN or an
infinite value may never end.  :func:`check_state` checks a state's constructor arguments
(``init_params()``) and its data (``save_state()``) completely, before any state is built
from them, and raises a :class:`ValueError` naming the place (the file), the array and
the rule on the first thing that is wrong:

- every member known (an unknown member or constructor argument is refused; a
  ``departures`` argument is left to the state, which resolves it), every array of the
  expected kind (float or integer) and dimension, its length consistent with the others
  and with the constructor arguments (``n_features``), sizes checked before anything is
  allocated from them;
- every index in range, unique, sorted where the algorithm keeps it sorted, and the sets
  disjoint and covering where the algorithm requires it; CSR rows well formed (``indptr``
  from 0 to nnz, non-decreasing; column indices in range and increasing in each row);
- floats finite where the state requires it (all of them, in every state), the rows
  within the magnitude bound the estimators accept, radii, squared norms and kernel
  diagonals non-negative;
- the invariants of the exact models (IncrementalSVM, POKER): the kept kernel values
  (``KS``, the cache, ``kdiag``) are those of the saved rows, ``g`` is the one of
  ``alpha`` and ``b``, the KKT conditions hold, ``sum y alpha = 0`` and the bordered
  inverse is an inverse (residual below :data:`RESIDUAL_TOL`).  On a large model the
  kernel values are checked on a strided sample of the rows (at most
  :data:`KERNEL_BUDGET` kernel evaluations), the rest exactly.

The entry points: :func:`refsvm.load` (before each state is constructed), the
``restore_state`` of the states' ``__reduce__`` (unpickling), the estimators'
``__setstate__`` and a change of ``backend`` (``_convert_state``), for both twins alike
(the twins share the state format).
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np
import scipy.sparse as sp

from .core.active_set import AT_C, AT_ZERO, IN_S
from .core.exactness import partition_violation
from .core.kernels import kernel_block

__all__ = ["KERNEL_BUDGET", "RESIDUAL_TOL", "check_init_params", "check_state",
           "state_class_names"]

#: the largest count, id or size a state may claim (a stream longer than 2**53 examples
#: is not a stream this package learns)
MAX_COUNT = 2**53
#: the largest number of features (CSR column indices are int32)
MAX_FEATURES = 2**31 - 1
#: the largest polynomial degree a state may carry
MAX_DEGREE = 1000
#: kernel evaluations spent on checking a state's kernel values; beyond it, a strided
#: sample of the rows is checked
KERNEL_BUDGET = 2_000_000
#: a kept kernel value against the one recomputed: relative tolerance (the twins compute
#: kernels in different orders of summation)
KERNEL_TOL = 1e-8
#: |g kept - g recomputed| / (1 + sum_j |alpha_j k_ij| + |b|)
G_TOL = 1e-6
#: the KKT violation allowed at load, in margin units relative to the same scale
KKT_TOL = 1e-3
#: |sum_i y_i alpha_i| / max(1, sum_i alpha_i)
BALANCE_TOL = 1e-8
#: ||M R - I||_max of the bordered matrix M and the kept inverse R
RESIDUAL_TOL = 1e-3


#: an optional member that is not in the state's data
_ABSENT = object()


class _Reader:
    """The members of one state's data, each read once through a check."""

    def __init__(self, where, data):
        if not isinstance(data, dict):
            raise ValueError(f"{where}: the state's data is a {type(data).__name__}, "
                             "not a dict")
        self.where = where
        self.data = data
        self.seen = set()

    def fail(self, key, rule):
        raise ValueError(f"{self.where}: {key}: {rule}")

    def has(self, key):
        return key in self.data

    def _raw(self, key, required):
        """The member ``key``; ``_ABSENT`` for an optional one that is not there (a member
        that is there is checked even when it is None: a null in a file is no absence)."""
        if key not in self.data:
            if required:
                self.fail(key, "missing")
            return _ABSENT
        self.seen.add(key)
        return self.data[key]

    # ---- scalars
    def integer(self, key, lo=0, hi=MAX_COUNT, required=True, default=None):
        v = self._raw(key, required)
        if v is _ABSENT:
            return default
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            self.fail(key, f"must be an integer, not {type(v).__name__}")
        v = int(v)
        if not lo <= v <= hi:
            self.fail(key, f"must be in [{lo}, {hi}], got {v}")
        return v

    def real(self, key, lo=-np.inf, hi=np.inf, required=True, default=None):
        v = self._raw(key, required)
        if v is _ABSENT:
            return default
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            self.fail(key, f"must be a number, not {type(v).__name__}")
        v = float(v)
        if not np.isfinite(v):
            self.fail(key, f"must be finite, got {v}")
        if not lo <= v <= hi:
            self.fail(key, f"must be in [{lo}, {hi}], got {v}")
        return v

    def boolean(self, key, required=True):
        v = self._raw(key, required)
        if v is _ABSENT:
            return False
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if isinstance(v, numbers.Integral) and int(v) in (0, 1):
            return bool(v)
        self.fail(key, f"must be a boolean, got {v!r}")

    # ---- arrays
    def array(self, key, kind, shape, required=True, finite=True, lo=None, hi=None):
        """An array of ``kind`` ("f" float, "i" integer) whose shape matches ``shape``
        (None entries: any length).  Integers are returned as int64, floats as float64."""
        v = self._raw(key, required)
        if v is _ABSENT:
            return None
        if isinstance(v, (list, tuple)):
            if len(v) > MAX_COUNT:
                self.fail(key, "too long")
            try:
                v = np.asarray(v)
            except (ValueError, TypeError):
                self.fail(key, "is not an array")
            if v.size == 0:
                v = v.astype(np.float64 if kind == "f" else np.int64)
        if not isinstance(v, np.ndarray) or isinstance(v, np.matrix):
            self.fail(key, f"must be an array, not {type(v).__name__}")
        if kind == "f" and v.dtype.kind != "f":
            self.fail(key, f"must hold floats, not {v.dtype}")
        if kind == "i" and v.dtype.kind not in "iu":
            self.fail(key, f"must hold integers, not {v.dtype}")
        if v.ndim != len(shape):
            self.fail(key, f"must have {len(shape)} dimension(s), got shape {v.shape}")
        for axis, (got, want) in enumerate(zip(v.shape, shape)):
            if want is not None and got != want:
                self.fail(key, f"has shape {v.shape}; {want} expected along axis {axis}")
        if kind == "f":
            v = v.astype(np.float64, copy=False)
            if finite and v.size and not np.all(np.isfinite(v)):
                self.fail(key, "must be finite (it holds NaN or an infinity)")
        else:
            if v.dtype.kind == "u" and v.size and int(v.max()) > np.iinfo(np.int64).max:
                self.fail(key, "index beyond int64")
            v = v.astype(np.int64, copy=False)
        if v.size and lo is not None and v.min() < lo:
            self.fail(key, f"must be >= {lo}, got {v.min()}")
        if v.size and hi is not None and v.max() > hi:
            self.fail(key, f"must be <= {hi}, got {v.max()}")
        return v

    def ids(self, key, n, required=True, unique=True, increasing=False, length=None):
        """Integer ids in [0, n) (an empty range takes no id)."""
        v = self.array(key, "i", (length,), required=required)
        if v is None:
            return None
        if v.size:
            if v.min() < 0 or v.max() >= n:
                self.fail(key, f"ids must be in [0, {n}), got {v.min()} .. {v.max()}")
            if increasing and np.any(np.diff(v) <= 0):
                self.fail(key, "ids must be strictly increasing")
            if unique and np.unique(v).size != v.size:
                self.fail(key, "ids must be unique")
        return v

    def rows(self, prefix, n_rows, n_features, sparse, limit, dense_key=None):
        """The rows of ``n_rows`` examples, dense (``dense_key``, shape (n_rows, d)) or CSR
        (``<prefix>data``, ``indices``, ``indptr``); values finite, |x| <= ``limit``.
        Returns a dense array or a CSR matrix."""
        if not sparse:
            key = dense_key or prefix
            M = self.array(key, "f", (n_rows, n_features))
            if limit is not None and M.size and np.max(np.abs(M)) > limit:
                self.fail(key, f"values must be at most {limit:.3g} in magnitude")
            return M
        indptr = self.array(prefix + "indptr", "i", (n_rows + 1,))
        if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            self.fail(prefix + "indptr", "must start at 0 and never decrease")
        nnz = int(indptr[-1])
        data = self.array(prefix + "data", "f", (nnz,))
        indices = self.array(prefix + "indices", "i", (nnz,))
        if nnz:
            if indices.min() < 0 or indices.max() >= n_features:
                self.fail(prefix + "indices", f"column indices must be in [0, {n_features})")
            step = np.diff(indices)
            starts = np.zeros(nnz, dtype=bool)
            inner = indptr[1:-1]
            starts[inner[inner < nnz]] = True
            if np.any((step <= 0) & ~starts[1:]):
                self.fail(prefix + "indices", "must increase strictly within each row")
            if limit is not None and np.max(np.abs(data)) > limit:
                self.fail(prefix + "data", f"values must be at most {limit:.3g} in magnitude")
        return sp.csr_matrix((data, indices.astype(np.int32), indptr),
                             shape=(n_rows, n_features))

    def finish(self):
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            self.fail(unknown[0], "unknown member")


# --------------------------------------------------------------------------- init_params
def _options(*values):
    def rule(v):
        return isinstance(v, str) and v in values, f"must be one of {list(values)}"
    return rule


def _int_rule(lo, hi):
    def rule(v):
        ok = isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) \
            and lo <= int(v) <= hi
        return ok, f"must be an integer in [{lo}, {hi}]"
    return rule


def _real_rule(lo, hi, open_lo=False):
    def rule(v):
        ok = (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
              and bool(np.isfinite(v)) and (lo < v if open_lo else lo <= v) and v <= hi)
        return ok, f"must be a finite number in {'(' if open_lo else '['}{lo}, {hi}]"
    return rule


def _bool_rule(v):
    return isinstance(v, (bool, np.bool_)), "must be a boolean"


def _departures_rule(v):
    return v is None or isinstance(v, (str, dict)), "must be None, a string or a dict"


def _param_rules():
    from .core.kernels import KERNELS
    from .ramp.online_svmr import STOP_RULES
    from .stream_svm.stream_svm import FORMS

    big = MAX_COUNT
    return {
        "n_features": _int_rule(1, MAX_FEATURES), "sparse": _bool_rule,
        "C": _real_rule(0.0, np.inf, open_lo=True), "kernel": _options(*KERNELS),
        "gamma": _real_rule(0.0, np.inf, open_lo=True), "degree": _int_rule(0, MAX_DEGREE),
        "coef0": _real_rule(-np.inf, np.inf), "tol": _real_rule(0.0, np.inf),
        "refresh_every": _int_rule(0, big), "cache_size": _real_rule(0.0, 2.0**40),
        "max_steps": _int_rule(0, big), "eta": _real_rule(0.0, np.inf, open_lo=True),
        "fit_intercept": _bool_rule, "variant": _int_rule(0, 2),
        "lam": _real_rule(0.0, np.inf, open_lo=True), "project": _bool_rule,
        "average": _bool_rule, "batch_size": _int_rule(1, MAX_FEATURES),
        "min_gain": _real_rule(0.0, np.inf), "max_non_sv": _int_rule(-1, big),
        "shrinking": _bool_rule, "shrink_margin": _real_rule(0.0, np.inf),
        "stop": _options(*STOP_RULES), "keep_rows": _bool_rule, "warmup": _int_rule(0, big),
        "eps": _real_rule(0.0, np.inf), "proximal_weight": _real_rule(0.0, np.inf),
        "covariance": _options("diagonal", "full"), "lookahead": _int_rule(1, MAX_FEATURES),
        "form": _options(*FORMS), "n_balls": _int_rule(1, MAX_FEATURES),
        "departures": _departures_rule,
    }


_RULES = None
_NAMES = {}


def _reference_class(name):
    """The reference (pure-Python) state class of that name."""
    from .idsvm import incremental_svm
    from .kernel_pa import kernel_pa
    from .linear import online_linear_svm, passive_aggressive, reduced_kernel_pa
    from .poker import poker
    from .ramp import online_svmr
    from .stream_svm import stream_svm

    for module in (incremental_svm, kernel_pa, online_linear_svm, passive_aggressive,
                   reduced_kernel_pa, poker, online_svmr, stream_svm):
        cls = getattr(module, name, None)
        if isinstance(cls, type):
            return cls
    return None


def check_init_params(cls_name, params, where):
    """The constructor arguments of a state of class ``cls_name``: known names (those of
    the reference's constructor, and ``departures``), each of the right type and range."""
    global _RULES
    if _RULES is None:
        _RULES = _param_rules()
    if cls_name not in VALIDATORS:
        raise ValueError(f"{where}: unknown state class {cls_name!r}")
    if not isinstance(params, dict):
        raise ValueError(f"{where}: init_params must be a dict")
    if cls_name not in _NAMES:
        ref = _reference_class(cls_name)
        _NAMES[cls_name] = set(inspect.signature(ref.__init__).parameters) - {"self"}
    allowed = _NAMES[cls_name] | {"departures"}
    for key, value in params.items():
        if key not in allowed:
            raise ValueError(f"{where}: init_params.{key}: unknown argument of {cls_name}")
        rule = _RULES.get(key)
        if rule is None:
            raise ValueError(f"{where}: init_params.{key}: no rule to check it by")
        ok, text = rule(value)
        if not ok:
            raise ValueError(f"{where}: init_params.{key}: {text}, got {value!r}")
    if "n_features" not in params:
        raise ValueError(f"{where}: init_params.n_features: missing")


def state_class_names():
    """The state classes a model may hold."""
    return sorted(VALIDATORS)


def check_state(cls_name, params, data, where="the state"):
    """Check a state of class ``cls_name`` (constructor arguments ``params``, data
    ``data`` as ``save_state`` returns it) completely; raise a ValueError naming
    ``where``, the member and the rule on the first violation."""
    check_init_params(cls_name, params, where)
    r = _Reader(where, data)
    VALIDATORS[cls_name](r, _Params(params))
    r.finish()


class _Params:
    """The constructor arguments with the reference's defaults filled in."""

    def __init__(self, params):
        self.p = params

    def get(self, key, default):
        return self.p.get(key, default)

    @property
    def d(self):
        return int(self.p["n_features"])

    @property
    def sparse(self):
        return bool(self.p.get("sparse", False))


def _limit(params):
    from ._validation import magnitude_limit

    return magnitude_limit(params.d)


# --------------------------------------------------------------------------- kernels
def _kernel_block(params, A, B):
    """k(a_i, b_j) for the rows of A and B (dense or CSR), and a scale of the round-off
    of each value (the core's ``kernel_block``, the RBF distances clamped at 0)."""
    if sp.issparse(A):
        A, B = _compact(A, B)
    return kernel_block(A, B, params.get("kernel", "rbf"), float(params.get("gamma", 1.0)),
                        int(params.get("degree", 3)), float(params.get("coef0", 0.0)),
                        clamp=True, scale=True)


def _compact(A, B):
    """CSR A and B restricted to the columns either uses (a product of two CSR matrices
    with 10**9 columns would allocate per column)."""
    cols = np.unique(np.concatenate([A.indices, B.indices]))

    def remap(M):
        return sp.csr_matrix((M.data, np.searchsorted(cols, M.indices).astype(np.int32),
                              M.indptr), shape=(M.shape[0], max(1, cols.size)))

    return remap(A), remap(B)


def _sample_rows(n, cost_per_row):
    """Rows to check within KERNEL_BUDGET: all, or an evenly strided sample (the last
    row included)."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    keep = max(64, KERNEL_BUDGET // max(1, cost_per_row))
    if keep >= n:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, keep).astype(np.int64))


def _take(M, idx):
    return M[idx] if not sp.issparse(M) else M[np.asarray(idx, dtype=np.int64)]


def _check_kernel_values(r, key, kept, computed, err):
    tol = KERNEL_TOL * (1.0 + np.abs(computed) + err)
    bad = ~(np.abs(kept - computed) <= tol)
    if np.any(bad):
        r.fail(key, "the kept kernel values are not those of the saved rows "
                    f"(largest difference {np.nanmax(np.abs(kept - computed)):.3g})")


# --------------------------------------------------------------------------- the states
REST, MARGIN, ERROR = AT_ZERO, IN_S, AT_C


def _bordered_svm(r, p, *, n_key, rows_key, rinv_key, cache_keys, statuses, counters,
                  floats, bools, bias_sign, empty_r):
    """IncrementalSVMState and POKERState: one layout, two spellings (``bias_sign``: f is
    K (y alpha) + b in one and K (y alpha) - b in the other; ``empty_r``: the size of R
    while the margin set is empty, 1 x 1 in one and 0 x 0 in the other)."""
    C = float(p.get("C", 1.0))
    n = r.integer(n_key)
    X = r.rows(rows_key + "_" if p.sparse else rows_key, n, p.d, p.sparse, _limit(p),
               dense_key=rows_key)
    alpha = r.array("alpha", "f", (n,), lo=0.0, hi=C)
    g = r.array("g", "f", (n,))
    y = r.array("y", "f", (n,))
    if n and not np.all(np.abs(y) == 1.0):
        r.fail("y", "labels must be -1 or +1")
    kdiag = r.array("kdiag", "f", (n,))
    status = r.array("status", "i", (n,))
    if n and not np.all(np.isin(status, statuses)):
        r.fail("status", f"codes must be in {sorted(statuses)}")
    b = r.real("b")
    S = r.ids("S", n)
    ns = S.shape[0]
    if not np.array_equal(np.sort(S), np.flatnonzero(status == MARGIN)):
        r.fail("S", "must hold exactly the examples whose status is the margin set")
    KS = r.array("KS", "f", (n, ns))
    R = r.array(rinv_key, "f", (ns + 1, ns + 1) if ns else (empty_r, empty_r))
    ids_key, len_key, val_key = cache_keys
    cids = r.ids(ids_key, n)
    clen = r.array(len_key, "i", (cids.shape[0],), lo=0, hi=n)
    total = int(clen.sum()) if clen.size else 0
    cvals = r.array(val_key, "f", (total,), finite=False)
    for key in counters:
        r.integer(key, required=key in counters[:4])
    for key, lo in floats:
        r.real(key, lo=lo, required=False)
    for key in bools:
        r.boolean(key, required=False)
    # a kept column is NaN exactly where an example left the problem (unknown entries)
    if total:
        entry = np.arange(total) - np.repeat(np.concatenate([[0], np.cumsum(clen)[:-1]]), clen)
        gone = status[entry] < 0
        if np.any(np.isinf(cvals)) or np.any(np.isnan(cvals) & ~gone):
            r.fail(val_key, "must be finite (NaN only where an example left the problem)")
    # ---- alpha and the sets
    active = status >= 0
    if np.any(alpha[status == REST] != 0.0) or np.any(alpha[~active] != 0.0):
        r.fail("alpha", "must be 0 outside the support vectors")
    if np.any(alpha[status == ERROR] != C):
        r.fail("alpha", "must be C on the bound support vectors")
    # ---- the kernel values kept: kdiag, KS, the cache (on the examples in the problem;
    # sampled on large models)
    act = np.flatnonzero(active)
    sv = np.flatnonzero(alpha > 0.0)
    cost = max(1, ns, sv.size) * max(1, p.d)
    rows = act[_sample_rows(act.shape[0], cost)]
    if rows.size:
        Xs = _take(X, rows)
        na = np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel() if sp.issparse(Xs) else \
            np.einsum("ij,ij->i", Xs, Xs)
        kd = _diag(p, na)
        _check_kernel_values(r, "kdiag", kdiag[rows], kd[0], kd[1])
        if ns:
            kv, err = _kernel_block(p, Xs, _take(X, S))
            _check_kernel_values(r, "KS", KS[rows], kv, err)
    starts = np.concatenate([[0], np.cumsum(clen)]) if clen.size else np.zeros(1, np.int64)
    for c in _sample_rows(cids.shape[0], max(1, n) * max(1, p.d)):
        L, start, i = int(clen[c]), int(starts[c]), int(cids[c])
        keep = np.flatnonzero(active[:L])
        if keep.size and active[i]:
            kv, err = _kernel_block(p, _take(X, keep), _take(X, [i]))
            _check_kernel_values(r, val_key, cvals[start + keep], kv[:, 0], err[:, 0])
    # ---- g, KKT and the balance of the exact model
    check = rows
    if check.size:
        coef = alpha[sv] * y[sv]
        if sv.size:
            kv, _ = _kernel_block(p, _take(X, check), _take(X, sv))
            f = kv @ coef
            scale = np.abs(kv) @ np.abs(coef)
        else:
            f = np.zeros(check.size)
            scale = np.zeros(check.size)
        gt = y[check] * (f + bias_sign * b) - 1.0
        scale = 1.0 + scale + abs(b)
        if not np.all(np.abs(g[check] - gt) <= G_TOL * scale):
            r.fail("g", "is not y f - 1 of the saved alpha and b")
        st = status[check]
        viol = np.maximum(partition_violation(st, gt), 0.0)
        if np.any(viol > KKT_TOL * scale):
            r.fail("alpha", f"the KKT conditions fail (violation {viol.max():.3g}, "
                            f"tolerance {KKT_TOL:g} in margin units)")
    h = abs(float(np.sum(alpha[act] * y[act])))
    if h > BALANCE_TOL * max(1.0, float(np.sum(alpha[act]))):
        r.fail("alpha", f"sum y alpha must be 0 (it is {h:.3g})")
    if ns:
        M = np.zeros((ns + 1, ns + 1))
        ys = y[S]
        M[0, 1:] = ys
        M[1:, 0] = ys
        M[1:, 1:] = np.outer(ys, ys) * KS[S]
        scale = max(1.0, float(np.max(np.abs(M))) * float(np.max(np.abs(R))))
        resid = float(np.max(np.abs(M @ R - np.eye(ns + 1))))
        if not resid <= RESIDUAL_TOL * scale:
            r.fail(rinv_key, f"is not the inverse of the bordered matrix (residual "
                             f"{resid:.3g})")


def _diag(p, sqnorms):
    kind = p.get("kernel", "rbf")
    gamma, degree, coef0 = float(p.get("gamma", 1.0)), int(p.get("degree", 3)), \
        float(p.get("coef0", 0.0))
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "linear":
            return sqnorms, sqnorms
        if kind == "poly":
            base = gamma * sqnorms + coef0
            return base ** degree, np.abs(degree * base ** max(degree - 1, 0)) * (
                gamma * sqnorms + abs(coef0))
        return np.ones_like(sqnorms), np.zeros_like(sqnorms)


def _incremental_svm(r, p):
    _bordered_svm(
        r, p, n_key="n_seen", rows_key="rows", rinv_key="Rinv",
        cache_keys=("cache_ids", "cache_lengths", "cache_values"), statuses=(-1, 0, 1, 2, 3),
        counters=("n_increments", "n_decrements", "n_iterations", "n_exchanges",
                  "n_refresh_failed", "n_pivot_refresh", "n_s_changes", "n_refresh",
                  "n_kernel_evals", "n_repairs", "n_rollbacks"),
        floats=(("kscale", 0.0), ("max_inverse_drift", 0.0)), bools=("fresh", "refined"),
        bias_sign=1.0, empty_r=1)


def _poker(r, p):
    _bordered_svm(
        r, p, n_key="n", rows_key="X", rinv_key="R",
        cache_keys=("cache_ids", "cache_len", "cache_cols"), statuses=(-2, -1, 0, 1, 2, 3),
        counters=("n_iterations", "n_exchanges", "n_refresh", "n_chunks", "n_kernel_evals",
                  "n_s_changes"),
        floats=(("kmax", 0.0),), bools=("fresh",), bias_sign=-1.0, empty_r=0)


def _kernel_pa(r, p):
    ids = r.array("support", "i", (None,), lo=0)
    m = ids.shape[0]
    n_seen = r.integer("n_seen")
    r.ids("support", max(n_seen, 1) if m else 0, increasing=True)
    if m and ids.max() >= n_seen:
        r.fail("support", f"ids must be below n_seen = {n_seen}")
    r.array("coef", "f", (m,))
    r.rows("rows_", m, p.d, p.sparse, _limit(p), dense_key="rows")
    for key in ("n_updates", "n_mistakes", "n_kernel_evals"):
        r.integer(key)
    r.real("cumulative_loss", lo=0.0)


def _linear_common(r, p, prefix="", d=None):
    d = p.d if d is None else d
    r.array(prefix + "w", "f", (d,))
    r.real(prefix + "b")
    for key in ("t", "n_updates", "n_mistakes"):
        r.integer(prefix + key)
    return d


def _perceptron(r, p):
    _linear_common(r, p)
    r.real("R2", lo=0.0, required=False)


def _pa(r, p, prefix="", d=None):
    _linear_common(r, p, prefix, d)


def _pam(r, p, prefix="", d=None):
    d = _linear_common(r, p, prefix, d)
    r.boolean(prefix + "frozen")
    r.integer(prefix + "n_pos")
    r.integer(prefix + "n_neg")
    for key in ("sum_pos", "sum_neg"):
        r.array(prefix + key, "f", (d,))
    for key in ("sumsq_pos", "sumsq_neg"):
        r.array(prefix + key, "f", (d,), lo=0.0)


def _pegasos(r, p):
    d = p.d
    r.real("b")
    for key in ("t", "n_updates", "n_mistakes", "n_steps"):
        r.integer(key)
    for key in ("w_avg", "grad_w", "w_direction"):
        r.array(key, "f", (d,))
    r.real("b_avg")
    r.real("grad_b")
    r.integer("n_batch", hi=int(p.get("batch_size", 1)) - 1)
    r.real("w_scale")
    r.real("w_direction_sqnorm", lo=0.0)


def _reduced(r, p, proximal):
    if p.sparse:
        m = r.array("reduced_indptr", "i", (None,)).shape[0] - 1
        r.seen.discard("reduced_indptr")
    else:
        red = r.array("reduced", "f", (None, p.d))
        r.seen.discard("reduced")
        m = red.shape[0]
    if m < 1:
        r.fail("reduced", "the reduced set must hold at least one row")
    r.rows("reduced_", m, p.d, p.sparse, _limit(p), dense_key="reduced")
    r.integer("n_kernel_evals")
    if not proximal:
        _pa(r, p, "linear_", m)
        return
    _pam(r, p, "linear_", m)
    if p.get("covariance", "diagonal") == "full":
        for key in ("scatter_pos", "scatter_neg", "chol", "ldl"):
            A = r.array("linear_" + key, "f", (m, m), required=key.startswith("scatter"))
            if key.startswith("scatter") and not np.allclose(A, A.T, rtol=1e-12, atol=0.0):
                r.fail("linear_" + key, "must be symmetric")
        r.integer("linear_chol_n_pos")
        r.integer("linear_chol_n_neg")
        r.real("linear_chol_mu", lo=0.0)


def _stream_common(r, p, kernel):
    n_seen = r.integer("n_seen")
    r.real("R", lo=0.0)
    r.real("xi2", lo=0.0)
    r.integer("M")
    r.real("b", required=False)
    r.integer("n_solver_steps", required=False)
    L = r.array("buf_y", "f", (None,)).shape[0]
    if L >= int(p.get("lookahead", 1)) and L:
        r.fail("buf_y", f"the look-ahead buffer holds at most lookahead - 1 = "
                        f"{int(p.get('lookahead', 1)) - 1} points")
    r.array("buf_f", "f", (L,))
    r.array("buf_kxx", "f", (L,), lo=0.0 if not kernel else None)
    r.array("buf_d", "f", (L,))
    r.ids("buf_ids", max(n_seen, 1) if L else 0, increasing=True, length=L)
    r.rows("buf_", L, p.d, p.sparse, _limit(p), dense_key="buf_X")
    return n_seen


def _stream_ids(r, n_seen, key="ids"):
    ids = r.array(key, "i", (None,))
    r.seen.discard(key)
    m = ids.shape[0]
    r.ids(key, max(n_seen, 1) if m else 0, increasing=True)
    if m and ids.max() >= n_seen:
        r.fail(key, f"ids must be below n_seen = {n_seen}")
    return m


def _stream_linear(r, p):
    n_seen = _stream_common(r, p, False)
    m = _stream_ids(r, n_seen)
    r.array("a", "f", (m,))
    r.array("v", "f", (p.d,))
    r.real("s")
    r.real("vnorm2", lo=0.0)


def _stream_kernel(r, p):
    n_seen = _stream_common(r, p, True)
    m = _stream_ids(r, n_seen)
    r.array("alpha", "f", (m,))
    r.real("wnorm2", lo=0.0)
    r.integer("n_evals")
    r.rows("sv_", m, p.d, p.sparse, _limit(p), dense_key="sv_X")


def _multi_ball(r, p):
    n_seen = r.integer("n_seen")
    m = _stream_ids(r, n_seen)
    R = r.array("ball_R", "f", (None,), lo=0.0)
    k = R.shape[0]
    if k > int(p.get("n_balls", 1)):
        r.fail("ball_R", f"more balls than n_balls = {p.get('n_balls', 1)}")
    if m and not k:
        r.fail("ball_R", "points but no ball")
    ball_of = r.array("ball_of", "i", (m,), lo=0, hi=max(k - 1, 0))
    if k and m and np.unique(ball_of).size != k:
        r.fail("ball_of", "every ball must hold a point")
    r.array("alpha", "f", (m,))
    r.array("ball_wnorm2", "f", (k,), lo=0.0)
    r.array("ball_xi2", "f", (k,), lo=0.0)
    r.array("P", "f", (k, k))
    r.integer("M")
    r.integer("n_evals")
    r.rows("sv_", m, p.d, p.sparse, _limit(p), dense_key="sv_X")


def _online_svmr(r, p):
    I_ = r.array("I", "i", (None,), lo=0)
    n = I_.shape[0]
    n_seen = r.integer("n_seen")
    if n and (np.any(np.diff(I_) <= 0) or I_.max() >= n_seen):
        r.fail("I", f"ids must be strictly increasing and below n_seen = {n_seen}")

    def subset(key, required=True):
        v = r.array(key, "i", (None,), required=required)
        if v is None:
            return None
        if v.size and not np.all(np.isin(v, I_)):
            r.fail(key, "ids must be ids of I")
        if np.unique(v).size != v.size:
            r.fail(key, "ids must be unique")
        return v

    subset("V")
    subset("held")
    C = float(p.get("C", 1.0))
    alpha = r.array("alpha", "f", (n,))
    r.array("g", "f", (n,))
    y = r.array("y", "f", (n,))
    # The estimators store -1 and +1; the class takes sizes near 1 too, but Eq. (14) steps by
    # 1/k(x, x), not 1/(y^2 k(x, x)), so sizes far from 1 make Algorithm 1 cycle (1.4 and
    # 1e308 never ended).
    if n and not np.all((np.abs(y) >= 0.75) & (np.abs(y) <= 1.25)):
        r.fail("y", "label sizes must lie in [0.75, 1.25] (the estimators store -1 and +1)")
    r.array("qdiag", "f", (n,), lo=0.0)
    if n and np.any(np.abs(alpha) > C * np.maximum(1.0, np.abs(y)) * (1 + 1e-9)):
        r.fail("alpha", f"must lie within the box of C = {C}")
    support = subset("support")
    if not np.array_equal(np.sort(support), I_[alpha != 0.0]):
        r.fail("support", "must hold exactly the ids with alpha != 0")
    cached = subset("cached")
    if np.any(np.diff(cached) <= 0):
        r.fail("cached", "ids must be strictly increasing")
    parked = subset("parked", required=False)
    if parked is not None and parked.size and not np.all(np.isin(parked, cached)):
        r.fail("parked", "a parked row must be a kept row")
    kr = r.array("kernel_rows", "f", (cached.shape[0], n))
    lengths = r.array("row_lengths", "i", (cached.shape[0],), lo=0, hi=n, required=False)
    del kr, lengths
    for key in ("n_updates", "n_steps", "n_cccp_rounds", "n_unlearned", "n_removed",
                "n_gain_stops", "n_row_builds", "n_shrink_rounds", "n_shrunk",
                "n_kernel_evals"):
        r.integer(key)
    r.boolean("gain_stopped")
    from .ramp.departures import REWARM_GROWTH_MAX   # a rewarm stretch: up to this n_seen

    r.integer("hinge_until", hi=REWARM_GROWTH_MAX * MAX_COUNT, required=False)
    r.rows("rows_", n, p.d, p.sparse, _limit(p), dense_key="rows")


VALIDATORS = {
    "IncrementalSVMState": _incremental_svm,
    "POKERState": _poker,
    "KernelPA": _kernel_pa,
    "PerceptronState": _perceptron,
    "PAState": _pa,
    "PAmState": _pam,
    "PegasosState": _pegasos,
    "ReducedKernelPAState": lambda r, p: _reduced(r, p, False),
    "ReducedKernelPAmState": lambda r, p: _reduced(r, p, True),
    "StreamSVMLinear": _stream_linear,
    "StreamSVMKernel": _stream_kernel,
    "MultiBallStreamSVM": _multi_ball,
    "OnlineSVMR": _online_svmr,
}
