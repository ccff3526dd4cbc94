"""Stored rows of the StreamSVM states: copies of the rows they keep, and the
persistence format of a list of rows (a dense matrix, or the three CSR arrays).
Shared by the one-ball states (:mod:`refsvm.stream_svm.stream_svm`) and the
multiple-ball state (:mod:`refsvm.stream_svm.multi_ball`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.kernels import SparseRow, get_row, stack_rows

__all__ = ["_copy_row", "_pack", "_unpack"]


def _copy_row(x):
    if isinstance(x, SparseRow):
        return SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
    return np.array(x, dtype=np.float64)


def _pack(prefix, rows, n_features, sparse):
    """Rows as plain arrays for save_state (dense matrix, or the three CSR arrays)."""
    M = stack_rows(rows, n_features, sparse)
    if sparse:
        return {prefix + "data": M.data.astype(np.float64),
                prefix + "indices": M.indices.astype(np.int32),
                prefix + "indptr": M.indptr.astype(np.int64)}
    return {prefix + "X": np.ascontiguousarray(M, dtype=np.float64).reshape(-1, n_features)}


def _unpack(prefix, data, n_features, sparse):
    if sparse:
        indptr = np.asarray(data[prefix + "indptr"])
        M = sp.csr_matrix((data[prefix + "data"], data[prefix + "indices"], indptr),
                          shape=(indptr.shape[0] - 1, n_features))
    else:
        M = np.asarray(data[prefix + "X"], dtype=np.float64).reshape(-1, n_features)
    return [_copy_row(get_row(M, i)) for i in range(M.shape[0])]
