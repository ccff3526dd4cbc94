"""StreamSVM (Rai, Daumé, Venkatasubramanian): a one-pass l2-SVM as a streaming
minimum enclosing ball -- Algorithm 1, lookahead (Algorithm 2), the kernel form
(Sec. 4.2) and multiple balls (Sec. 4.3).

Paper: ``shared/papers/004_*.txt`` ("Streamed Learning: One-Pass SVMs", IJCAI 2009).
Docs: ``docs/rai_daume_venkatasubramanian.rst``.  ALGORITHMS.md: §5.

Modules: :mod:`refsvm.stream_svm.stream_svm` (the reference: Algorithms 1 and 2),
beside it :mod:`~refsvm.stream_svm.enclosing_ball` (the lookahead solver),
:mod:`~refsvm.stream_svm.multi_ball` (Sec. 4.3), :mod:`~refsvm.stream_svm.stored_rows`
and :mod:`~refsvm.stream_svm.departures` (the departures from the printed lines);
``refsvm.stream_svm._stream_svm`` (the compiled twin of all of them);
:mod:`refsvm.stream_svm.estimators` (:class:`StreamSVM`).
"""
