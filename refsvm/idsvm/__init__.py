"""IDSVM family: the exact incremental and decremental SVM of Cauwenberghs & Poggio.

Paper: G. Cauwenberghs and T. Poggio, "Incremental and decremental support vector
machine learning", NIPS 13 (2000), pp. 409-415 (not among the texts of shared/papers;
the IDSVM baseline of Wang & Vucetic, file 000).
Docs: ``docs/cauwenberghs_poggio.rst``.
ALGORITHMS.md: section 6 (Cauwenberghs & Poggio -- IDSVM).

Modules: ``incremental_svm`` (the reference, :class:`IncrementalSVMState`), its compiled
twin ``_incremental_svm`` (constants shared through ``_incremental_svm_constants.pxd``),
``estimators`` (:class:`IncrementalSVM`).  The bordered-inverse updates and the
least-index event choice come from the shared core (``refsvm.core.bordered``,
``refsvm/_core.pxd``).  :class:`ExactnessError`: a safeguard fired and the operation was
rolled back (``docs/cauwenberghs_poggio.rst``, "Safeguards").
"""

from .incremental_svm import ExactnessError

__all__ = ["ExactnessError"]
