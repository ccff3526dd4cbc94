"""
POKER's breakpoints along the adjustable-bias path (Fine & Scheinberg)
======================================================================

Fine & Scheinberg solve the SVM as a parametric quadratic program: between two
*breakpoints* the solution moves linearly in the parameter, and at each breakpoint one
example changes its set (margin, error or rest).  SelfInit POKER starts from a trivial
solution of the fixed-bias problem (every example of the smaller class at C) and follows
the adjustable-bias path until the bias is optimal.  The figure records the reference
state at every breakpoint (``POKERState.breakpoint_hook``): each alpha_i against the bias
b is a broken line whose kinks are the breakpoints (:doc:`/fine_scheinberg`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from refsvm.datasets import make_gauss
from refsvm.poker.poker import POKERState

C = 1.0
X, y = make_gauss(60, random_state=3)
y = y.astype(float)

state = POKERState(n_features=2, C=C, kernel="rbf", gamma=0.5)   # the reference
bias, alphas = [], []


def record(s):
    bias.append(s.b)
    alphas.append(s.alpha[: s.n].copy())


state.breakpoint_hook = record
state.self_init(X, y)
bias, alphas = np.array(bias), np.array(alphas)

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
moving = np.flatnonzero(np.ptp(alphas, axis=0) > 1e-9)
for i in moving:
    ax.plot(bias, alphas[:, i], marker=".", ms=3, lw=0.9)
ax.set_xlabel("bias b along the path (POKER's sign: f = w'phi(x) - b)")
ax.set_ylabel(r"$\alpha_i$")
ax.set_title(f"SelfInit POKER: {len(bias)} breakpoints, {len(moving)} coefficients move")
ax2.plot(np.arange(1, len(bias) + 1), bias, marker=".", ms=3)
ax2.set_xlabel("breakpoint")
ax2.set_ylabel("b")
ax2.set_title("the bias at each breakpoint")
fig.tight_layout()
plt.show()

# %%
# The path ends at the batch optimum: LIBSVM's solution of the same problem.
svc = SVC(C=C, gamma=0.5, tol=1e-10).fit(X, y)
gap = np.max(np.abs(state.decision_function(X) - svc.decision_function(X)))
print(f"breakpoints: {len(bias)}; max |f_POKER - f_LIBSVM| on the training set: {gap:.1e}")
