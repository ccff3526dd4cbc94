from .kernels import Kernel
