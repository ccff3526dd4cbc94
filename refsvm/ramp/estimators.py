"""Scikit-learn estimator of the ramp family: :class:`OnlineRampSVM` (either twin)."""

from __future__ import annotations

from .._validation import Boolean, Integer, NonNegative, Positive
from ..base import BaseKernelClassifier, SupportVectorsMixin
from . import online_svmr as _reference_module

__all__ = ["OnlineRampSVM"]


class OnlineRampSVM(SupportVectorsMixin, BaseKernelClassifier):
    """Online ramp-loss SVM (OnlineSVMR, Wang & Vucetic 2009), zero bias.

    One pass over the data in the given order (``fit``), or continued
    learning (``partial_fit``).  After every example the model is the CCCP
    solution of the ramp-loss SVM (Eq. 7) on the examples seen so far: the KKT
    conditions (Eq. 3) hold within ``tol`` on the active set V (Eq. 10), and
    every support vector lies in the sloped part of the ramp,
    -1 <= y f(x) <= 1.

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
    min_gain : float, default=1e-5
        Gain threshold of the second stopping rule (Eq. 13).
    max_non_sv : int or None, default=None
        ``m`` of Algorithm 2 (the removal step): keep at most m non-support
        vectors, dropping those farthest from the boundary.  None: keep all.
    shrinking : bool, default=True
        Run the inner loop (Alg. 1 steps 10-15) in rounds on a working set
        that leaves out the members of V at a bound with Eq. (3) met by a wide
        margin, updating their g once per round (as LIBSVM's ``shrinking``;
        see :meth:`OnlineSVMR._optimize_shrunk`).  The stopping rule and the
        guarantees are the same; False runs the loop exactly as printed.  The
        two can end in different local optima of the non-convex problem.
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
    n_I_, n_V_ : int
        Sizes of I (examples kept) and V (active set), summed over problems.

    References
    ----------
    Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector
    Machines", ICDM 2009, Algorithms 1-2, Eqs. (3), (7), (10), (13)-(15).
    """

    _reference = _reference_module
    _compiled = "refsvm.ramp._online_svmr"

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 min_gain=1e-5, max_non_sv=None, shrinking=True, backend="cython"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.min_gain = min_gain
        self.max_non_sv = max_non_sv
        self.shrinking = shrinking
        self.backend = backend

    _parameter_rules = {"C": Positive(), "tol": Positive(), "min_gain": NonNegative(),
                        "max_non_sv": Integer(minimum=0, allow_none=True),
                        "shrinking": Boolean()}

    def _make_state(self, n_features, sparse, X):
        kind, gamma, degree, coef0 = self._kernel_args(X)
        return self._module().OnlineSVMR(
            n_features, sparse, C=float(self.C), kernel=kind, gamma=gamma, degree=degree,
            coef0=coef0, tol=float(self.tol), min_gain=float(self.min_gain),
            max_non_sv=-1 if self.max_non_sv is None else int(self.max_non_sv),
            shrinking=bool(self.shrinking))

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
