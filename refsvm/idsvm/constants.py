"""The constants of Cauwenberghs & Poggio's printed method: one home for both twins.

The set codes of the KKT partition (Eq. 2), the kinds of the events that limit an
adiabatic increment (Sec. 2.2), and the levels of the printed method's own zero tests:
when a rate, a pivot or a tie is zero within round-off.  The reference
(:mod:`refsvm.idsvm.incremental_svm`) imports them from here and the compiled twin reads
them from here when it is imported.  The tolerances of the departures from the paper
(refinement, repair, the exactness check, the polish, ...) are not here: they are
settings of :data:`refsvm.idsvm.departures.DEPARTURES`, chosen per state.
"""

from ..core import active_set as _active_set
from ..core import exactness as _exactness

#: set membership codes: R (alpha = 0, g >= 0), S (margin), E (alpha = C, g <= 0) and
#: unlearned are the core's partition (:mod:`refsvm.core.active_set`, shared with POKER);
#: OUT, stored but not learned, is this family's own
REST, MARGIN, ERROR = _active_set.AT_ZERO, _active_set.IN_S, _active_set.AT_C
GONE = _active_set.GONE
OUT = 3
#: event kinds: the candidate's own (they end the operation), then the others
EV_C_MARGIN, EV_C_BOUND, EV_C_ZERO, EV_S_OUT, EV_JOIN = 0, 1, 2, 3, 4
#: |beta_s| below this is zero (beta is dimensionless: alpha_s per unit of alpha_c)
EPS_RATE = 1e-12
#: relative round-off level of gamma (see ``_sensitivities``)
EPS_GAMMA = 1e-12
#: events whose variable is within these of its bound at the smallest step are tied,
#: relative to the scale of the variables (``_scales``): g_scale = 1 + k_max alpha_max
#: for a g, alpha_max (the largest alpha) for an alpha
EPS_G = 1e-12
EPS_ALPHA = 1e-12
#: an alpha_c left below this times alpha_max (of the other examples) when S empties
#: while unlearning is round-off
EPS_RESIDUE = 1e-9
#: a pivot below this fraction of its O(k) bound is judged against its exact O(k^2)
#: round-off scale |Q_ii| + |beta|'|M||beta| instead
EPS_DOUBT = 1e-6
#: a pivot below this fraction of its scale is numerically zero ...
EPS_PIVOT_SCALE = 1e-13
#: ... and so is one below this times max k(x, x) (exact zeros, e.g. x = 0 under a
#: homogeneous polynomial kernel, make the relative scale meaningless)
EPS_PIVOT_ABS = 1e-14
#: the adiabatic steps allowed per operation when ``max_steps`` is 0:
#: STEPS_PER_EXAMPLE (n + 10) (a guard: a spent budget only raises)
STEPS_PER_EXAMPLE = 50
#: unit round-off of float64 (the core's, :data:`refsvm.core.exactness.EPS_MACH`)
EPS_MACH = _exactness.EPS_MACH
