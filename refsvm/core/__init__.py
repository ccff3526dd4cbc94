"""The pure-Python core: reference versions of what :mod:`refsvm._core` compiles.

Every family's reference builds on these and on nothing from another family:

- :mod:`refsvm.core.kernels`: the row convention (dense arrays and
  :class:`~refsvm.core.kernels.SparseRow`), row arithmetic, the counting
  :class:`~refsvm.core.kernels.Kernel`, ``stack_rows``;
- :mod:`refsvm.core.stream`: the stream driver (``step`` returns whether the model
  changed, ``run`` loops over a stream);
- :mod:`refsvm.core.scaled`: the scaled weight vector w = s·v;
- :mod:`refsvm.core.pa`: the Passive-Aggressive step sizes and variant names.
"""

from .kernels import KERNEL_CODES, KERNELS, Kernel, SparseRow, get_row, stack_rows
from .pa import PA_VARIANTS, PAM_VARIANTS, pa_step, variant_code
from .scaled import ScaledVector
from .stream import StreamLearner

__all__ = ["KERNEL_CODES", "KERNELS", "Kernel", "PAM_VARIANTS", "PA_VARIANTS", "ScaledVector",
           "SparseRow", "StreamLearner", "get_row", "pa_step", "stack_rows", "variant_code"]
