"""Departure ``intercept``: a bias regularised like a weight, through the kernel k + 1.

The failure of the printed form.  The model of Eq. (4) has no bias: where the classes are
not centred around the origin of the feature space it needs many more support vectors (on
the 13 tasks of ``benchmarks/bench_defaults.py``, raw attributes: up to 1.27x the support
vectors of ``SVC`` and 0.29 points less accuracy on average).

What it does instead.  With ``fit_intercept=True`` the kernel is k + 1 everywhere (Q_ij +
y_i y_j): f(x) = sum_i y_i alpha_i k(x_i, x) + b with b = sum_i y_i alpha_i (the feature
map gains a constant coordinate 1; :meth:`Intercept.intercept`).  Every equation holds as
printed for the kernel k + 1, so the invariants are unchanged; the kernel evaluations
counted are those of k.  The +1 is added in :meth:`refsvm.ramp.online_svmr.OnlineSVMR._k`.

Setting: ``intercept`` (gates the state's parameter ``fit_intercept``).  Docs:
``docs/wang_vucetic.rst``, "Defaults on real data".
"""

from __future__ import annotations

__all__ = ["Intercept"]


class Intercept:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the bias b."""

    def intercept(self):
        """b = sum_i y_i alpha_i with ``fit_intercept`` (the weight of the constant
        feature), else 0.0: f(x) = sum_i y_i alpha_i k(x_i, x) + b."""
        if not self.fit_intercept:
            return 0.0
        b = 0.0
        for p in range(self.ids.shape[0]):       # in position order, as the twin sums
            b += self.y[p] * self.alpha[p]
        return float(b)
