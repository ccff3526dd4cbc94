"""The user-facing learners of the ramp family (either twin, ``backend=``).

- :class:`OnlineRampSVM`: the scikit-learn estimator of OnlineSVMR (Algorithms 1-2);
- :class:`OnlineASVMR`, :class:`QueryAll`, :class:`Greedy`: online active learning
  (Algorithm 3 and the baselines of Sec. V.E) with learning curves (:class:`LearningCurve`,
  Fig. 6); the strategies themselves are the reference :mod:`refsvm.ramp.online_asvmr`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validation import (Boolean, DeparturesRule, Integer, NonNegative, Options, Positive,
                           as_format, check_int, check_kernel_rows, check_magnitude,
                           check_params, check_sparse_structure, kernel_rules, load_backend,
                           resolve_gamma)
from ..base import _ARRAY_CHECKS, BaseKernelClassifier, SupportVectorsMixin
from . import cccp as _cccp
from . import online_asvmr as _strategies
from . import online_svmr as _reference_module
from .departures import DEPARTURES

__all__ = ["Greedy", "LearningCurve", "OnlineASVMR", "OnlineRampSVM", "QueryAll"]


class OnlineRampSVM(SupportVectorsMixin, BaseKernelClassifier):
    """Online ramp-loss SVM (OnlineSVMR, Wang & Vucetic 2009).

    One pass over the data in the given order (``fit``), or continued
    learning (``partial_fit``).  The model has no bias (the paper's Eq. 4) unless
    ``fit_intercept=True``.  After every example the model is an approximate CCCP
    fixed point of the ramp-loss SVM (Eq. 7) reached along the online path — not
    the CCCP optimum over all examples seen, since an example that left the active
    set is not revisited: the KKT conditions (Eq. 3) hold within the stopping rule's
    tolerance on the active set V (Eq. 10), and every support vector lies in the
    sloped part of the ramp, -1 <= y f(x) <= 1.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint (Eq. 2): weight of the ramp loss in Eq. (7).
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        RBF width, k = exp(-gamma ||x - z||^2); the paper's delta^2 is
        1 / (2 gamma).  "scale"/"auto" as in :class:`sklearn.svm.SVC`.
    degree : int, default=3
    coef0 : float, default=0.0
    tol : float, default=1e-3
        KKT tolerance of the stopping rule (Alg. 1 step 10).
    min_gain : float, default=3e-6
        Gain threshold of the second stopping rule (Eq. 13): the best gain of a
        coordinate step below ``min_gain`` times the dual objective D
        (``stop="relative"``), or below ``min_gain`` itself (``stop="gain"``, the
        paper's rule, whose value is 1e-5), ends the inner loop.  3e-6 is chosen with
        the bias and the finishing step on, on the 13 tasks of
        ``benchmarks/bench_defaults.py`` (``docs/wang_vucetic.rst``, "Defaults on real
        data").
    stop : {"relative", "gain"}, default="relative"
        "gain" is the paper's absolute rule; "relative" measures the gain against
        the dual objective D = sum alpha - 1/2 alpha' Q alpha, so that the rule does
        not depend on the scale of the problem (C, k(x, x), the number of support
        vectors).  On the real data sets of ``benchmarks/bench_real_data.py`` it takes
        6x fewer coordinate steps in all (up to 12x) and 16 % fewer kernel evaluations
        than the paper's rule (``stop="gain", min_gain=1e-5``) for the same mean test
        accuracy and 3 % more support vectors (``docs/wang_vucetic.rst``, reading 16).
    fit_intercept : bool, default=True
        Learn f(x) = sum_i y_i alpha_i k(x_i, x) + b with b regularised like a weight
        (the kernel k + 1; ``intercept_`` = b).  False is the zero-bias model of
        the paper (Eq. 4).  Where the classes are not centred around the origin of the
        feature space the zero-bias model needs many more support vectors (measured on
        every data set of ``shared/data``, ``benchmarks/bench_defaults.py``:
        ``docs/wang_vucetic.rst``, reading 15).
    finish_gain : float or None, default=1e-9
        ``fit`` ends with a *finishing step* (not in the paper; LASVM's, Bordes et
        al. 2005): steps 9-27 once more on the examples kept, with this gain
        threshold (read as ``min_gain``) instead of ``min_gain``, then Algorithm 2.
        It drives to 0 the coordinates that the online loop left slightly above it:
        up to 10 % fewer support vectors (ijcnn1), within 2 % of the ramp model's
        offline optimum's count where that has more than LIBSVM (dna), for a few
        per cent of the fit's time (``docs/defaults.rst``).  ``partial_fit`` has
        no finishing step, so ``fit`` equals ``partial_fit`` on the same rows followed
        by ``state.finish(finish_gain)``; None: no finishing step.
    max_non_sv : int or None, default=100
        ``m`` of Algorithm 2 (the removal step): keep at most m non-support vectors,
        dropping those farthest from the boundary -- by default at most ``max(m, #SV)``
        of them (the departure ``budget_per_sv``, 1 by default: the budget grows with the
        number of support vectors, so that I holds at most 2 #SV + m examples).  None:
        keep all.  The budget of the paper (m alone, 100 as in its Fig. 5) is the
        speed option ``departures={"budget_per_sv": 0}``, and it drops examples the
        model needs on noisy data: on Haykin's Gauss at C = 10 it loses two to three
        points of test accuracy against LIBSVM (``docs/defaults.rst`` has the measured
        table, every row of ``shared/data`` and the generated ones).  Memory: the index set I holds at
        most ``max(m, budget_per_sv #SV) + #SV`` examples and their kernel rows among I,
        i.e. ``O(#SV · |I|)`` doubles (``benchmarks/bench_soak.py`` asserts the bound;
        ``docs/reliability.rst`` gives the figures).
    warmup : int, default=200
        Learn the first ``warmup`` examples of the stream with the hinge loss (no
        example is an outlier yet), then switch to the ramp: the examples with
        y f(x) < -1 leave the active set then.  Not in the paper (``warmup=0`` is its
        algorithm): CCCP's usual start from the hinge-loss solution.  Without it, a
        stream can fix a wrong model in its first few dozen examples and then ignore,
        as outliers, every later example that model gets badly wrong: on Banana (C = 1
        and 10, 8 random orders each) 3 of 16 runs ended at 67-71 % test accuracy and
        the benchmark's order at 85.6 % (LIBSVM: 88.7 %); with ``warmup=200`` all 16
        end at 88.3-89.0 %.  On noisy data the pass can still settle in a poor local
        optimum: its updates unlearn and relearn the same examples (a checkerboard at a
        kernel as wide as its squares), or it freezes on a small model (Gauss at
        gamma = 2, C = 10).  Once the updates have unlearned more than 5 % of the
        arrivals, the departure ``rewarm`` (on by default) learns the stream in hinge
        stretches, each ended by the ramp's steps 9-27 once (CCCP's start again), and
        ``fit``'s finishing step ends the last one (``docs/wang_vucetic.rst``, "Hinge
        stretches").  ``warmup=len(X) - 1`` in ``fit`` learns the whole pass
        with the hinge loss and runs steps 9-27 once at its end, at about the hinge
        SVM's time and memory (``docs/defaults.rst``).
    shrinking : bool, default=True
        Run the inner loop (Alg. 1 steps 10-15) in rounds on a working set
        that leaves out the members of V at a bound with Eq. (3) met by a wide
        margin, updating their g once per round (as LIBSVM's ``shrinking``;
        see :meth:`OnlineSVMR._optimize_shrunk`).  The stopping rule and the
        guarantees are the same; False runs the loop exactly as printed.  The
        two can end in different local optima of the non-convex problem.
    keep_rows : bool, default=True
        When alpha_i returns to 0, keep (*park*) the kernel row of example i and,
        when alpha_i leaves 0 again, compute only the values of the examples that
        arrived since, instead of the whole row (at most #SV rows parked, the
        oldest dropped first; memory stays ``O(#SV · |I|)``).  The model is the same
        bit for bit; only kernel evaluations and time differ.  False: the row is
        released and rebuilt.
    departures : None, "default", "paper" or dict, default=None
        The departures from the printed Algorithms 1-2 (:data:`refsvm.ramp.departures.DEPARTURES`;
        ``docs/wang_vucetic.rst``, "The printed algorithm").  None: all on.  "paper": the
        algorithm exactly as printed, in either backend: ``shrinking``, ``keep_rows``,
        ``stop="relative"``, ``warmup``, ``fit_intercept`` and the finishing step
        (``finish_gain``) are overridden (off), and so are the pair and block steps and the
        hold-out of steps 16-27 (on a stream where the printed steps 9-27 cycle, ``fit``
        raises a RuntimeError).  A dict changes the named settings (``"base"``: "default"
        or "paper").
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Stream positions of the support vectors (union over one-vs-rest
        problems), counted over all ``fit``/``partial_fit`` calls.
    support_vectors_ : ndarray or sparse matrix
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_i alpha_i, one row per binary problem (one for two classes).
    n_support_ : ndarray of int
        Support vectors per class.
    n_kernel_evals_ : int
    intercept_ : ndarray of shape (n_problems,)
        b of each binary problem (0 without ``fit_intercept``): f(x) =
        ``dual_coef_ K(support_vectors_, x) + intercept_``, as in :class:`sklearn.svm.SVC`.
    n_I_, n_V_ : int
        Sizes of I (examples kept) and V (active set), summed over problems.

    Examples
    --------
    The point of the ramp loss: examples badly on the wrong side (y f(x) < -1, the flat
    part of the ramp) leave the active set and stop being support vectors, so on a noisy
    stream the model keeps a fraction of the support vectors of a hinge-loss SVM at the
    same accuracy (Wang & Vucetic, Table 1):

    >>> from sklearn.svm import SVC
    >>> from refsvm import OnlineRampSVM
    >>> from refsvm.datasets import make_two_gaussians
    >>> X, y = make_two_gaussians(1000, random_state=0)
    >>> X_test, y_test = make_two_gaussians(1000, random_state=1)
    >>> ramp = OnlineRampSVM(C=1.0, gamma=0.5).fit(X, y)      # one online pass
    >>> svc = SVC(C=1.0, gamma=0.5).fit(X, y)
    >>> ramp.support_.size < svc.support_.size / 2
    True
    >>> abs(ramp.score(X_test, y_test) - svc.score(X_test, y_test)) < 0.02
    True

    References
    ----------
    Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector
    Machines", ICDM 2009, Algorithms 1-2, Eqs. (3), (7), (10), (13)-(15).
    """

    _reference = _reference_module
    _compiled = "refsvm.ramp._online_svmr"

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 min_gain=3e-6, stop="relative", fit_intercept=True, max_non_sv=100,
                 warmup=200, shrinking=True, keep_rows=True, finish_gain=1e-9,
                 departures=None, backend="cython"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.min_gain = min_gain
        self.stop = stop
        self.fit_intercept = fit_intercept
        self.max_non_sv = max_non_sv
        self.warmup = warmup
        self.shrinking = shrinking
        self.keep_rows = keep_rows
        self.finish_gain = finish_gain
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"C": Positive(), "tol": Positive(), "min_gain": NonNegative(),
                        "stop": Options(*_reference_module.STOP_RULES),
                        "fit_intercept": Boolean(),
                        "max_non_sv": Integer(minimum=0, allow_none=True),
                        "warmup": Integer(minimum=0),
                        "shrinking": Boolean(), "keep_rows": Boolean(),
                        "finish_gain": NonNegative(allow_none=True),
                        "departures": DeparturesRule(DEPARTURES)}

    def _make_state(self, n_features, sparse, X):
        kind, gamma, degree, coef0 = self._kernel_args(X)
        return self._module().OnlineSVMR(
            n_features, sparse, C=float(self.C), kernel=kind, gamma=gamma, degree=degree,
            coef0=coef0, tol=float(self.tol), min_gain=float(self.min_gain),
            max_non_sv=-1 if self.max_non_sv is None else int(self.max_non_sv),
            shrinking=bool(self.shrinking), fit_intercept=bool(self.fit_intercept),
            stop=self.stop, keep_rows=bool(self.keep_rows), warmup=int(self.warmup),
            departures=self.departures)

    def _end_of_pass(self, state):
        """``fit``'s finishing step (``finish_gain``; ``partial_fit`` has none; nothing when
        the departure ``finish`` is off)."""
        if self.finish_gain is not None:
            state.finish(float(self.finish_gain))

    @property
    def intercept_(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")
        return np.array([s.intercept() for s in self._states], dtype=np.float64)

    @property
    def n_I_(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")
        return int(sum(s.get_state()["I"].shape[0] for s in self._states))

    @property
    def n_V_(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")
        return int(sum(s.get_state()["V"].shape[0] for s in self._states))


# ---------------------------------------------------------------------------- active learning
@dataclass
class LearningCurve:
    """Accuracy against labels queried, one point per checkpoint.

    Attributes
    ----------
    n_seen, n_labels, n_support, n_kernel_evals : ndarray of int
        Stream examples seen, labels queried, support vectors and kernel
        evaluations at each checkpoint.
    accuracy : ndarray of float
        Accuracy on the test set at each checkpoint (NaN without a test set).
    queried : ndarray of int
        Stream positions of the queried examples, in query order.
    """

    n_seen: np.ndarray
    n_labels: np.ndarray
    accuracy: np.ndarray
    n_support: np.ndarray
    n_kernel_evals: np.ndarray
    queried: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))


class _ActiveLearner:
    """Shared machinery: one OnlineSVMR state, an oracle, checkpoints.

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, tol, min_gain, max_non_sv, backend
        As :class:`refsvm.OnlineRampSVM` (the inner loop runs as printed,
        ``shrinking=False``).  ``gamma`` "scale" (the default) or "auto" is resolved on
        the stream of each ``run``, as :class:`sklearn.svm.SVC` resolves it on its
        training set; the value used is ``gamma_``.
    stop, fit_intercept : default "gain", False
        As :class:`refsvm.OnlineRampSVM`, but the paper's rule and zero-bias model by
        default (these learners reproduce Sec. V.E).
    warmup : int, default=0
        As :class:`refsvm.OnlineRampSVM` (0 here: the paper's algorithms): the first
        ``warmup`` labelled examples are learned with the hinge loss, and OnlineASVMR
        queries every example until it has them (the hinge region is the whole space).
        The same early freeze shows here: OnlineASVMR on Banana (C = 1 and 10, 6 random
        orders each) ended at 67-71 % in 3 of 12 runs (88.5-88.9 % in the others);
        ``warmup=200`` avoids it (``docs/wang_vucetic.rst``, reading 18).
    departures : None, "default", "paper" or dict, default=None
        As :class:`refsvm.OnlineRampSVM`: "paper" runs Algorithms 1-3 exactly as printed
        (``stop``, ``fit_intercept`` and ``warmup`` overridden).
    classes : pair of labels, default=(-1, 1)
        The oracle's labels; ``classes[1]`` is the positive class.
    """

    _parameter_rules = {**kernel_rules(), "C": Positive(),
                        "tol": Positive(), "min_gain": NonNegative(),
                        "stop": Options(*_reference_module.STOP_RULES),
                        "fit_intercept": Boolean(),
                        "max_non_sv": Integer(minimum=0, allow_none=True),
                        "warmup": Integer(minimum=0),
                        "departures": DeparturesRule(DEPARTURES)}

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 min_gain=1e-5, max_non_sv=None, backend="cython", classes=(-1, 1),
                 stop="gain", fit_intercept=False, warmup=0, departures=None):
        self.C, self.kernel, self.gamma, self.degree, self.coef0 = C, kernel, gamma, degree, coef0
        self.tol, self.min_gain, self.max_non_sv = tol, min_gain, max_non_sv
        self.stop, self.fit_intercept, self.warmup = stop, fit_intercept, warmup
        self.departures = departures
        check_params(self, self._parameter_rules)
        if len(classes) != 2 or classes[0] == classes[1]:
            raise ValueError(f"classes must be two distinct labels; got {classes!r}")
        self.params = dict(C=float(C), kernel=kernel,
                           gamma=gamma if isinstance(gamma, str) else float(gamma),
                           degree=int(degree),
                           coef0=float(coef0), tol=float(tol), min_gain=float(min_gain),
                           max_non_sv=-1 if max_non_sv is None else int(max_non_sv),
                           stop=stop, fit_intercept=bool(fit_intercept), warmup=int(warmup),
                           departures=departures)
        self.backend = backend
        self.classes = tuple(classes)
        self.module = load_backend(backend, _reference_module, "refsvm.ramp._online_svmr")
        self.state = None
        self._max_sqnorm = 0.0  # the stream's largest squared row norm (``run``)

    # ---------------------------------------------------------------- helpers
    def _sign(self, label):
        if label == self.classes[1]:
            return 1.0
        if label == self.classes[0]:
            return -1.0
        raise ValueError(f"the oracle returned {label!r}, not one of {self.classes}")

    def _select(self, X, ask, start, stop):
        """Process stream positions [start, stop) with the strategy; the positions queried
        (``ask(i)`` gives the label +-1 of position i)."""
        raise NotImplementedError

    def _block(self):
        return 1

    def _check_rows(self, X):
        """X as the estimators take it (``_ARRAY_CHECKS``): a 2-D float64 array or CSR
        matrix of at least one row and one column, of sound sparse structure, without
        NaN, infinity or a value whose square overflows (``check_magnitude``)."""
        from sklearn.utils import check_array

        check_sparse_structure(X)
        X = check_array(X, estimator=self, **_ARRAY_CHECKS)
        check_magnitude(X)
        return X

    @staticmethod
    def _check_one_label_per_row(X, y, x_name, y_name):
        """y as a 1-D array of one label per row of X (a ValueError naming both)."""
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"{x_name} has {X.shape[0]} rows and {y_name} {y.shape} labels; "
                             "one label per row")
        return y

    def _check_fitted(self):
        """sklearn's NotFittedError before the first successful ``run``."""
        if self.state is None:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'run' with "
                "appropriate arguments before using this estimator.")

    def _check_features(self, X, n_features, x_name):
        """X has the ``n_features`` columns of the stream (a ValueError naming X)."""
        if X.shape[1] != n_features:
            raise ValueError(f"{x_name} has {X.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {n_features} features as input.")

    def _kernel(self, gamma=None):
        """(kernel, gamma, degree, coef0) as the state uses them: the gamma of the last
        ``run`` (``gamma_``), or the one given."""
        return [self.params["kernel"], self.gamma_ if gamma is None else gamma,
                self.params["degree"], self.params["coef0"]]

    def _labels_of(self, f):
        """The class of each decision value: ``classes[1]`` where f > 0."""
        return np.where(f > 0, self.classes[1], self.classes[0])

    # ---------------------------------------------------------------- public API
    def run(self, X, oracle, X_test=None, y_test=None, eval_every=100, max_labels=None):
        """Run the strategy over the stream X (rows in order), from a new model.

        Parameters
        ----------
        X : ndarray or CSR matrix, shape (n, d)
            The unlabelled stream.
        oracle : callable or array-like
            ``oracle(i)`` gives the label of stream position i (an array is
            read as ``y[i]`` and must hold one label of ``classes`` per row of X).
            It is called only for queried examples.
        X_test, y_test : optional
            Test set for the accuracy of the learning curve (``y_test`` one label per row
            of ``X_test``, which has the d features of X).
        eval_every : int
            A checkpoint every ``eval_every`` stream examples (and at the end).
        max_labels : int, optional
            Stop once this many labels have been queried.

        Returns
        -------
        LearningCurve

        Raises
        ------
        ValueError
            On bad input, before anything is learned: X not 2-D or without a row or a
            column, NaN, infinity or overflowing values or kernel values, an oracle array
            that is not one label of ``classes`` per row, a test set that does not match.

        Notes
        -----
        The call is atomic: if it raises (bad input, an error of a callable oracle
        partway through the stream, Ctrl-C), the learner is exactly as it was before the
        call: ``state``, ``queried`` and ``curve_`` those of the previous run, if any.
        """
        # every input is checked before the learner changes
        eval_every = check_int("eval_every", eval_every, minimum=1)
        check_int("max_labels", max_labels, minimum=1, allow_none=True)
        X = self._check_rows(X)
        sparse = sp.issparse(X)
        X = as_format(X, sparse)
        gamma = resolve_gamma(self.params["gamma"], X)
        kernel = self._kernel(gamma)
        sq = check_kernel_rows(X, *kernel, where="the stream")
        if not callable(oracle):
            # an array holds every label: all are checked here (a callable's answers are
            # checked as they come, by _sign)
            labels = self._check_one_label_per_row(X, oracle, "X", "the oracle array")
            known = (labels == self.classes[0]) | (labels == self.classes[1])
            if not np.all(known):
                self._sign(labels[np.flatnonzero(~known)[0]])  # the error names the label
            oracle = labels.__getitem__
        if X_test is not None:
            if y_test is None:
                raise ValueError("X_test is given without y_test")
            X_test = self._check_rows(X_test)
            self._check_features(X_test, X.shape[1], "X_test")
            X_test = as_format(X_test, sparse)
            check_kernel_rows(X_test, *kernel, against=sq, where="the test rows and the stream")
            y_test = self._check_one_label_per_row(X_test, y_test, "X_test", "y_test")

        def ask(i):
            return self._sign(oracle(i))

        def accuracy():
            # X_test is checked above: the state reads it as it is
            return float(np.mean(self._labels_of(self.state.decision_function(X_test))
                                 == y_test))

        saved = self.__dict__.copy()
        try:
            self.state = self.module.OnlineSVMR(X.shape[1], sparse,
                                                **{**self.params, "gamma": gamma})
            self.gamma_ = gamma
            self._max_sqnorm = sq  # the kernel range check of rows to predict
            self.queried = []
            curve = {k: [] for k in ("n_seen", "n_labels", "accuracy", "n_support",
                                     "n_kernel_evals")}
            n = X.shape[0]
            h = self._block()
            t = 0
            next_eval = eval_every
            while t < n:
                stop = min(t + h, n)
                self.queried.extend(self._select(X, ask, t, stop))
                t = stop
                done = max_labels is not None and len(self.queried) >= max_labels
                if t >= next_eval or t == n or done:
                    curve["n_seen"].append(t)
                    curve["n_labels"].append(len(self.queried))
                    curve["accuracy"].append(accuracy() if X_test is not None else np.nan)
                    curve["n_support"].append(int(np.sum(self.state.get_state()["alpha"] != 0)))
                    curve["n_kernel_evals"].append(int(self.state.n_kernel_evals))
                    while next_eval <= t:
                        next_eval += eval_every
                if done:
                    break
            self.curve_ = LearningCurve(
                n_seen=np.array(curve["n_seen"], np.intp),
                n_labels=np.array(curve["n_labels"], np.intp),
                accuracy=np.array(curve["accuracy"], np.float64),
                n_support=np.array(curve["n_support"], np.intp),
                n_kernel_evals=np.array(curve["n_kernel_evals"], np.int64),
                queried=np.array(self.queried, np.intp))
        except BaseException:
            # the learner as it was: the previous run's state is a separate object, untouched
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self.curve_

    def decision_function(self, X):
        """f(x) of the model learned by the last ``run``.

        Parameters
        ----------
        X : ndarray or CSR matrix, shape (n, d)
            Rows with the d features of the stream, without NaN, infinity or overflowing
            values.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``run``.
        ValueError
            On bad X (as ``run`` checks the stream) or another number of features.
        """
        self._check_fitted()
        X = self._check_rows(X)
        self._check_features(X, self.state.n_features, "X")
        check_kernel_rows(X, *self._kernel(), against=self._max_sqnorm,
                          where="these rows and the stream")
        return self.state.decision_function(as_format(X, self.state.sparse))

    def predict(self, X):
        """``classes[1]`` where f(x) > 0, else ``classes[0]`` (X as in
        :meth:`decision_function`)."""
        return self._labels_of(self.decision_function(X))

    def score(self, X, y):
        """Accuracy on ``(X, y)``: X as in :meth:`decision_function`, y one label per row."""
        pred = self.predict(X)
        return float(np.mean(pred == self._check_one_label_per_row(pred, y, "X", "y")))


class QueryAll(_ActiveLearner):
    """Query every example: plain OnlineSVMR (Algorithm 1), the baseline of Sec. V.E.

    Examples
    --------
    >>> from refsvm import QueryAll
    >>> from refsvm.datasets import make_two_gaussians
    >>> X, y = make_two_gaussians(500, random_state=0)
    >>> curve = QueryAll(C=1.0, gamma=0.5).run(X, y, eval_every=250)
    >>> curve.n_labels          # one label per stream example
    array([250, 500])
    """

    def _select(self, X, ask, start, stop):
        return _strategies.query_all(self.state, X, ask, start, stop)


class Greedy(_ActiveLearner):
    """Of each block of the ``h`` most recent examples, query the one with the smallest ``|f(x)|``.

    Parameters
    ----------
    h : int, default=5
        Block length (the paper's h = 5; h = 1 is QueryAll).
    **params
        As :class:`QueryAll`.

    Examples
    --------
    One label per block of h = 5 examples, whatever the model:

    >>> from refsvm import Greedy
    >>> from refsvm.datasets import make_two_gaussians
    >>> X, y = make_two_gaussians(500, random_state=0)
    >>> curve = Greedy(h=5, C=1.0, gamma=0.5).run(X, y, eval_every=250)
    >>> curve.n_labels
    array([ 50, 100])
    """

    def __init__(self, h=5, **params):
        super().__init__(**params)
        self.h = check_int("h", h, minimum=1)

    def _block(self):
        return self.h

    def _select(self, X, ask, start, stop):
        return _strategies.greedy(self.state, X, ask, self.h, start, stop)


class OnlineASVMR(_ActiveLearner):
    """Algorithm 3: query x only when ``|f(x)| <= 1``, then steps 6-27 of Algorithm 1.

    Examples
    --------
    The point of Fig. 6: asking only for the labels of examples in the ramp region,
    OnlineASVMR needs a fraction of QueryAll's labels for about the same accuracy:

    >>> from refsvm import OnlineASVMR, QueryAll
    >>> from refsvm.datasets import make_two_gaussians
    >>> X, y = make_two_gaussians(2000, random_state=0)
    >>> X_test, y_test = make_two_gaussians(2000, random_state=1)
    >>> active = OnlineASVMR(C=1.0, gamma=0.5).run(X, y, X_test, y_test, eval_every=2000)
    >>> every = QueryAll(C=1.0, gamma=0.5).run(X, y, X_test, y_test, eval_every=2000)
    >>> bool(active.n_labels[-1] < every.n_labels[-1] / 2)
    True
    >>> bool(active.accuracy[-1] > every.accuracy[-1] - 0.02)
    True
    """

    def _select(self, X, ask, start, stop):
        return _strategies.online_asvmr(self.state, X, ask, start, stop)


def cccp_ramp(X, y, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, **kwargs):
    """:func:`refsvm.ramp.cccp.cccp_ramp` (the offline ramp-loss SVM by CCCP, the reference
    solver) on checked input, as the estimators check theirs: X a 2-D float array or CSR
    matrix with one row per label, no NaN, infinity or value whose square overflows, y of
    -1 and +1, kernel values that stay finite.  The reference itself reads its input as
    given (it holds only the algorithm); fuzzing found that NaN or overflowing input was
    solved silently to alpha = 0.  Parameters and result as there."""
    from sklearn.utils import check_array

    X = check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows and y {y.shape} labels; one label per row")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must hold the labels -1 and +1")
    check_sparse_structure(X)
    check_magnitude(X)
    check_kernel_rows(X, kernel, float(gamma), int(degree), float(coef0))
    return _cccp.cccp_ramp(X, y, C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                           **kwargs)
