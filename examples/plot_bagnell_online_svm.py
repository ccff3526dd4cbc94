"""
The online linear SVM and its averaged iterate (Bagnell)
========================================================

Bagnell's notes run the SVM's stochastic subgradient method with steps 1/(lambda t),
an optional projection on the ball of radius 1/sqrt(lambda), and the average of the
iterates.  The figure follows the primal objective
lambda/2 ||w||^2 + mean hinge loss over the whole training set along one pass, for the
last iterate and the averaged one, against the batch optimum (scikit-learn's
``LinearSVC`` with the hinge loss and C = 1/(lambda n), the same objective)
(:doc:`/bagnell`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import LinearSVC

from refsvm import OnlineLinearSVM

rng = np.random.RandomState(0)
n, d, lam = 5000, 20, 1e-3
w_true = rng.randn(d)
X = rng.randn(n, d)
y = np.where(X @ w_true + 2.0 * rng.randn(n) > 0, 1, -1)


def objective(w):
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - y * (X @ w)))


batch = LinearSVC(C=1.0 / (lam * n), loss="hinge", fit_intercept=False, dual=True,
                  tol=1e-8, max_iter=100_000).fit(X, y)
best = objective(batch.coef_.ravel())

checkpoints = np.unique(np.geomspace(10, n, 30).astype(int))
curves = {}
for average in (False, True):
    clf = OnlineLinearSVM(lam=lam, project=True, average=average, fit_intercept=False)
    seen, values = 0, []
    for stop in checkpoints:
        clf.partial_fit(X[seen:stop], y[seen:stop], classes=[-1, 1])
        seen = stop
        values.append(objective(clf.coef_.ravel()))
    curves["averaged iterate" if average else "last iterate"] = values

fig, ax = plt.subplots(figsize=(8, 4.5))
for name, values in curves.items():
    ax.semilogx(checkpoints, np.array(values) - best, marker=".", label=name)
ax.set_yscale("log")
ax.set_xlabel("examples seen (one pass)")
ax.set_ylabel("primal objective - batch optimum")
ax.set_title(f"Online linear SVM, lambda = {lam:g}, projection on")
ax.legend()
fig.tight_layout()
plt.show()
print(f"batch optimum {best:.4f}; after one pass: "
      + ", ".join(f"{k} {v[-1]:.4f}" for k, v in curves.items()))
