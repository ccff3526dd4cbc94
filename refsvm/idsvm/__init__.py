"""Exact incremental/decremental SVM (Cauwenberghs & Poggio, NIPS 2000), Wang & Vucetic's
IDSVM baseline.

Paper: Cauwenberghs & Poggio, NIPS 13 (the ``pages`` corpus); baseline of ``shared/papers/000``.
Docs: ``docs/cauwenberghs_poggio.rst``.  ALGORITHMS.md: §1 (IDSVM baseline).
"""
