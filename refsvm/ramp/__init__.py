"""The ramp-loss family of Wang & Vucetic: OnlineSVMR (Alg. 1), the removal step (Alg. 2),
OnlineASVMR (Alg. 3) with QueryAll and Greedy, and the offline CCCP solver.

- :mod:`refsvm.ramp.online_svmr`: the reference ``OnlineSVMR`` state (Algorithms 1-2,
  Eqs. 3, 4, 10, 13-15, as printed);
- :mod:`refsvm.ramp.departures`: the departures from the printed algorithm, one module
  each, and their table ``DEPARTURES`` (``departures="paper"`` turns them all off);
- :mod:`refsvm.ramp._online_svmr`: its compiled twin (same class, ``_step`` only; the
  SIMD pass of steps 11-14 in ``refsvm/_csrc/refsvm_ramp.c``);
- :mod:`refsvm.ramp.online_asvmr`: the reference query strategies (Algorithm 3, QueryAll,
  Greedy) as loops over a state of either twin;
- :mod:`refsvm.ramp.cccp`: the offline ramp-loss SVM by CCCP (a reference solver);
- :mod:`refsvm.ramp.estimators`: :class:`OnlineRampSVM` and the active learners
  :class:`OnlineASVMR`, :class:`QueryAll`, :class:`Greedy` (with :class:`LearningCurve`).

Paper: ``shared/papers/000`` (Wang & Vucetic, ICDM 2009).
Docs: ``docs/wang_vucetic.rst``.  ALGORITHMS.md: §1.
"""
