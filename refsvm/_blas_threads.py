"""BLAS on one thread while refsvm learns.

The compiled twins call LAPACK and BLAS on small operands: a fresh inverse of a bordered
matrix of a few hundred rows, a matrix-vector product, the reduced-kernel blocks of
ReducedKernelPA.  OpenBLAS runs such calls on all its threads and then keeps those
threads spinning, waiting for the next call; nothing else refsvm does while learning runs
on them, and when the machine has other work (another process, another estimator, a test
runner's second worker) the spinning threads take its cores (``docs/reliability.rst``,
"BLAS threads", has the measurements).

:func:`one_blas_thread` sets every BLAS library's thread count to 1 for the duration of a
``with`` and restores it after (threadpoolctl, a dependency of scikit-learn).  The
libraries are found once per process; entering and leaving then costs a few
microseconds.  The estimators' learning calls run under it (``refsvm/base.py``,
``locked``); predictions do not (their kernel blocks are large products that threads
speed up).
"""

from __future__ import annotations

__all__ = ["one_blas_thread"]


class _OneBlasThread:
    """The context manager of :func:`one_blas_thread`."""

    libraries = None

    def __enter__(self):
        if _OneBlasThread.libraries is None:
            from threadpoolctl import ThreadpoolController

            _OneBlasThread.libraries = [lc for lc in ThreadpoolController().lib_controllers
                                        if lc.user_api == "blas"]
        self.saved = [(lc, lc.num_threads) for lc in _OneBlasThread.libraries]
        for lc, n in self.saved:
            if n != 1:
                lc.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lc, n in self.saved:
            if n != 1:
                lc.set_num_threads(n)
        return False


def one_blas_thread():
    """A context manager: BLAS on one thread inside it (see the module docstring)."""
    return _OneBlasThread()
