"""refsvm: the online and incremental SVM papers, runnable.

Every algorithm has a readable pure-Python reference that mirrors its paper's
pseudocode and a compiled Cython twin; the scikit-learn estimators below pick
one with ``backend="cython"|"python"``.
"""

from .core.kernels import Kernel
from .idsvm.estimators import IncrementalSVM
from .kernel_pa.estimators import KernelPassiveAggressive
from .linear.estimators import (OnlineLinearSVM, PassiveAggressive, Perceptron,
                                ProximalPassiveAggressive, ProximalReducedKernelPA,
                                ReducedKernelPA)
from .ramp.estimators import Greedy, LearningCurve, OnlineASVMR, OnlineRampSVM, QueryAll
from .ramp.estimators import cccp_ramp
from .persistence import load
from .poker.estimators import POKER
from .stream_svm.estimators import StreamSVM
from .tracing import trace

__version__ = "0.1.0"

__all__ = [
    "Greedy",
    "IncrementalSVM",
    "Kernel",
    "KernelPassiveAggressive",
    "LearningCurve",
    "OnlineASVMR",
    "OnlineLinearSVM",
    "OnlineRampSVM",
    "POKER",
    "PassiveAggressive",
    "Perceptron",
    "ProximalPassiveAggressive",
    "ProximalReducedKernelPA",
    "QueryAll",
    "ReducedKernelPA",
    "StreamSVM",
    "cccp_ramp",
    "load",
    "trace",
]
