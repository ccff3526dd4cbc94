"""Fuzz worker, run in a subprocess by tests/test_fuzz.py (so a crash is a signal there,
not the end of the test run).  Feeds hypothesis-generated malformed sparse structures,
wrong widths and extreme values to every registered estimator, both backends; every call
must either work or raise ValueError.  Exit 0 when all did, 1 (with the case) otherwise.

    python tests/fuzz_worker.py [max_examples]
"""

from __future__ import annotations

import sys
import traceback


def main(max_examples):
    import faulthandler
    import warnings

    faulthandler.enable()  # a crash prints the Python stack of the failing call
    warnings.simplefilter("ignore")  # overflow warnings of the input checks themselves
    import numpy as np
    import scipy.sparse as sp
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
    from tests.test_common import REGISTRY, _data

    X, y = _data(40)
    d = X.shape[1]
    fitted = {}
    for name, make in REGISTRY.items():
        for backend in ("cython", "python"):
            for fmt in ("dense", "csr"):
                XX = sp.csr_matrix(X) if fmt == "csr" else X
                fitted[name, backend, fmt] = make(backend).fit(XX, y)

    ints = st.integers(min_value=-(2**40), max_value=2**40)
    small = st.integers(min_value=-3, max_value=d + 3)
    extreme = st.sampled_from([0.0, 1.0, -1.0, 1e-308, 5e-324, 1e150, -1e154, 1e300, 1.7e308,
                               -1.7e308, np.inf, -np.inf, np.nan])

    @st.composite
    def malformed_csr(draw):
        n_rows = draw(st.integers(min_value=0, max_value=4))
        nnz = draw(st.integers(min_value=0, max_value=6))
        index = st.one_of(small, ints)
        indices = np.array(draw(st.lists(index, min_size=nnz, max_size=nnz)), dtype=np.int64)
        indptr = np.array(draw(st.lists(st.one_of(st.integers(0, nnz), index),
                                        min_size=n_rows + 1, max_size=n_rows + 1)),
                          dtype=np.int64)
        data = np.array(draw(st.lists(extreme, min_size=nnz, max_size=nnz)), dtype=np.float64)
        width = draw(st.sampled_from([d, d - 1, d + 1, 1]))
        M = sp.csr_matrix((1, 1))
        M.data, M.indices, M.indptr = data, indices, indptr
        M._shape = (n_rows, width)
        return M

    @st.composite
    def dense_batch(draw):
        n = draw(st.integers(min_value=1, max_value=4))
        width = draw(st.sampled_from([d, d - 1, d + 1]))
        vals = draw(st.lists(st.one_of(extreme, st.floats(allow_nan=True, allow_infinity=True)),
                             min_size=n * width, max_size=n * width))
        return np.array(vals, dtype=np.float64).reshape(n, width)

    failures = []
    calls = ("partial_fit", "decision_function", "fit")

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(key=st.sampled_from(sorted(fitted)), batch=st.one_of(malformed_csr(), dense_batch()),
           call=st.sampled_from(calls))
    def fuzz(key, batch, call):
        import copy

        est = copy.deepcopy(fitted[key])
        labels = np.resize(np.array(["neg", "pos"]), batch.shape[0])
        try:
            if call == "partial_fit":
                est.partial_fit(batch, labels)
            elif call == "fit":
                est.fit(batch, labels)
            else:
                est.decision_function(batch)
        except ValueError:
            return
        except Exception:  # noqa: BLE001 - anything but ValueError is a finding
            failures.append(f"{key} {call} {batch!r}\n{traceback.format_exc()}")

    fuzz()
    for f in failures[:5]:
        print(f)
    print(f"fuzz: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
