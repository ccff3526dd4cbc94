"""Kernel PA / PA-I / PA-II (bias-free, or with the regularised bias of ``fit_intercept``:
the kernel k + 1), reference vs compiled twin, and oracles."""

import pickle

import numpy as np
import pytest

from refsvm.kernel_pa import kernel_pa
from refsvm.datasets import make_checkerboard
from refsvm.core.kernels import get_row
from refsvm.core.pa import pa_step

from ..conftest import to_csr

_kernel_pa = pytest.importorskip("refsvm.kernel_pa._kernel_pa")
TWINS = [kernel_pa, _kernel_pa]


def stream(n=150, seed=0):
    X, y = make_checkerboard(n, noise=0.1, random_state=seed)
    return np.ascontiguousarray(X), y.astype(np.float64)


def compare(sa, sb, where):
    for k in sa:
        if isinstance(sa[k], np.ndarray) and sa[k].dtype.kind == "f":
            np.testing.assert_allclose(sa[k], sb[k], rtol=1e-10, atol=1e-12, err_msg=where)
        elif isinstance(sa[k], np.ndarray):
            assert np.array_equal(sa[k], sb[k]), (where, k)
        elif isinstance(sa[k], float):
            assert sa[k] == pytest.approx(sb[k], rel=1e-10), (where, k)
        else:
            assert sa[k] == sb[k], (where, k)


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "fit_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_twins_agree_after_every_example(sparse, variant, bias):
    X, y = stream()
    XX = to_csr(X) if sparse else X
    a = kernel_pa.KernelPA(2, sparse, C=0.5, variant=variant, gamma=1.0, fit_intercept=bias)
    b = _kernel_pa.KernelPA(2, sparse, C=0.5, variant=variant, gamma=1.0, fit_intercept=bias)
    passive = 0
    for t in range(X.shape[0]):
        n_before = a.n_updates
        changed = a.step(get_row(XX, t), y[t])
        assert b.step(get_row(XX, t), y[t]) == changed == a.n_updates - n_before
        passive += changed == 0
        compare(a.get_state(), b.get_state(), f"example {t}")
    assert passive > 0 and a.n_updates > 0
    np.testing.assert_allclose(a.decision_function(XX), b.decision_function(XX), rtol=1e-10,
                               atol=1e-12)
    assert a.intercept() == pytest.approx(b.intercept(), rel=1e-10, abs=1e-12)
    assert (a.intercept() != 0.0) == bias


