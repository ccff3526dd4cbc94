"""The compiled holder of the exact families' per-example arrays (refsvm._core.Partition,
the counterpart of refsvm.core.optimum.PartitionArrays): growth as the reference's
``grow_array`` with the values kept, views that stay readable across growths (never freed
memory), assignment and copies; both exact twins hold their arrays in one and still agree
with their references."""

import gc
import pickle

import numpy as np
import pytest

from refsvm.core.active_set import GONE
from refsvm.core.bordered import grow_array

from ..conftest import assert_states_equal, to_csr

_core = pytest.importorskip("refsvm._core")
Partition = _core.Partition


def _fill(part, m, seed=0):
    """m new examples with random labels and codes; their values written through views;
    the reference's arrays (grow_array) beside them."""
    rng = np.random.RandomState(seed)
    ref = {name: np.zeros(0) for name in part.names[:-1]}
    ref["status"] = np.zeros(0, dtype=np.int8)
    for _ in range(m):
        yv, code = float(rng.choice([-1.0, 1.0])), int(rng.randint(0, 3))
        i = part.append(yv, code)
        assert i == part.n - 1
        n = part.n
        for name in ref:
            ref[name] = grow_array(ref[name], n, GONE if name == "status" else 0.0)
        ref["y"][i], ref["status"][i] = yv, code
        for name in part.names[1:-1]:
            v = rng.randn()
            part.view(name)[i] = v
            ref[name][i] = v
    return ref


def test_growth_keeps_values_as_grow_array():
    part = Partition(("p", "d", "a0"))
    assert part.names == ("y", "alpha", "g", "kdiag", "p", "d", "a0", "status")
    assert (part.n, part.cap) == (0, 0)
    ref = _fill(part, 100)
    assert part.n == 100
    for name, a in ref.items():
        v = part.view(name)
        assert v.shape == a.shape and v.dtype == a.dtype, name     # capacity: 128
        np.testing.assert_array_equal(v, a, err_msg=name)
    assert part.cap == 128 and np.all(part.view("status")[100:] == GONE)
    part.room(129)
    assert part.cap == 256
    part.room(1000)
    assert part.cap == 1000                      # max(need, 2 cap, 16)
    np.testing.assert_array_equal(part.view("alpha")[:100], ref["alpha"][:100])
    assert np.all(part.view("alpha")[100:] == 0.0)


def test_new_example_zeroes_alpha_g_and_the_family_arrays():
    part = Partition(("kroot",))
    part.room(4)
    for name in ("alpha", "g", "kroot", "kdiag"):
        part.view(name)[:] = 7.0                 # left-overs of an example rolled back
    part.append(-1.0, 3)
    assert part.view("y")[0] == -1.0 and part.view("status")[0] == 3
    assert part.view("alpha")[0] == part.view("g")[0] == part.view("kroot")[0] == 0.0
    assert part.view("kdiag")[0] == 7.0          # the family's to fill


def test_views_kept_across_growths_stay_readable():
    part = Partition()
    kept = []
    for i in range(3000):
        part.append(1.0, 0)
        view = part.view("alpha")
        view[i] = i
        if i % 7 == 0:
            kept.append((i, view))
    gc.collect()
    for i, view in kept:                         # the values of before each growth
        assert view.shape[0] >= i + 1
        np.testing.assert_array_equal(view[: i + 1], np.arange(i + 1.0))
    for i, view in kept:
        if i < 2048:                             # before the last growth: no longer the
            view[:] = -1.0                       # holder's buffer, still writable
    np.testing.assert_array_equal(part.view("alpha")[:3000], np.arange(3000.0))
    del part
    gc.collect()
    assert kept[0][1][0] == -1.0 and kept[-1][1][5] == 5.0   # views outlive the holder


def test_views_cannot_be_resized_or_retyped_under_the_holder():
    part = Partition()
    part.append(1.0, 0)
    v = part.view("y")
    with pytest.raises(ValueError):
        v.resize(10 ** 6)
    with pytest.raises(AttributeError):
        v.data = np.zeros(16).data
    v.shape = (2, 8)                             # its own shape: the holder's is unchanged
    assert part.view("y").shape == (16,) and part.view("y")[0] == 1.0
    with pytest.raises(KeyError):
        part.view("kroot")
    with pytest.raises(TypeError):
        pickle.dumps(part)


