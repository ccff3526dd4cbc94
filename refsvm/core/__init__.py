"""The pure-Python core: reference versions of what :mod:`refsvm._core` compiles.

Every family's reference builds on these and on nothing from another family:

- :mod:`refsvm.core.kernels`: the row convention (dense arrays and
  :class:`~refsvm.core.kernels.SparseRow`), row arithmetic, the counting
  :class:`~refsvm.core.kernels.Kernel`, ``stack_rows``, ``kernel_block`` (a block of
  kernel values by NumPy, uncounted, for the checks);
- :mod:`refsvm.core.stream`: the stream driver (``step`` returns whether the model
  changed, ``run`` loops over a stream);
- :mod:`refsvm.core.scaled`: the scaled weight vector w = s·v;
- :mod:`refsvm.core.pa`: the Passive-Aggressive step sizes and variant names;
- :mod:`refsvm.core.bordered`: rank-one growth and shrinking of the inverse of a bordered
  matrix, pivot round-off tests and the least-index (Bland) choice among tied events
  (Cauwenberghs–Poggio, POKER);
- :mod:`refsvm.core.active_set`: the rest of the exact active-set engine those two share
  (the partition codes, the event choice, the error-free sums in doubled precision);
- :mod:`refsvm.core.exactness`: their exactness check and polish (g afresh in doubled
  precision for either sign of the bias, the KKT violation of a partition, the balance
  y'alpha, the Newton step of (b, alpha_S) against the bordered matrix);
- :mod:`refsvm.core.margin_set`: their margin set (S, its kernel columns and the
  bordered inverse R, with its growth and shrinking);
- :mod:`refsvm.core.engine`: their membership changes of the margin set (an example
  joins, a member leaves), written once and called by both;
- :mod:`refsvm.core.column_cache`: their column cache (the kernel columns of examples
  that left the margin set, oldest out first within a budget);
- :mod:`refsvm.core.optimum`: the exact optimum they both keep in one layout (written by
  either family, read back checked), from which either family starts its engine, and the
  per-example arrays of their references' states with their growth (``PartitionArrays``);
- :mod:`refsvm.core.stream` also holds ``run_states``, the block driver that keeps every
  one-vs-rest state at the same example boundary and answers Ctrl-C there.
"""

from . import active_set, bordered, column_cache, engine, exactness, margin_set, optimum
from .kernels import (KERNEL_CODES, KERNELS, Kernel, SparseRow, get_row, rows_from_state,
                      rows_to_state, stack_rows)
from .pa import PA_VARIANTS, PAM_VARIANTS, pa_step, variant_code
from .scaled import ScaledVector
from .stream import StreamLearner

__all__ = ["KERNEL_CODES", "KERNELS", "Kernel", "PAM_VARIANTS", "PA_VARIANTS", "ScaledVector",
           "SparseRow", "StreamLearner", "active_set", "bordered", "column_cache", "engine",
           "exactness",
           "get_row", "margin_set", "optimum", "pa_step", "rows_from_state",
           "rows_to_state", "stack_rows", "variant_code"]
