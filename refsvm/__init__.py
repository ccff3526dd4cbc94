"""refsvm: the online and incremental SVM papers, runnable.

Every algorithm has a readable pure-Python reference that mirrors its paper's
pseudocode and a compiled Cython twin; the scikit-learn estimators below pick
one with ``backend="cython"|"python"``.
"""

from .idsvm import IncrementalSVM
from .kernel_pa import KernelPassiveAggressive
from .kernels import Kernel
from .linear import OnlineLinearSVM, PassiveAggressive, Perceptron, ProximalPassiveAggressive
from .ramp import OnlineRampSVM

__version__ = "0.1.0"

__all__ = [
    "IncrementalSVM",
    "Kernel",
    "KernelPassiveAggressive",
    "OnlineLinearSVM",
    "OnlineRampSVM",
    "PassiveAggressive",
    "Perceptron",
    "ProximalPassiveAggressive",
]
