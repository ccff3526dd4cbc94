"""IDSVM never cycles and never silently loses exactness (issue 15, item 3).

The noisy streams of the issue (2-D points uniform in [-2, 2]^2, a third positive at
random; C = 10, gamma = 0.5 and C = 1, gamma = 1) made both twins cycle (7 of 8 seeds) or,
before that, drift silently (g off by 3e-7 after 300 examples of seed 12, by 3e5 after
150 examples at C = 1e12): with ~100 margin vectors in two dimensions the bordered matrix
has a condition number ~1e11, beta = -R m from the rank-one-updated inverse had residuals
~1e-7 and the rates computed from it flipped sign between passes.  The safeguards
(docs/cauwenberghs_poggio.rst, "Safeguards"): beta refined against M itself (1), g never
reset to 0 at a membership change (2), the KKT conditions checked after every operation,
repaired, or the operation rolled back (3); tie windows and tolerances relative to
alpha_max and k_max, not to C.

The default (CI) run keeps short streams that failed before the safeguards (a few
seconds); the long runs (every seed of both settings to 2,000 examples against SVC, the
full stream at every C, the twins step by step where the issue's stream cycled) are
marked ``slow`` (``pytest --runslow``).
"""

import numpy as np
import pytest
from sklearn.utils.validation import check_is_fitted

from refsvm import IncrementalSVM
from refsvm.idsvm import incremental_svm as idsvm
from refsvm.idsvm.incremental_svm import ExactnessError

from ..conftest import BACKENDS, assert_states_equal
from .test_oracle import assert_matches_svc, gram, make_state

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")

#: the exactness check's level (the departure ``kkt_tol`` at its default)
KKT_TOL = idsvm.DEPARTURES["kkt_tol"].default

slow = pytest.mark.slow


def _noisy_stream(n=2000, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, 2))
    y = np.where(rng.rand(n) < 0.33, 1.0, -1.0)
    return X, y


def _kkt(st, X, y, gamma):
    """(largest KKT violation, |sum y alpha|, largest |g kept - g recomputed|, alpha_max),
    recomputed from scratch with scikit-learn's kernel."""
    s = st.get_state()
    n = s["n_seen"]
    a, C = s["alpha"], st.C
    K = gram(X[:n], X[:n], "rbf", gamma=gamma)
    g = y[:n] * (K @ (a * y[:n]) + s["b"]) - 1.0
    viol = np.where(a <= 0, np.maximum(-g, 0), np.where(a >= C, np.maximum(g, 0), np.abs(g)))
    return float(viol.max()), abs(float(a @ y[:n])), float(np.max(np.abs(g - s["g"]))), a.max()


def assert_exact(st, X, y, gamma, where=""):
    """The stated tolerance (docs): KKT violation <= EPS_KKT (1 + k_max alpha_max), |h| <=
    EPS_KKT alpha_max (alpha_max: the largest alpha; k_max = 1 for the RBF kernel), and
    the kept g is the true one to the same tolerance."""
    viol, h, drift, amax = _kkt(st, X, y, gamma)
    gscale = 1.0 + amax
    assert viol <= KKT_TOL * gscale, f"{where}: KKT violated by {viol}"
    assert h <= KKT_TOL * max(amax, 1e-300), f"{where}: h = {h}"
    assert drift <= KKT_TOL * gscale, f"{where}: g drift {drift}"


def _run(backend, X, y, C, gamma, **kw):
    st = make_state(backend, 2, C, "rbf", gamma=gamma, **kw)
    st.run(np.ascontiguousarray(X), y, np.arange(len(y)))
    return st


# ---------------------------------------------------------------------- the issue's streams
@pytest.mark.parametrize("C,gamma,seed,n", [(10.0, 0.5, 12, 300), (1.0, 1.0, 3, 300)])
def test_noisy_stream_stays_exact(C, gamma, seed, n):
    """Short noisy streams: before the safeguards seed 12 (C = 10) ended with g off by
    3.2e-7 and a KKT violation as large (3e4 times the tolerance); now exact, = SVC."""
    X, y = _noisy_stream(n, seed)
    st = _run("cython", X, y, C, gamma)
    assert st.n_rollbacks == 0
    assert_exact(st, X, y, gamma)
    assert_matches_svc(st, X, y, "rbf", {"gamma": gamma})


