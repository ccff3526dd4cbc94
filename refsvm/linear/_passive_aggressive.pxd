# Compiled twins of refsvm/linear/passive_aggressive.py, declared for cimport: the
# reduced-kernel PA twin (refsvm/linear/_reduced_kernel_pa.pyx) runs these _step
# methods on its transformed rows.
from refsvm._core cimport StreamLearner


cdef class LinearModel(StreamLearner):
    cdef readonly bint fit_intercept
    cdef readonly object departures     # the family's departures, resolved
    cdef readonly object w              # ndarray (n_features,), the weights
    cdef double* w_data                 # its buffer
    cdef public double b
    cdef public long long t
    cdef public long long n_updates
    cdef public long long n_mistakes    # y f(x) <= 0 before the step (prequential)


cdef class PerceptronState(LinearModel):
    cdef public double eta
    cdef public double R2


cdef class PAState(LinearModel):
    cdef public int variant
    cdef public double C


cdef class PAmState(LinearModel):
    cdef public int variant
    cdef public double C
    cdef public double gamma
    cdef readonly double variance_roundoff  # departures["variance_roundoff"]
    cdef public bint frozen             # the class statistics stop changing
    cdef public long long n_pos
    cdef public long long n_neg
    cdef readonly object sum_pos        # ndarrays (n_features,), as in the reference
    cdef readonly object sum_neg
    cdef readonly object sumsq_pos
    cdef readonly object sumsq_neg
    cdef object wp                      # w_p of the current round (scratch)
    cdef double* sum_pos_data
    cdef double* sum_neg_data
    cdef double* sumsq_pos_data
    cdef double* sumsq_neg_data
    cdef double* wp_data

    cdef void _add_statistics(self, const int* xi, const double* xv, Py_ssize_t nnz,
                              double y) noexcept nogil
    cdef double _proximal(self) noexcept nogil
