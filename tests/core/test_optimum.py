"""The exact optimum in the core's layout (refsvm.core.optimum): both exact families write
the same layout from their states (either twin, dense and CSR), start from it, and go
round trips through it (POKER to POKER bit for bit, across the families to the same SVM);
a tampered layout gives a clear error or None and never changes a model."""

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm.core.active_set import GONE, IN_S
from refsvm.core.optimum import OptimumError, optimum_problem, read_optimum
from refsvm.idsvm import incremental_svm as idsvm_ref
from refsvm.idsvm import state_format
from refsvm.poker import poker as poker_ref
from refsvm.poker import storage as poker_storage
from refsvm.poker.poker import PathError

BACKENDS = ["python", "cython"]
FORMATS = ["dense", "csr"]
KW = dict(C=1.0, kernel="rbf", gamma=0.5)


def _module(family, backend):
    if backend == "python":
        return idsvm_ref if family == "idsvm" else poker_ref
    if family == "idsvm":
        return pytest.importorskip("refsvm.idsvm._incremental_svm")
    return pytest.importorskip("refsvm.poker._poker")


def _state(family, backend, sparse):
    m = _module(family, backend)
    cls = m.IncrementalSVMState if family == "idsvm" else m.POKERState
    return cls(3, sparse, **KW)


def _data(fmt):
    rng = np.random.RandomState(4)
    X = rng.randn(50, 3)
    X[rng.rand(50, 3) < 0.3] = 0.0
    y = np.where(X[:, 0] + 0.4 * rng.randn(50) > 0, 1.0, -1.0)
    return (sp.csr_matrix(X) if fmt == "csr" else X), y


def _learned(family, backend, fmt):
    """A state of ``family`` that learned the stream and unlearned two ids."""
    X, y = _data(fmt)
    st = _state(family, backend, fmt == "csr")
    if family == "idsvm":
        st.run(X, y, range(X.shape[0]))
    else:
        st.self_init(X, y)
    st.unlearn([int(i) for i in st.support_ids()[:2]])
    return st, X


def _writer(family):
    return state_format if family == "idsvm" else poker_storage


