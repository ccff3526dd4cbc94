"""Online active learning with OnlineSVMR (Wang & Vucetic, Sec. IV and V.E): the reference.

Three query strategies over a stream of unlabelled examples, each a loop over an
OnlineSVMR state (either twin: :class:`refsvm.ramp.online_svmr.OnlineSVMR` or its compiled
twin) and an *oracle* that gives the label (+1 or -1) of the stream positions it is asked
for:

- :func:`online_asvmr` (Algorithm 3): query x_{t+1} only if ``|f(x_{t+1})| <= 1`` (it lies
  in the ramp region); a queried example joins I and V and goes through steps 6-27 of
  Algorithm 1; an unqueried one is dropped.
- :func:`query_all`: query every example (plain OnlineSVMR, Algorithm 1).
- :func:`greedy`: cut the stream into consecutive blocks of the ``h`` most recent examples
  and query the one with the smallest ``|f(x)|`` (ties: the earliest); ``h = 5`` as in the
  paper, ``h = 1`` is QueryAll.  The queried example is learned by Algorithm 1.

Each returns the stream positions it queried, in query order.  Kernel evaluations are
counted by the state: scoring an unlabelled example costs one evaluation per support
vector (Eq. 4), whether it is then queried or not.  OnlineASVMR reuses those values when
it learns the example; Greedy scores its h candidates and then learns the chosen one with
a fresh arrival (it pays #SV evaluations again for that one).

Over a state made with ``departures="paper"`` these are the printed algorithms.  The one
departure seen here is the hinge warm-up's query rule of step 3 (query every example until
``state.warmup`` are learned; :mod:`refsvm.ramp.departures.warmup`), and a state whose
departure ``warmup`` is off has ``warmup == 0``.

The learners with checkpoints and learning curves (Fig. 6), parameter checks and the
choice of backend are :class:`refsvm.OnlineASVMR`, :class:`refsvm.QueryAll` and
:class:`refsvm.Greedy` (:mod:`refsvm.ramp.estimators`).

References
----------
Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector Machines",
ICDM 2009: Algorithm 3, Sec. V.E (QueryAll, Greedy with h = 5), Fig. 6.
"""

from __future__ import annotations

import numpy as np

from ..core.kernels import get_row

__all__ = ["greedy", "online_asvmr", "query_all"]


def online_asvmr(state, X, oracle, start=0, stop=None):
    """Algorithm 3 over the stream positions [start, stop) of X; the positions queried.

    Examples
    --------
    Only the examples in the ramp region ``|f(x)| <= 1`` are queried; the first one
    always is (f = 0), and a confident model stops asking:

    >>> import numpy as np
    >>> from refsvm.ramp.online_svmr import OnlineSVMR
    >>> from refsvm.ramp.online_asvmr import online_asvmr
    >>> X = np.array([[1.0], [3.0], [-3.0], [0.2]])
    >>> y = np.array([1.0, 1.0, -1.0, 1.0])
    >>> state = OnlineSVMR(1, C=1.0, kernel="linear")
    >>> online_asvmr(state, X, lambda i: y[i])    # f = 0, then 3, -3 (not asked), 0.2
    [0, 3]
    """
    stop = X.shape[0] if stop is None else stop
    queried = []
    warmup = state.warmup
    tracer = getattr(state, "_tracer", None)  # refsvm.core.trace (the compiled twin has none)
    for i in range(start, stop):
        f = state.observe(get_row(X, i))                   # step 2, Eq. (4)
        # step 3: in the ramp region; during a hinge warm-up (not in the paper) the
        # region is the whole space: every example is asked until warmup are learned
        tracer is None or tracer("Alg. 3 step 3", f=f, query=abs(f) <= 1.0)
        if abs(f) <= 1.0 or state.n_seen < warmup:
            queried.append(i)
            state.label(oracle(i))                          # steps 4-7 (Alg. 1 steps 3-28)
            tracer is None or tracer("Alg. 3 steps 4-7", i=i, queried=len(queried))
        else:
            state.skip()                                    # never labelled
            tracer is None or tracer("Alg. 3 step 8", i=i)
    return queried


def query_all(state, X, oracle, start=0, stop=None):
    """QueryAll: every stream position of [start, stop) is queried and learned (Alg. 1)."""
    stop = X.shape[0] if stop is None else stop
    queried = []
    for i in range(start, stop):
        queried.append(i)
        state.step(get_row(X, i), oracle(i))               # Algorithm 1
    return queried


def greedy(state, X, oracle, h=5, start=0, stop=None):
    """Greedy: of each block of h consecutive positions of [start, stop), query the one
    with the smallest ``|f(x)|`` (the earliest on ties) and learn it (Alg. 1)."""
    stop = X.shape[0] if stop is None else stop
    queried = []
    for first in range(start, stop, h):
        block = range(first, min(first + h, stop))
        scores = []
        for i in block:
            scores.append(abs(state.observe(get_row(X, i))))    # counted: #SV evaluations
            state.skip()
        best = block[int(np.argmin(scores))]                     # earliest on ties
        queried.append(best)
        state.step(get_row(X, best), oracle(best))               # Algorithm 1
    return queried
