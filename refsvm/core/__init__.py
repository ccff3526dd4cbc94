"""The pure-Python core: reference versions of what :mod:`refsvm._core` compiles.

Every family's reference builds on these and on nothing from another family:

- :mod:`refsvm.core.kernels`: the row convention (dense arrays and
  :class:`~refsvm.core.kernels.SparseRow`), row arithmetic, the counting
  :class:`~refsvm.core.kernels.Kernel`.
"""

from .kernels import KERNEL_CODES, KERNELS, Kernel, SparseRow, get_row, stack_rows

__all__ = ["KERNEL_CODES", "KERNELS", "Kernel", "SparseRow", "get_row", "stack_rows"]
