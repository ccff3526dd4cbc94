"""Parameter and input validation, shared by every estimator.

Everything a user can get wrong is checked here, in Python, before any
algorithm state is touched; the compiled twins receive only numbers and typed
memoryviews.
"""

from __future__ import annotations

import importlib
import math
import numbers

import numpy as np
import scipy.sparse as sp

BACKENDS = ("cython", "python")


def check_positive(name, value, *, allow_inf=False):
    """A real number > 0 (a clear ValueError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive number; got {value!r}")
    value = float(value)
    if not (value > 0) or (not allow_inf and not np.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")
    return value


def check_nonnegative(name, value):
    """A finite real number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a non-negative number; got {value!r}")
    value = float(value)
    if not (value >= 0) or not np.isfinite(value):
        raise ValueError(f"{name} must be a non-negative finite number; got {value!r}")
    return value


def check_int(name, value, *, minimum=1, allow_none=False):
    """An integer >= minimum (or None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_option(name, value, options):
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}; got {value!r}")
    return value


def check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


# --------------------------------------------------------------------------- declared rules
#: The largest integer a parameter may take (the compiled twins store counts in C ints
#: or Py_ssize_t; anything larger is a mistake, reported as such in both backends).
INT_MAX = 2**31 - 1


class Rule:
    """One parameter's rule; ``check(name, value)`` raises a clear ValueError."""

    def check(self, name, value):
        raise NotImplementedError

    def __repr__(self):
        return self.describe()


class Positive(Rule):
    """A real number > 0 (finite unless ``allow_inf``)."""

    def __init__(self, allow_inf=False):
        self.allow_inf = allow_inf

    def check(self, name, value):
        check_positive(name, value, allow_inf=self.allow_inf)

    def describe(self):
        return "float > 0"


class NonNegative(Rule):
    """A finite real number >= 0 (or None when ``allow_none``)."""

    def __init__(self, allow_none=False):
        self.allow_none = allow_none

    def check(self, name, value):
        if value is None and self.allow_none:
            return
        check_nonnegative(name, value)

    def describe(self):
        return "float >= 0 or None" if self.allow_none else "float >= 0"


