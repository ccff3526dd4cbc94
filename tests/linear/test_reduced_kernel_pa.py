"""Reduced-kernel PA (RKPA, RKPAm): twins agree after every example, the map is an exact
factorisation on the reduced set, RKPA with Ã = all points is kernel PA with the kernel
+ 1, RKPAm with proximal weight 0 is RKPA, the online statistics are NumPy's, errors."""

import pickle

import numpy as np
import pytest

from refsvm.core.kernels import get_row
from refsvm.linear import _reduced_kernel_pa, reduced_kernel_pa
from refsvm.linear.estimators import ProximalReducedKernelPA, ReducedKernelPA

from ..conftest import BACKENDS, assert_states_equal, to_csr

MODULES = {"python": reduced_kernel_pa, "cython": _reduced_kernel_pa}

CASES = [
    ("ReducedKernelPAState", {"variant": 0}),
    ("ReducedKernelPAState", {"variant": 1, "C": 0.3}),
    ("ReducedKernelPAState", {"variant": 2, "C": 0.5, "kernel": "poly", "gamma": 0.5,
                              "coef0": 1.0, "degree": 2}),
    ("ReducedKernelPAmState", {"variant": 0, "proximal_weight": 0.05}),
    ("ReducedKernelPAmState", {"variant": 1, "C": 0.5, "proximal_weight": 0.1}),
    ("ReducedKernelPAmState", {"variant": 2, "C": 1.0, "proximal_weight": 0.2}),
    ("ReducedKernelPAmState", {"variant": 1, "C": 0.5, "proximal_weight": 0.1,
                               "covariance": "full"}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _xor(n=300, d=3, seed=0, density=1.0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    X[rng.rand(n, d) > density] = 0.0
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    flip = rng.rand(n) < 0.05
    y[flip] = -y[flip]
    return X, y


def _state(module, name, kw, X, sparse, m=15, eps=1e-6):
    kw = {"gamma": 1.5, **kw}
    reduced = to_csr(X[:m]) if sparse else X[:m].copy()
    return getattr(MODULES[module], name)(X.shape[1], sparse, reduced=reduced, eps=eps, **kw)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_twins_agree_after_every_example(name, kw, sparse):
    X, y = _xor(n=200, density=0.7)
    M = to_csr(X) if sparse else X
    ref, twin = (_state(b, name, kw, X, sparse) for b in ("python", "cython"))
    for t, i in enumerate(np.random.RandomState(1).permutation(X.shape[0])):
        changed = ref.step(get_row(M, i), y[i])
        assert twin.step(get_row(M, i), y[i]) == changed, f"step {t}"
        assert_states_equal(ref.get_state(), twin.get_state(), rtol=1e-9, atol=1e-10,
                            where=f"{name} step {t}")
    assert 0 < ref.n_updates < 200
    np.testing.assert_allclose(twin.decision_function(M), ref.decision_function(M),
                               rtol=1e-9, atol=1e-9)
    assert twin.n_kernel_evals == ref.n_kernel_evals == 15 * 16 // 2 + 200 * 15


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_blocked_run_equals_the_stream_of_steps_dense_and_csr(name, kw):
    X, y = _xor(n=700, density=0.8, seed=2)  # more rows than a block
    order = np.random.RandomState(3).permutation(X.shape[0])
    stepped = _state("cython", name, kw, X, False)
    n_changed = sum(stepped.step(X[i], y[i]) for i in order)
    dense = _state("cython", name, kw, X, False)
    assert dense.run(X, y, order) == n_changed
    csr = _state("cython", name, kw, X, True)
    csr.run(to_csr(X), y, order)
    ref = _state("python", name, kw, X, True)
    ref.run(to_csr(X), y, order)
    # bit for bit: every row is computed as step computes it, screened or not, and
    # however the stream is cut into calls
    for key, value in stepped.get_state().items():
        np.testing.assert_array_equal(dense.get_state()[key], value, err_msg=key)
    cut = _state("cython", name, kw, X, False)
    for part in np.array_split(order, [1, 5, 300, 301, 650]):
        cut.run(X, y, part)
    for key, value in stepped.get_state().items():
        np.testing.assert_array_equal(cut.get_state()[key], value, err_msg=key)
    assert_states_equal(dense.get_state(), csr.get_state(), rtol=1e-9, atol=1e-10)
    assert_states_equal(ref.get_state(), csr.get_state(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("d", [9, 30])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_blocked_products_of_wider_rows_equal_the_stream_of_steps(name, kw, d):
    """Dense rows of more than 8 features: ``run`` takes the cross products of a block's
    kernel rows four rows at a time, and φ of a whole block at once while the screen is
    off (here: a noisy stream, most rows update); every row keeps the bits ``step``
    gives it (m̃ = 37: full tiles, a 4-wide one and a single column)."""
    X, y = _xor(n=700, d=d, seed=5)
    y[np.random.RandomState(6).rand(700) < 0.2] *= -1
    kw = {**kw, "gamma": 1.0 / d}
    order = np.random.RandomState(7).permutation(700)
    stepped = _state("cython", name, kw, X, False, m=37)
    n_changed = sum(stepped.step(X[i], y[i]) for i in order)
    run = _state("cython", name, kw, X, False, m=37)
    assert run.run(X, y, order) == n_changed
    assert n_changed > 0.3 * 700  # the screen was off for most blocks
    cut = _state("cython", name, kw, X, False, m=37)
    for part in np.array_split(order, [3, 70, 71, 400]):
        cut.run(X, y, part)
    for key, value in stepped.get_state().items():
        np.testing.assert_array_equal(run.get_state()[key], value, err_msg=key)
        np.testing.assert_array_equal(cut.get_state()[key], value, err_msg=key)
    assert run.n_kernel_evals == stepped.n_kernel_evals == 37 * 38 // 2 + 700 * 37


@pytest.fixture
def vector_levels():
    """The levels of the twin's C bodies this CPU runs from v3 on (refsvm_rkpa.h); the cap
    is put back to its default (2) after the test."""
    hook = _reduced_kernel_pa._simd_level
    levels = []
    for level in (1, 2):
        hook(level)
        if hook() == level:
            levels.append(level)
    yield levels
    hook(2)


@pytest.mark.parametrize("name,kw", CASES[:3] + CASES[-1:], ids=IDS[:3] + IDS[-1:])
def test_the_vector_levels_give_the_same_bits(name, kw, vector_levels):
    """From x86-64-v3 on each level's bodies (v4: eight entries per instruction in exp,
    the matvec and the blocked products) give every entry the same operations: the whole
    state after a stream -- ``step`` and the blocked ``run``, dense and CSR, m̃ across
    every tile and tail of the bodies -- is the same bit for bit."""
    if len(vector_levels) < 2:
        pytest.skip("the CPU has no x86-64-v4: one level to compare")
    hook = _reduced_kernel_pa._simd_level
    rng = np.random.RandomState(3)
    for m, d in [(1, 12), (3, 2), (7, 9), (13, 30), (33, 9), (37, 12), (64, 30), (97, 9),
                 (100, 21), (130, 60)]:
        X = rng.uniform(-1, 1, size=(max(400, 2 * m), d))
        y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.randn(X.shape[0]) > 0, 1.0, -1.0)
        order = rng.permutation(X.shape[0])
        kw_m = {**kw, "gamma": 1.0 / d}
        for sparse in (False, True):
            M = to_csr(X) if sparse else X
            states = []
            for level in vector_levels:
                hook(level)
                run = _state("cython", name, kw_m, X, sparse, m=m)
                run.run(M, y, order)
                stepped = _state("cython", name, kw_m, X, sparse, m=m)
                for i in order[:50]:
                    stepped.step(get_row(M, i), y[i])
                states.append((run.get_state(), stepped.get_state()))
            for before, after in zip(states[0], states[1]):
                for key, value in before.items():
                    np.testing.assert_array_equal(after[key], value,
                                                  err_msg=f"m={m} d={d} {key}")
    hook(vector_levels[0])
    x = np.linspace(-750.0, 712.0, 263)
    low = _reduced_kernel_pa._exp(x)
    hook(vector_levels[-1])
    np.testing.assert_array_equal(_reduced_kernel_pa._exp(x), low)


@pytest.mark.parametrize("backend", BACKENDS)
def test_feature_map_is_an_exact_factorisation_on_the_reduced_set(backend):
    X, _ = _xor(n=25, d=4, seed=4)
    for eps in (0.0, 1e-3, 0.5):
        state = _state(backend, "ReducedKernelPAState", {}, X, False, m=25, eps=eps)
        fmap = state.feature_map
        Phi = fmap.transform_rows(X)
        K = np.exp(-1.5 * ((X[:, None] - X) ** 2).sum(-1))
        np.testing.assert_allclose(fmap.reduced_gram, K, rtol=1e-13, atol=1e-14)
        # Φ(Ã) Φ(Ã)ᵀ = K K̃⁻¹ K = K − εI + ε² K̃⁻¹ (= K(Ã, Ã) exactly when ε = 0)
        Kt = K + eps * np.eye(25)
        expected = K - eps * np.eye(25) + eps**2 * np.linalg.inv(Kt)
        np.testing.assert_allclose(Phi @ Phi.T, expected, atol=1e-8)
        # and φ = K̃^{-1/2} K(Ã, x): the symmetric inverse square root up to the rotation Pᵀ
        np.testing.assert_allclose(fmap.P @ Phi.T @ Phi @ fmap.P.T if False else
                                   fmap.transform.T @ fmap.transform, np.linalg.inv(Kt),
                                   rtol=1e-6, atol=1e-8)
    assert state.n_kernel_evals == 25 * 26 // 2  # prediction is not counted


def _kernel_pa_plus_one(X, y, order, variant, C, gamma):
    """Brute-force kernel PA with k'(x, z) = k(x, z) + 1 (the regularised bias), bias-free."""
    K = np.exp(-gamma * ((X[:, None] - X) ** 2).sum(-1)) + 1.0
    coef = np.zeros(X.shape[0])
    for i in order:
        loss = max(0.0, 1.0 - y[i] * (coef @ K[:, i]))
        if loss > 0:
            sq = K[i, i]
            tau = (loss / sq if variant == 0 else min(C, loss / sq) if variant == 1
                   else loss / (sq + 0.5 / C))
            coef[i] += tau * y[i]
    return coef


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_all_points_reduced_and_eps_zero_is_kernel_pa_with_kernel_plus_one(backend, variant):
    X, y = _xor(n=40, d=2, seed=5)
    gamma, C = 2.0, 0.8
    order = np.random.RandomState(6).permutation(40)
    state = getattr(MODULES[backend], "ReducedKernelPAState")(
        2, False, reduced=X, variant=variant, C=C, gamma=gamma, eps=0.0)
    state.run(X, y, order)
    coef = _kernel_pa_plus_one(X, y, order, variant, C, gamma)
    Xtest = np.random.RandomState(7).uniform(-1, 1, size=(50, 2))
    for Z in (X, Xtest):
        Kz = np.exp(-gamma * ((X[:, None] - Z) ** 2).sum(-1)) + 1.0
        np.testing.assert_allclose(state.decision_function(Z), coef @ Kz, rtol=1e-6,
                                   atol=1e-6)
    np.testing.assert_allclose(state.b, coef.sum(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_proximal_weight_zero_is_rkpa(backend, variant):
    X, y = _xor(n=300, seed=8)
    rkpa = _state(backend, "ReducedKernelPAState", {"variant": variant}, X, False)
    rkpam = _state(backend, "ReducedKernelPAmState", {"variant": variant,
                                                      "proximal_weight": 0.0}, X, False)
    order = np.arange(300)
    assert rkpa.run(X, y, order) == rkpam.run(X, y, order)
    np.testing.assert_array_equal(rkpam.get_state()["z"], rkpa.get_state()["z"])
    assert rkpam.b == rkpa.b


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_online_class_statistics_of_the_kernel_rows_are_numpys(backend, covariance):
    X, y = _xor(n=150, seed=9)
    state = _state(backend, "ReducedKernelPAmState", {"covariance": covariance}, X, False)
    state.run(X, y, np.arange(150))
    s = state.get_state()
    Kr = np.exp(-1.5 * ((X[:, None] - X[:15]) ** 2).sum(-1))  # K(A, Ã), rows = examples
    P, N = Kr[y > 0], Kr[y < 0]
    assert (s["n_pos"], s["n_neg"]) == (P.shape[0], N.shape[0])
    np.testing.assert_allclose(s["sum_pos"] / s["n_pos"], P.mean(0), rtol=1e-12)
    np.testing.assert_allclose(s["sum_neg"] / s["n_neg"], N.mean(0), rtol=1e-12)
    n = s["n_pos"]
    var = s["sumsq_pos"] / (n - 1) - n / (n - 1) * (s["sum_pos"] / n) ** 2
    np.testing.assert_allclose(var, P.var(0, ddof=1), rtol=1e-8, atol=1e-12)
    # the proximal model: ũ_p from these statistics, z_p = Λ^{1/2} Pᵀ ũ_p
    z_p, b_p = state.pa.proximal()
    if covariance == "full":
        n_neg = s["n_neg"]
        cov = s["scatter_pos"] / (n - 1) + s["scatter_neg"] / (n_neg - 1)
        np.testing.assert_allclose(cov, np.cov(P.T) + np.cov(N.T), rtol=1e-9, atol=1e-12)
        # the factored matrix: each class's covariance with the normaliser of the last
        # refresh (c − 1 ≤ n − 1 ≤ refresh_growth (c − 1)), + μI
        c_pos, c_neg, mu = s["chol_n_pos"], s["chol_n_neg"], s["chol_mu"]
        growth = state.departures["refresh_growth"]
        assert 2 <= c_pos <= n <= 1 + growth * (c_pos - 1)
        assert 2 <= c_neg <= n_neg <= 1 + growth * (c_neg - 1)
        shrunk = (np.cov(P.T) * (n - 1) / (c_pos - 1) + np.cov(N.T) * (n_neg - 1) / (c_neg - 1)
                  + mu * np.eye(cov.shape[0]))
        np.testing.assert_allclose(s["chol"] @ s["chol"].T, shrunk, rtol=1e-9, atol=1e-12)
        u_p = np.linalg.solve(shrunk, P.mean(0) - N.mean(0))
    else:  # the quasi-KFD, with the ridge of the departure shrinkage (issue 42)
        pooled = P.var(0, ddof=1) + N.var(0, ddof=1)
        u_p = (P.mean(0) - N.mean(0)) / (pooled + state.departures["shrinkage"] * pooled.mean())
    fmap = state.feature_map
    # z_pᵀφ(x) = ũ_pᵀK(Ã, x) for any x
    np.testing.assert_allclose(fmap.transform_rows(X) @ z_p, Kr @ u_p, rtol=1e-5, atol=1e-6)
    assert b_p == pytest.approx(-0.5 * u_p @ (P.mean(0) + N.mean(0)), rel=1e-5)


@pytest.mark.parametrize("growth", [1.1, 1.0], ids=["refreshes", "every-example"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_full_covariance_factor_after_every_example(backend, growth):
    """With ``covariance="full"`` the kept Cholesky factor L is exact after every example
    (LLᵀ = S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI, rank-one updates in between); it is
    refreshed exactly when ``needs_refresh`` says, and then S̃ is the slides' COV₊ + COV₋
    (NumPy's) + μI with μ = shrinkage times the mean variance; in between each class's
    covariance enters between 1 and refresh_growth times NumPy's.  The departure
    ``refresh_growth`` = 1 refreshes at every example (the per-example reading)."""
    X, y = _xor(n=160, seed=17)
    state = _state(backend, "ReducedKernelPAmState", {"covariance": "full",
                                                      "proximal_weight": 0.1,
                                                      "departures": {"refresh_growth": growth}},
                   X, False)
    assert state.departures["refresh_growth"] == growth
    Kr = np.exp(-1.5 * ((X[:, None] - X[:15]) ** 2).sum(-1))
    refreshes, c, rounds = 0, (0, 0), 0
    for t in range(160):
        state.step(X[t], y[t])
        s = state.get_state()
        P, N = Kr[:t + 1][y[:t + 1] > 0], Kr[:t + 1][y[:t + 1] < 0]
        if min(len(P), len(N)) < 2:
            assert s["chol_n_pos"] == s["chol_n_neg"] == 0 and not s["chol"].any()
            continue
        rounds += 1
        expected = reduced_kernel_pa.needs_refresh(len(P), len(N), *c, growth)
        c = (s["chol_n_pos"], s["chol_n_neg"])
        assert (c == (len(P), len(N))) if expected else c[0] < len(P) or c[1] < len(N), t
        refreshes += expected
        cov_p, cov_n = np.cov(P.T), np.cov(N.T)
        if expected:  # the previous reading exactly
            mu = state.departures["shrinkage"] * np.trace(cov_p + cov_n) / 15
            assert s["chol_mu"] == pytest.approx(mu, rel=1e-12)
        for cls, cov, count in ((0, cov_p, len(P)), (1, cov_n, len(N))):
            assert 1.0 <= (count - 1) / (c[cls] - 1) <= growth
        shrunk = (cov_p * (len(P) - 1) / (c[0] - 1) + cov_n * (len(N) - 1) / (c[1] - 1)
                  + s["chol_mu"] * np.eye(15))
        L = s["chol"]
        assert np.all(np.triu(L, 1) == 0) and np.all(np.diag(L) > 0)
        np.testing.assert_allclose(L @ L.T, shrunk, rtol=1e-10, atol=1e-12, err_msg=str(t))
        np.testing.assert_allclose(_ldl_product(s["ldl"]), shrunk, rtol=1e-10, atol=1e-12,
                                   err_msg=str(t))
        np.testing.assert_allclose(state.pa.shrunk_covariance(), shrunk, rtol=1e-10,
                                   atol=1e-12)
    if growth == 1.0:
        assert refreshes == rounds  # every example
    else:
        assert 10 < refreshes < 60 < rounds  # O(log n) per class, not one per example


def _ldl_product(LD):
    L = np.tril(LD, -1) + np.eye(LD.shape[0])
    return (L * np.diag(LD)) @ L.T


@pytest.mark.parametrize("m", [13, 4, 1, 10])
def test_ldl_rank_one_update_is_the_factor_of_the_updated_matrix(m):
    """The reference's statement of the update and the twin's C loop (``_ldl_update``),
    one x at a time, and the twin's batches equal to one x at a time bit for bit (every
    entry gets the same operations in the same order however the updates are batched)."""
    rng = np.random.RandomState(18 + m)
    A = rng.randn(m, m)
    S = A @ A.T + 0.1 * np.eye(m)
    L = np.linalg.cholesky(S)
    LD = np.tril(L / np.diag(L), -1) + np.diag(np.diag(L) ** 2)
    LDt, LDb = LD.copy(), LD.copy()
    xs = [rng.randn(m) * rng.choice([1e-6, 1.0, 1e3]) for _ in range(30)]
    alphas = rng.uniform(0.01, 2.0, size=30)
    for x, alpha in zip(xs, alphas):
        reduced_kernel_pa.ldl_rank_one_update(LD, x, alpha)
        LDt = _reduced_kernel_pa._ldl_update(LDt, x, alpha)
        S = S + alpha * np.outer(x, x)
        np.testing.assert_allclose(_ldl_product(LD), S, rtol=1e-10, atol=1e-12 * np.abs(S).max())
        np.testing.assert_allclose(LDt, LD, rtol=1e-9, atol=1e-12 * np.abs(LD).max())
        assert np.all(np.triu(LDt, 1) == 0) and np.all(np.diag(LDt) > 0)
    for cut in ([0, 30], [0, 1, 2, 7, 16, 17, 30], list(range(31))):
        batched = LDb.copy()
        for lo, hi in zip(cut[:-1], cut[1:]):
            batched = _reduced_kernel_pa._ldl_update(batched, np.array(xs[lo:hi]), alphas[lo:hi])
        np.testing.assert_array_equal(batched, LDt)
    with pytest.raises(ValueError, match="alpha > 0"):
        _reduced_kernel_pa._ldl_update(LDb, xs[0][:m], -1.0)


def test_deferred_full_covariance_terms_change_no_number():
    """The twin defers the scatter's and the factor's terms and applies them in batches
    (when the factor is needed, at a refresh, or when a buffer is full); reading the state
    applies them.  A run read after every example equals one never read, bit for bit,
    over more examples than a buffer holds between updates (an easy stream: long passive
    stretches)."""
    rng = np.random.RandomState(21)
    X = rng.uniform(-1, 1, size=(700, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    kw = {"covariance": "full", "proximal_weight": 0.05, "C": 1.0}
    read, unread = (_state("cython", "ReducedKernelPAmState", kw, X, False) for _ in range(2))
    longest, run = 0, 0
    for i in range(700):
        changed = read.step(X[i], y[i])
        run = 0 if changed else run + 1
        longest = max(longest, run)
        read.get_state()
    unread.run(X, y, np.arange(700))
    assert longest > 40  # more than FACTOR_PENDING and SCATTER_PENDING in a row
    for key, value in unread.get_state().items():
        np.testing.assert_array_equal(read.get_state()[key], value, err_msg=key)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_pickle_resumes_bit_for_bit_and_twins_share_the_format(name, kw, backend, sparse):
    X, y = _xor(n=200, seed=10, density=0.8)
    state = _state(backend, name, kw, X, sparse)
    X = to_csr(X) if sparse else X
    state.run(X, y, np.arange(100))
    back = pickle.loads(pickle.dumps(state))
    params = state.init_params()
    plain = (bool, int, float, str)
    assert all(isinstance(v, plain) for k, v in params.items() if k != "departures")
    assert all(isinstance(v, plain) for v in params["departures"].values())
    other = getattr(MODULES["python" if backend == "cython" else "cython"], name)(**params)
    with pytest.raises(ValueError, match="no reduced set"):
        other.step(X[0], 1.0)
    other.load_state(state.save_state())  # Ã travels with the data
    assert sorted(other.save_state()) == sorted(state.save_state())
    for s in (state, back, other):
        s.run(X, y, np.arange(100, 200))
    for key, value in state.get_state().items():
        np.testing.assert_array_equal(back.get_state()[key], value, err_msg=key)
    assert_states_equal(state.get_state(), other.get_state(), rtol=1e-9, atol=1e-10)


def test_full_covariance_state_saved_with_the_cholesky_factor_only_loads():
    """A state saved before the factor was kept as L D Lᵀ has ``chol`` and no ``ldl``: the
    twin derives L D Lᵀ from it and goes on as the run that was not interrupted (to
    round-off)."""
    X, y = _xor(n=300, seed=22)
    kw = {"covariance": "full", "proximal_weight": 0.1}
    whole = _state("cython", "ReducedKernelPAmState", kw, X, False)
    whole.run(X, y, np.arange(150))
    data = whole.save_state()
    assert data["linear_chol_n_pos"] > 0
    del data["linear_ldl"]
    resumed = _reduced_kernel_pa.ReducedKernelPAmState(**whole.init_params())
    resumed.load_state(data)
    np.testing.assert_allclose(resumed.get_state()["ldl"], whole.get_state()["ldl"],
                               rtol=1e-12, atol=1e-15)
    for s in (whole, resumed):
        s.run(X, y, np.arange(150, 300))
    assert_states_equal(whole.get_state(), resumed.get_state(), rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("Estimator", [ReducedKernelPA, ProximalReducedKernelPA])
def test_estimator_backends_agree_and_reduced_set_choice(Estimator):
    X, y = _xor(n=300, seed=11)
    cy = Estimator(n_reduced=20, gamma=1.5, random_state=0, backend="cython").fit(X, y)
    py = Estimator(n_reduced=20, gamma=1.5, random_state=0, backend="python").fit(X, y)
    np.testing.assert_array_equal(cy.reduced_indices_, py.reduced_indices_)
    np.testing.assert_array_equal(cy.reduced_set_, X[cy.reduced_indices_])
    assert not np.array_equal(cy.reduced_indices_, np.arange(20))  # a random subset
    np.testing.assert_allclose(cy.coef_, py.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(cy.decision_function(X), py.decision_function(X), rtol=1e-9,
                               atol=1e-9)
    assert cy.n_kernel_evals_ == py.n_kernel_evals_ == 20 * 21 // 2 + 300 * 20
    assert cy.coef_.shape == (1, 20) and cy.score(X, y) > 0.8
    # a stream: the first m̃ distinct examples of the first batch
    Xd = np.vstack([X[:1], X[:1], X[1:100]])
    yd = np.concatenate([y[:1], y[:1], y[1:100]])
    st = Estimator(n_reduced=20, gamma=1.5, backend="cython")
    st.partial_fit(Xd, yd, classes=[-1.0, 1.0])
    np.testing.assert_array_equal(st.reduced_indices_, [0] + list(range(2, 21)))
    np.testing.assert_array_equal(st.reduced_set_, X[:20])


def test_full_covariance_estimator_backends_agree_and_resume_from_a_pickle():
    X, y = _xor(n=400, seed=19)
    kw = dict(n_reduced=20, gamma=1.5, random_state=0, covariance="full",
              proximal_weight=0.05)
    cy = ProximalReducedKernelPA(backend="cython", **kw).fit(X, y)
    py = ProximalReducedKernelPA(backend="python", **kw).fit(X, y)
    np.testing.assert_allclose(cy.coef_, py.coef_, rtol=1e-9, atol=1e-10)
    assert cy.n_updates_ == py.n_updates_ > 0
    # a stream cut in two with a pickle in between equals one pass, bit for bit
    whole = ProximalReducedKernelPA(backend="cython", **kw)
    whole.partial_fit(X, y, classes=[-1.0, 1.0])
    half = ProximalReducedKernelPA(backend="cython", **kw)
    half.partial_fit(X[:150], y[:150], classes=[-1.0, 1.0])
    half = pickle.loads(pickle.dumps(half))
    half.partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(half.coef_, whole.coef_)


def test_bad_parameters_and_singular_reduced_sets():
    X, y = _xor(n=30, seed=12)
    # more reduced points than examples: all of them, with a warning (as Nystroem)
    with pytest.warns(UserWarning, match="n_reduced=31 is larger than the 30 examples"):
        clf = ReducedKernelPA(n_reduced=31, random_state=0).fit(X, y)
    assert clf.reduced_set_.shape[0] == 30
    np.testing.assert_array_equal(np.sort(clf.reduced_indices_), np.arange(30))
    with pytest.raises(ValueError, match="only 30 distinct examples"):  # a stream's start
        ReducedKernelPA(n_reduced=31).partial_fit(X, y, classes=[0, 1])
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n_reduced"):
            ReducedKernelPA(n_reduced=bad).fit(X, y)
    with pytest.raises(ValueError, match="eps"):
        ReducedKernelPA(n_reduced=5, eps=-1e-3).fit(X, y)
    with pytest.raises(ValueError, match="reduced_set"):
        ReducedKernelPA(n_reduced=5, reduced_set="kmeans").fit(X, y)
    with pytest.raises(ValueError, match="reduced_set has 2 features"):
        ReducedKernelPA(reduced_set=X[:5, :2]).fit(X, y)
    with pytest.raises(ValueError, match="proximal_weight"):
        ProximalReducedKernelPA(n_reduced=5, proximal_weight=-0.1).fit(X, y)
    dup = np.vstack([X[:4], X[:1]])
    for backend in BACKENDS:
        with pytest.raises(ValueError, match="singular"):
            ReducedKernelPA(reduced_set=dup, eps=0.0, backend=backend).fit(X, y)
        ReducedKernelPA(reduced_set=dup, eps=1e-6, backend=backend).fit(X, y)  # ε fixes it
        clf = ReducedKernelPA(n_reduced=10, backend=backend)
        with pytest.raises(ValueError, match="only 3 distinct examples"):
            clf.partial_fit(np.repeat(X[:3], 4, axis=0), np.repeat(y[:3], 4),
                            classes=[-1.0, 1.0])
        assert not hasattr(clf, "classes_")




# ----------------------------------------------------------------------- the twin's kernel block
@pytest.mark.parametrize("d", [2, 20], ids=["few-features", "wide"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kernel", [{"kernel": "rbf", "gamma": 0.3},
                                    {"kernel": "poly", "gamma": 0.5, "coef0": 1.0, "degree": 3},
                                    {"kernel": "linear"}], ids=["rbf", "poly", "linear"])
def test_twin_kernel_block_paths_agree_with_the_reference(d, sparse, kernel):
    """The twin computes K(Ã, x) itself (direct squared distances for few features, cross
    products by dgemm / per non-zero otherwise, a vectorised exp): the reference's values."""
    X, y = _xor(n=600, d=d, seed=13, density=0.6)
    M = to_csr(X) if sparse else X
    reduced = to_csr(X[:12]) if sparse else X[:12].copy()
    kw = dict(reduced=reduced, eps=1e-6, **kernel)
    ref = reduced_kernel_pa.ReducedKernelPAState(d, sparse, **kw)
    twin = _reduced_kernel_pa.ReducedKernelPAState(d, sparse, **kw)
    for i in (0, 5, 17, 599):
        np.testing.assert_allclose(twin.feature_map.kernel_row(get_row(M, i)),
                                   ref.feature_map.kernel_row(get_row(M, i)),
                                   rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(twin.feature_map.transform_rows(M),
                               ref.feature_map.transform_rows(M), rtol=1e-9, atol=1e-9)
    order = np.random.RandomState(14).permutation(600)
    assert twin.run(M, y, order) == ref.run(M, y, order)
    assert_states_equal(ref.get_state(), twin.get_state(), rtol=1e-9, atol=1e-10)


def test_twin_exp_is_libm_exp_to_rounding():
    """The twin's vectorised exp (the RBF block) on exponents from 0 to beyond underflow."""
    x = -np.concatenate([np.linspace(0.0, 50.0, 20001), np.linspace(50.0, 800.0, 3001),
                         np.random.RandomState(15).exponential(5.0, 5000)])
    got, want = _reduced_kernel_pa._exp(x), np.exp(x)
    normal = x >= -708.0
    np.testing.assert_allclose(got[normal], want[normal], rtol=4e-16, atol=0)
    assert np.all(got[~normal] == 0.0) and np.all(want[~normal] < 3.3e-308)


# ----------------------------------------------------------------------- the passive test
@pytest.mark.parametrize("name,kw", [("ReducedKernelPAState", {"variant": 0}),
                                     ("ReducedKernelPAmState", {"variant": 1,
                                                                "proximal_weight": 0.1}),
                                     ("ReducedKernelPAmState", {"variant": 1,
                                                                "proximal_weight": 0.1,
                                                                "covariance": "full"})])
def test_a_repeated_point_is_passive_in_both_twins(name, kw):
    """After an exact step on x the loss on x is 0 in exact arithmetic and ±1e-16 in floating
    point; the scale-aware test calls it passive in both twins (RKPAm would otherwise add
    γ z_p on one side only)."""
    X = np.array([[1.0, -1.0], [-1.0, -1.0], [-1.0, 0.0], [-1.0, 1.0], [-1.0, 1.0]])
    y = -np.ones(5)
    states = [getattr(MODULES[b], name)(2, False, reduced=X[:2], gamma=0.5, eps=1e-8, **kw)
              for b in BACKENDS]
    for t in range(5):
        changed = [s.step(X[t], y[t]) for s in states]
        assert changed[0] == changed[1], f"step {t}"
        assert_states_equal(states[0].get_state(), states[1].get_state(), rtol=1e-9,
                            atol=1e-12, where=f"step {t}")
    assert changed == [0, 0]  # the repeated point
    f = states[0].decision_function(X[3:4])[0]
    assert abs(1.0 + f) < 1e-12  # its loss was zero up to round-off


def test_is_passive_is_relative_to_the_scale_of_the_terms():
    phi = np.array([1.0, 2.0])
    z = np.array([1e6, -0.5e6])  # zᵀφ = 0 from terms of size 1e6
    rtol = reduced_kernel_pa.DEPARTURES["passive_rtol"].default
    assert reduced_kernel_pa.is_passive(z, 1.0 - 1e-6, phi, 1.0, rtol)     # ℓ = 1e-6 < 1e-9·2e6
    assert not reduced_kernel_pa.is_passive(z, 1.0 - 1e-2, phi, 1.0, rtol)  # ℓ = 1e-2
    assert not reduced_kernel_pa.is_passive(np.zeros(2), 1.0 - 1e-8, phi, 1.0, rtol)
    assert reduced_kernel_pa.is_passive(np.zeros(2), 1.0 - 1e-10, phi, 1.0, rtol)
    assert reduced_kernel_pa.is_passive(np.zeros(2), 2.0, phi, 1.0, rtol)  # far outside
    # the paper's setting: the printed ℓ ≤ 0
    assert not reduced_kernel_pa.is_passive(np.zeros(2), 1.0 - 1e-10, phi, 1.0, 0.0)
    assert reduced_kernel_pa.is_passive(np.zeros(2), 1.0, phi, 1.0, 0.0)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_the_screen_only_saves_time(name, kw):
    """On an easy stream most rows are screened (passive from K(Ã, x) alone, no φ(x)):
    the result is the stream of steps bit for bit, and the reference's to rounding."""
    from refsvm.datasets import make_checkerboard

    X, y = make_checkerboard(1500, board=2, random_state=16)
    y = y.astype(float)
    order = np.concatenate([np.arange(1500)] * 2)  # the second pass: mostly passive
    kw = {**kw, "gamma": 2.0}
    run = _state("cython", name, kw, X, False, m=30, eps=1e-8)
    stepped = _state("cython", name, kw, X, False, m=30, eps=1e-8)
    ref = _state("python", name, kw, X, False, m=30, eps=1e-8)
    n_changed = run.run(X, y, order)
    assert n_changed == sum(stepped.step(X[i], y[i]) for i in order)
    assert n_changed < 0.3 * order.shape[0]  # the screen was on for most blocks
    for key, value in stepped.get_state().items():
        np.testing.assert_array_equal(run.get_state()[key], value, err_msg=key)
    ref.run(X, y, order)
    assert_states_equal(ref.get_state(), run.get_state(), rtol=1e-8, atol=1e-9)
