"""POKER: parametric optimization for kernel methods (Fine & Scheinberg, NIPS 2001).

Exact 1-norm soft-margin SVM with bias by path following: the adjustable-bias method,
the fixed-bias method, the incremental AltPOKER (chunks of any size), SelfInit POKER
(batch), selective sampling (Cls2W, MaxSlk, dObj) and, beyond the paper, exact chunk
decrement (``unlearn``) and the joint chunk increment (``add_chunk(..., joint=True)``).

Paper: ``shared/papers/001`` (read ``001_full_text.txt``).  Docs: ``docs/fine_scheinberg.rst``.
ALGORITHMS.md: §2 (Fine & Scheinberg — POKER).

Modules: :mod:`refsvm.poker.poker` (the reference), ``refsvm.poker._poker`` (its compiled
twin, when built), :mod:`refsvm.poker.estimators` (:class:`POKER`).
"""
