"""IDSVM family: the exact incremental and decremental SVM of Cauwenberghs & Poggio.

Paper: G. Cauwenberghs and T. Poggio, "Incremental and decremental support vector
machine learning", NIPS 13 (2000), pp. 409-415 (not among the texts of shared/papers;
the IDSVM baseline of Wang & Vucetic, file 000).
Docs: ``docs/cauwenberghs_poggio.rst`` ("The printed algorithm" says which method to read
beside which equation).
ALGORITHMS.md: section 6 (Cauwenberghs & Poggio -- IDSVM).

Modules: ``incremental_svm`` (the reference: the printed method,
:class:`IncrementalSVMState`), its compiled twin ``_incremental_svm``, ``constants`` (the
printed method's constants, one home for both twins), ``departures`` (each departure from
the paper as a named mixin, and the table :data:`DEPARTURES` of their settings, chosen per
state with ``departures=``), ``state_format`` (the persistence format, the conversion
from POKER's, the diagnostics), ``storage`` (the examples and their kernel columns),
``estimators`` (:class:`IncrementalSVM`).  The bordered-inverse updates and the
least-index event choice come from the shared core (``refsvm.core.bordered``,
``refsvm/_core.pxd``).  :class:`ExactnessError`: the exactness check fired and the
operation was rolled back (``docs/cauwenberghs_poggio.rst``, "Safeguards").
"""

from .departures import DEPARTURES
from .incremental_svm import ExactnessError

__all__ = ["DEPARTURES", "ExactnessError"]