def _load(family, st, layout):
    """The family's start; True when the state now holds the layout."""
    if family == "idsvm":
        return state_format.load_optimum(st, layout)
    poker_storage.load_optimum(st, layout)
    return True


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("family", ["idsvm", "poker"])
def test_both_families_write_one_layout(family, backend, fmt):
    st, _ = _learned(family, backend, fmt)
    layout = _writer(family).optimum_of(st)
    assert optimum_problem(layout, 3, fmt == "csr", 1.0) is None
    other = _writer("poker" if family == "idsvm" else "idsvm").optimum_of(
        _learned("poker" if family == "idsvm" else "idsvm", backend, fmt)[0])
    assert set(layout) == set(other)                    # one layout, no family's own key
    got = read_optimum(layout)
    n = got["n"]
    assert got["status"].dtype == np.int8 and got["status"].shape == (n,)
    assert np.array_equal(np.sort(got["S"]), np.flatnonzero(got["status"] == IN_S))
    assert np.any(got["status"] == GONE)
    assert got["KS"].shape == (n, got["S"].size)
    assert got["R"].shape == (got["S"].size + 1,) * 2
    # the layout's bias is f = w'phi + b: the same decision values from it as from the state
    sv = np.flatnonzero((got["status"] >= 0) & (got["alpha"] > 0))
    s = np.array(got["S"][0])
    f = float(got["KS"][sv, 0] @ (got["alpha"][sv] * got["y"][sv])) + got["b"]
    X = _data(fmt)[0]
    assert f == pytest.approx(float(st.decision_function(X[int(s): int(s) + 1])[0]), abs=1e-9)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_poker_round_trip_is_bit_for_bit(backend, fmt):
    """POKER -> layout -> a fresh POKER state of either twin -> layout: the same arrays
    (the cache, the refresh count and ``fresh`` are not carried over), the same
    decision values to the bit."""
    st, X = _learned("poker", backend, fmt)
    first = poker_storage.optimum_of(st)
    for other in BACKENDS:
        new = _state("poker", other, fmt == "csr")
        poker_storage.load_optimum(new, first)
        again = poker_storage.optimum_of(new)
        for key, value in first.items():
            if key in ("cache_ids", "cache_lengths", "cache_values", "n_refresh", "fresh"):
                continue
            assert np.array_equal(np.asarray(again[key]), np.asarray(value)), key
        assert np.array_equal(new.decision_function(X), st.decision_function(X))
        assert new.exactness(True) is None


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("family", ["idsvm", "poker"])
def test_round_trips_across_the_families(family, backend, fmt):
    """A state's layout starts either family (either twin) at the same SVM: the same
    partition and margin set in the same order, the same decision values to round-off;
    and back again."""
    st, X = _learned(family, backend, fmt)
    layout = _writer(family).optimum_of(st)
    for target in ("idsvm", "poker"):
        for other in BACKENDS:
            new = _state(target, other, fmt == "csr")
            assert _load(target, new, layout)
            back = _writer(target).optimum_of(new)
            assert np.array_equal(back["status"], layout["status"])
            assert np.array_equal(back["S"], layout["S"])
            np.testing.assert_allclose(back["alpha"], layout["alpha"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(new.decision_function(X), st.decision_function(X),
                                       rtol=0, atol=1e-9)
            # and it goes on: one more example learned exactly
            one = np.full((1, 3), 0.1)
            new.run(sp.csr_matrix(one) if fmt == "csr" else one, np.array([-1.0]), [0])
            if target == "idsvm":
                assert new.check()["kkt"] < 1e-9
            else:
                assert new.exactness(True) is None


def _tampered(layout):
    """(what, a copy of ``layout`` with one thing wrong)."""
    n, ns = layout["n"], layout["S"].size
    S0 = int(layout["S"][0])
    rest = int(np.flatnonzero(layout["status"] == 0)[0])

    def change(**kw):
        return dict(layout, **kw)

    def without(key):
        return {k: v for k, v in layout.items() if k != key}

    def at(key, i, value, dtype=None):
        a = np.array(layout[key], dtype=dtype)
        a[i] = value
        return change(**{key: a})

    yield "not a mapping", list(layout.items())
    yield "no alpha", without("alpha")
    yield "alpha too short", change(alpha=layout["alpha"][:-1])
    yield "g 2-D", change(g=layout["g"].reshape(1, -1))
    yield "NaN in g", at("g", rest, np.nan)
    yield "inf in kdiag", at("kdiag", 0, np.inf)
    yield "alpha above C", at("alpha", rest, 2.0)
    yield "negative alpha", at("alpha", rest, -1e-3)
    yield "a label 0", at("y", 0, 0.0)
    yield "status out of range", at("status", rest, 3)
    yield "status of floats", change(status=layout["status"].astype(np.float64))
    yield "status as text", change(status=layout["status"].astype(str))
    yield "objects", change(alpha=layout["alpha"].astype(object))
    yield "a ragged list", change(g=[[0.0], [1.0, 2.0]])
    yield "S missing a member", change(S=layout["S"][1:])
    yield "S with a repeat", change(S=np.concatenate([layout["S"], layout["S"][:1]]))
    yield "S naming a rest id", at("S", 0, rest)
    yield "S out of range", at("S", 0, n + 5)
    yield "an id in I_s outside S", at("status", rest, IN_S)
    yield "a member of S not in I_s", at("status", S0, 0)
    yield "R of the wrong size", change(R=np.eye(ns + 2))
    yield "R empty", change(R=np.zeros((0, 0)))
    yield "NaN in R", at("R", (0, 0), np.nan)
    yield "KS of the wrong shape", change(KS=layout["KS"][:, :-1])
    yield "NaN in KS", at("KS", (rest, 0), np.nan)
    yield "n too large", change(n=n + 1)
    yield "n negative", change(n=-1)
    yield "n a float", change(n=float(n))
    yield "C negative", change(C=-1.0)
    yield "C NaN", change(C=np.nan)
    yield "b infinite", change(b=np.inf)
    yield "b a string", change(b="0")
    yield "sparse not a bool", change(sparse=1)
    yield "a negative counter", change(n_iterations=-3)
    if "rows" in layout:
        yield "no rows", without("rows")
        yield "rows too narrow", change(rows=layout["rows"][:, :2])
        yield "NaN in the rows", at("rows", (0, 0), np.nan)
    yield "cache id out of range", change(cache_ids=np.array([n + 1]),
                                          cache_lengths=np.array([1]),
                                          cache_values=np.zeros(1))
    yield "cache values too short", change(cache_ids=np.array([0]),
                                           cache_lengths=np.array([n]),
                                           cache_values=np.zeros(n - 1))
    yield "inf cached", change(cache_ids=np.array([0]), cache_lengths=np.array([1]),
                               cache_values=np.array([np.inf]))


def _csr_tampered(layout):
    def change(**kw):
        return dict(layout, **kw)

    ptr = layout["rows_indptr"].copy()
    yield "indptr not starting at 0", change(rows_indptr=ptr + 1)
    bad = ptr.copy()
    bad[1], bad[2] = bad[2], bad[1] - 1
    yield "indptr decreasing", change(rows_indptr=bad)
    ind = layout["rows_indices"].copy()
    ind[0] = 7
    yield "a column beyond the row", change(rows_indices=ind)
    yield "data too short", change(rows_data=layout["rows_data"][:-1])
    yield "no indices", {k: v for k, v in layout.items() if k != "rows_indices"}


def _source(fmt):
    st, _ = _learned("poker", "python", fmt)
    return poker_storage.optimum_of(st)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tampered_layout_is_refused_and_changes_no_model(backend, fmt):
    layout = _source(fmt)
    cases = list(_tampered(layout)) + (list(_csr_tampered(layout)) if fmt == "csr" else [])
    for what, bad in cases:
        problem = optimum_problem(bad, 3, fmt == "csr", 1.0)
        assert isinstance(problem, str) and problem, what
        with pytest.raises(OptimumError, match="not an exact optimum's layout"):
            read_optimum(bad, 3, fmt == "csr", 1.0)
        assert state_format.state_arrays_from_optimum(bad, 1.0, 3, fmt == "csr") is None, what
        ids = _state("idsvm", backend, fmt == "csr")
        assert not state_format.load_optimum(ids, bad), what
        assert ids.get_state()["n_seen"] == 0
        pk = _state("poker", backend, fmt == "csr")
        with pytest.raises(PathError, match="not an exact optimum's layout"):
            poker_storage.load_optimum(pk, bad)
        assert pk.get_state()["n_seen"] == 0
    # the layout itself is fine: the refusals are the tampering's
    assert optimum_problem(layout, 3, fmt == "csr", 1.0) is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_layout_of_other_parameters_or_into_a_learned_model_is_refused(backend):
    layout = _source("dense")
    for kw, what in ((dict(n_features=4), "n_features"), (dict(sparse=True), "sparse"),
                     (dict(C=2.0), "C")):
        args = {**dict(n_features=3, sparse=False, C=1.0), **kw}
        assert what in optimum_problem(layout, **args)
    st, X = _learned("idsvm", backend, "dense")
    before = st.decision_function(X)
    with pytest.raises(ValueError, match="freshly constructed"):
        state_format.load_optimum(st, layout)
    assert np.array_equal(st.decision_function(X), before)
    pk, X = _learned("poker", backend, "dense")
    before = pk.decision_function(X)
    with pytest.raises(ValueError, match="freshly constructed"):
        poker_storage.load_optimum(pk, layout)
    assert np.array_equal(pk.decision_function(X), before)


@pytest.mark.parametrize("family", ["idsvm", "poker"])
def test_the_references_grow_the_partition_arrays_alike(family):
    """The core's PartitionArrays in both references: ids 0, 1, ... with room in steps of
    at least 16, doubling; alpha, g (and POKER's p, d, a0) 0 and the family's code for a
    new example; the status GONE and the floats 0 beyond n; KS's rows at the capacity."""
    st = _state(family, "python", False)
    code = idsvm_ref.OUT if family == "idsvm" else poker_ref.PENDING
    store = st._store if family == "idsvm" else st._append
    extra = ("p", "d", "a0") if family == "poker" else ()
    caps = []
    for i in range(40):
        assert store(np.full(3, 0.5 * i), 1.0 if i % 2 else -1.0) == i
        caps.append(st.y.shape[0])
        for name in ("alpha", "g") + extra:
            assert getattr(st, name)[i] == 0.0
        assert st.status[i] == code and st.y[i] == (1.0 if i % 2 else -1.0)
        assert np.all(st.status[i + 1:] == GONE) and np.all(st.alpha[i + 1:] == 0.0)
        assert st.KS.shape[0] == st.y.shape[0] == st.status.shape[0]
        for name in ("alpha", "g", "kdiag") + extra:
            assert getattr(st, name).shape == st.y.shape
    assert sorted(set(caps)) == [16, 32, 64]
    assert len(st.rows) == st.n == 40 and np.array_equal(st.rows[7], np.full(3, 3.5))
