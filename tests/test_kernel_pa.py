"""Kernel PA / PA-I / PA-II (bias-free), reference vs compiled twin, and oracles."""

import pickle

import numpy as np
import pytest

from refsvm.kernel_pa import kernel_pa
from refsvm._validation import as_csr
from refsvm.datasets import make_checkerboard
from refsvm.core.kernels import get_row
from refsvm.linear.linear import PAState

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


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_twins_agree_after_every_example(sparse, variant):
    X, y = stream()
    XX = as_csr(X) if sparse else X
    a = kernel_pa.KernelPA(2, sparse, C=0.5, variant=variant, gamma=1.0)
    b = _kernel_pa.KernelPA(2, sparse, C=0.5, variant=variant, gamma=1.0)
    passive = 0
    for t in range(X.shape[0]):
        n_before = a.n_updates
        a.step(get_row(XX, t), y[t])
        b.step(get_row(XX, t), y[t])
        passive += a.n_updates == n_before
        compare(a.get_state(), b.get_state(), f"example {t}")
    assert passive > 0 and a.n_updates > 0
    np.testing.assert_allclose(a.decision_function(XX), b.decision_function(XX), rtol=1e-10,
                               atol=1e-12)


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
    """With the linear kernel, kernel PA is the bias-free linear PA of refsvm.linear."""
    rng = np.random.RandomState(1)
    X = rng.randn(120, 5)
    y = np.where(X @ rng.randn(5) + 0.5 * rng.randn(120) > 0, 1.0, -1.0)
    lin = PAState(5, False, variant=variant, C=0.7)
    for mod in TWINS:
        k = mod.KernelPA(5, False, C=0.7, variant=variant, kernel="linear")
        k.run(X, y, np.arange(120, dtype=np.intp))
        if mod is TWINS[0]:
            lin.run(X, y, np.arange(120, dtype=np.intp))
        np.testing.assert_allclose(k.decision_function(X), lin.decision_function(X),
                                   rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mod", TWINS, ids=["python", "cython"])
def test_pickle_and_run(mod):
    X, y = stream(80, 2)
    a = mod.KernelPA(2, False, C=1.0, variant=2, gamma=0.5)
    a.run(X, y, np.arange(80, dtype=np.intp))
    b = pickle.loads(pickle.dumps(a))
    compare(a.get_state(), b.get_state(), "pickle")
    for s in (a, b):
        s.run(X, -y, np.arange(10, dtype=np.intp))
    compare(a.get_state(), b.get_state(), "continued")
