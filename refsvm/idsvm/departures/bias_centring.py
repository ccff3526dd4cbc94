"""The bias when S is empty (setting ``centre_bias``).

The failure of the printed form it answers: with no margin vector (the first examples,
examples of one class, every support vector at a bound) the KKT conditions do not fix b:
every b in an interval [lo, hi] is optimal, and the printed method leaves it wherever
the last b-only increment stopped, at one end of the interval (the one-class and
all-at-bound streams of ``tests/idsvm/test_degenerate.py``).  Then b goes to the
midpoint of that interval, as LIBSVM does (to its finite end when it is half-infinite,
e.g. while only one class has been seen), and every g with it.

Docs: ``docs/cauwenberghs_poggio.rst``, "Degenerate cases" (S empty).
"""

from ...core.bordered import centred_bias
from ..constants import ERROR, GONE, REST

__all__ = ["BiasCentring"]


class BiasCentring:
    """Mixin of the IDSVM state."""

    def _centre_bias(self):
        """With S empty the KKT conditions leave b in an interval [lo, hi]; take its
        midpoint (LIBSVM's choice), or its finite end (one class seen so far)."""
        if self.S or not self.departures["centre_bias"]:
            return
        n = self.n
        st, y = self.status[:n], self.y[:n]
        v = self.b - y * self.g[:n]                      # the b that puts i on its margin
        low = ((st == REST) & (y > 0)) | ((st == ERROR) & (y < 0))
        high = ((st == REST) & (y < 0)) | ((st == ERROR) & (y > 0))
        new = centred_bias(v, low, high)
        if new is None:
            return
        db = new - self.b
        self.b = new
        act = st != GONE
        self.g[:n][act] += y[act] * db
