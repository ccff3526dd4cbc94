"""Atomic operations: the snapshot before an operation and the rollback after a failed
one (on with the exactness check, ``check``, and the step budget, ``max_steps``).

The failure of the printed form it answers: when an operation cannot end exact (the
exactness check fails, :mod:`.exactness`; the step budget runs out on a stream where the
loop cycles; no event limits an increment at a degenerate point) the printed method
would leave a half-changed state.  Instead each operation starts from a snapshot (the
alphas, g and the sets of the examples kept, R, b; O(n + |S|^2)) and a failed one puts
the state back exactly (the kernel columns of S from the cache or recomputed), then
raises :class:`ExactnessError`: only the kernel-evaluation count shows it happened.
Ctrl-C inside a long operation is answered the same way (:meth:`Rollback._answer_signals`,
at every pass of the adiabatic loop once the operation has run
:data:`refsvm.core.stream.LONG_STEP` seconds: the signal the stream driver holds back is
delivered there, and the operation is rolled back before its KeyboardInterrupt goes on),
leaving the model of the examples before it; a shorter operation ends as usual and the
driver answers at its block boundary.  The rollback changes no number of an operation that succeeds (the streams of
``tests/idsvm/test_stress.py`` that force a rollback check the state afterwards).

Docs: ``docs/cauwenberghs_poggio.rst``, "Safeguards" (item 3).
"""

import numpy as np

import time

from ...core.stream import LONG_STEP, answer_held_signals
from ..constants import GONE, STEPS_PER_EXAMPLE
from .exactness import ExactnessError

__all__ = ["Rollback"]


class Rollback:
    """Mixin of the IDSVM state: snapshot, rollback, and the guarded operation."""

    _started = 0.0      # when the operation under way began (see _answer_signals)

    def _snapshot(self, keep):
        """Start an operation: its step budget, and what it rolls back to (the first
        ``keep`` examples, the margin set, R, b; O(n + |S|^2))."""
        n = self.n
        self._started = time.perf_counter()
        self._steps_left = (self.max_steps if self.max_steps > 0
                            else STEPS_PER_EXAMPLE * (n + 10))
        self._amax0 = self._scales()[0]
        return dict(n=keep, amax=self._scales()[0],
                    mass=self._mass() if self._extreme() else 0.0, alpha=self.alpha[:keep].copy(),
                    g=self.g[:keep].copy(), status=self.status[:keep].copy(), b=self.b,
                    S=list(self.S), Rinv=self.Rinv.copy(), kscale=self.kscale,
                    fresh=self.fresh, refined=self.refined, n_s_changes=self.n_s_changes,
                    n_refresh=self.n_refresh, max_inverse_drift=self.max_inverse_drift)

    def _rollback(self, snap):
        """Put the state back as :meth:`_snapshot` saw it.  The kernel columns of the
        margin set then: those still in S are kept, the others recomputed (from the
        column cache first, in the order of S); cached columns are cut to the examples
        kept.  Only the kernel-evaluation count shows that the operation happened."""
        n = snap["n"]
        kept = {s: self.KS[:n, j].copy() for j, s in enumerate(self.S)}
        del self.rows[n:]
        self.n = n
        self.cache.cut(n)
        self.alpha[:n] = snap["alpha"]
        self.alpha[n:] = 0.0
        self.g[:n] = snap["g"]
        self.g[n:] = 0.0
        self.status[:n] = snap["status"]
        self.status[n:] = GONE
        self.b = snap["b"]
        self.kscale = snap["kscale"]
        S = snap["S"]
        KS = np.zeros((self.KS.shape[0], len(S)))
        for j, s in enumerate(S):
            KS[:n, j] = kept[s] if s in kept else self._column(s)
        self.S = list(S)
        self.KS = KS
        self.Rinv = snap["Rinv"]
        for name in ("fresh", "refined", "n_s_changes", "n_refresh", "max_inverse_drift"):
            setattr(self, name, snap[name])
        self.n_rollbacks += 1

    def _answer_signals(self):
        """A pass of the adiabatic loop: in an operation that has run LONG_STEP seconds,
        deliver a signal the stream driver holds back
        (:func:`refsvm.core.stream.answer_held_signals`); its KeyboardInterrupt rolls the
        operation back (:meth:`_guarded`) and goes on to the driver."""
        if time.perf_counter() - self._started >= LONG_STEP:
            answer_held_signals()

    def _finish(self, c, snap):
        """The end of an operation on c begun at ``snap``: the polish (:mod:`.polish`),
        the bias interval (:mod:`.bias_centring`), repair and check (:mod:`.repair`)."""
        self._polish()
        self._centre_bias()
        self._repair_and_check(c, snap["amax"], snap["mass"])

    def _guarded(self, c, keep, operation):
        """Run ``operation`` on c as one atomic operation: snapshot, the operation, the
        polish, the bias interval, repair and check; rolled back on ExactnessError
        (re-raised, saying so)."""
        snap = self._snapshot(keep)
        try:
            operation()
            self._finish(c, snap)
        except ExactnessError as exc:
            self._rollback(snap)
            raise ExactnessError(
                f"IncrementalSVM: example {c}: {exc}; the operation was rolled back (the "
                "state is exactly the one before it)", c) from None
        except BaseException:            # Ctrl-C inside the operation (_answer_signals)
            self._rollback(snap)
            raise
