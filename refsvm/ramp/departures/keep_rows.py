"""Departure ``keep_rows``: the kernel row of a coordinate back at 0 is parked, not released.

The failure of the printed form.  Nothing fails; it costs kernel evaluations.  The state
keeps the kernel rows of the support vectors only (alpha != 0); when alpha returns to 0
the row is released, and when alpha leaves 0 again it is built anew over all of I.  On
streams where the same examples enter and leave the support again and again, most kernel
evaluations rebuild rows already computed.

What it does instead.  The row is *parked*: kept, but no longer extended by one value per
arrival; when alpha leaves 0 again only the values of the examples that arrived since are
evaluated (:meth:`refsvm.ramp.online_svmr.OnlineSVMR._row`).  At most as many rows are
parked as there are support vectors (the oldest parked first out, at the end of every
arrival: :meth:`KeepRows._evict_parked`), so memory stays O(#SV * |I|); a row of an example
removed by Algorithm 2 goes with it.  The values are the same kernel values either way:
alpha, g and every step are the same bit for bit, only the kernel evaluations (and the rows
kept) differ.  Stream that shows the saving: ``benchmarks/bench_ramp.py`` (the real data
sets, 17.5 % fewer kernel evaluations).

Setting: ``keep_rows`` (gates the state's parameter ``keep_rows``).  Docs:
``docs/wang_vucetic.rst``, "Departures from the printed algorithm".
"""

from __future__ import annotations

import numpy as np

__all__ = ["KeepRows"]


class KeepRows:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: parked rows."""

    def _release_row(self, p):
        """alpha_p is back at 0: release its row, or park it (``keep_rows``)."""
        i = int(self.ids[p])
        if self.keep_rows and i in self.krow:
            self.parked.pop(i, None)
            self.parked[i] = None                    # the newest parked
        else:
            self.krow.pop(i, None)

    def _evict_parked(self):
        """At most #SV parked rows: the oldest parked go first (``keep_rows``)."""
        n_sv = int(np.count_nonzero(self.alpha))
        while len(self.parked) > n_sv:
            i = next(iter(self.parked))
            del self.parked[i]
            del self.krow[i]
