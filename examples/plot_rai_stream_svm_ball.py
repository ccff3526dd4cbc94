"""
StreamSVM's ball (Rai, Daumé & Venkatasubramanian)
==================================================

StreamSVM reads the l2-SVM as a minimum enclosing ball: each example becomes the point
``y_i x_i`` (augmented with its own slack coordinate), and the classifier is the ball's
center.  One pass keeps one ball: a point already inside is discarded; a point outside
moves the center towards it and grows the radius just enough to cover both the old ball
and the point (their Algorithm 1).  The figure draws the points ``y_i x_i``, the ball
projected on the plane of the data (a disk of the same radius, around the center's
first two coordinates: it covers every point, since a projection only brings points
closer) after a few examples and at the end, and the path of the center; on the right,
the resulting boundary ``w'x + b = 0`` (:doc:`/rai_daume_venkatasubramanian`).
"""

import matplotlib.pyplot as plt
import numpy as np

from refsvm import StreamSVM
from refsvm.stream_svm.stream_svm import StreamSVMLinear

rng = np.random.RandomState(0)
n = 300
X = rng.randn(n, 2) * 0.8
y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
X += 1.2 * y[:, None] * np.array([1.0, 0.5]) / np.hypot(1.0, 0.5)

state = StreamSVMLinear(n_features=2, C=1.0)        # the reference, Algorithm 1, no bias
centers, radii, updates = [], [], []
for i in range(n):
    updates.append(state.step(X[i], y[i]))
    centers.append(state.coef.copy())
    radii.append(state.radius)
centers, radii = np.array(centers), np.array(radii)

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 5))
P = y[:, None] * X                                   # the points the ball encloses
used = np.array(updates, dtype=bool)
ax.scatter(P[~used, 0], P[~used, 1], s=8, c="0.6", label="inside the ball: discarded")
ax.scatter(P[used, 0], P[used, 1], s=14, c="#c0392b", label="moved the ball")
for t, style in ((9, ":"), (n - 1, "-")):
    disk = plt.Circle(centers[t], radii[t], fill=False, ls=style, lw=1.2)
    ax.add_patch(disk)
    ax.annotate(f"after {t + 1}", centers[t] + [radii[t] * 0.71, radii[t] * 0.71])
ax.plot(centers[:, 0], centers[:, 1], "k.-", ms=3, lw=0.8, label="center (= w) over time")
ax.set_aspect("equal")
ax.set_title(f"points $y_i x_i$ and the ball: {used.sum()} of {n} examples moved it")
ax.legend(loc="lower left", fontsize=8)

# the estimator runs the compiled twin (with the regularised bias for the linear kernel)
clf = StreamSVM(C=1.0).fit(X, y)
xx, yy = np.meshgrid(np.linspace(-4, 4, 200), np.linspace(-4, 4, 200))
f = clf.decision_function(np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)
ax2.contourf(xx, yy, f, levels=[-99, 0, 99], colors=["#dde6f5", "#f5e0dd"])
ax2.contour(xx, yy, f, levels=[0], colors="k")
ax2.scatter(X[:, 0], X[:, 1], c=np.where(y > 0, "#c0392b", "#2c3e90"), s=8)
ax2.set_aspect("equal")
ax2.set_title(f"StreamSVM's boundary after one pass (accuracy {clf.score(X, y):.3f})")
fig.tight_layout()
plt.show()
