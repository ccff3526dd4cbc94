"""The exact optimum in one layout: what both exact families keep, and the start of the
engine that loads it.

Cauwenberghs & Poggio's increments (:mod:`refsvm.idsvm`) and Fine & Scheinberg's POKER
paths (:mod:`refsvm.poker`) end every operation at the same object, the exact SVM with
bias of the examples learned: the partition (the core's codes, :mod:`refsvm.core.
active_set`), alpha, g = y f - 1, k(x_i, x_i), the margin set S in joining order with its
kernel columns KS (one row per example) and the inverse R of [[0, y_S'], [y_S, Q_SS]]
(:mod:`refsvm.core.margin_set`), the bias, max |k(x, x)| and the rows.  This module
writes that object as one set of plain arrays, the *layout*, and reads it back checked:

- :func:`optimum`: the layout from a family's arrays (each family's writer,
  ``optimum_of(state)``, hands over its state in the family's own sign of the bias);
- :func:`optimum_problem`: what is wrong with a layout (None when nothing is): every
  array's presence, dtype, shape and finiteness, the codes' range, S against the status,
  R's size, the rows, the cache; hostile input gives a sentence, never an exception;
- :func:`read_optimum`: the layout's arrays, typed, or :class:`OptimumError` saying
  what is wrong.

A family *starts* the engine from a layout (``load_optimum(state, layout)`` in
``refsvm/idsvm/state_format.py`` and ``refsvm/poker/storage.py``): it reads it, decides
whether it accepts it (IDSVM: exact within its tolerances, below ``polish_above``), and
loads it into a fresh state.  So SelfInit's end (POKER, Sec. 5 of Fine & Scheinberg)
becomes the start of an IncrementalSVM, and IncrementalSVM's end the start of a POKER
model, without either family reading the other's arrays.  The families' own persistence
formats (``save_state``, pickles, model files) are theirs and unchanged.

The layout's keys:

=====================  =====================================================================
``n``, ``n_features``  the examples (ids 0..n-1, unlearned ones included), the row length
``sparse``, ``C``      CSR rows or dense; the box 0 <= alpha <= C
``status``             int8 (n,): ``AT_ZERO``, ``IN_S``, ``AT_C`` or ``GONE``
``alpha``, ``g``,      float64 (n,), finite; y in {-1, +1}, alpha in [0, C]
``y``, ``kdiag``
``S``                  int64 (ns,): the margin set in joining order, the ids of ``IN_S``
``KS``                 float64 (n, ns): ``KS[i, j] = k(x_i, x_S[j])``, finite on the
                       examples in the problem
``R``                  float64 (ns + 1, ns + 1), finite; (0, 0) when S is empty
``b``                  f = w'phi(x) + b (the core's sign; POKER's bias is -b)
``k_max``              max |k(x, x)| the family keeps
rows                   ``rows`` (n, n_features), or ``rows_data``, ``rows_indices``,
                       ``rows_indptr`` (:func:`refsvm.core.kernels.rows_to_state`)
counters               ``n_iterations``, ``n_exchanges``, ``n_refresh``, ``n_s_changes``,
                       ``n_kernel_evals`` (ints >= 0), ``fresh`` (R formed afresh since S
                       last changed)
the column cache       ``cache_ids`` (oldest first), ``cache_lengths``, ``cache_values``
                       (the columns end to end; NaN marks an unknown value)
=====================  =====================================================================
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from .active_set import AT_C, AT_ZERO, GONE, IN_S
from .bordered import grow_array
from .kernels import SparseRow

__all__ = ["CODES", "COUNTERS", "OptimumError", "PartitionArrays", "optimum", "optimum_problem",
           "read_optimum"]

#: the partition codes a layout holds
CODES = (AT_ZERO, IN_S, AT_C, GONE)
#: the integer counters a layout carries (each family's start keeps those it has)
COUNTERS = ("n_iterations", "n_exchanges", "n_refresh", "n_s_changes", "n_kernel_evals")
_PER_EXAMPLE = ("alpha", "g", "y", "kdiag")
_DENSE_ROWS = ("rows",)
_CSR_ROWS = ("rows_data", "rows_indices", "rows_indptr")
_CACHE = ("cache_ids", "cache_lengths", "cache_values")


class OptimumError(ValueError):
    """A layout that is not an exact optimum's (:func:`optimum_problem` says why)."""