class Finite(Rule):
    """Any finite real number."""

    def check(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number; got {value!r}")

    def describe(self):
        return "finite float"


class Integer(Rule):
    """An integer in [minimum, maximum] (or None when ``allow_none``)."""

    def __init__(self, minimum=1, maximum=INT_MAX, allow_none=False):
        self.minimum, self.maximum, self.allow_none = minimum, maximum, allow_none

    def check(self, name, value):
        check_int(name, value, minimum=self.minimum, allow_none=self.allow_none)
        if value is not None and value > self.maximum:
            raise ValueError(f"{name} must be an integer <= {self.maximum}; got {value!r}")

    def describe(self):
        return f"int in [{self.minimum}, {self.maximum}]" + (" or None" if self.allow_none else "")


class Options(Rule):
    """One of a fixed set of strings."""

    def __init__(self, *choices):
        self.choices = tuple(choices)

    def check(self, name, value):
        check_option(name, value, self.choices)

    def describe(self):
        return " | ".join(repr(c) for c in self.choices)


class Boolean(Rule):
    def check(self, name, value):
        check_bool(name, value)

    def describe(self):
        return "bool"


class BooleanOrAuto(Rule):
    """True, False, or "auto" (resolved by the estimator, e.g. by its kernel)."""

    def check(self, name, value):
        auto = isinstance(value, str) and value == "auto"
        if not (auto or isinstance(value, (bool, np.bool_))):
            raise ValueError(f"{name} must be True, False or 'auto'; got {value!r}")

    def describe(self):
        return "bool | 'auto'"


class GammaRule(Rule):
    """A kernel width: a number > 0, or "scale" / "auto" (resolved on the first batch)."""

    def check(self, name, value):
        if isinstance(value, str):
            check_option(name, value, ("scale", "auto"))
        else:
            check_positive(name, value)

    def describe(self):
        return "float > 0 | 'scale' | 'auto'"


class RandomStateRule(Rule):
    """None, an int seed, or a numpy RandomState (scikit-learn's convention)."""

    def check(self, name, value):
        if value is None or isinstance(value, np.random.RandomState):
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not (
            0 <= value < 2**32
        ):
            raise ValueError(
                f"{name} must be None, an integer in [0, 2**32) or a numpy RandomState; "
                f"got {value!r}"
            )

    def describe(self):
        return "None | int | RandomState"


class DeparturesRule(Rule):
    """``departures``: None, "default", "paper" or a dict of a family's departures
    (:func:`refsvm.core.departures.resolve` over the family's ``DEPARTURES`` table)."""

    def __init__(self, table):
        self.table = table

    def check(self, name, value):
        from .core.departures import resolve

        try:
            resolve(self.table, value)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None

    def describe(self):
        return "None | 'default' | 'paper' | dict of " + ", ".join(sorted(self.table))


def check_params(obj, rules):
    """Check every attribute of ``obj`` named in ``rules`` against its rule."""
    for name, rule in rules.items():
        rule.check(name, getattr(obj, name))


def load_backend(backend, reference, compiled):
    """The module implementing an algorithm for the requested backend.

    Parameters
    ----------
    backend : {"cython", "python"}
    reference : module
        The pure-Python reference module.
    compiled : str
        Dotted name of the compiled twin module (e.g. ``"refsvm._core"``).

    Asking for ``"cython"`` when the compiled module is not built is an
    ImportError: there is never a silent fallback to the reference.
    """
    check_option("backend", backend, BACKENDS)
    if backend == "python":
        return reference
    try:
        return importlib.import_module(compiled)
    except ImportError as exc:
        raise ImportError(
            f"backend='cython' needs the compiled module {compiled}, which is not built "
            f"or failed to load ({exc}). Build it with `pip install -e .` from the source "
            "tree, or pass backend='python' to use the pure-Python reference."
        ) from exc


#: The widest sparse input the compiled twins take: their column indices are C ints.
MAX_SPARSE_FEATURES = 2**31 - 1


def _check_compressed(X, index_range=True):
    """The structure of a CSR/CSC matrix, checked explicitly in O(nnz).  (SciPy's own
    ``check_format(full_check=True)`` skips the order and range checks when the last
    ``indptr`` entry is 0, and ``sort_indices``/``toarray`` then crash on such input.)"""
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    indptr, indices, data = X.indptr, X.indices, X.data
    for name, arr in (("indptr", indptr), ("indices", indices)):
        if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must be a 1-D integer array")
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise ValueError("data must be a 1-D array")
    if indptr.shape[0] != major + 1:
        raise ValueError(f"indptr has {indptr.shape[0]} entries, expected {major + 1}")
    if indptr[0] != 0:
        raise ValueError(f"indptr starts at {indptr[0]}, not 0")
    if major and np.any(indptr[1:] < indptr[:-1]):
        raise ValueError("indptr is not non-decreasing")
    nnz = int(indptr[-1])
    if indices.shape[0] != data.shape[0] or nnz > indices.shape[0]:
        raise ValueError(
            f"indptr ends at {nnz} with {indices.shape[0]} indices and {data.shape[0]} values"
        )
    if index_range and nnz and (indices[:nnz].min() < 0 or indices[:nnz].max() >= minor):
        raise ValueError(f"an index is outside [0, {minor})")


def check_sparse_structure(X, index_range=True):
    """Reject a sparse matrix whose structure is inconsistent, in O(nnz), before anything
    reads it: index arrays of the right lengths and types, ``indptr`` starting at 0,
    non-decreasing and within the index array, every column (row) index inside the
    shape.  SciPy accepts such matrices when they are built from raw arrays; a compiled
    loop (SciPy's or ours) would read or write out of bounds.  Also rejects more columns
    than the twins can index.

    ``index_range=False`` leaves out the range of the CSR column indices (two reads of the
    index array): for input that only the compiled pass reads, which checks each row's
    indices as it reads them (``StreamLearner.run_checked``)."""
    if not sp.issparse(X):
        return
    fmt = X.format
    try:
        if len(X.shape) != 2 or min(X.shape) < 0:
            raise ValueError(f"shape {X.shape} is not a 2-D shape")
        if fmt in ("csr", "csc"):
            _check_compressed(X, index_range=index_range or fmt != "csr")
        elif fmt == "coo":
            rows, cols = (X.row, X.col) if hasattr(X, "row") else X.coords
            n_rows, n_cols = X.shape
            if rows.shape != cols.shape or rows.shape[0] != X.data.shape[0]:
                raise ValueError("row, column and data arrays differ in length")
            if rows.size and (rows.min() < 0 or rows.max() >= n_rows
                              or cols.min() < 0 or cols.max() >= n_cols):
                raise ValueError("an index is outside the shape")
    except ValueError as exc:
        raise ValueError(f"X is a malformed {fmt.upper()} matrix: {exc}") from exc
    if X.shape[1] > MAX_SPARSE_FEATURES:
        raise ValueError(
            f"X has {X.shape[1]} columns; sparse input is limited to {MAX_SPARSE_FEATURES} "
            "columns (the compiled twins index columns with 32-bit ints)"
        )


def magnitude_limit(n_features):
    """The largest |x_j| accepted with ``n_features`` features: sqrt(max_float / (4 d)),
    so that every squared norm ‖x‖² (and every kernel distance) stays finite."""
    return float(np.sqrt(np.finfo(np.float64).max / (4.0 * max(int(n_features), 1))))


def check_magnitude(X, limit=None):
    """Reject NaN, infinity and values whose squares overflow, in two reads of X.

    Every squared norm ‖x‖² (and so every kernel distance) must be finite: entries are
    bounded by sqrt(max_float / (4 n_features)) (:func:`magnitude_limit`, the default
    ``limit``).  ``limit=max_float`` checks finiteness only (the linear estimators: any
    finite value, as in scikit-learn; an overflow of their arithmetic is caught after
    the pass).
    ``max`` and ``min`` propagate NaN and infinity, so they also serve as the finiteness
    check (the estimators ask scikit-learn's validation not to make a third pass for it).
    The linear estimators make the same check inside their compiled pass instead (one read
    of X, ``StreamLearner.run_checked``) and call this function only to word the error."""
    data = X.data if sp.issparse(X) else X
    if data.size == 0:
        return
    hi, lo = float(data.max()), float(data.min())
    if np.isnan(hi) or np.isnan(lo):
        raise ValueError("Input X contains NaN.")
    if np.isinf(hi) or np.isinf(lo):
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
    if limit is None:
        limit = magnitude_limit(X.shape[1])
    top = max(hi, -lo)
    if top > limit:
        raise ValueError(
            f"X has an entry of magnitude {top:.3g}; entries must stay below {limit:.3g} "
            f"with {X.shape[1]} features so that squared norms do not overflow "
            "(rescale the data, e.g. with sklearn.preprocessing.MaxAbsScaler)"
        )


#: The largest kernel value the kernel estimators accept (``check_kernel_range``): the
#: solvers form products of two kernel values and sums of many (Gram blocks, bordered
#: inverses, f(x) = sum alpha_i y_i k(x_i, x)), which must stay finite.
KERNEL_VALUE_LIMIT = 1e150


def max_row_sqnorm(X):
    """max_i ||x_i||^2 of a checked dense array or CSR matrix (0.0 with no rows)."""
    if X.shape[0] == 0:
        return 0.0
    if sp.issparse(X):
        return float(np.asarray(X.multiply(X).sum(axis=1)).max())
    return float(np.einsum("ij,ij->i", X, X).max())


def kernel_bound(kernel, gamma, degree, coef0, sq_a, sq_b):
    """An upper bound of |k(x, z)| over ||x||^2 <= sq_a and ||z||^2 <= sq_b (Cauchy-Schwarz:
    |<x, z>| <= ||x|| ||z||); 1 for the RBF kernel; infinity where the bound overflows."""
    if kernel == "rbf":
        return 1.0
    s = math.sqrt(sq_a) * math.sqrt(sq_b)
    if kernel == "linear":
        return s
    base = gamma * s + abs(coef0)
    if degree == 0:
        return 1.0
    if base == 0.0:
        return 0.0
    if degree * math.log(base) > 700.0:  # base**degree would overflow (or nearly)
        return math.inf
    return base ** degree


def check_kernel_range(kernel, gamma, degree, coef0, sq_a, sq_b, where="this data"):
    """A ValueError naming the problem when kernel values on rows of squared norms up to
    ``sq_a`` and ``sq_b`` can exceed :data:`KERNEL_VALUE_LIMIT` (a polynomial kernel of a
    high degree, or large attributes): the solvers would otherwise meet infinite or
    overflowing sums in their compiled loops."""
    bound = kernel_bound(kernel, gamma, degree, coef0, sq_a, sq_b)
    if bound <= KERNEL_VALUE_LIMIT:
        return
    if kernel == "linear":
        what = "the linear kernel <x, z>"
        fix = "rescale the data (e.g. with sklearn.preprocessing.StandardScaler)"
    else:
        what = (f"the polynomial kernel (gamma <x, z> + coef0)^degree (gamma={gamma:.3g}, "
                f"degree={degree}, coef0={coef0:.3g})")
        fix = "rescale the data (e.g. with sklearn.preprocessing.StandardScaler) or lower gamma or degree"
    reach = "overflow" if math.isinf(bound) else f"reach {bound:.3g}"
    raise ValueError(
        f"{what} can {reach} on {where} (largest squared row norm "
        f"{max(sq_a, sq_b):.3g}); kernel values must stay below {KERNEL_VALUE_LIMIT:.0e} "
        f"so that sums and products of them stay finite: {fix}"
    )


def check_kernel_rows(X, kernel, gamma, degree, coef0, *, seen=0.0, against=None,
                      where="this data"):
    """``check_kernel_range`` on the rows of X: among themselves and rows seen before of
    squared norm up to ``seen``, or (``against`` given) only against rows of squared norm
    up to ``against`` (prediction rows are never paired with each other).  Returns the
    largest squared norm of X (with ``seen``); the RBF kernel, bounded by 1, reads
    nothing and returns 0.0."""
    if kernel == "rbf":
        return 0.0
    sq = max_row_sqnorm(X)
    if against is not None:
        check_kernel_range(kernel, gamma, degree, coef0, sq, against, where)
        return sq
    sq = max(sq, seen)
    check_kernel_range(kernel, gamma, degree, coef0, sq, sq, where)
    return sq


def check_unlearn_ids(indices, n_seen, active):
    """The ids to unlearn as int64, or a ValueError: a 1-D list of integer ids (integral
    floats accepted), no repeats, each in 0..n_seen-1 and still learned (in ``active``)."""
    ids = np.asarray(indices)
    if ids.ndim == 0:
        ids = ids.reshape(1)
    if ids.ndim != 1:
        raise ValueError(f"indices must be a 1-D list of ids; got shape {ids.shape}")
    if ids.size and not (np.issubdtype(ids.dtype, np.integer)
                         or (np.issubdtype(ids.dtype, np.floating)
                             and np.all(np.isfinite(ids)) and np.all(ids == np.round(ids)))):
        raise ValueError(f"indices must be integers; got {ids.dtype} values")
    ids = ids.astype(np.int64)
    if np.unique(ids).size != ids.size:
        raise ValueError("indices contains repeated ids")
    bad = ids[(ids < 0) | (ids >= n_seen)]
    if bad.size:
        raise ValueError(
            f"indices out of range: {bad.tolist()} (ids are 0..{n_seen - 1}, in learning order)")
    gone = np.setdiff1d(ids, active)
    if gone.size:
        raise ValueError(f"examples {gone.tolist()} were already unlearned")
    return ids


def as_csr(X):
    """A canonical CSR matrix: float64 data, int32 sorted indices, no duplicates.  The
    ``indptr`` keeps SciPy's index type (int32, or int64 past 2**31 stored values); the
    compiled driver reads either without a copy."""
    if not (isinstance(X, sp.csr_matrix) and X.dtype == np.float64):
        X = sp.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
        X.sort_indices()
    if X.indices.dtype != np.int32:
        X = X.copy()
        X.indices = X.indices.astype(np.int32)
    return X


def as_format(X, sparse):
    """Convert validated input to the storage format a model was fitted with."""
    if sparse:
        return as_csr(X)
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def kernel_rules():
    """The rules of the kernel parameters every kernel estimator declares."""
    from .core.kernels import KERNELS

    return {"kernel": Options(*KERNELS), "gamma": GammaRule(), "degree": Integer(minimum=1),
            "coef0": Finite()}


def check_kernel_params(kernel, gamma, degree, coef0):
    """Validate kernel hyper-parameters; ``gamma`` may be "scale", "auto" or > 0."""
    rules = kernel_rules()
    for name, value in (("kernel", kernel), ("gamma", gamma), ("degree", degree),
                        ("coef0", coef0)):
        rules[name].check(name, value)


def resolve_gamma(gamma, X):
    """The numeric gamma: "scale" = 1 / (n_features * X.var()), "auto" = 1 / n_features
    (as scikit-learn's SVC); a number is returned as it is."""
    if gamma == "auto":
        return 1.0 / X.shape[1]
    if gamma == "scale":
        if sp.issparse(X):
            mean = X.mean()
            var = X.multiply(X).mean() - mean**2
        else:
            var = X.var()
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if not (np.isfinite(gamma) and gamma > 0):
            raise ValueError(
                f"gamma='scale' gives {gamma!r} on this data (variance {var!r}); "
                "pass a positive number"
            )
        return gamma
    return float(gamma)
