"""The kernel PA's departures from the printed algorithm (Crammer et al. 2006, the kernel
form of PA / PA-I / PA-II; Wang & Vucetic's baseline): none.

The state (:class:`refsvm.kernel_pa.kernel_pa.KernelPA`, both twins) is the printed
step: the hinge loss of the expansion, passive when it is 0, else the example joins with
c = τ y.  Its readings are not departures: a zero k(x, x) gives no PA / PA-I step (the
printed τ would divide by zero; PA-II's denominator is positive), and ``fit_intercept``
(the kernel k + 1, off by default as in the paper) is a model the user asks for.  The
table is empty so that ``departures`` is one parameter across the families: None,
"default" and "paper" are the same here, and any named setting is an error.
"""

from __future__ import annotations

__all__ = ["DEPARTURES"]

DEPARTURES = {}
