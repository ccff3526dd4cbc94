"""
The alpha paths of the exact incremental SVM (Cauwenberghs & Poggio)
====================================================================

Cauwenberghs & Poggio learn one example at a time and keep the Karush-Kuhn-Tucker
conditions of *every* example seen after each step: the new coefficient alpha_c grows
until the new example reaches the margin, the error set or the rest, and the margin
vectors' coefficients move with it "adiabatically".  Their figure draws the
trajectories of the coefficients as examples arrive; this one does the same from the
reference state (``IncrementalSVMState.get_state()["alpha"]`` after every step), and
checks that the end equals LIBSVM's batch solution (:doc:`/cauwenberghs_poggio`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from refsvm.datasets import make_gauss
from refsvm.idsvm.incremental_svm import IncrementalSVMState

C = 1.0
X, y = make_gauss(60, random_state=3)
y = y.astype(float)

state = IncrementalSVMState(n_features=2, C=C, kernel="rbf", gamma=0.5)  # the reference
paths = np.full((len(y), len(y)), np.nan)     # paths[t, i]: alpha_i after example t
for t in range(len(y)):
    state.step(X[t], y[t])
    alpha = state.get_state()["alpha"]
    paths[t, : len(alpha)] = alpha

fig, ax = plt.subplots(figsize=(9, 4.5))
final = paths[-1]
for i in range(len(y)):
    # margin vectors at the end (0 < alpha < C) in colour, the others in grey
    inside = 1e-9 < final[i] < C - 1e-9
    ax.plot(np.arange(1, len(y) + 1), paths[:, i], lw=1.4 if inside else 0.6,
            color=None if inside else "0.7", zorder=2 if inside else 1)
ax.axhline(C, color="k", lw=0.8, ls="--")
ax.set_xlabel("examples learned")
ax.set_ylabel(r"$\alpha_i$")
ax.set_title("Exact incremental learning: each coefficient from the step its example "
             "arrives\n(coloured: margin vectors at the end; dashed: the bound C)")
fig.tight_layout()
plt.show()

# %%
# The end of the path is the batch optimum: the same decision values as LIBSVM's SVC on
# the same examples (to the solvers' tolerance).
svc = SVC(C=C, gamma=0.5, tol=1e-10).fit(X, y)
gap = np.max(np.abs(state.decision_function(X) - svc.decision_function(X)))
print(f"max |f_incremental - f_LIBSVM| over the training set: {gap:.1e}")