def optimum(*, C, n_features, sparse, rows, status, alpha, g, y, kdiag, S, KS, R, b,
            bias_sign, k_max, counters, cache=None, copy=True):
    """The layout of an exact optimum (module docstring) from a family's arrays.

    ``rows``: the rows as :func:`refsvm.core.kernels.rows_to_state` gives them; ``b`` and
    ``bias_sign``: the family's bias and its sign (+1: f = w'phi + b, C&P; -1: POKER's
    f = w'phi - b); ``R``: the family's inverse (any size while S is empty: the layout
    keeps 0 x 0); ``counters``: a mapping with :data:`COUNTERS` and ``fresh``; ``cache``:
    (ids, lengths, values) or None.  ``copy=False`` keeps arrays of the right dtype as
    given (a writer whose arrays are already its own copies).  Nothing is checked here:
    a family's start reads the layout with :func:`read_optimum`."""
    take = np.array if copy else np.asarray
    n = int(np.asarray(status).shape[0])
    S = np.array(S, dtype=np.int64).reshape(-1)
    ns = S.shape[0]
    out = {"n": n, "n_features": int(n_features), "sparse": bool(sparse), "C": float(C),
           "status": np.array(status, dtype=np.int8),
           "S": S,
           "KS": take(KS, dtype=np.float64).reshape(n, ns),
           "R": take(R, dtype=np.float64) if ns else np.zeros((0, 0)),
           "b": float(bias_sign) * float(b), "k_max": float(k_max),
           "fresh": bool(counters["fresh"])}
    for name, a in zip(_PER_EXAMPLE, (alpha, g, y, kdiag)):
        out[name] = take(a, dtype=np.float64)
    out.update({name: int(counters[name]) for name in COUNTERS})
    out.update({name: take(rows[name]) for name in (_CSR_ROWS if sparse else _DENSE_ROWS)})
    if cache is None:
        cache = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    for name, a, dt in zip(_CACHE, cache, (np.int64, np.int64, np.float64)):
        out[name] = take(a, dtype=dt).reshape(-1)
    return out


# ---------------------------------------------------------------------- the arrays
class PartitionArrays:
    """Mixin of both exact families' reference states: the per-example arrays the layout
    is written from, and their growth with the examples.

    ``rows`` (one row a stored example, in the core's row convention), ``y``, ``alpha``,
    ``g``, ``kdiag`` (float64) and ``status`` (int8, the core's codes and the family's
    own), indexed by example id (ids 0..n-1, never reused), with room beyond ``n``
    (:func:`refsvm.core.bordered.grow_array`: capacity doubling, at least 16; the floats
    0 there, the status ``GONE``), and the rows of the margin set's ``KS`` kept to the
    same capacity.  A family names its own per-example arrays in ``EXTRA_ARRAYS``
    (POKER's p, d and a0 of the fixed-bias path and the decrement), grown and zeroed
    with alpha and g.  The twins' compiled counterpart is ``refsvm._core.Partition``."""

    EXTRA_ARRAYS = ()

    def _new_example(self, x, y, code):
        """Store a copy of the row ``x`` with label ``y``: its id (``n`` before the call),
        alpha = g = 0 (and the family's own arrays), status ``code``; ``kdiag`` is the
        family's to fill."""
        if self.sparse:
            x = SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
        else:
            x = np.array(x, dtype=np.float64)
        i = self.n
        self.rows.append(x)
        self.n += 1
        for name in ("y", "alpha", "g", "kdiag") + self.EXTRA_ARRAYS:
            setattr(self, name, grow_array(getattr(self, name), self.n))
        self.status = grow_array(self.status, self.n, GONE)
        self.margin.reserve_rows(self.y.shape[0])
        self.y[i] = y
        for name in ("alpha", "g") + self.EXTRA_ARRAYS:
            getattr(self, name)[i] = 0.0
        self.status[i] = code
        return i


