"""Input checks of the active learners (QueryAll, Greedy, OnlineASVMR), found by a fuzz of
the default estimators: every input of ``run`` is checked before the learner changes (a
rejected call leaves the model of the previous run bit for bit), and ``decision_function``
/ ``predict`` / ``score`` check their rows as the estimators' predict does (sklearn's
``NotFittedError`` before ``run``, a 2-D X with the stream's features, no NaN or
infinity)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from refsvm.datasets import make_two_gaussians
from refsvm.ramp.estimators import Greedy, OnlineASVMR, QueryAll

pytest.importorskip("refsvm.ramp._online_svmr")
PARAMS = dict(C=1.0, gamma=0.5)
LEARNERS = [QueryAll, Greedy, OnlineASVMR]
ROOT = Path(__file__).resolve().parents[2]


def stream(n=120, seed=0):
    X, y = make_two_gaussians(n, random_state=seed)
    return np.ascontiguousarray(X), y


def snapshot(learner, X):
    """What a rejected call must leave as it was: the decision values (bits), the state
    object and its arrays, the queries and the curve."""
    return (learner.decision_function(X).tobytes(), learner.state,
            {k: np.asarray(v).tobytes() for k, v in learner.state.get_state().items()},
            list(learner.queried), learner.curve_)


def assert_unchanged(learner, X, before):
    after = snapshot(learner, X)
    assert after[0] == before[0], "decision values changed"
    assert after[1] is before[1], "the state was replaced"
    assert after[2] == before[2], "the state changed"
    assert after[3] == before[3] and after[4] is before[4], "queries or curve changed"


@pytest.mark.parametrize("cls", LEARNERS)
def test_predict_before_run_is_not_fitted(cls):
    X, y = stream()
    learner = cls(**PARAMS)
    for call in (learner.decision_function, learner.predict, lambda X: learner.score(X, y)):
        with pytest.raises(NotFittedError, match="Call 'run'"):
            call(X)


@pytest.mark.parametrize("cls", LEARNERS)
def test_stream_must_be_2d_with_a_feature(cls):
    X, y = stream()
    with pytest.raises(ValueError, match="Expected 2D array"):
        cls(**PARAMS).run(X[:, 0], y)
    with pytest.raises(ValueError, match="0 feature"):
        cls(**PARAMS).run(np.zeros((X.shape[0], 0)), y)
    learner = cls(**PARAMS)
    with pytest.raises(ValueError, match="0 feature"):
        learner.run(sp.csr_matrix((X.shape[0], 0)), y)
    assert learner.state is None  # nothing was learned


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("cls", LEARNERS)
def test_predict_checks_its_rows(cls, backend):
    X, y = stream()
    learner = cls(backend=backend, **PARAMS)
    learner.run(X, y)
    before = snapshot(learner, X)
    bad = X[:5].copy()
    bad[2, 1] = np.nan
    for rows in (bad, sp.csr_matrix(bad)):
        for call in (learner.decision_function, learner.predict,
                     lambda X: learner.score(X, y[:5])):
            with pytest.raises(ValueError, match="NaN"):
                call(rows)
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        learner.predict(bad)
    with pytest.raises(ValueError, match="0 feature"):
        learner.decision_function(np.zeros((3, 0)))
    for rows in (np.c_[X, X][:5], sp.csr_matrix(X[:5, :1])):
        with pytest.raises(ValueError, match=r"X has \d features, but .* expecting 2 features"):
            learner.decision_function(rows)
    with pytest.raises(ValueError, match="one label per row"):
        learner.score(X, y[:5])
    if backend == "python":  # the compiled state crashed on this row: see the next test
        with pytest.raises(ValueError, match="Expected 2D array"):
            learner.predict(X[0])
    assert_unchanged(learner, X, before)


def test_a_1d_row_is_refused_before_the_compiled_state_reads_it():
    """The compiled state read a 1-D row out of bounds (a segmentation fault): the check
    runs in a child process, so that a crash is a failure here, not of the test run."""
    code = (
        "import numpy as np\n"
        "from refsvm.datasets import make_two_gaussians\n"
        "from refsvm.ramp.estimators import Greedy, OnlineASVMR, QueryAll\n"
        "X, y = make_two_gaussians(120, random_state=0)\n"
        "for cls in (QueryAll, Greedy, OnlineASVMR):\n"
        "    learner = cls(C=1.0, gamma=0.5, backend='cython')\n"
        "    learner.run(X, y)\n"
        "    for call in (learner.decision_function, learner.predict):\n"
        "        try:\n"
        "            call(X[0])\n"
        "        except ValueError as exc:\n"
        "            assert 'Expected 2D array' in str(exc), exc\n"
        "        else:\n"
        "            raise AssertionError('a 1-D row was accepted')\n"
        "print('refused')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and "refused" in proc.stdout, (
        f"exit {proc.returncode}: {proc.stdout}{proc.stderr[-3000:]}")


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("cls", LEARNERS)
def test_an_oracle_array_of_another_length_is_refused_before_learning(cls, backend):
    X, y = stream()
    learner = cls(backend=backend, **PARAMS)
    learner.run(X[:80], y[:80])
    before = snapshot(learner, X)
    with pytest.raises(ValueError, match=r"X has 120 rows and the oracle array \(50,\) labels"):
        learner.run(X, y[:50])
    assert_unchanged(learner, X, before)
    with pytest.raises(ValueError, match=r"X has 60 rows and the oracle array \(120,\) labels"):
        learner.run(X[:60], y)
    with pytest.raises(ValueError, match="one label per row"):
        learner.run(X, y[:, None])
    assert_unchanged(learner, X, before)


@pytest.mark.parametrize("cls", LEARNERS)
def test_a_label_outside_classes_is_refused_before_learning(cls):
    """Labels stay those of ``classes`` (-1 and +1 by default), with the same message; an
    array's labels are all checked before the learner changes."""
    X, y = stream()
    learner = cls(**PARAMS)
    learner.run(X, y)
    before = snapshot(learner, X)
    bad = y.copy()
    bad[-1] = 2
    with pytest.raises(ValueError, match=r"the oracle returned np.int64\(2\), not one of"):
        learner.run(X, bad)
    with pytest.raises(ValueError, match=r"the oracle returned np.float64\(nan\)"):
        learner.run(X, np.where(np.arange(y.size) == 100, np.nan, y.astype(float)))
    assert_unchanged(learner, X, before)
    # other labels through ``classes``, as before
    named = cls(classes=("neg", "pos"), **PARAMS)
    named.run(X, np.where(y > 0, "pos", "neg"))
    assert set(named.predict(X)) == {"neg", "pos"}
    np.testing.assert_array_equal(named.decision_function(X), learner.decision_function(X))


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("cls", LEARNERS)
def test_an_oracle_that_fails_partway_leaves_the_learner_as_it_was(cls, backend):
    """A callable oracle can only be checked as it answers: an error partway through the
    stream puts the previous run's model back."""
    X, y = stream()
    learner = cls(backend=backend, **PARAMS)
    learner.run(X, y)
    before = snapshot(learner, X)
    short = y[:70]
    with pytest.raises(IndexError):
        learner.run(X, lambda i: short[i])
    assert_unchanged(learner, X, before)

    def wrong_label(i):
        return 5 if i >= 100 else y[i]

    with pytest.raises(ValueError, match="oracle returned 5"):
        learner.run(X, wrong_label)
    assert_unchanged(learner, X, before)
    fresh = cls(backend=backend, **PARAMS)
    with pytest.raises(IndexError):
        fresh.run(X, lambda i: short[i])
    assert fresh.state is None and not hasattr(fresh, "curve_")


