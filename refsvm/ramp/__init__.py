"""The ramp-loss family of Wang & Vucetic: OnlineSVMR (Alg. 1), the removal step (Alg. 2),
OnlineASVMR (Alg. 3) with QueryAll and Greedy, and the offline CCCP solver.

Paper: ``shared/papers/000`` (Wang & Vucetic, ICDM 2009).
Docs: ``docs/wang_vucetic.rst``.  ALGORITHMS.md: §1.
"""
