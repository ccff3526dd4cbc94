"""The linear family: Perceptron, PA / PA-I / PA-II, PAm (Lee, Tseng, Chen) and the
online linear SVM (Bagnell).

Papers: ``shared/papers/002`` (Y.-J. Lee, Y.-C. Tseng, I.-F. Chen, *Online Nonlinear
SVM for Large-Scale Classification*, slides) and ``003`` (J. A. Bagnell, *Notes on
efficient online SVM implementation*).  Docs: ``docs/lee_tseng_chen.rst``,
``docs/bagnell.rst``.  ALGORITHMS.md: §3 (Lee, Tseng, Chen) and §4 (Bagnell).

Modules: :mod:`~refsvm.linear.passive_aggressive` (reference: ``PerceptronState``,
``PAState``, ``PAmState``) and its twin ``_passive_aggressive``;
:mod:`~refsvm.linear.online_linear_svm` (reference: ``PegasosState``) and its twin
``_online_linear_svm``; :mod:`~refsvm.linear.estimators` (the scikit-learn estimators).
"""

from .online_linear_svm import PegasosState
from .passive_aggressive import PAmState, PAState, PerceptronState

__all__ = ["PAState", "PAmState", "PegasosState", "PerceptronState"]