@pytest.mark.parametrize("cls", LEARNERS)
def test_a_test_set_that_does_not_match_is_refused_before_learning(cls):
    X, y = stream()
    Xt, yt = stream(60, 1)
    learner = cls(**PARAMS)
    learner.run(X, y, Xt, yt, eval_every=60)
    before = snapshot(learner, X)
    with pytest.raises(ValueError, match="X_test has 4 features, but .* expecting 2"):
        learner.run(X, y, np.c_[Xt, Xt], yt)
    with pytest.raises(ValueError, match=r"X_test has 60 rows and y_test \(59,\) labels"):
        learner.run(X, y, Xt, yt[:-1])
    with pytest.raises(ValueError, match="without y_test"):
        learner.run(X, y, Xt)
    Xbad = Xt.copy()
    Xbad[7, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        learner.run(X, y, Xbad, yt)
    assert_unchanged(learner, X, before)


@pytest.mark.parametrize("cls", LEARNERS)
def test_gamma_scale_is_the_default_resolved_on_each_run(cls):
    """gamma "scale" (the default, as SVC's) is 1 / (d var(X)) of each run's stream: the
    run is bit for bit the one with that number given, and ``gamma_`` holds it; "auto"
    is 1 / d."""
    from refsvm._validation import resolve_gamma

    X, y = stream()
    learner = cls()
    assert learner.gamma == "scale"
    learner.run(X, y)
    assert learner.gamma_ == resolve_gamma("scale", X)
    given = cls(gamma=learner.gamma_)
    given.run(X, y)
    np.testing.assert_array_equal(learner.curve_.n_support, given.curve_.n_support)
    assert learner.decision_function(X).tobytes() == given.decision_function(X).tobytes()
    # another stream, ten times wider: gamma is resolved again, on it
    learner.run(10 * X, y)
    assert learner.gamma_ == resolve_gamma("scale", 10 * X)
    auto = cls(gamma="auto")
    auto.run(X, y)
    assert auto.gamma_ == 1.0 / X.shape[1]


@pytest.mark.parametrize("cls", LEARNERS)
def test_a_rejected_run_keeps_the_last_gamma(cls):
    X, y = stream()
    learner = cls()
    learner.run(X, y)
    gamma, before = learner.gamma_, snapshot(learner, X)
    with pytest.raises(ValueError, match="oracle"):
        learner.run(10 * X, y[:-1])
    assert learner.gamma_ == gamma
    assert_unchanged(learner, X, before)


@pytest.mark.parametrize("gamma", ["median", 0.0, -1.0, float("nan")])
def test_a_bad_gamma_is_refused_at_construction(gamma):
    with pytest.raises(ValueError, match="gamma"):
        QueryAll(gamma=gamma)
