"""POKER: parametric optimization for kernel methods (Fine & Scheinberg, NIPS 2001).

Exact 1-norm soft-margin SVM with bias by path following: the adjustable-bias method,
the fixed-bias method, the incremental AltPOKER (chunks of any size), SelfInit POKER
(batch), selective sampling (Cls2W, MaxSlk, dObj) and, beyond the paper, exact chunk
decrement (``unlearn``) and the joint chunk increment (``add_chunk(..., joint=True)``).

Paper: ``shared/papers/001`` (read ``001_full_text.txt``).  Docs: ``docs/fine_scheinberg.rst``.
ALGORITHMS.md: §2 (Fine & Scheinberg — POKER).

Modules: :mod:`refsvm.poker.poker` (the reference: the printed method, open it beside
Fig. 1), :mod:`refsvm.poker.departures` (the ``DEPARTURES`` table and one module per
departure from the printed method; ``departures="paper"`` turns them all off),
:mod:`refsvm.poker.partition` (partition codes, event windows), :mod:`refsvm.poker.storage`
(storage, persistence, read-outs), ``refsvm.poker._poker`` (the compiled twin, when
built), :mod:`refsvm.poker.estimators` (:class:`POKER`).
"""
