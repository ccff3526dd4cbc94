"""Departure ``rewarm``: when the updates unlearn more than a few per cent of the
arrivals, learn a stretch of the stream with the hinge loss again, then steps 9-27 once
(CCCP's start).

The failure of the printed form.  Steps 16-27 unlearn every example of V whose g passed 2,
and Algorithm 2 drops the waiting examples with the largest |1 - g|, so that on a noisy
stream an online pass can leave for good the examples a better model needs.  Two ways:

* it cascades: with a kernel as wide as the structure of the data, an unlearning at
  alpha = C moves the g of many other examples past 2 or back below it, and the next
  arrivals unlearn and relearn the same examples again and again.  Stream that shows it:
  the noisy Checkerboard (15 % of the labels flipped, 10,000 examples) at gamma = 0.5 or
  at the estimator's ``gamma="scale"``: the unlearnings outnumber the arrivals within the
  first third of the pass, the pass takes tens of times LIBSVM's time, and the examples
  dropped before the cascade is noticed cost accuracy (``docs/defaults.rst``, the
  ``ncheck-g0.5`` rows: 82.7 % against LIBSVM's 84.6 % when a stretch waits for one
  unlearning per arrival);
* it freezes: at a large C the early model claims regions it gets wrong, their arrivals
  wait outside the ramp region and are dropped, and the model keeps a few hundred
  support vectors for good (Gauss at gamma = 2, C = 10: 1.5 points below LIBSVM).

Both show as unlearnings: from the first few hundred arrivals on, such passes unlearn 5 %
of the arrivals or more (tens per arrival in a cascade), while the passes that end
within half a point of LIBSVM without help unlearn at most about 1 % (waveform,
svmguide1, usps) or none (dna, ijcnn1, w3a).

What it does instead.  After an arrival of the ramp phase, once ``rewarm_after`` examples
have been seen, when the unlearnings so far exceed ``rewarm`` times the arrivals
(:meth:`Rewarm._rewarm`), the arrivals up to ``rewarm_growth`` times the examples seen
are learned with the hinge loss as in the warm-up
(:attr:`refsvm.ramp.departures.warmup.WarmUp.outlier_bound`: ``hinge_until``); at the
first arrival after them steps 9-27 run once with the bound 2, as at the end of the
warm-up.  Once a stretch has started the stretches follow one another, each
``rewarm_growth`` times longer up to ``rewarm_max`` arrivals, so steps 9-27 run from a
hinge start O(log n) times on a short stream and once every ``rewarm_max`` arrivals on a
long one, as offline CCCP does once from the hinge SVM; each such end drops, through
Algorithm 2, the outliers it finds, so the stretches grow fast.
:meth:`Rewarm._end_rewarm` ends a stretch early in the finishing step
(``OnlineRampSVM.fit``'s model is a ramp model).  0 (the
paper form) never starts one.  The cost: a stretch holds the hinge model's support
vectors, more than the ramp's on noisy data (``docs/defaults.rst`` has the times).

A stretch is at most ``rewarm_max`` arrivals long: a stretch holds the hinge model of its
arrivals, which on noisy data keeps a fixed share of them as support vectors, so that
uncapped stretches on a long stream grow the model, and I's kernel rows, with the stream
(Gauss, 40,000 arrivals, gamma = 0.5, C = 1: 13,520 support vectors and 3.4 GB at
arrival 32,000, where the printed ramp keeps about 1,600 at the same accuracy).

Settings: ``rewarm`` (unlearnings per arrival, >= 0; 0: off), ``rewarm_after`` (examples
seen before the rule applies), ``rewarm_growth`` (a stretch ends at this times the
examples seen when it starts), ``rewarm_max`` (the longest stretch, in arrivals; 0: no
cap).  Docs: ``docs/wang_vucetic.rst``, "Hinge stretches".
"""

from __future__ import annotations

__all__ = ["Rewarm"]


class Rewarm:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: hinge stretches after a
    cascade of unlearnings."""

    def _rewarm(self):
        """After an arrival: in the ramp phase, more than ``rewarm`` unlearnings per
        arrival so far (or a stretch before) start a hinge stretch up to arrival
        ``rewarm_growth`` times the examples seen, at most ``rewarm_max`` arrivals on."""
        if (self.rewarm > 0.0 and self.n_seen > self.hinge_until
                and self.n_seen >= self.rewarm_after
                and (self.hinge_until > self.warmup
                     or self.n_unlearned > self.rewarm * self.n_seen)):
            self.hinge_until = self.rewarm_growth * self.n_seen
            if self.rewarm_max:
                self.hinge_until = min(self.hinge_until, self.n_seen + self.rewarm_max)

    def _end_rewarm(self):
        """A hinge stretch (not the warm-up) under way ends now: the next steps 9-27 run
        with the bound 2."""
        if self.warmup < self.hinge_until and self.n_seen <= self.hinge_until:
            self.hinge_until = self.n_seen - 1
