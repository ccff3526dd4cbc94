"""Kernel Passive-Aggressive (Crammer et al.), the online baseline of Wang & Vucetic.

- :mod:`refsvm.kernel_pa.kernel_pa`: the reference ``KernelPA`` (PA, PA-I, PA-II on a
  bias-free kernel expansion; step sizes from :func:`refsvm.core.pa.pa_step`);
- :mod:`refsvm.kernel_pa._kernel_pa`: its compiled twin (same class, ``_step`` only);
- :mod:`refsvm.kernel_pa.estimators`: :class:`KernelPassiveAggressive`.

Paper: Crammer et al., JMLR 2006, as used in ``shared/papers/000`` (Wang & Vucetic,
ICDM 2009, Table I).  Docs: ``docs/wang_vucetic.rst``.  ALGORITHMS.md: §1 (the baselines
of Wang & Vucetic; the PA step sizes are written out in §3).
"""
