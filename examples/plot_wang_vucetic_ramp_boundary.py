"""
OnlineSVMR against LIBSVM on Gauss (Wang & Vucetic)
===================================================

Wang & Vucetic's point is that the ramp loss ignores the examples far on the wrong side
of the margin: they cost at most 2 each, so OnlineSVMR does not make them support
vectors, while the hinge-loss SVM of LIBSVM keeps every one.  On their Gauss problem
(two overlapping Gaussians, Bayes accuracy 81.5 %) the two boundaries nearly coincide,
and the ramp model has far fewer support vectors: the figure marks each model's support
vectors (:doc:`/wang_vucetic`; the paper's Table 1 and Fig. 3 compare the counts).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from refsvm import OnlineRampSVM
from refsvm.datasets import make_gauss

X, y = make_gauss(800, random_state=0)
X_test, y_test = make_gauss(4000, random_state=1)

ramp = OnlineRampSVM(C=1.0, gamma=0.5).fit(X, y)           # one pass, compiled twin
libsvm = SVC(C=1.0, gamma=0.5).fit(X, y)                    # the batch hinge-loss SVM

grid_x, grid_y = np.meshgrid(np.linspace(-4, 8, 300), np.linspace(-6, 6, 300))
grid = np.c_[grid_x.ravel(), grid_y.ravel()]

fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
for ax, model, name in ((axes[0], ramp, "OnlineSVMR (ramp loss, one pass)"),
                        (axes[1], libsvm, "LIBSVM (hinge loss, batch)")):
    f = model.decision_function(grid).reshape(grid_x.shape)
    ax.contourf(grid_x, grid_y, f, levels=[-50, 0, 50], colors=["#dde6f5", "#f5e0dd"])
    ax.contour(grid_x, grid_y, f, levels=[-1, 0, 1], colors="k",
               linestyles=["--", "-", "--"], linewidths=[0.8, 1.5, 0.8])
    ax.scatter(X[:, 0], X[:, 1], c=np.where(y > 0, "#c0392b", "#2c3e90"), s=6, alpha=0.5)
    sv = model.support_vectors_
    ax.scatter(sv[:, 0], sv[:, 1], s=30, facecolors="none", edgecolors="k", linewidths=0.6)
    ax.set_title(f"{name}\n{len(sv)} support vectors, "
                 f"test accuracy {model.score(X_test, y_test):.3f}")
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()
plt.show()

print(f"support vectors: OnlineSVMR {len(ramp.support_vectors_)}, "
      f"LIBSVM {len(libsvm.support_vectors_)}")