# ---------------------------------------------------------------------- reading
def _array(data, name, kinds, shape):
    """data[name] as an array whose dtype kind is in ``kinds`` and whose shape is
    ``shape`` (None: any length on that axis), or the sentence saying why not."""
    if name not in data:
        return None, f"the layout has no {name!r}"
    try:
        a = np.asarray(data[name])
    except Exception:                                    # noqa: BLE001 - hostile input
        return None, f"{name!r} is not an array"
    if a.dtype.kind not in kinds:
        want = "a real" if "f" in kinds else "an integer"
        return None, f"{name!r} has dtype {a.dtype}, not {want} type"
    if a.ndim != len(shape) or any(w is not None and s != w for s, w in zip(a.shape, shape)):
        return None, f"{name!r} has shape {a.shape}, not {shape}"
    return a, None


def _scalar(data, name, kind):
    """data[name] as a Python int / float / bool (``kind``), or the sentence saying why not."""
    if name not in data:
        return None, f"the layout has no {name!r}"
    v = data[name]
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v[()]
    if kind is bool:
        if not isinstance(v, (bool, np.bool_)):
            return None, f"{name!r} is not a bool"
        return bool(v), None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        return None, f"{name!r} is not a number"
    if kind is int:
        if not isinstance(v, numbers.Integral) or v < 0:
            return None, f"{name!r} = {v!r} is not a count (an integer >= 0)"
        return int(v), None
    v = float(v)
    if not np.isfinite(v):
        return None, f"{name!r} = {v!r} is not finite"
    return v, None


_INT, _REAL = "iu", "fiu"


