"""The linear family: Perceptron, PA / PA-I / PA-II, PAm (Lee, Tseng, Chen) and the
online linear SVM (Bagnell).

Papers: ``shared/papers/002`` (Lee, Tseng, Chen, slides) and ``003`` (Bagnell).
Docs: ``docs/lee_tseng_chen.rst``, ``docs/bagnell.rst``.  ALGORITHMS.md: §3 and §4.
"""
