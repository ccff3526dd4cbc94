"""Scikit-learn estimators of the linear family (either twin, ``backend=``)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from . import online_linear_svm, passive_aggressive, reduced_kernel_pa
from .departures import DEPARTURES
from .._validation import (
    Boolean,
    DeparturesRule,
    as_format,
    Integer,
    NonNegative,
    Options,
    Positive,
    RandomStateRule,
)
from ..base import BaseKernelClassifier, BaseOnlineClassifier
from ..core.pa import PA_VARIANTS, PAM_VARIANTS
from ..core.stream import BadRow


class _Departures:
    """The family's ``departures`` parameter (:mod:`refsvm.linear.departures`), declared
    once for every estimator of the family; the estimators pass it to their states."""

    _parameter_rules = {"departures": DeparturesRule(DEPARTURES)}


class _LinearEstimator(_Departures, BaseOnlineClassifier):
    """Shared by the linear estimators: ``coef_``, ``intercept_``, epochs."""

    _reference = passive_aggressive
    _compiled = "refsvm.linear._passive_aggressive"
    #: X is read only by the states' pass, which checks each row as it reads it (NaN,
    #: infinity, CSR indices); a bad row restores the O(d) model saved before the call
    #: (BaseOnlineClassifier._fused_input_check).
    _fused_input_check = True
    #: Any finite value is accepted, as by scikit-learn's linear models; an overflow of
    #: the arithmetic is caught after the pass (``_check_learned``).
    _finite_input_only = True

    def _learn(self, X, Ys, check):
        # an overflow is reported by _check_learned; NumPy's warnings on the way (the
        # reference's arithmetic) would only repeat it, and the compiled twin makes none
        with np.errstate(over="ignore", invalid="ignore"):
            super()._learn(X, Ys, check)

    def _fit_states(self, X, Y):
        with np.errstate(over="ignore", invalid="ignore"):
            super()._fit_states(X, Y)

    #: the learned numbers of a state that an overflow would leave infinite or NaN
    _learned_numbers = ("w", "b", "R2", "w_avg", "b_avg")

    def _check_learned(self, X):
        """Any finite X is accepted (``_finite_input_only``): a step whose arithmetic
        overflowed leaves an infinite or NaN number in the state (OnlineLinearSVM marks an
        overflowed ‖w‖² with NaN).  Raise then; the call restores the model."""
        for state in self._states:
            for name in self._learned_numbers:
                value = getattr(state, name, None)
                if value is not None and not np.all(np.isfinite(value)):
                    data = X.data if sp.issparse(X) else X
                    top = float(np.max(np.abs(data))) if data.size else 0.0
                    raise ValueError(
                        f"the learning arithmetic overflowed float64 on this X (largest "
                        f"|x| = {top:.3g}), leaving {name} not finite; the model is left "
                        "as it was before the call. Rescale X, e.g. with "
                        "sklearn.preprocessing.StandardScaler or MaxAbsScaler"
                    )

    def _n_passes(self):
        return self.n_epochs

    _parameter_rules = {"shuffle": Boolean(), "random_state": RandomStateRule()}

    @property
    def coef_(self):
        """Weights, shape (1, n_features) for two classes, (n_classes, n_features) otherwise."""
        return np.vstack([self._weights(s)[0] for s in self._states])

    @property
    def intercept_(self):
        return np.array([self._weights(s)[1] for s in self._states])

    @property
    def n_updates_(self):
        """Rounds on which the model changed (summed over one-vs-rest problems)."""
        return int(sum(s.n_updates for s in self._states))

    @property
    def n_mistakes_(self):
        """Prequential mistakes: examples the model *before* them misclassified
        (y f(x) <= 0, f = 0 counted), over every example learned (every epoch of ``fit``,
        every ``partial_fit``), counted inside the step where f(x) is computed anyway;
        summed over the one-vs-rest problems when there are more than two classes.  For
        two classes it equals the mistakes of
        ``refsvm.evaluate.progressive_validation(..., block=1)``, without its extra
        ``decision_function`` per example."""
        return int(sum(s.n_mistakes for s in self._states))

    def _weights(self, state):
        return np.asarray(state.w, dtype=np.float64).copy(), float(state.b)


class Perceptron(_LinearEstimator):
    """Rosenblatt's Perceptron with bias, as on the Lee–Tseng–Chen slides.

    On a mistake y(<w, x> + b) ≤ 0: w ← w + η y x, b ← b + η y R², with
    R = max ||x_j||.  ``fit`` repeats epochs until one makes no mistake, or
    ``max_epochs``; ``partial_fit`` makes one pass with R the running maximum.

    Parameters
    ----------
    eta0 : float, default=1.0
        Learning rate η > 0.
    max_epochs : int, default=10
        Cap on the epochs of ``fit`` (the slides' experiments run 10).
    shuffle : bool, default=False
        Shuffle the order of every epoch of ``fit``.
    random_state : int, RandomState or None
        Seed of the shuffling.
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`); none
        concerns the Perceptron, whose state is the slide's lines whatever the setting.
    backend : {"cython", "python"}, default="cython"
        The compiled twin or the pure-Python reference.

    Attributes
    ----------
    classes_, coef_, intercept_, n_updates_ (mistakes), n_mistakes_, n_epochs_ (epochs run by fit)

    Notes
    -----
    Any finite X is accepted, as by scikit-learn's linear models (no bound on
    ``|x_j|``, which only the kernel estimators need); where the arithmetic overflows
    on huge values the call raises ``ValueError`` and the model is left as it was
    (:doc:`/reliability`).

    Examples
    --------
    On separable data ``fit`` stops after the first epoch without a mistake (the
    slides' "until no mistake made within the for-loop"); the bias, moved by η y R²,
    handles data far from the origin:

    >>> import numpy as np
    >>> from refsvm import Perceptron
    >>> X = np.array([[0.0, 2.0], [1.0, 3.0], [3.0, 0.0], [4.0, 1.0]]) + 5.0
    >>> clf = Perceptron(max_epochs=100).fit(X, [0, 0, 1, 1])
    >>> clf.n_epochs_ < 100, clf.score(X, [0, 0, 1, 1])
    (True, 1.0)

    References
    ----------
    Lee, Tseng, Chen, *Online Nonlinear SVM for Large-Scale Classification*,
    slide "Perceptron Algorithm" (``shared/papers/002``); ALGORITHMS.md §3.
    """

    def __init__(self, *, eta0=1.0, max_epochs=10, shuffle=False, random_state=None,
                 departures=None,
                 backend="cython"):
        self.eta0 = eta0
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"eta0": Positive(), "max_epochs": Integer(minimum=1)}

    def _make_state(self, n_features, sparse, X):
        return self._module().PerceptronState(n_features, sparse, eta=float(self.eta0),
                                              departures=self.departures)

    def _n_passes(self):
        return self.max_epochs

    def _fit_states(self, X, Y):
        # R = max_j ||x_j|| over the training set, known before the first epoch: one
        # compiled read of X (the state's scan_radius) that also makes the input check
        # the first pass would make (see _fused_input_check), so the passes run unchecked
        limit = self.__dict__.pop("_pending_check", None)
        with np.errstate(over="ignore"):  # an overflowed R^2 is reported by _check_learned
            R2, n_done = self._states[0].scan_radius(X, np.inf if limit is None else limit)
        if n_done < X.shape[0]:
            raise BadRow(n_done)  # fit restores the model and words the error
        for state in self._states:
            state.R2 = R2
        super()._fit_states(X, Y)

    def _converged(self, n_changes):
        return n_changes == 0  # until no mistake made within the for-loop


class PassiveAggressive(_LinearEstimator):
    """Passive-Aggressive classifier: PA, PA-I, PA-II (Crammer et al. 2006).

    On each example with hinge loss ℓ = max(0, 1 − y<w, x>) > 0:
    w ← w + τ y x with τ = ℓ/||x||² (PA), min(C, ℓ/||x||²) (PA-I),
    ℓ/(||x||² + 1/(2C)) (PA-II).

    Parameters
    ----------
    variant : {"PA", "PA-I", "PA-II"}, default="PA-I"
    C : float, default=1.0
        Aggressiveness (> 0; unused by "PA").
    fit_intercept : bool, default=True
        Learn a bias as the weight of an extra constant feature 1 (regularised
        like a weight).  False is the slides' bias-free PA.  True is the default,
        as in scikit-learn: measured with default settings on the 13 binary tasks
        of ``shared/data`` (standardised), the bias gained up to 29 points of test
        accuracy (ijcnn1 64.5 -> 93.8, waveform 59.3 -> 84.1, w3a 84.8 -> 98.2) and
        lost at most 0.8 (see :doc:`/lee_tseng_chen`, "Defaults").
    n_epochs : int, default=1
        Passes of ``fit`` over the data (the papers make one).
    shuffle : bool, default=False
    random_state : int, RandomState or None
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`); none
        concerns PA, whose state is the slides' lines whatever the setting.
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_, coef_, intercept_, n_updates_, n_mistakes_ (prequential)

    Notes
    -----
    A zero example cannot change the margin: PA and PA-I skip it (their τ
    would divide by zero).  With ``fit_intercept=False`` one pass equals
    scikit-learn's ``SGDClassifier(loss="hinge", penalty=None,
    learning_rate="pa1"|"pa2", eta0=C, fit_intercept=False, shuffle=False,
    max_iter=1)`` (scikit-learn 1.8 and later; before 1.8 that ``SGDClassifier``
    ignores ``eta0`` and ``PassiveAggressiveClassifier(C=C, loss="hinge"|"squared_hinge")``
    is the equal one); the tests check it.

    Any finite X is accepted, as by scikit-learn's linear models (no bound on
    ``|x_j|``, which only the kernel estimators need); where the arithmetic overflows
    on huge values the call raises ``ValueError`` and the model is left as it was
    (:doc:`/reliability`).

    Examples
    --------
    One pass of PA-I is scikit-learn's passive-aggressive learner:

    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.datasets import make_classification
    >>> from sklearn import linear_model
    >>> from refsvm import PassiveAggressive
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> pa = PassiveAggressive(variant="PA-I", C=0.5, fit_intercept=False).fit(X, y)
    >>> one_pass = dict(fit_intercept=False, shuffle=False, max_iter=1, tol=None)
    >>> if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) >= (1, 8):
    ...     sk = linear_model.SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1",
    ...                                     eta0=0.5, **one_pass)
    ... else:
    ...     sk = linear_model.PassiveAggressiveClassifier(C=0.5, **one_pass)
    >>> np.allclose(pa.coef_, sk.fit(X, y).coef_, rtol=1e-12, atol=0)
    True

    References
    ----------
    K. Crammer et al., "Online Passive-Aggressive Algorithms", JMLR 7 (2006),
    Eqs. (6)–(8); Lee, Tseng, Chen, slides "PA Algorithm" (``shared/papers/002``).
    """

    def __init__(self, *, variant="PA-I", C=1.0, fit_intercept=True, n_epochs=1,
                 shuffle=False, random_state=None, departures=None,
                 backend="cython"):
        self.variant = variant
        self.C = C
        self.fit_intercept = fit_intercept
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"variant": Options(*PA_VARIANTS), "C": Positive(),
                        "fit_intercept": Boolean(), "n_epochs": Integer(minimum=1)}

    def _make_state(self, n_features, sparse, X):
        return self._module().PAState(n_features, sparse, variant=PA_VARIANTS[self.variant],
                                      C=float(self.C), fit_intercept=bool(self.fit_intercept),
                                      departures=self.departures)


class ProximalPassiveAggressive(_LinearEstimator):
    """PA with a quasi-LDA proximal model: PAm, PAm-1, PAm-2 (Lee, Tseng, Chen).

    On each example with ℓ > 0: w ← w + γ w_p + α y x, where w_p is the
    quasi-LDA direction of the class statistics so far and
    α = (ℓ − γ y<w_p, x>)/||x||² (PAm; PAm-1: min{C, ·}; PAm-2: denominator
    + 1/(2C)), clipped at 0.  See :class:`refsvm.linear.passive_aggressive.PAmState` for the
    readings chosen where the slides are silent.

    Parameters
    ----------
    variant : {"PAm", "PAm-1", "PAm-2"}, default="PAm-1"
    C : float, default=1.0
    gamma : float, default=0.1
        Weight γ ≥ 0 of the proximal model (0 gives back PA).
    fit_intercept : bool, default=True
        A bias as the weight of a constant feature 1, as :class:`PassiveAggressive`
        (False: the slides' bias-free PAm).  True by measurement: on the 13 binary
        tasks of ``shared/data`` the bias raised the mean test accuracy by 4 to 7
        points (ijcnn1 62 -> 95, svmguide1 raw 75 -> 96).
    freeze_proximal : bool, default=False
        Freeze the proximal model after the first pass over the data -- the first
        epoch of ``fit``, or the first ``partial_fit`` call -- as the slides do (they
        build it in epoch 1 and then keep it).  False: the class statistics keep
        growing with every example (a stream has no epochs).
    n_epochs : int, default=1
    shuffle : bool, default=False
    random_state : int, RandomState or None
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`): PAm
        reads ``variance_roundoff`` (a class variance within its rounding error is 0);
        "paper" runs the printed variance, in both backends.
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_, coef_, intercept_, n_updates_, n_mistakes_ (prequential)

    Notes
    -----
    Any finite X is accepted, as by scikit-learn's linear models (no bound on
    ``|x_j|``, which only the kernel estimators need); where the arithmetic overflows
    on huge values the call raises ``ValueError`` and the model is left as it was
    (:doc:`/reliability`).

    Examples
    --------
    γ = 0 is PA exactly; with the proximal model the slides' point shows: fewer
    updates and a better single-pass model.

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from refsvm import PassiveAggressive, ProximalPassiveAggressive
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> pa = PassiveAggressive(variant="PA-I", C=0.5).fit(X, y)
    >>> np.array_equal(ProximalPassiveAggressive(C=0.5, gamma=0.0).fit(X, y).coef_, pa.coef_)
    True
    >>> pam = ProximalPassiveAggressive(variant="PAm-I", C=0.5, gamma=0.1).fit(X, y)
    >>> pam.n_updates_ < pa.n_updates_, pam.score(X, y) > pa.score(X, y)
    (True, True)

    References
    ----------
    Lee, Tseng, Chen, *Online Nonlinear SVM for Large-Scale Classification*,
    slides "PA Algorithm with a Proximal Classifier", "Closed Form Updating Rule
    of PAm Algorithm" (``shared/papers/002``); ALGORITHMS.md §3.
    """

    def __init__(self, *, variant="PAm-1", C=1.0, gamma=0.1, fit_intercept=True,
                 freeze_proximal=False, n_epochs=1, shuffle=False, random_state=None,
                 departures=None,
                 backend="cython"):
        self.variant = variant
        self.C = C
        self.gamma = gamma
        self.fit_intercept = fit_intercept
        self.freeze_proximal = freeze_proximal
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"variant": Options(*PAM_VARIANTS), "C": Positive(),
                        "gamma": NonNegative(), "fit_intercept": Boolean(),
                        "freeze_proximal": Boolean(), "n_epochs": Integer(minimum=1)}

    def _make_state(self, n_features, sparse, X):
        return self._module().PAmState(
            n_features, sparse, variant=PAM_VARIANTS[self.variant], C=float(self.C),
            gamma=float(self.gamma), fit_intercept=bool(self.fit_intercept),
            departures=self.departures)

    def _freeze(self):
        """After the first pass: the slides' proximal model is that of epoch 1."""
        if self.freeze_proximal:
            for state in self._states:
                state.frozen = True

    def _end_of_pass(self, state):
        if self.freeze_proximal:
            state.frozen = True

    def _learn(self, X, Ys, check):
        super()._learn(X, Ys, check)
        self._freeze()


class OnlineLinearSVM(_LinearEstimator):
    """Online linear SVM with 1/(λt) steps (Bagnell's notes; Pegasos).

    Minimises λ/2 ||w||² + mean hinge loss with one sub-gradient step per
    mini-batch: w ← (1 − 1/t) w + 1/(λ t k) Σ_{violators} y x, optionally
    projecting onto the ball ||w|| ≤ 1/√λ and averaging the iterates.

    Parameters
    ----------
    lam : float, default=1e-4
        Regularisation λ > 0.
    project : bool, default=False
        Project onto the ball of radius 1/√λ after every step.
    average : bool, default=False
        Predict with the average of all iterates.
    batch_size : int, default=1
        Examples per step (their sub-gradients averaged).
    fit_intercept : bool, default=True
        A bias as the weight of a constant feature 1 (regularised).  False is
        Bagnell's (and Pegasos') bias-free model.  True is the default, as in
        scikit-learn, chosen by measurement on ``shared/data`` (see
        :doc:`/bagnell`, "Defaults").
    n_epochs : int, default=1
    shuffle : bool, default=False
        Bagnell: "be sure data-points are randomized if you want to ensure good
        off-line (batch) performance".
    random_state : int, RandomState or None
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`); none
        concerns this algorithm: ``project``, ``average`` and ``batch_size`` are
        Bagnell's own options (Algorithm 1 and its tricks) and stay as set.
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_, coef_ (the average when ``average``), intercept_, n_updates_ (steps), n_mistakes_

    Notes
    -----
    ``fit`` applies the last, possibly incomplete, mini-batch of every epoch;
    ``partial_fit`` keeps an incomplete batch for the next call.

    Any finite X is accepted, as by scikit-learn's linear models (no bound on
    ``|x_j|``, which only the kernel estimators need); where the arithmetic overflows
    on huge values the call raises ``ValueError`` and the model is left as it was
    (:doc:`/reliability`).

    Examples
    --------
    A few shuffled passes come within 1 % of the batch optimum of the same objective
    (``LinearSVC`` with C = 1/(λn) solves it exactly), on unit-norm inputs as Bagnell
    advises:

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import LinearSVC
    >>> from refsvm import OnlineLinearSVM
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> def objective(w, lam=0.01):
    ...     return lam / 2 * w @ w + np.maximum(0, 1 - (2 * y - 1) * (X @ w)).mean()
    >>> svm = OnlineLinearSVM(lam=0.01, n_epochs=20, shuffle=True, random_state=0,
    ...                       fit_intercept=False).fit(X, y)
    >>> best = LinearSVC(C=1 / (0.01 * 200), loss="hinge", fit_intercept=False, tol=1e-8,
    ...                  max_iter=100000).fit(X, y)
    >>> bool(objective(svm.coef_[0]) < 1.01 * objective(best.coef_[0]))
    True

    References
    ----------
    J. A. Bagnell, *Notes on efficient online SVM implementation* (2010),
    Algorithm 1 (``shared/papers/003``); S. Shalev-Shwartz et al., "Pegasos",
    ICML 2007.
    """

    _reference = online_linear_svm
    _compiled = "refsvm.linear._online_linear_svm"

    def __init__(self, *, lam=1e-4, project=False, average=False, batch_size=1,
                 fit_intercept=True, n_epochs=1, shuffle=False, random_state=None,
                 departures=None,
                 backend="cython"):
        self.lam = lam
        self.project = project
        self.average = average
        self.batch_size = batch_size
        self.fit_intercept = fit_intercept
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"lam": Positive(), "project": Boolean(), "average": Boolean(),
                        "batch_size": Integer(minimum=1), "fit_intercept": Boolean(),
                        "n_epochs": Integer(minimum=1)}

    def _make_state(self, n_features, sparse, X):
        return self._module().PegasosState(
            n_features, sparse, lam=float(self.lam), project=bool(self.project),
            average=bool(self.average), batch_size=int(self.batch_size),
            fit_intercept=bool(self.fit_intercept), departures=self.departures)

    def _end_of_pass(self, state):
        state.flush()  # the last, possibly incomplete, mini-batch of the epoch

    def _weights(self, state):
        if state.average:
            return np.asarray(state.w_avg, dtype=np.float64).copy(), float(state.b_avg)
        return super()._weights(state)


class ReducedKernelPA(_Departures, BaseKernelClassifier):
    """Reduced-kernel Passive-Aggressive: RKPA, RKPA-1, RKPA-2 (Lee, Tseng, Chen).

    The linear PA run on the reduced-kernel features (φ(x), 1), with
    φ(x) = Λ^{-1/2} Pᵀ K(Ã, x) and K(Ã, Ã) + εI = PΛPᵀ: a non-linear online SVM
    whose cost per example is m̃ kernel evaluations, whatever the length of the
    stream.  f(x) = zᵀφ(x) + b, regulariser ½(‖z‖² + b²); α = ℓ/(‖φ‖² + 1) (RKPA),
    min{C, ·} (RKPA-1), ℓ/(‖φ‖² + 1 + 1/(2C)) (RKPA-2).

    Parameters
    ----------
    variant : {"PA", "PA-I", "PA-II"}, default="PA-I"
        RKPA, RKPA-1, RKPA-2 ("PA-1", "PA-2" accepted).
    C : float, default=1.0
    n_reduced : int, default=100
        m̃, the size of the reduced set (ignored when ``reduced_set`` gives the points).
        With a random reduced set drawn from fewer examples, all of them are used (a
        ``UserWarning`` says so), as scikit-learn's ``Nystroem`` does.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        Kernel width (the slides' Gaussian kernel exp(−γ‖x − z‖²)).
    degree : int, default=3
    coef0 : float, default=0.0
    eps : float, default=1e-8
        ε ≥ 0 added to the diagonal of K(Ã, Ã) "for numerical robustness".
    reduced_set : {"auto", "random", "first"} or array-like of shape (m̃, n_features)
        How Ã is chosen ("preselect", "randomly selects" on the slides): "random" is
        a random subset of the data given to ``fit`` (or to the first
        ``partial_fit``), drawn with ``random_state``; "first" the first m̃ distinct
        examples of that data, in stream order; "auto" is "random" for ``fit`` and
        "first" for ``partial_fit`` streams.  An array gives the points.
    n_epochs : int, default=1
    shuffle : bool, default=False
    random_state : int, RandomState or None
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`): RKPA
        reads ``passive_rtol`` (a loss of the size of round-off is passive); "paper"
        runs the printed test ℓ ≤ 0, in both backends.
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_, coef_ (z, in φ-space), intercept_ (b), n_updates_, n_kernel_evals_,
    reduced_set_ (the points Ã), reduced_indices_ (their rows in the data that gave
    them; None when given)

    Examples
    --------
    A single pass learns a non-linear rule that a linear PA cannot:

    >>> import numpy as np
    >>> from refsvm import PassiveAggressive
    >>> from refsvm.linear.estimators import ReducedKernelPA
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 2))
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)                # XOR quadrants
    >>> rkpa = ReducedKernelPA(C=1.0, n_reduced=50, gamma=2.0, random_state=0).fit(X, y)
    >>> pa = PassiveAggressive(C=1.0, fit_intercept=True).fit(X, y)
    >>> rkpa.score(X, y) > 0.9 > 0.7 > pa.score(X, y)
    True
    >>> rkpa.coef_.shape, rkpa.reduced_set_.shape
    ((1, 50), (50, 2))

    References
    ----------
    Lee, Tseng, Chen, *Online Nonlinear SVM for Large-Scale Classification*, slides
    "Sketch of Reduced Kernel PA", "Final Formulation of RKPA", Eq. (8)
    (``shared/papers/002``); ALGORITHMS.md §3.
    """

    _reference = reduced_kernel_pa
    _compiled = "refsvm.linear._reduced_kernel_pa"
    _snapshot_states = True  # fixed-size states: a failed partial_fit rolls back
    _state_class = "ReducedKernelPAState"

    def __init__(self, *, variant="PA-I", C=1.0, n_reduced=100, kernel="rbf", gamma="scale",
                 degree=3, coef0=0.0, eps=1e-8, reduced_set="auto", n_epochs=1,
                 shuffle=False, random_state=None, departures=None,
                 backend="cython"):
        self.variant = variant
        self.C = C
        self.n_reduced = n_reduced
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eps = eps
        self.reduced_set = reduced_set
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"variant": Options(*PA_VARIANTS), "C": Positive(),
                        "n_reduced": Integer(minimum=1), "eps": NonNegative(),
                        "n_epochs": Integer(minimum=1), "shuffle": Boolean(),
                        "random_state": RandomStateRule()}

    def _check_params(self):
        super()._check_params()
        if isinstance(self.reduced_set, str):
            if self.reduced_set not in ("auto", "random", "first"):
                raise ValueError("reduced_set must be 'auto', 'random', 'first' or an array "
                                 f"of points; got {self.reduced_set!r}")

    def _n_passes(self):
        return self.n_epochs

    def fit(self, X, y):
        self._fitting = True  # "auto" means a random subset for fit
        try:
            return super().fit(X, y)
        finally:
            self.__dict__.pop("_fitting", None)

    def _choose_reduced_set(self, X):
        """(points, indices) of Ã in the data ``X`` of the call that starts the model."""
        n = X.shape[0]
        how = self.reduced_set
        if not isinstance(how, str):
            points = check_array(how, accept_sparse="csr", dtype=np.float64,
                                 input_name="reduced_set")
            if points.shape[1] != X.shape[1]:
                raise ValueError(f"reduced_set has {points.shape[1]} features; X has "
                                 f"{X.shape[1]}")
            _check_reduced_size(points.shape[0], "reduced_set")
            return as_format(points, sp.issparse(X)), None
        m = int(self.n_reduced)
        _check_reduced_size(min(m, n), f"n_reduced={m} (capped at the {n} examples)")
        if how == "auto":
            how = "random" if self.__dict__.get("_fitting") else "first"
        if how == "random":
            if m > n:  # as scikit-learn's Nystroem: all the examples, with a warning
                warnings.warn(f"n_reduced={m} is larger than the {n} examples given to "
                              f"choose the reduced set from; using all {n}", UserWarning,
                              stacklevel=4)
                m = n
            rng = check_random_state(self.random_state)
            idx = np.sort(rng.choice(n, m, replace=False)).astype(np.intp)
        else:
            idx = _first_distinct_rows(X, m)
            if idx.shape[0] < m:
                raise ValueError(
                    f"n_reduced={m}, but the data that starts the model has only "
                    f"{idx.shape[0]} distinct examples: the reduced set is the first "
                    f"{m} distinct examples of the first partial_fit's data; give that "
                    "call at least as many, lower n_reduced, or pass the points as "
                    "reduced_set")
        return as_format(X[idx], sp.issparse(X)), idx

    def _start(self, X, classes):
        self.__dict__.pop("_reduced_choice", None)  # chosen by the first _make_state
        super()._start(X, classes)
        self.reduced_indices_ = self.__dict__.pop("_reduced_choice")[1]

    @property
    def reduced_set_(self):
        """The reduced set Ã, shape (m̃, n_features) (dense or CSR, as the data)."""
        check_is_fitted(self, "classes_")
        return self._states[0].feature_map.reduced

    def _state_params(self):
        return {"variant": PA_VARIANTS[self.variant], "C": float(self.C),
                "departures": self.departures}

    def _make_state(self, n_features, sparse, X):
        if "_reduced_choice" not in self.__dict__:  # one Ã for every one-vs-rest problem
            self._reduced_choice = self._choose_reduced_set(X)
        kind, gamma, degree, coef0 = self._kernel_args(X)
        return getattr(self._module(), self._state_class)(
            n_features, sparse, reduced=self._reduced_choice[0], kernel=kind, gamma=gamma,
            degree=degree, coef0=coef0, eps=float(self.eps), **self._state_params())

    @property
    def coef_(self):
        """z in φ-space, shape (1, m̃) for two classes, (n_classes, m̃) otherwise."""
        return np.vstack([np.asarray(s.z, dtype=np.float64).copy() for s in self._states])

    @property
    def intercept_(self):
        return np.array([float(s.b) for s in self._states])

    @property
    def n_updates_(self):
        return int(sum(s.n_updates for s in self._states))


class ProximalReducedKernelPA(ReducedKernelPA):
    """Reduced-kernel PA with a proximal model: RKPAm, RKPAm-1, RKPAm-2 (Lee, Tseng, Chen).

    RKPA plus γ z_p, the reduced-kernel Fisher discriminant of the classes seen so
    far (Eq. 9): ũ_p = [COV(K(A₊, Ã)) + COV(K(A₋, Ã))]⁻¹ (M̃₊ − M̃₋) from online
    per-class statistics of the kernel rows, mapped to φ-space
    (z_p = Λ^{1/2} Pᵀ ũ_p), with the midpoint bias b_p = −ũ_pᵀ(M̃₊ + M̃₋)/2.  See
    :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelPAmState`.

    Parameters
    ----------
    variant : {"PAm", "PAm-I", "PAm-II"}, default="PAm-I"
        RKPAm, RKPAm-1, RKPAm-2 ("PAm-1", "PAm-2" accepted).
    proximal_weight : float, default=0.01
        γ ≥ 0 of Eq. (9), the weight of the proximal model (0 gives RKPA).  The
        slides call it γ like the kernel width, which is ``gamma`` here.  The
        proximal term enters every update, so its share of the model grows with the
        number of updates: 0.1 let it dominate on most real sets (see below).
    covariance : {"diagonal", "full"}, default="full"
        The slides' quasi-KFD (variances only, O(m̃) per example; the departure
        ``shrinkage`` adds μ = 0.1 × the mean pooled variance to every variance, since
        a reduced point far from the few examples seen early has a genuine variance
        near 0 and its quotient then throws z far for good) or the full
        covariance: ũ_p solves [COV₊ + COV₋ + μI] ũ_p = M̃₊ − M̃₋, μ = 0.1 × the mean
        variance (the departure ``shrinkage``: the covariance of kernel rows is
        singular early in a stream and numerically singular later); the class
        normalisers and μ are refreshed when a class count has grown by 10 % (the
        departure ``refresh_growth``, O(log n) times), in between the matrix
        changes by a rank one per example and the compiled twin keeps its Cholesky
        factor by rank-one updates: O(m̃²) per example and per update -- the order of
        the feature map φ(x) = K̃^{-1/2} K(Ã, x) that every example costs anyway.
    departures : None, "default", "paper" or dict, default=None
        The linear family's departures (:mod:`refsvm.linear.departures`):
        ``passive_rtol``, ``variance_roundoff`` (the diagonal covariance), ``shrinkage``
        (both covariances) and ``refresh_growth`` (the full covariance); "paper" runs the printed steps in both
        backends: ℓ ≤ 0, the printed variances, and COV₊ + COV₋ without ridge, refreshed
        at every example (O(m̃³) per update).  The printed full covariance is often
        singular to rounding: the paper form with ``covariance="full"`` can then raise
        ``LinAlgError`` (python backend) or give the two backends different models.
    (the others as :class:`ReducedKernelPA`)

    Notes
    -----
    *Defaults, by measurement.*  ALGORITHMS.md §3 suggests the diagonal as the
    cheap default.  With default settings on the 13 binary tasks of ``shared/data``
    (4,000 training rows at most, standardised; ``benchmarks/bench_defaults.py``),
    the diagonal form with weight 0.1 was on average 12.3 points of test accuracy
    below ``SVC`` (ionosphere, banana, usps, w3a, ijcnn1: 17-21 points; w3a and
    ijcnn1 below the majority class), 8.4 points below RKPA itself; the full
    covariance with weight 0.01 was about 2 points below ``SVC`` (RKPA: 3-4; the
    random reduced set moves these by a point between runs), in about
    the same time (the O(m̃²) feature map dominates both).  So the defaults are the
    full covariance and 0.01; ``refsvm reproduce lee-tseng-chen`` uses the slides'
    diagonal form with the weight chosen on a validation split.  See
    :doc:`/lee_tseng_chen`, "Defaults".

    Examples
    --------
    Proximal weight 0 is RKPA exactly:

    >>> import numpy as np
    >>> from refsvm.linear.estimators import ProximalReducedKernelPA, ReducedKernelPA
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    >>> kw = dict(C=1.0, n_reduced=30, gamma=2.0, random_state=0)
    >>> rkpam = ProximalReducedKernelPA(proximal_weight=0.0, **kw).fit(X, y)
    >>> bool(np.allclose(rkpam.coef_, ReducedKernelPA(**kw).fit(X, y).coef_))
    True

    References
    ----------
    Lee, Tseng, Chen, slides "Reduced Kernel Fisher Discriminant Analysis (RKFDA)",
    "RKPAm: RKPA+quasi-KFD", Eq. (9) (``shared/papers/002``); ALGORITHMS.md §3.
    """

    _state_class = "ReducedKernelPAmState"

    def __init__(self, *, variant="PAm-I", C=1.0, proximal_weight=0.01, covariance="full",
                 n_reduced=100, kernel="rbf", gamma="scale", degree=3, coef0=0.0, eps=1e-8,
                 reduced_set="auto", n_epochs=1, shuffle=False, random_state=None,
                 departures=None,
                 backend="cython"):
        self.variant = variant
        self.C = C
        self.proximal_weight = proximal_weight
        self.covariance = covariance
        self.n_reduced = n_reduced
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eps = eps
        self.reduced_set = reduced_set
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"variant": Options(*PAM_VARIANTS), "proximal_weight": NonNegative(),
                        "covariance": Options("diagonal", "full")}

    def _state_params(self):
        return {"variant": PAM_VARIANTS[self.variant], "C": float(self.C),
                "proximal_weight": float(self.proximal_weight),
                "covariance": self.covariance, "departures": self.departures}


#: The largest reduced set: its m̃ x m̃ kernel matrix takes 8 m̃² bytes, 2 GiB at this size
#: (docs/reliability.rst, "Memory").
MAX_REDUCED_SET = 16384


def _check_reduced_size(m, what):
    """Refuse a reduced set whose m̃ x m̃ matrices would exceed MAX_REDUCED_SET² doubles,
    before anything is allocated."""
    if m > MAX_REDUCED_SET:
        raise ValueError(f"{what}: a reduced set of {m} points needs {8 * m * m / 2**30:.1f} "
                         f"GiB per {m} x {m} kernel matrix; at most {MAX_REDUCED_SET} points "
                         "are accepted (choose a smaller n_reduced)")


def _first_distinct_rows(X, m):
    """Positions of the first m distinct rows of X (dense or CSR), in order."""
    seen, idx = set(), []
    for i in range(X.shape[0]):
        if sp.issparse(X):
            row = X.getrow(i)
            row.sum_duplicates()
            key = (row.indices.tobytes(), row.data.tobytes())
        else:
            key = np.ascontiguousarray(X[i]).tobytes()
        if key not in seen:
            seen.add(key)
            idx.append(i)
            if len(idx) == m:
                break
    return np.asarray(idx, dtype=np.intp)
