"""
PA against PAm on a drifting stream (Lee, Tseng & Chen)
=======================================================

Lee, Tseng & Chen add to Passive-Aggressive a *proximal* model: a quasi-LDA direction
built from the class means and scatter seen so far, which the PA step is pulled
towards (PAm).  On a stationary stream the proximal model steadies the updates; when
the concept drifts, the statistics of the whole past lag behind.  The stream below
rotates its true boundary by 90 degrees over 6,000 examples; the figure shows each
learner's online (prequential) error over windows of 200 examples -- the mistakes
counted inside the step, before the example is learned (``n_mistakes_``) -- for PA-I,
PAm-1, and PAm-1 with the proximal model frozen after the first 200 examples, as on the
slides (:doc:`/lee_tseng_chen`).
"""

import matplotlib.pyplot as plt
import numpy as np

from refsvm import PassiveAggressive, ProximalPassiveAggressive

rng = np.random.RandomState(0)
n, d, window = 6000, 10, 200
angle = np.linspace(0.0, np.pi / 2, n)                       # the drift
w_true = np.zeros((n, d))
w_true[:, 0], w_true[:, 1] = np.cos(angle), np.sin(angle)
X = rng.randn(n, d)
y = np.where(np.sum(X * w_true, axis=1) + 0.2 * rng.randn(n) > 0, 1, -1)

learners = {
    "PA-I": PassiveAggressive(variant="PA-I", C=0.1),
    "PAm-1": ProximalPassiveAggressive(variant="PAm-1", C=0.1),
    "PAm-1, proximal frozen": ProximalPassiveAggressive(variant="PAm-1", C=0.1,
                                                        freeze_proximal=True),
}
errors = {name: [] for name in learners}
for start in range(0, n, window):
    block = slice(start, start + window)
    for name, clf in learners.items():
        before = clf.n_mistakes_ if start else 0
        clf.partial_fit(X[block], y[block], classes=[-1, 1])
        errors[name].append((clf.n_mistakes_ - before) / window)

fig, ax = plt.subplots(figsize=(9, 4.5))
ends = np.arange(window, n + 1, window)
for name, err in errors.items():
    ax.plot(ends, err, marker=".", label=f"{name} (total {np.mean(err):.3f})")
ax.set_xlabel("examples seen (the boundary turns by 90 degrees over the stream)")
ax.set_ylabel(f"online error, windows of {window}")
ax.legend()
ax.set_title("Passive-Aggressive with and without the proximal model under drift")
fig.tight_layout()
plt.show()