@slow
def test_issue_stream_finishes_exact():
    """The issue's stream (seed 0, C = 10, gamma = 0.5): cycled at example 877, then at
    914; now all 2,000 examples, exact after the last one."""
    X, y = _noisy_stream()
    st = _run("cython", X, y, 10.0, 0.5)
    assert st.get_state()["n_seen"] == 2000 and st.n_rollbacks == 0
    assert_exact(st, X, y, 0.5)


@slow
@pytest.mark.parametrize("C,gamma", [(10.0, 0.5), (1.0, 1.0)])
@pytest.mark.parametrize("seed", range(8))
def test_every_seed_finishes_and_equals_svc(seed, C, gamma):
    """The issue's protocol (500 examples, then 1,500 in a second call), every seed."""
    X, y = _noisy_stream(2000, seed)
    est = IncrementalSVM(C=C, gamma=gamma).partial_fit(X[:500], y[:500], classes=[-1, 1])
    est.partial_fit(X[500:], y[500:])
    st = est._states[0]
    assert st.get_state()["n_seen"] == 2000 and st.n_rollbacks == 0
    assert_exact(st, X, y, gamma, where=f"seed {seed}")
    assert_matches_svc(st, X, y, "rbf", {"gamma": gamma}, where=f"seed {seed}")


def _continue_both(X, y, C, gamma, start, stop):
    """The compiled twin up to ``start``; from its state the reference too; both step to
    ``stop``, equal after every step.  Returns the two states."""
    twin = _run("cython", X[:start], y[:start], C, gamma)
    ref = idsvm.IncrementalSVMState(**twin.init_params())
    ref.load_state(twin.save_state())
    for i in range(start, stop):
        twin.step(X[i], y[i])
        ref.step(X[i], y[i])
        assert_states_equal(ref.get_state(), twin.get_state(), rtol=1e-10,
                            atol=1e-12 * max(1.0, C), where=f"example {i}")
    return ref, twin


@slow
def test_twins_agree_where_the_issue_stream_cycled():
    """Examples 905-916 of the issue's stream (the cycle at 914: two error vectors joining
    and leaving S by zero steps while |S| ~ 85), in both twins."""
    X, y = _noisy_stream()
    ref, twin = _continue_both(X, y, 10.0, 0.5, 905, 917)
    assert_exact(twin, X, y, 0.5)


@slow
def test_twins_agree_through_repairs_and_exchanges():
    """Seed 5, examples 1363-1379: degenerate exchanges (1373, 1378) and KKT repairs
    (safeguard 3: 1365, 1378, 1379) in both twins, step by step.  (The window moved from
    1334-1340 when R stopped being recomputed at every 100th change of S regardless of
    its drift: the path changed after 1334.)"""
    X, y = _noisy_stream(seed=5)
    twin0 = _run("cython", X[:1363], y[:1363], 10.0, 0.5)
    repairs, exchanges = twin0.n_repairs, twin0.n_exchanges
    ref, twin = _continue_both(X, y, 10.0, 0.5, 1363, 1380)
    assert twin.n_repairs > repairs and twin.n_exchanges > exchanges
    assert_exact(ref, X, y, 0.5)