@pytest.mark.parametrize("mod", TWINS, ids=["python", "cython"])
def test_hand_computed_steps_and_counts(mod):
    """Linear kernel, 1-D, PA-I with C = 0.3.
    x=2,y=+1: f=0, l=1, k(x,x)=4 (1 eval), tau=min(.3, 1/4)=.25, c=.25.
    x=1,y=-1: f=.5 (1 eval), l=1.5, k=1 (1 eval), tau=min(.3, 1.5)=.3, c=-.3.
    x=4,y=+1: f=.25*8-.3*4=.8 (2 evals), l=.2, k=16 (1 eval), tau=.0125.
    x=10,y=+1: f=(.25*2-.3+.0125*4)*10=2.5 (3 evals), passive."""
    s = mod.KernelPA(1, False, C=0.3, variant=1, kernel="linear")
    for x, y in ((2.0, 1.0), (1.0, -1.0), (4.0, 1.0), (10.0, 1.0)):
        s.step(np.array([x]), y)
    st = s.get_state()
    np.testing.assert_allclose(st["coef"], [0.25, -0.3, 0.0125], rtol=1e-14)
    assert list(st["support"]) == [0, 1, 2]
    assert st["n_kernel_evals"] == 9 and st["n_updates"] == 3 and st["n_seen"] == 4
    assert st["n_mistakes"] == 2  # y f <= 0 at examples 0 (f = 0) and 1 (f = .5, y = -1)
    np.testing.assert_allclose(st["cumulative_loss"], 1 + 1.5 + 0.2)


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_linear_kernel_equals_linear_pa(variant):
    """With the linear kernel, kernel PA is the bias-free linear PA (primal w, written
    out here: w += tau y x with Crammer et al.'s step sizes)."""
    rng = np.random.RandomState(1)
    X = rng.randn(120, 5)
    y = np.where(X @ rng.randn(5) + 0.5 * rng.randn(120) > 0, 1.0, -1.0)
    w = np.zeros(5)
    n_updates = 0
    for x, yy in zip(X, y):
        loss = max(0.0, 1.0 - yy * (w @ x))
        if loss > 0.0:
            w += pa_step(variant, loss, x @ x, 0.7) * yy * x
            n_updates += 1
    for mod in TWINS:
        k = mod.KernelPA(5, False, C=0.7, variant=variant, kernel="linear")
        assert k.run(X, y, np.arange(120, dtype=np.intp)) == n_updates == k.n_updates
        np.testing.assert_allclose(k.decision_function(X), X @ w, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_fit_intercept_is_the_kernel_plus_one(variant, sparse):
    """fit_intercept=True uses the kernel k + 1: with the linear kernel that is the
    bias-free PA on the rows with a constant feature 1 appended, i.e. the linear PA with a
    bias updated like a weight (b += tau y, ||x||^2 + 1 in the step size)."""
    rng = np.random.RandomState(2)
    X = rng.randn(120, 4) + 1.5
    y = np.where(X @ rng.randn(4) + 0.5 * rng.randn(120) > 1.0, 1.0, -1.0)
    w, b = np.zeros(4), 0.0
    for x, yy in zip(X, y):
        loss = max(0.0, 1.0 - yy * (w @ x + b))
        if loss > 0.0:
            tau = pa_step(variant, loss, x @ x + 1.0, 0.7)
            w += tau * yy * x
            b += tau * yy
    XX = to_csr(X) if sparse else X
    for mod in TWINS:
        k = mod.KernelPA(4, sparse, C=0.7, variant=variant, kernel="linear", fit_intercept=True)
        k.run(XX, y, np.arange(120, dtype=np.intp))
        assert k.intercept() == pytest.approx(b, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(k.decision_function(XX), X @ w + b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "fit_intercept"])
@pytest.mark.parametrize("C", [1.0, 1e6, 1e12])
def test_near_duplicates_and_large_C_take_one_step_per_example(C, bias):
    """Issue 15 item 4: PA takes at most one step per example whatever C, also on
    opposite-label near-duplicates (rows within round-off); the model stays finite and the
    twins agree."""
    X, y = stream(60, 4)
    X = np.repeat(X, 2, axis=0)
    X[1::2] *= 1.0 + 1e-15
    y = np.repeat(y, 2)
    y[1::2] *= -1.0
    a = kernel_pa.KernelPA(2, False, C=C, variant=1, gamma=1.0, fit_intercept=bias)
    b = _kernel_pa.KernelPA(2, False, C=C, variant=1, gamma=1.0, fit_intercept=bias)
    for t in range(X.shape[0]):
        assert a.step(X[t], y[t]) == b.step(X[t], y[t])
        compare(a.get_state(), b.get_state(), f"example {t}")
    assert a.n_updates <= X.shape[0]
    assert np.all(np.isfinite(a.decision_function(X)))


def test_variant_names_both_spellings():
    for mod in TWINS:
        assert mod.KernelPA(2, variant="PA-1").variant == mod.KernelPA(2, variant="PA-I").variant == 1
        assert mod.KernelPA(2, variant="PA-2").variant == mod.KernelPA(2, variant="PA-II").variant == 2
        with pytest.raises(ValueError, match="variant"):
            mod.KernelPA(2, variant="PA-III")


def _bitwise(sa, sb, where):
    assert sa.keys() == sb.keys()
    for key in sa:
        assert np.array_equal(np.asarray(sa[key]), np.asarray(sb[key])), (where, key)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("mod", TWINS, ids=["python", "cython"])
def test_pickle_mid_stream_then_continue_is_bit_for_bit(mod, sparse):
    X, y = stream(120, 2)
    XX = to_csr(X) if sparse else X
    whole = mod.KernelPA(2, sparse, C=1.0, variant=2, gamma=0.5, fit_intercept=sparse)
    whole.run(XX, y, np.arange(120, dtype=np.intp))
    a = mod.KernelPA(2, sparse, C=1.0, variant=2, gamma=0.5, fit_intercept=sparse)
    a.run(XX, y, np.arange(70, dtype=np.intp))
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is type(a)
    _bitwise(a.save_state(), b.save_state(), "pickled")
    b.run(XX, y, np.arange(70, 120, dtype=np.intp))
    _bitwise(whole.save_state(), b.save_state(), "continued")
    np.testing.assert_array_equal(whole.decision_function(XX), b.decision_function(XX))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("src,dst", [(0, 1), (1, 0)], ids=["python->cython", "cython->python"])
def test_state_saved_by_one_twin_loads_into_the_other(src, dst, sparse):
    """One persistence format: save_state of either twin restores the other, which then
    continues exactly as the twin that never stopped."""
    X, y = stream(120, 3)
    XX = to_csr(X) if sparse else X
    a = TWINS[src].KernelPA(2, sparse, C=0.5, variant=1, gamma=0.5, fit_intercept=not sparse)
    a.run(XX, y, np.arange(60, dtype=np.intp))
    params = a.init_params()
    b = TWINS[dst].KernelPA(**params)
    b.load_state(a.save_state())
    assert b.init_params() == params
    _bitwise(a.save_state(), b.save_state(), "loaded")
    for t in range(60, 120):
        assert a.step(get_row(XX, t), y[t]) == b.step(get_row(XX, t), y[t])
        compare(a.get_state(), b.get_state(), f"example {t}")


@pytest.mark.parametrize("r", [1e-5, 1e-4, 1e-3, 1e-2])
@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "fit_intercept"])
@pytest.mark.parametrize("C", [1e6, 1e12])
def test_close_pairs_take_one_step_per_example(r, C, bias):
    """Issue 15 item 4 at the ramp's nearly singular distances (1e-5 ... 1e-2 apart, opposite
    labels): PA takes at most one step per example whatever C, the model stays finite and the
    twins agree after every example."""
    X, y = stream(40, 4)
    X = np.repeat(X, 2, axis=0)
    X[1::2] += r * np.array([0.6, 0.8])
    y = np.repeat(y, 2)
    y[1::2] *= -1.0
    a = kernel_pa.KernelPA(2, False, C=C, variant=1, gamma=1.0, fit_intercept=bias)
    b = _kernel_pa.KernelPA(2, False, C=C, variant=1, gamma=1.0, fit_intercept=bias)
    for t in range(X.shape[0]):
        assert a.step(X[t], y[t]) == b.step(X[t], y[t]) in (0, 1)
        compare(a.get_state(), b.get_state(), f"example {t}")
    assert a.n_updates <= X.shape[0]
    assert np.all(np.isfinite(a.decision_function(X)))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_estimator_n_mistakes_is_the_prequential_count(backend, fit_intercept):
    from refsvm import KernelPassiveAggressive
    from refsvm.evaluate import progressive_validation

    X, y = make_checkerboard(150, random_state=3)
    make = lambda: KernelPassiveAggressive(gamma=2.0, fit_intercept=fit_intercept,  # noqa: E731
                                           backend=backend)
    want = int(progressive_validation(make(), X, y, block=1).sum())
    clf = make().partial_fit(X[:70], y[:70], classes=np.unique(y)).partial_fit(X[70:], y[70:])
    assert 10 < clf.n_mistakes_ == want
