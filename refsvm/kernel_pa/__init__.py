"""Kernel Passive-Aggressive (Crammer et al.), the online baseline of Wang & Vucetic.

Paper: Crammer et al., JMLR 2006, as used in ``shared/papers/000`` (Table I).
Docs: ``docs/wang_vucetic.rst``.  ALGORITHMS.md: §1.
"""