# ---------------------------------------------------------------------- kinds of streams
@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicates_and_opposite_labels(backend):
    """Every example twice, a quarter of them a third time with the other label (C = 10)."""
    m = 24 if backend == "python" else 80
    X, y = _noisy_stream(m, 11)
    rng = np.random.RandomState(1)
    flip = rng.choice(m, m // 4, replace=False)
    X = np.vstack([X, X, X[flip]])
    y = np.concatenate([y, y, -y[flip]])
    order = rng.permutation(len(y))
    X, y = X[order], y[order]
    st = _run(backend, X, y, 10.0, 0.5)
    assert_exact(st, X, y, 0.5)
    # (LIBSVM keeps its kernel cache in single precision: with many error vectors at
    # C = 10 its bias is off by up to ~1e-5; ours is exact by the check above, and the
    # helper asserts that SVC's dual objective is no better than ours)
    assert_matches_svc(st, X, y, "rbf", {"gamma": 0.5}, bias_atol=1e-4)


@pytest.mark.parametrize("C", [1e-3, 1e12])
@pytest.mark.parametrize("backend", BACKENDS)
def test_extreme_c_noisy(backend, C):
    """At C = 1e12 every alpha of the noisy stream is ~C: the tolerances follow alpha_max
    (the size of the terms of y f), and hold relative to it (before: g off by 3.5e5 =
    3.5e-7 of its terms after 150 examples, 350 times the tolerance)."""
    X, y = _noisy_stream(60 if backend == "python" else 150, 0)
    st = _run(backend, X, y, C, 0.5)
    assert_exact(st, X, y, 0.5)


def _assert_twins_close(ref, twin, where):
    """Twins agree to rtol 1e-9 with an absolute floor relative to each array's
    magnitude (at C = 1e12 alpha and b are of order C)."""
    a, b = ref.get_state(), twin.get_state()
    for key in ("alpha", "g", "b", "status", "S_order", "Rinv"):
        u, v = np.asarray(a[key]), np.asarray(b[key])
        if u.dtype.kind in "iub":
            np.testing.assert_array_equal(u, v, err_msg=f"{where}: {key}")
        else:
            scale = float(np.max(np.abs(u))) if u.size else 1.0
            np.testing.assert_allclose(v, u, rtol=1e-9, atol=1e-12 * max(1.0, scale),
                                       err_msg=f"{where}: {key}")


@pytest.mark.parametrize("C", [1e6, 1e12])
def test_twins_agree_at_extreme_c(C):
    """Both twins, step by step, on a noisy stream with duplicates of both labels."""
    X, y = _noisy_stream(30, 4)
    X = np.vstack([X, X[:10]])
    y = np.concatenate([y, -y[:10]])
    ref = make_state("python", 2, C, "rbf", gamma=0.5)
    twin = make_state("cython", 2, C, "rbf", gamma=0.5)
    for i in range(len(y)):
        ref.step(X[i], y[i])
        twin.step(X[i], y[i])
        _assert_twins_close(ref, twin, f"C={C:g} example {i}")
    assert_exact(twin, X, y, 0.5)


@slow
@pytest.mark.parametrize("C", [1e3, 1e6, 1e9, 1e12])
def test_extreme_c_full_stream(C):
    """The issue's full stream at every C.  At C = 1e12 the path loses exactness at
    example 208 (a KKT violation of 0.18 margin units on a nearly singular margin set of
    ~100 vectors, which the repairs do not remove), at C = 1e9 at example 1276 (0.008
    margin units, ~60 round-off floors): the check, in margin units above POLISH_CK,
    rolls the example back and raises ExactnessError, the model before it exact to the
    round-off floor.  The old check (1e-9 g_scale = 1,000 at 1e12) kept such models
    silently: its model after example 207 was off by 8.2 margin units (71 floors)."""
    X, y = _noisy_stream()
    st = make_state("cython", 2, C, "rbf", gamma=0.5)
    try:
        st.run(np.ascontiguousarray(X), y, np.arange(len(y)))
    except ExactnessError as exc:
        assert C >= 1e9 and exc.example >= 200, (C, exc.example)
        assert st.get_state()["n_seen"] == exc.example      # the exact prefix model
        assert _kkt_ratio(st, X) <= 1.0
    assert_exact(st, X, y, 0.5)


def _separable(n=600):
    rng = np.random.RandomState(3)
    X = rng.uniform(-2, 2, (3 * n, 2))
    s = X[:, 0] + 0.3 * X[:, 1]
    keep = np.abs(s) > 0.2
    return X[keep][:n], np.where(s[keep][:n] > 0, 1.0, -1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hard_margin_at_c_1e12_is_exact_in_absolute_terms(backend):
    """Separable data at C = 1e12: alpha stays small (alpha_max ~ 10), so the tolerances
    (relative to alpha_max, not C) are tight: the issue's C = 1e12 run kept a KKT violation
    of 0.085 because the tie windows were 1e-12 C = 1."""
    X, y = _separable(100 if backend == "python" else 600)
    st = _run(backend, X, y, 1e12, 0.5)
    viol, h, drift, amax = _kkt(st, X, y, 0.5)
    assert amax < 100 and viol < 1e-10 and h < 1e-10 and drift < 1e-10
    assert_matches_svc(st, X, y, "rbf", {"gamma": 0.5})


# ---------------------------------------------------------------------- round-off floor at C = 1e12
_EPS = np.finfo(np.float64).eps


def _degenerate_streams(count, max_n, seed):
    """Random streams on the 3 x 3 grid (duplicates, equal rows, ties), random labels, half
    of them ending with the previous point under the other label; gamma 0.1 or 1."""
    rng = np.random.RandomState(seed)
    for k in range(count):
        n = rng.randint(2, max_n + 1)
        X = rng.choice([-1.0, 0.0, 1.0], size=(n, 2))
        y = rng.choice([-1.0, 1.0], size=n)
        if rng.rand() < 0.5:
            X[-1], y[-1] = X[-2], -y[-2]
        yield k, X, y, (0.1, 1.0)[k % 2]


def _floor_ratio(st, X):
    """The g drift of ``check()`` over the round-off floor of the sums g is made of,
    1e-6 + 32 eps sum|alpha| k_max (the tolerance of tests/test_properties.py)."""
    kmax = max(1.0, float(np.max(np.sum(X ** 2, axis=1))))
    mass = float(np.sum(np.abs(st.get_state()["alpha"]))) * kmax
    return st.check()["g_drift"] / (1e-6 + 32 * _EPS * mass)


def _kkt_ratio(st, X):
    """The true KKT violation of ``check()`` (g recomputed from alpha and b, in margin
    units, whatever the kept g and the sets say) over the same floor."""
    kmax = max(1.0, float(np.max(np.sum(X ** 2, axis=1))))
    mass = float(np.sum(np.abs(st.get_state()["alpha"]))) * kmax
    return st.check()["kkt"] / (1e-6 + 32 * _EPS * mass)


def _census(count, max_n, seed, C=1e12, ratio=_floor_ratio):
    """Both twins side by side on ``count`` degenerate streams at C, equal after every
    step; returns the largest ``ratio`` (the g drift over the floor, or the true KKT
    violation over it) of any step, either twin, and where."""
    worst = (0.0, None)
    for k, X, y, gamma in _degenerate_streams(count, max_n, seed):
        ref = make_state("python", 2, C, "rbf", gamma=gamma)
        twin = make_state("cython", 2, C, "rbf", gamma=gamma)
        for t in range(len(y)):
            ref.step(X[t], y[t])
            twin.step(X[t], y[t])
            _assert_twins_close(ref, twin, f"stream {k} step {t}")
            for st in (ref, twin):
                worst = max(worst, (ratio(st, X), f"stream {k} step {t}"),
                            key=lambda w: w[0])
    return worst


def test_round_off_floor_at_c_1e12():
    """C = 1e12 on degenerate streams: before the end-of-operation polish (``_polish``)
    the census below found the kept g off the true one by up to 28 times the round-off
    floor 32 eps sum|alpha| k_max (0.8 in margin units: alphas of order C are held to an
    ulp of C, 1.2e-4, and the increments left g that far off times k); now the twins
    stay within it after every step (measured: 0.012 of it)."""
    ratio, where = _census(40, 9, 0)
    assert ratio <= 1.0, (ratio, where)


@slow
def test_round_off_floor_census_at_c_1e12():
    """The census of the docs: 300 streams of 2-24 examples (before the polish: 43 times
    the floor, a sixth of the steps above it)."""
    ratio, where = _census(300, 24, 1)
    assert ratio <= 1.0, (ratio, where)


@slow
def test_true_kkt_residual_census_at_c_1e12():
    """The true KKT residual on the census of the docs (before the margin-unit
    tolerances: above the floor on 1,008 of 4,006 steps, up to 103 times)."""
    ratio, where = _census(300, 24, 1, ratio=_kkt_ratio)
    assert ratio <= 1.0, (ratio, where)


def test_true_kkt_residual_at_c_1e12():
    """The true KKT residual (``check()["kkt"]``: g recomputed from alpha and b) stays
    within the round-off floor after every step at C = 1e12.  Before the margin-unit
    tolerances (docs, "Extreme C") the kept g was exact but the path was not: the tie
    windows, 1e-12 (1 + k_max alpha_max) = 1 margin unit and 1e-12 alpha_max = 1 in alpha,
    let the candidate's own event win ties 0.8 away, and the after-operation check (1e-9
    of the same scale, 1,000) did not see it: on these 40 streams 13 of 206 steps were
    above the floor, up to 73 times."""
    ratio, where = _census(40, 9, 0, ratio=_kkt_ratio)
    assert ratio <= 1.0, (ratio, where)


@pytest.mark.parametrize("backend", BACKENDS)
def test_opposite_copies_at_c_1e12_are_not_left_both_at_c_above_the_margin(backend):
    """Census stream 12 (seed 1): an opposite-label pair at C (net contribution zero),
    then a point of each label nearby.  The path ended with both copies at alpha = C and
    g = +1.46 on one of them (its own KKT condition asks g <= 0): the candidate's margin
    event, 0.8 margin units away, was taken as tied with the copy's (window 1), and the
    polish moved alpha_S by 4.4 to put the candidate on its margin.  Now the copy joins S
    at its margin on the way, and f(x) of the pair ends in [-1, 1]."""
    X = np.array([[1.0, -1.0], [1.0, -1.0], [-1.0, -1.0], [0.0, -1.0]])
    y = np.array([-1.0, 1.0, 1.0, -1.0])
    st = _run(backend, X, y, 1e12, 0.1)
    chk = st.check()
    assert chk["kkt"] <= 1e-6 + 32 * _EPS * float(np.sum(st.get_state()["alpha"])), chk
    f = st.decision_function(X[:1])[0]
    assert -1.0 - 1e-3 <= f <= 1.0 + 1e-3
    viol, h, drift, amax = _kkt(st, X, y, 0.1)          # scikit-learn's kernel
    assert viol < 1e-2 and h < 1e-2


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_reports_the_true_kkt_violation(backend):
    """``check()["kkt"]`` is the KKT violation of g recomputed from alpha and b, not of
    the kept g: a state whose alpha was altered (saved, edited, loaded) shows it, its kept
    g does not."""
    X, y = _noisy_stream(40, 1)
    st = _run(backend, X, y, 10.0, 0.5)
    chk = st.check()
    assert chk["kkt"] <= 1e-9 and chk["h"] <= 1e-9 and chk["h_rel"] == chk["h"] / 10.0
    viol, h, drift, amax = _kkt(st, X, y, 0.5)
    assert abs(chk["kkt"] - viol) <= 1e-9
    data = st.save_state()
    s = np.flatnonzero(np.asarray(data["status"]) == idsvm.MARGIN)[0]
    data["alpha"] = np.array(data["alpha"])
    data["alpha"][s] += 0.5                               # one margin vector moved
    other = make_state(backend, 2, 10.0, "rbf", gamma=0.5)
    other.load_state(data)
    bad = other.check()
    assert bad["g_drift"] > 0.1 and bad["kkt"] > 0.1 and bad["h"] == pytest.approx(0.5)
    assert bad["h_rel"] == pytest.approx(0.05)


def _unlearn_census(count, max_n, seed):
    """Leave-one-out, then unlearning every other example, at C = 1e12 on the census
    streams, both twins: each operation either keeps the twins equal and the true KKT
    residual within the floor, or raises ExactnessError in both and leaves the model
    exactly as before it.  Returns the number of streams rolled back."""
    keys = ("alpha", "g", "status", "S_order", "Rinv", "b", "n_seen")
    failed = 0
    for k, X, y, gamma in _degenerate_streams(count, max_n, seed):
        states = [make_state(b, 2, 1e12, "rbf", gamma=gamma) for b in ("python", "cython")]
        for st in states:
            st.run(X, y, np.arange(len(y)))
        ops = [("loo", None)] + [("unlearn", i) for i in range(0, len(y) - 1, 2)]
        for op, i in ops:
            before = [st.get_state() for st in states]
            errors = []
            for st in states:
                try:
                    st.loo_decisions() if op == "loo" else st.unlearn([i])
                    errors.append(None)
                except ExactnessError as exc:
                    errors.append(exc.example)
            where = f"stream {k} {op} {i}"
            assert errors[0] == errors[1], where
            if errors[0] is not None:
                failed += 1
                for st, b in zip(states, before):
                    s = st.get_state()
                    for key in keys:
                        np.testing.assert_array_equal(np.asarray(s[key]), np.asarray(b[key]),
                                                      err_msg=f"{where}: {key}")
                break
            _assert_twins_close(states[0], states[1], where)
            for st in states:
                assert _kkt_ratio(st, X) <= 1.0, where
    return failed


def test_unlearning_at_c_1e12_is_exact():
    """Leave-one-out and unlearning at C = 1e12 (``_unlearn_census``).  Before the
    margin-unit tolerances and the snap of ulp residues (docs, "Extreme C") 4 of these
    40 streams rolled back with ExactnessError (a residue of an ulp of C on a margin
    vector failed the |Sigma y alpha| check of the smaller alphas left, or left no event
    to limit the increment); now none does."""
    assert _unlearn_census(40, 9, 0) == 0


@slow
def test_unlearning_census_at_c_1e12():
    """The census of the docs: 300 streams of 2-24 examples (before: 25 rolled back, and
    the operations kept left the true KKT residual above the floor 1,074 times)."""
    assert _unlearn_census(300, 24, 1) == 0


@pytest.mark.parametrize("d", [0.0, 1e-5, 1e-4, 1e-3])
@pytest.mark.parametrize("backend", BACKENDS)
def test_opposite_label_copies_end_in_o1_steps(backend, d):
    """Issue 15 item 4: a point and a copy (or a near copy, d apart) of the other label,
    then two more near copies, one of each label: a handful of adiabatic steps at every C
    (measured 5-7 for C = 1 to 1e12), never a count that grows with C."""
    X = np.array([[0.3, -0.2], [0.3 + d, -0.2], [0.3, -0.2 + d], [0.3 - d, -0.2]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    for C in (1.0, 1e3, 1e6, 1e9, 1e12):
        st = _run(backend, X, y, C, 1.0)
        assert st.get_state()["n_iterations"] <= 10, (C, st.get_state()["n_iterations"])
        assert_exact(st, X, y, 1.0, where=f"C={C:g}")


# ---------------------------------------------------------------------- forced safeguards
def _equal_models(a, b, where=""):
    """Two states hold the same model bit for bit (counters of work aside)."""
    sa, sb = a.get_state(), b.get_state()
    for key in ("alpha", "g", "y", "status", "S_order", "Rinv", "b", "n_seen"):
        np.testing.assert_array_equal(np.asarray(sa[key]), np.asarray(sb[key]),
                                      err_msg=f"{where}: {key}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_spent_step_budget_rolls_back_to_the_prefix(backend):
    """max_steps = 5: the example that needs more raises ExactnessError, and the state is
    exactly the state of the stream before it (not stored, no trace but kernel
    evaluations); loaded into a state with the default budget it continues exactly as
    the uninterrupted run."""
    n = 50 if backend == "python" else 120
    X, y = _noisy_stream(n, 0)
    st = make_state(backend, 2, 10.0, "rbf", gamma=0.5, max_steps=5)
    with pytest.raises(ExactnessError, match="step budget.*rolled back") as err:
        st.run(X, y, np.arange(n))
    k = err.value.example
    assert 0 < k < n and st.get_state()["n_seen"] == k and st.n_rollbacks == 1
    prefix = _run(backend, X[:k], y[:k], 10.0, 0.5)
    _equal_models(st, prefix)
    # the rolled-back state goes on exactly as the prefix model
    params = dict(st.init_params(), max_steps=0)
    resumed = type(st)(**params)
    resumed.load_state(st.save_state())
    resumed.run(X, y, np.arange(k, n))
    prefix.run(X, y, np.arange(k, n))
    _equal_models(resumed, prefix)
    assert_exact(resumed, X, y, 0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failed_kkt_check_rolls_back(backend):
    """The other safeguard, forced through ``departures``: a KKT check that cannot pass
    (kkt_tol 0: any round-off of g is a violation; no repairs) rolls the example back the
    same way."""
    X, y = _noisy_stream(60, 0)
    first = _run(backend, X[:40], y[:40], 10.0, 0.5)
    module = first.__class__.__module__
    cls = type(first)
    before = cls(**first.init_params())
    before.load_state(first.save_state())
    st = cls(**{**first.init_params(), "departures": {"kkt_tol": 0.0, "repair": 0}})
    st.load_state(first.save_state())
    assert st.departures["kkt_tol"] == 0.0 and before.departures["kkt_tol"] > 0.0, module
    for i in range(40, 60):
        try:
            st.step(X[i], y[i])
        except ExactnessError as exc:
            # the check's two conditions: a KKT violation, else h = sum y alpha (whose
            # round-off is above a level of 0 when every g happens to be exact)
            assert exc.example == i and ("KKT condition" in str(exc)
                                         or "is not zero" in str(exc)), str(exc)
            break
    else:
        pytest.fail("no example went through the adiabatic loop")
    before.run(X, y, np.arange(40, i))
    _equal_models(st, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearn_and_loo_roll_back(backend):
    X, y = _noisy_stream(80, 2)
    st = _run(backend, X, y, 10.0, 0.5)
    tight = type(st)(**dict(st.init_params(), max_steps=1))
    tight.load_state(st.save_state())
    sv = [int(i) for i in st.support_ids()]
    # unlearning: the ids before the failing one are unlearned, the model is that
    with pytest.raises(ExactnessError, match="rolled back") as err:
        tight.unlearn(sv)
    done = sv.index(err.value.example)
    st.unlearn(sv[:done])
    _equal_models(tight, st)
    # leave-one-out: the model is the one before the failing example's removal
    with pytest.raises(ExactnessError, match="leave-one-out"):
        tight.loo_decisions()
    _equal_models(tight, st, "after the failed leave-one-out")


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("backend", BACKENDS)
def test_estimator_keeps_the_prefix_model(backend, n_classes):
    """partial_fit: the model of the stream up to the example before the one that failed,
    every one-vs-rest problem alike, and the message says how many were learned; fit: the
    estimator as it was before the call (``fit_method="incremental"``: the budget bounds the
    operations of one example)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-2, 2, (120, 2))
    y = rng.randint(n_classes, size=120)
    classes = np.arange(n_classes)
    est = IncrementalSVM(C=10.0, gamma=0.5, max_steps=5, fit_method="incremental",
                         backend=backend)
    est.partial_fit(X[:10], y[:10], classes=classes)
    with pytest.raises(ExactnessError, match=r"partial_fit learned \d+ of the call's 110") as err:
        est.partial_fit(X[10:], y[10:])
    k = err.value.example
    assert 10 <= k < 120
    ref = IncrementalSVM(C=10.0, gamma=0.5, backend=backend).partial_fit(X[:k], y[:k],
                                                                         classes=classes)
    for a, b in zip(est._states, ref._states):
        _equal_models(a, b)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    # fit is atomic: the estimator keeps its model
    before = est.decision_function(X)
    with pytest.raises(ExactnessError):
        est.fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), before)
    # and an unfitted one stays unfitted
    fresh = IncrementalSVM(C=10.0, gamma=0.5, max_steps=5, fit_method="incremental",
                           backend=backend)
    with pytest.raises(ExactnessError):
        fresh.fit(X, y)
    with pytest.raises(Exception):
        check_is_fitted(fresh, "classes_")


def test_operations_between_c_1e6_and_1e9_stay_within_the_floor():
    """POLISH_CK = 1e5, not POKER's 1e9: with 1e9 these census streams (seed 1) ended
    leave-one-out / unlearning at C = 1e6 up to 1.19 round-off floors off the KKT
    conditions, and learning at C = 1e8 up to 6.1 floors, with no rollback."""
    picked = {84, 124, 172, 238, 248, 262}
    for k, X, y, gamma in _degenerate_streams(263, 24, 1):
        if k not in picked:
            continue
        states = [make_state(b, 2, 1e6, "rbf", gamma=gamma) for b in ("python", "cython")]
        for st in states:
            st.run(X, y, np.arange(len(y)))
        for op, i in [("loo", None)] + [("unlearn", i) for i in range(0, len(y) - 1, 2)]:
            for st in states:
                st.loo_decisions() if op == "loo" else st.unlearn([i])
                assert _kkt_ratio(st, X) <= 1.0, (k, op, i)
    ratio, where = _census(40, 24, 1, C=1e8, ratio=_kkt_ratio)
    assert ratio <= 1.0, (ratio, where)