def test_assign_resizes_every_array_and_copy_is_independent():
    part = Partition(("kroot",))
    _fill(part, 20)
    part.assign("y", [1.0, -1.0, 1.0])
    assert part.cap == 3 and part.n == 20       # n is the family's count
    part.set_n(3)
    assert part.view("status").tolist() == part.view("status")[:3].tolist()
    part.assign("status", np.array([0, 1, GONE], dtype=np.int64))
    assert part.view("status").dtype == np.int8
    with pytest.raises(ValueError):
        part.assign("alpha", np.zeros((3, 1)))
    with pytest.raises(ValueError):
        Partition(("a", "b", "c", "d", "e"))
    with pytest.raises(ValueError):
        Partition(("alpha",))
    other = part.copy()
    assert other.names == part.names and (other.n, other.cap) == (3, 3)
    other.view("y")[0] = 5.0
    assert part.view("y")[0] == 1.0
    part.assign("y", np.zeros(0))
    assert part.cap == 0 and part.view("alpha").shape == (0,)


# ---------------------------------------------------------------- the twins on the holder
def _stream(n=70, seed=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    y = np.where(X[:, 0] + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
    X[rng.rand(n, 4) < 0.3] = 0.0
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
def test_idsvm_twin_on_the_holder_equals_its_reference(sparse):
    from refsvm.idsvm import incremental_svm as ref
    twin = pytest.importorskip("refsvm.idsvm._incremental_svm")
    X, y = _stream()
    Xs = to_csr(X) if sparse else X
    a = ref.IncrementalSVMState(4, sparse, C=10.0, kernel="rbf", gamma=0.5)
    b = twin.IncrementalSVMState(4, sparse, C=10.0, kernel="rbf", gamma=0.5)
    for st in (a, b):
        st.run(Xs, y, range(len(y)))             # 70 examples: the arrays grow 16 -> 128
    assert_states_equal(a.get_state(), b.get_state(), where="learned")
    for st in (a, b):
        st.unlearn([0, 5, 33])
    assert_states_equal(a.get_state(), b.get_state(), where="unlearned")
    c = pickle.loads(pickle.dumps(b))
    assert_states_equal(b.get_state(), c.get_state(), rtol=0, atol=0, where="pickled")


@pytest.mark.parametrize("sparse", [False, True])
def test_poker_twin_on_the_holder_equals_its_reference(sparse):
    from refsvm.poker import poker as ref
    twin = pytest.importorskip("refsvm.poker._poker")
    X, y = _stream()
    Xs = to_csr(X) if sparse else X
    a = ref.POKERState(4, sparse, C=10.0, gamma=0.5)
    b = twin.POKERState(4, sparse, C=10.0, gamma=0.5)
    assert b.y.base is not None and type(b.y.base).__name__ == "_Block"
    early = None
    for st in (a, b):
        st.add_chunk(Xs[:10], y[:10])
        if st is b:
            early = b.alpha                      # a view kept across the growths below
        for lo in range(10, 70, 12):
            st.add_chunk(Xs[lo:lo + 12], y[lo:lo + 12])
    assert early.shape[0] == 16 and b.alpha.shape[0] == a.alpha.shape[0] == 128
    assert np.all(np.isfinite(early))
    assert_states_equal(a.get_state(), b.get_state(), where="learned")
    for name in ("y", "alpha", "g", "kdiag", "status"):
        assert getattr(b, name).shape == getattr(a, name).shape, name
    trial = b._trial_copy()                      # the holder copied, not shared
    trial.alpha[:] = 0.0
    assert np.any(b.alpha != 0.0)
    for st in (a, b):
        st.unlearn([1, 20])
    assert_states_equal(a.get_state(), b.get_state(), where="unlearned")
    c = pickle.loads(pickle.dumps(b))
    assert_states_equal(b.get_state(), c.get_state(), rtol=0, atol=0, where="pickled")
    assert c.alpha.shape[0] == c.n               # loaded: capacity n, as the reference's
