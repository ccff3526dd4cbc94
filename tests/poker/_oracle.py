"""Helpers of the POKER tests: the LIBSVM oracle and the Gram matrix of a stream."""

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

KERNELS = {
    "rbf": dict(kernel="rbf", gamma=0.5),
    "linear": dict(kernel="linear"),
    "poly": dict(kernel="poly", gamma=0.5, degree=3, coef0=1.0),
}


def gram(X, Z, kernel="rbf", gamma=1.0, degree=3, coef0=0.0):
    if kernel == "rbf":
        return rbf_kernel(X, Z, gamma=gamma)
    if kernel == "linear":
        return linear_kernel(X, Z)
    return polynomial_kernel(X, Z, degree=degree, gamma=gamma, coef0=coef0)


def state_kwargs(kp):
    return dict(kernel=kp["kernel"], gamma=kp.get("gamma", 1.0), degree=kp.get("degree", 3),
                coef0=kp.get("coef0", 0.0))


def svc_solution(X, y, C, kp, tol=1e-10):
    """(alpha, b, support set, dual objective) of LIBSVM on (X, y), POKER's sign: b = rho."""
    svc = SVC(C=C, tol=tol, **kp).fit(X, y)
    alpha = np.zeros(X.shape[0])
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    K = gram(X, X, **kp)
    return alpha, -float(svc.intercept_[0]), set(svc.support_.tolist()), dual(alpha, y, K)


def dual(alpha, y, K):
    """W = e'alpha - 1/2 alpha'Q alpha."""
    v = alpha * y
    return float(alpha.sum() - 0.5 * v @ K @ v)


def two_blobs(n=60, d=2, seed=0, overlap=0.6):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + overlap * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


def assert_equals_svc(alpha, b, X, y, C, kp, where="", sv_tol=None, b_tol=1e-5):
    """The POKER model (alpha, b) on (X, y) equals LIBSVM's: dual objective to 1e-6
    relative, b to 1e-5, the same support set (alpha > 0; LIBSVM's alphas within its
    tolerance of 0 are compared by value)."""
    a_svc, b_svc, sv_svc, w_svc = svc_solution(X, y, C, kp)
    K = gram(X, X, **kp)
    w = dual(alpha, y, K)
    assert abs(w - w_svc) <= 1e-6 * max(1.0, abs(w_svc)), f"{where}: W {w} vs {w_svc}"
    assert abs(b - b_svc) <= b_tol * max(1.0, C / 10), f"{where}: b {b} vs {b_svc}"
    ours = set(np.flatnonzero(alpha > 0).tolist())
    if ours != sv_svc:
        # a difference is allowed only where an alpha is within solver tolerance of 0
        tol = sv_tol if sv_tol is not None else 1e-6 * C
        diff = ours ^ sv_svc
        big = [i for i in diff if max(alpha[i], a_svc[i]) > tol]
        assert not big, f"{where}: support sets differ at {big}"


def qp_dual_objective(K, y, C):
    """The optimal dual objective by SLSQP (small degenerate problems, where LIBSVM
    takes minutes to reach a tight tolerance)."""
    from scipy.optimize import minimize

    Q = np.outer(y, y) * K
    n = y.shape[0]
    res = minimize(lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(n), jac=lambda a: Q @ a - 1.0,
                   bounds=[(0.0, C)] * n, constraints=[{"type": "eq", "fun": lambda a: a @ y,
                                                        "jac": lambda a: y}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    return -float(res.fun)
