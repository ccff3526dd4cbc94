"""Reduced-kernel Passive-Aggressive (RKPA, RKPAm), in readable Python (the reference).

Slides of Lee, Tseng, Chen, *Online Nonlinear SVM for Large-Scale Classification*
(``shared/papers/002``, "Sketch of Reduced Kernel PA" to "RKPAm: RKPA+quasi-KFD";
ALGORITHMS.md §3).  The reduced kernel trick turns the kernel PA into the linear
PA of :mod:`refsvm.linear.passive_aggressive` on new features:

1. preselect m̃ points Ã (the reduced set);
2. K̃ = K(Ã, Ã) + εI = PΛPᵀ (ε ≥ 0 "for numerical robustness");
3. φ(x) = Λ^{-1/2} Pᵀ K(Ã, x)  (= K̃^{-1/2} K(Ã, x)), so that
   f(x) = zᵀφ(x) + b with the regulariser ½(‖z‖² + b²);
4. RKPA / RKPA-1 / RKPA-2 (Eq. 8) is PA on the example (φ(x), 1):
   α = ℓ/(‖φ‖² + 1), min{C, ·}, ℓ/(‖φ‖² + 1 + 1/(2C)) -- :class:`PAState` with
   ``fit_intercept=True`` run on φ(x), after the passive test ℓ ≤ 0 (the departure
   ``passive_rtol`` counts a loss of the size of round-off as zero: :func:`is_passive`);
5. RKPAm / -1 / -2 (Eq. 9) adds γ z_p, the proximal model of the reduced-kernel
   Fisher discriminant -- :class:`PAmState` run on φ(x), with its proximal model
   replaced by the slides' one (:class:`ReducedKernelPAmState`).

Erratum (ALGORITHMS.md §3): the slides write "K̃⁻¹ = PVPᵀ" and then the features
V⁻¹(PV^{1/2})ᵀK(Ã, x); with V the eigenvalues of K̃⁻¹ that is Λ^{1/2}PᵀK(Ã, x), which
does not make f = ũᵀK(Ã, x) with regulariser ũᵀK̃ũ.  It is consistent only when V
holds the eigenvalues of K̃ itself; we implement that reading, φ = Λ^{-1/2}PᵀK(Ã, x).
On the reduced set the map factorises the kernel: Φ(Ã)ᵀΦ(Ã) = K K̃⁻¹ K, which is
K(Ã, Ã) exactly when ε = 0 (and K − εI + ε²K̃⁻¹ otherwise).

``departures="paper"`` runs the printed steps; the defaults depart in three named places
(:mod:`refsvm.linear.departures`): the passive test's tolerance (``passive_rtol``), and
for RKPAm's full covariance its ridge (``shrinkage``) and its refreshes
(``refresh_growth``).  Each is one call here: :func:`is_passive`,
:func:`~refsvm.linear.departures.shrinkage.ridge`, :func:`needs_refresh`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.departures import resolve
from ..core.kernels import Kernel, get_row
from ..core.stream import StreamLearner
from .departures import DEPARTURES
from .departures.passive_tolerance import is_passive
from .departures.refresh import needs_refresh
from .departures.shrinkage import ridge
from .departures.variance_roundoff import variance
from .passive_aggressive import PAmState, PAState

__all__ = ["ReducedKernelMap", "ReducedKernelPAState", "ReducedKernelPAmState",
           "is_passive", "ldl_rank_one_update", "load_reduced_set", "needs_refresh",
           "save_reduced_set"]

#: K̃ counts as singular when its smallest eigenvalue is below this times m̃ times its
#: largest (duplicate reduced points without ε): a guard that raises, never a number
SINGULAR_RATIO = np.finfo(np.float64).eps


class ReducedKernelMap:
    """The reduced-kernel feature map φ(x) = Λ^{-1/2} Pᵀ K(Ã, x).

    Parameters
    ----------
    reduced : ndarray or CSR matrix of shape (m̃, n_features)
        The reduced set Ã.
    kernel : :class:`refsvm.core.kernels.Kernel`
        Counts its evaluations: m̃(m̃ + 1)/2 for K(Ã, Ã), then m̃ per example.
    eps : float
        ε ≥ 0 added to the diagonal of K(Ã, Ã).

    Raises
    ------
    ValueError
        When K̃ is singular (duplicate reduced points and ε = 0).
    """

    def __init__(self, reduced, kernel, eps=0.0):
        self.reduced = reduced
        self.kernel = kernel
        self.eps = float(eps)
        self.rows = [get_row(reduced, i) for i in range(reduced.shape[0])]
        m = len(self.rows)
        # K(Ã, Ã), one evaluation per pair i <= j
        K = np.empty((m, m))
        for i in range(m):
            for j in range(i, m):
                K[i, j] = K[j, i] = kernel(self.rows[i], self.rows[j])
        self.reduced_gram = K
        # K̃ = K(Ã, Ã) + εI = P Λ Pᵀ
        eigenvalues, P = np.linalg.eigh(K + self.eps * np.eye(m))
        if m == 0 or not eigenvalues[0] > SINGULAR_RATIO * m * eigenvalues[-1]:
            raise ValueError(
                f"K(reduced, reduced) + eps*I is singular (smallest eigenvalue "
                f"{eigenvalues[0] if m else 0.0:.3g}): the reduced set has duplicate or "
                f"nearly equal points; use eps > 0 or distinct reduced points")
        self.eigenvalues = eigenvalues
        self.P = P
        # φ(x) = Λ^{-1/2} Pᵀ K(Ã, x): row i of `transform` is column i of P over √λ_i
        self.transform = P.T / np.sqrt(eigenvalues)[:, None]

    @property
    def n_reduced(self):
        return len(self.rows)

    def kernel_row(self, x):
        """K(Ã, x), m̃ counted evaluations."""
        return self.kernel.row(self.rows, x)

    def __call__(self, x):
        """φ(x) for one row x."""
        return self.transform @ self.kernel_row(x)

    def to_features(self, u):
        """z = Λ^{1/2} Pᵀ u: the φ-space weights of the model f = uᵀK(Ã, x)."""
        return np.sqrt(self.eigenvalues) * (self.P.T @ u)

    def transform_rows(self, X):
        """Φ(X), one row φ(x) per row of X (not counted: prediction)."""
        K = np.array([[self.kernel.value(a, get_row(X, i)) for a in self.rows]
                      for i in range(X.shape[0])]).reshape(X.shape[0], self.n_reduced)
        return K @ self.transform.T


class ReducedKernelPAState(StreamLearner):
    """RKPA / RKPA-1 / RKPA-2: PA on (φ(x), 1) (slides "Final Formulation of RKPA", Eq. 8).

    Parameters
    ----------
    n_features : int
    sparse : bool
    reduced : ndarray or CSR matrix of shape (m̃, n_features)
        The reduced set Ã (chosen by the estimator: a random subset of the training
        data, or the first m̃ distinct examples of a stream).
    variant : {0, 1, 2}
        RKPA, RKPA-1, RKPA-2 (``refsvm.core.pa.PA_VARIANTS`` maps the names).
    C : float
    kernel, gamma, degree, coef0
        The kernel (:class:`refsvm.core.kernels.Kernel`).
    eps : float
        ε ≥ 0 of K̃ = K(Ã, Ã) + εI.
    departures : None, "paper" or dict
        The linear family's departures (:mod:`refsvm.linear.departures`): RKPA reads
        ``passive_rtol`` (RKPAm also ``variance_roundoff``, ``shrinkage``,
        ``refresh_growth``); "paper" runs the printed steps.

    Attributes
    ----------
    feature_map : ReducedKernelMap
    pa : PAState
        The linear PA on φ: ``pa.w`` is z, ``pa.b`` is b.

    Examples
    --------
    With the whole training set as Ã and ε = 0 the features reproduce the kernel on
    it (φ(a)ᵀφ(a') = k(a, a')), and RKPA learns a non-linear rule in one pass:

    >>> import numpy as np
    >>> from refsvm.linear.reduced_kernel_pa import ReducedKernelPAState
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([1.0, 1.0, -1.0, -1.0])                     # XOR
    >>> state = ReducedKernelPAState(2, reduced=X, variant=0, kernel="rbf", gamma=2.0)
    >>> Phi = state.feature_map.transform_rows(X)
    >>> bool(np.allclose(Phi @ Phi.T, np.exp(-2.0 * ((X[:, None] - X) ** 2).sum(-1))))
    True
    >>> for _ in range(3):
    ...     _ = state.run(X, y, range(4))
    >>> np.sign(state.decision_function(X))
    array([ 1.,  1., -1., -1.])
    >>> sorted(state.get_state())
    ['b', 'n_kernel_evals', 'n_updates', 't', 'z']
    """

    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, reduced=None, variant=1, C=1.0,
                 kernel="rbf", gamma=1.0, degree=3, coef0=0.0, eps=0.0, departures=None):
        super().__init__(n_features, sparse)
        self.departures = resolve(DEPARTURES, departures)
        self.passive_rtol = self.departures["passive_rtol"]
        self.variant = int(variant)
        self.C = float(C)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.eps = float(eps)
        self.feature_map = self.pa = None
        if reduced is not None:
            self._build(reduced)

    def _build(self, reduced):
        """The feature map of Ã and a fresh linear state on it (``load_state`` calls it
        with the saved Ã: the reduced set is data, not a constructor setting)."""
        self.feature_map = ReducedKernelMap(reduced, self.kernel, self.eps)
        self.pa = self._linear_state()

    def _linear_state(self):
        # RKPA = PA on (φ(x), 1): the bias is the weight of a constant feature 1
        return PAState(self.feature_map.n_reduced, False, variant=self.variant, C=self.C,
                       fit_intercept=True, departures=self.departures)

    def step(self, x, y):
        self._check_ready()
        # φ(x^t) = Λ^{-1/2} Pᵀ K(Ã, x^t); then z, b by Eq. (8)
        phi = self.feature_map(x)
        self._tracer is None or self._tracer("RKPA: features", phi=phi)
        if is_passive(self.pa.w, self.pa.b, phi, y, self.passive_rtol):
            self._tracer is None or self._tracer("RKPA Eq. (8): passive", z=self.pa.w, b=self.pa.b)
            self.pa.t += 1
            return 0  # passive (ℓ ≤ 0; the departure: up to round-off)
        return self.pa.step(phi, y)

    def _check_ready(self):
        if self.pa is None:
            raise ValueError("no reduced set: pass reduced= or load_state() first")

    @property
    def z(self):
        return self.pa.w

    @property
    def b(self):
        return self.pa.b

    @property
    def n_updates(self):
        return self.pa.n_updates

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def decision_function(self, X):
        """f(x) = zᵀφ(x) + b for every row of X."""
        return self.feature_map.transform_rows(X) @ self.pa.w + self.pa.b

    def get_state(self):
        return {"z": self.pa.w.copy(), "b": self.pa.b, "t": self.pa.t,
                "n_updates": self.pa.n_updates, "n_kernel_evals": self.kernel.n_evals}

    # ---- persistence protocol ----
    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse,
                "variant": self.variant, "C": self.C,
                "kernel": self.kernel.kind, "gamma": self.kernel.gamma,
                "degree": self.kernel.degree, "coef0": self.kernel.coef0, "eps": self.eps,
                "departures": dict(self.departures)}

    def save_state(self):
        self._check_ready()
        data = save_reduced_set(self.feature_map.reduced)
        data.update({"linear_" + k: v for k, v in self.pa.save_state().items()})
        data["n_kernel_evals"] = self.kernel.n_evals
        return data

    def load_state(self, data):
        self._build(load_reduced_set(data, self.n_features))
        self.pa.load_state({k[len("linear_"):]: v for k, v in data.items()
                            if k.startswith("linear_")})
        self.kernel.n_evals = int(data["n_kernel_evals"])


def save_reduced_set(reduced):
    """Ã as plain arrays (dense: ``reduced``; CSR: its data, indices and indptr)."""
    if sp.issparse(reduced):
        return {"reduced_data": np.asarray(reduced.data, dtype=np.float64).copy(),
                "reduced_indices": np.asarray(reduced.indices, dtype=np.int32).copy(),
                "reduced_indptr": np.asarray(reduced.indptr, dtype=np.int64).copy()}
    return {"reduced": np.array(reduced, dtype=np.float64)}


def load_reduced_set(data, n_features):
    """The inverse of :func:`save_reduced_set`."""
    if "reduced" in data:
        return np.ascontiguousarray(data["reduced"], dtype=np.float64)
    indptr = np.asarray(data["reduced_indptr"])
    return sp.csr_matrix((np.asarray(data["reduced_data"], dtype=np.float64),
                          np.asarray(data["reduced_indices"], dtype=np.int32), indptr),
                         shape=(indptr.shape[0] - 1, n_features))


class _KernelRowProximalPAm(PAmState):
    """PAm on φ(x) whose proximal model is the slides' reduced-kernel Fisher direction.

    The class statistics are those of the kernel rows K(Ã, x) (``kernel_row`` is set
    before each ``step``); ũ_p is computed from them and mapped to φ-space,
    z_p = Λ^{1/2} Pᵀ ũ_p, so that z_pᵀφ(x) = ũ_pᵀK(Ã, x).

    ``covariance="full"`` also keeps, per class, the scatter S = Σ (k − M̃)(k − M̃)ᵀ
    (Welford: an example adds (n−1)/n · d dᵀ, d = k − M̃ before it, n the new count) and
    solves with the shrunk within-class covariance
    S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI (:meth:`shrunk_covariance`), where c₊, c₋ and μ
    are the class counts and the ridge at the last *refresh* (:func:`needs_refresh`): at
    a refresh c = n, so S̃ = COV₊ + COV₋ + μI exactly; between refreshes an example of
    class y adds (n−1)/n/(c_y − 1) · d dᵀ to S̃, a rank one.  This reference solves with
    S̃ directly (``np.linalg.solve``); the twin keeps S̃ = L D Lᵀ (L unit lower
    triangular, D diagonal) and updates it by one rank-one update per example
    (:func:`ldl_rank_one_update`, O(m̃²); deferred and applied in batches when the factor
    is needed, which changes no number), factoring anew only at refreshes.
    ``get_state()["chol"]`` is the Cholesky factor L D^{1/2} and ``["ldl"]`` the factor as
    the twin keeps it (here both computed from S̃, in the twin the updated ones): the tests
    compare them after every example."""

    def __init__(self, feature_map, covariance, **kwargs):
        super().__init__(feature_map.n_reduced, False, fit_intercept=True, **kwargs)
        self.feature_map = feature_map
        self.covariance = covariance
        self.shrinkage = self.departures["shrinkage"]
        self.refresh_growth = self.departures["refresh_growth"]
        self.kernel_row = None
        m = feature_map.n_reduced
        if covariance == "full":
            self.scatter_pos = np.zeros((m, m))
            self.scatter_neg = np.zeros((m, m))
            self.chol_n_pos = self.chol_n_neg = 0  # c₊, c₋ of the last refresh (0: none)
            self.chol_mu = 0.0                     # μ of the last refresh

    def _add_statistics(self, x, y):
        k = self.kernel_row  # the statistics are those of K(Ã, x), not of φ(x)
        if self.covariance == "full":
            n_old = self.n_pos if y > 0 else self.n_neg
            mean_old = (self.sum_pos if y > 0 else self.sum_neg) / max(n_old, 1)
        super()._add_statistics(k, y)
        if self.covariance != "full" or n_old == 0:
            return
        # Welford: S ← S + (n−1)/n · d dᵀ, d = k − M̃ (the mean before this example)
        d = k - mean_old
        weight = n_old / (n_old + 1.0)
        scatter = self.scatter_pos if y > 0 else self.scatter_neg
        scatter += weight * np.outer(d, d)
        if needs_refresh(self.n_pos, self.n_neg, self.chol_n_pos, self.chol_n_neg,
                         self.refresh_growth):
            self._refresh()
        # (otherwise S̃ has gained weight/(c_y − 1) · d dᵀ with the scatter: the twin's
        # rank-one update of its factor)

    def _refresh(self):
        """c₊, c₋ ← n₊, n₋ and μ ← shrinkage · mean variance, so that S̃ = COV₊ + COV₋ + μI.
        No S̃ (c = 0, tried again at the next example) when there is no variance or it is
        not positive definite (round-off with μ > 0; the printed matrix, μ = 0, is often
        singular)."""
        m = self.n_features
        self.chol_n_pos = self.chol_n_neg = 0
        self.chol_mu = 0.0
        # COV = S/(n − 1), per class
        cov = self.scatter_pos / (self.n_pos - 1) + self.scatter_neg / (self.n_neg - 1)
        trace = float(np.trace(cov))
        if not trace > 0:  # no variance at all: no direction (as a zero pooled variance)
            return
        mu = ridge(trace, m, self.shrinkage)  # the departure shrinkage (paper: μ = 0)
        try:  # the twin factors S̃ here
            np.linalg.cholesky(cov + mu * np.eye(m))
        except np.linalg.LinAlgError:  # not positive definite
            return
        self.chol_n_pos, self.chol_n_neg, self.chol_mu = self.n_pos, self.n_neg, mu

    def proximal(self):
        if self.covariance == "full":
            u_p, b_p = self._full_fisher_direction()
        elif self.shrinkage == 0.0:
            # quasi-KFD: the diagonal of COV(K(A₊, Ã)) + COV(K(A₋, Ã)), as PAm's quasi-LDA
            u_p, b_p = super().proximal()
        else:  # the departure shrinkage: + μ on every pooled variance
            u_p, b_p = self._ridged_quasi_direction()
        return self.feature_map.to_features(u_p), b_p

    def _ridged_quasi_direction(self):
        """The quasi-KFD with μ = shrinkage · mean(s₊ + s₋) added to every pooled
        variance (:func:`~refsvm.linear.departures.shrinkage.ridge`): ũ_i =
        (M̃₊ − M̃₋)_i / (s₊ + s₋ + μ)_i, b_p the midpoint."""
        m = self.n_features
        if self.n_pos < 2 or self.n_neg < 2:
            return np.zeros(m), 0.0
        m_pos, m_neg = self.sum_pos / self.n_pos, self.sum_neg / self.n_neg
        pooled = (variance(self.sumsq_pos, self.n_pos, m_pos, self.variance_roundoff)
                  + variance(self.sumsq_neg, self.n_neg, m_neg, self.variance_roundoff))
        denom = pooled + ridge(float(sum(pooled.tolist())), m, self.shrinkage)
        u_p = np.zeros(m)
        ok = denom > 0
        u_p[ok] = (m_pos[ok] - m_neg[ok]) / denom[ok]
        return u_p, -0.5 * float(np.dot(u_p, m_pos + m_neg))

    def _full_fisher_direction(self):
        m = self.n_features
        if self.n_pos < 2 or self.n_neg < 2 or self.chol_n_pos == 0:
            return np.zeros(m), 0.0
        m_pos, m_neg = self.sum_pos / self.n_pos, self.sum_neg / self.n_neg
        # ũ_p = S̃⁻¹ (M̃₊ − M̃₋), S̃ = COV₊ + COV₋ + μI with the normalisers and μ of the
        # last refresh
        u_p = np.linalg.solve(self.shrunk_covariance(), m_pos - m_neg)
        return u_p, -0.5 * float(np.dot(u_p, m_pos + m_neg))

    def shrunk_covariance(self):
        """S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI, the matrix of the full covariance's solve
        (None before the first refresh)."""
        if self.chol_n_pos == 0:
            return None
        return (self.scatter_pos / (self.chol_n_pos - 1)
                + self.scatter_neg / (self.chol_n_neg - 1)
                + self.chol_mu * np.eye(self.n_features))

    def get_state(self):
        state = super().get_state()
        if self.covariance == "full":
            shrunk = self.shrunk_covariance()
            # the lower Cholesky factor of S̃ (zeros before the first refresh) and the same
            # as L D Lᵀ (L's entries below the diagonal, D on it): the twin keeps the
            # latter by rank-one updates, here both are computed (and not needed)
            chol = (np.zeros((self.n_features,) * 2) if shrunk is None
                    else np.linalg.cholesky(shrunk))
            root = np.diag(chol)
            ldl = (np.tril(chol / np.where(root > 0, root, 1.0), -1) + np.diag(root * root))
            state.update(scatter_pos=self.scatter_pos.copy(),
                         scatter_neg=self.scatter_neg.copy(), chol=chol, ldl=ldl,
                         chol_n_pos=self.chol_n_pos, chol_n_neg=self.chol_n_neg,
                         chol_mu=self.chol_mu)
        return state

    def load_state(self, data):
        super().load_state(data)
        if self.covariance == "full":  # (``chol`` and ``ldl`` follow from these)
            self.scatter_pos[:] = data["scatter_pos"]
            self.scatter_neg[:] = data["scatter_neg"]
            self.chol_n_pos = int(data["chol_n_pos"])
            self.chol_n_neg = int(data["chol_n_neg"])
            self.chol_mu = float(data["chol_mu"])


def ldl_rank_one_update(LD, x, alpha):
    """L D Lᵀ ← L D Lᵀ + α x xᵀ, in place (O(m̃²)), for L unit lower triangular and D
    diagonal kept in one matrix LD (L below the diagonal, D on it): the twin's update of
    the full covariance's factor after each example (``_rkpa_ldl_update_batch``; this
    reference solves with S̃ directly), stated here and tested against it.

    Bennett's update (Gill, Golub, Murray, Saunders 1974, method C1, for α > 0) carrying
    t = 1/α: column k, with p = x_k, q = p/D_k, t' = t + p q: D_k ← D_k t'/t,
    β = q/t'; below it x_i ← x_i − p L_ik, then L_ik ← L_ik + β x_i (the new x_i).  Two
    multiply-adds per entry and no square root; nothing is subtracted from D (t grows,
    D_k only grows), so it is stable for these positive updates."""
    x = np.array(x, dtype=np.float64)
    t = 1.0 / float(alpha)
    for k in range(LD.shape[0]):
        p = x[k]
        q = p / LD[k, k]
        t_new = t + p * q
        beta = q / t_new
        LD[k, k] = LD[k, k] * (t_new / t)
        t = t_new
        x[k + 1:] = x[k + 1:] - p * LD[k + 1:, k]
        LD[k + 1:, k] = LD[k + 1:, k] + beta * x[k + 1:]


class ReducedKernelPAmState(ReducedKernelPAState):
    """RKPAm / RKPAm-1 / RKPAm-2: RKPA plus the reduced-kernel proximal model (Eq. 9).

    z ← z + γ z_p + α y φ(x),  b ← b + γ b_p + α y,
    α = (ℓ − γ y (z_pᵀφ(x) + b_p)) / (‖φ(x)‖² + 1)  (RKPAm; -1: min{C, ·};
    -2: denominator + 1/(2C)), clipped at 0 and only on rounds with ℓ > 0, as PAm
    (ℓ > 0 up to round-off: :func:`is_passive`).

    The proximal model is the slides' RKFDA direction computed on the kernel rows,
    ũ_p = [COV(K(A₊, Ã)) + COV(K(A₋, Ã))]⁻¹ (M̃₊ − M̃₋), from per-class statistics of
    K(Ã, x) kept online, then mapped: z_p = Λ^{1/2} Pᵀ ũ_p.  ``covariance="diagonal"``
    (default, the slides' "quasi-KFD", O(m̃) statistics) keeps only the variances;
    ``"full"`` keeps the per-class scatters (O(m̃²)) and solves with COV₊ + COV₋ (the
    printed matrix).  Two departures concern it (:mod:`refsvm.linear.departures`):
    ``shrinkage`` adds μI, μ = setting × their mean variance (the printed inverse does
    not exist early in a stream and amplifies round-off later), and ``refresh_growth``
    refreshes the class normalisers 1/(n_± − 1) and μ -- which change the whole matrix
    with every example, not by a rank one -- only when a class count has grown by that
    factor since the last refresh (:func:`needs_refresh`; O(log n) refreshes per class),
    so that in between each example changes the matrix by a rank one
    (:meth:`_KernelRowProximalPAm.shrunk_covariance`) and the twin keeps its factor
    L D Lᵀ by rank-one updates (:func:`ldl_rank_one_update`) in O(m̃²) per example.
    With "paper" the matrix is refreshed at every example: COV₊ + COV₋ exactly.  The full
    version is invariant to the choice
    between kernel rows and φ (P is orthogonal, Λ invertible); the diagonal one is
    not, and we take the one the slides print (kernel rows).  b_p is not printed: we
    take the midpoint b_p = −ũ_pᵀ(M̃₊ + M̃₋)/2.

    Parameters
    ----------
    gamma : float
        Kernel width (as in :class:`ReducedKernelPAState`).
    proximal_weight : float
        γ ≥ 0 of Eq. (9) (the slides call it γ too).
    covariance : {"diagonal", "full"}
    (others as :class:`ReducedKernelPAState`)

    Examples
    --------
    With proximal weight 0 it is RKPA, step for step:

    >>> import numpy as np
    >>> from refsvm.linear.reduced_kernel_pa import (ReducedKernelPAState,
    ...                                              ReducedKernelPAmState)
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 2)
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    >>> rkpa = ReducedKernelPAState(2, reduced=X[:10], gamma=0.5, eps=1e-8)
    >>> rkpam = ReducedKernelPAmState(2, reduced=X[:10], gamma=0.5, eps=1e-8,
    ...                               proximal_weight=0.0)
    >>> rkpa.run(X, y, range(40)) == rkpam.run(X, y, range(40))
    True
    >>> bool(np.allclose(rkpa.get_state()["z"], rkpam.get_state()["z"]))
    True
    """

    def __init__(self, n_features, sparse=False, reduced=None, variant=1, C=1.0,
                 kernel="rbf", gamma=1.0, degree=3, coef0=0.0, eps=0.0, proximal_weight=0.1,
                 covariance="diagonal", departures=None):
        if covariance not in ("diagonal", "full"):
            raise ValueError(f"covariance must be 'diagonal' or 'full'; got {covariance!r}")
        self.proximal_weight = float(proximal_weight)
        self.covariance = covariance
        super().__init__(n_features, sparse, reduced, variant, C, kernel, gamma, degree,
                         coef0, eps, departures)

    def _linear_state(self):
        return _KernelRowProximalPAm(self.feature_map, self.covariance, variant=self.variant,
                                     C=self.C, gamma=self.proximal_weight,
                                     departures=self.departures)

    def step(self, x, y):
        self._check_ready()
        k = self.feature_map.kernel_row(x)  # K(Ã, x^t): statistics and features
        self.pa.kernel_row = k
        phi = self.feature_map.transform @ k
        self._tracer is None or self._tracer("RKPA: features", phi=phi)
        if is_passive(self.pa.w, self.pa.b, phi, y, self.passive_rtol):
            self._tracer is None or self._tracer("RKPA Eq. (8): passive", z=self.pa.w, b=self.pa.b)
            # a passive round: counted, and its kernel row joins the class statistics
            self.pa.t += 1
            self.pa._add_statistics(phi, y)
            return 0
        return self.pa.step(phi, y)

    def get_state(self):
        state = super().get_state()
        pam = self.pa.get_state()
        for key in pam:
            if key not in ("w", "b", "t", "n_updates"):
                state[key] = pam[key]
        return state

    def init_params(self):
        return {**super().init_params(), "proximal_weight": self.proximal_weight,
                "covariance": self.covariance}