def _read(data, n_features, sparse, C):
    """(the typed layout, None) or (None, what is wrong)."""
    if not isinstance(data, Mapping):
        return None, f"a layout is a mapping, not {type(data).__name__}"
    out = {}
    for name, kind in (("n", int), ("n_features", int), ("sparse", bool), ("C", float),
                       ("b", float), ("k_max", float), ("fresh", bool),
                       *((c, int) for c in COUNTERS)):
        out[name], why = _scalar(data, name, kind)
        if why:
            return None, why
    n, nf = out["n"], out["n_features"]
    for name, want in (("n_features", n_features), ("sparse", sparse), ("C", C)):
        if want is not None and out[name] != want:
            return None, f"the layout's {name} is {out[name]!r}, the state's {want!r}"
    if not out["C"] > 0.0:
        return None, f"C = {out['C']!r} is not positive"
    if out["k_max"] < 0.0:
        return None, f"k_max = {out['k_max']!r} is negative"
    # the partition and the per-example arrays
    status, why = _array(data, "status", _INT, (n,))
    if why:
        return None, why
    if not np.all(np.isin(status, CODES)):
        i = int(np.flatnonzero(~np.isin(status, CODES))[0])
        return None, (f"status[{i}] = {int(status[i])} is not a partition code "
                      f"(the core's {CODES}): not the end of an operation")
    out["status"] = status.astype(np.int8, copy=False)
    for name in _PER_EXAMPLE:
        a, why = _array(data, name, _REAL, (n,))
        if why:
            return None, why
        a = a.astype(np.float64, copy=False)
        if not np.all(np.isfinite(a)):
            return None, f"{name!r} is not finite at id {int(np.flatnonzero(~np.isfinite(a))[0])}"
        out[name] = a
    if not np.all(np.abs(out["y"]) == 1.0):
        return None, "a label in 'y' is not -1 or +1"
    if np.any(out["alpha"] < 0.0) or np.any(out["alpha"] > out["C"]):
        return None, "an alpha lies outside [0, C]"
    # the margin set: S in joining order, its columns, R
    S, why = _array(data, "S", _INT, (None,))
    if why:
        return None, why
    ns = S.shape[0]
    if ns and (S.min() < 0 or S.max() >= n):
        return None, "a member of 'S' is not an id of the layout"
    if not np.array_equal(np.sort(S), np.flatnonzero(out["status"] == IN_S)):
        return None, "'S' is not the set of ids whose status is IN_S (each once)"
    out["S"] = S.astype(np.int64, copy=False)
    KS, why = _array(data, "KS", _REAL, (n, ns))
    if why:
        return None, why
    KS = KS.astype(np.float64, copy=False)
    if not np.all(np.isfinite(KS[out["status"] >= 0])) or np.any(np.isinf(KS)):
        return None, "'KS' is not finite on the examples in the problem"
    out["KS"] = KS
    R, why = _array(data, "R", _REAL, (ns + 1, ns + 1) if ns else (0, 0))
    if why:
        return None, why + " (the size of the margin set's bordered inverse)"
    R = R.astype(np.float64, copy=False)
    if not np.all(np.isfinite(R)):
        return None, "'R' is not finite"
    out["R"] = R
    # the rows
    if out["sparse"]:
        ptr, why = _array(data, "rows_indptr", _INT, (n + 1,))
        if why:
            return None, why
        nnz = int(ptr[-1])
        if ptr[0] != 0 or np.any(np.diff(ptr) < 0):
            return None, "'rows_indptr' is not the row pointer of a CSR matrix"
        ind, why = _array(data, "rows_indices", _INT, (nnz,))
        if why:
            return None, why
        if nnz and (ind.min() < 0 or ind.max() >= nf):
            return None, "a column index in 'rows_indices' is outside the row length"
        val, why = _array(data, "rows_data", _REAL, (nnz,))
        if why:
            return None, why
        out.update(rows_data=val.astype(np.float64, copy=False),
                   rows_indices=ind.astype(np.int32, copy=False),
                   rows_indptr=ptr.astype(np.int64, copy=False))
        vals = out["rows_data"]
    else:
        rows, why = _array(data, "rows", _REAL, (n, nf))
        if why:
            return None, why
        out["rows"] = vals = rows.astype(np.float64, copy=False)
    if not np.all(np.isfinite(vals)):
        return None, "the rows are not finite"
    # the column cache
    ids, why = _array(data, "cache_ids", _INT, (None,))
    if why:
        return None, why
    k = ids.shape[0]
    lengths, why = _array(data, "cache_lengths", _INT, (k,))
    if why:
        return None, why
    if k and (ids.min() < 0 or ids.max() >= n or np.unique(ids).shape[0] != k
              or lengths.min() < 0 or lengths.max() > n):
        return None, "the cache's ids or lengths are not those of the layout's examples"
    total = int(lengths.sum()) if k else 0
    values, why = _array(data, "cache_values", _REAL, (total,))
    if why:
        return None, why
    values = values.astype(np.float64, copy=False)
    if np.any(np.isinf(values)):
        return None, "a cached kernel value is infinite"
    out.update(cache_ids=ids.astype(np.int64, copy=False),
               cache_lengths=lengths.astype(np.int64, copy=False), cache_values=values)
    return out, None


def optimum_problem(data, n_features=None, sparse=None, C=None):
    """What is wrong with the layout ``data`` (a sentence), or None: it holds every key
    with its dtype, shape and range (module docstring), and, when given, the state's
    ``n_features``, ``sparse`` and ``C``.  Never raises on any input."""
    try:
        return _read(data, n_features, sparse, C)[1]
    except Exception as exc:                             # noqa: BLE001 - hostile input
        return f"the layout cannot be read ({type(exc).__name__}: {exc})"


def read_optimum(data, n_features=None, sparse=None, C=None):
    """The layout's arrays and scalars, typed (the layout's own arrays where their dtype
    is already the layout's: a start copies what it keeps), or :class:`OptimumError`
    saying what is wrong (:func:`optimum_problem`)."""
    try:
        out, why = _read(data, n_features, sparse, C)
    except Exception as exc:                             # noqa: BLE001 - hostile input
        out, why = None, f"the layout cannot be read ({type(exc).__name__}: {exc})"
    if why is not None:
        raise OptimumError(f"not an exact optimum's layout: {why}")
    return out
