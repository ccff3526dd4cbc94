"""The RBF kernels' exponential (``refsvm_exp_neg_many``): the C library's ``exp`` bit for
bit at every width the machine can take (eight at a time with AVX-512F, four with AVX2
and FMA, one by one), since the pure-Python reference calls ``math.exp`` and the twins
must agree with it."""

import math
import struct
from decimal import Decimal, getcontext

import numpy as np
import pytest

from refsvm import _core
from refsvm._core import CKernel, RowStore
from refsvm.core.kernels import Kernel, get_row

from ..conftest import to_csr


def _bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def test_the_table_is_two_to_the_i_over_128():
    """Entry 2i is the relative tail (2^(i/128) - T_i) / T_i, entry 2i + 1 the bits of
    T_i = 2^(i/128) rounded less i << 45: regenerated at 80 digits."""
    getcontext().prec = 80
    table = _core.exp_table()
    for i in range(128):
        v = Decimal(2) ** (Decimal(i) / 128)
        t = float(v)
        assert int(table[2 * i]) == _bits(float((v - Decimal(t)) / Decimal(t))), i
        assert int(table[2 * i + 1]) == (_bits(t) - (i << 45)) % 2 ** 64, i


def _arguments(rng):
    """Squared distances of every scale an RBF kernel meets, and the edges of exp's
    main range (|x| < 2^-54, |x| >= 512, overflow of the distance, NaN)."""
    scales = 10.0 ** rng.uniform(-20, 3.2, size=400_000)
    d2 = rng.random(400_000) * scales
    edges = [0.0, -0.0, 5e-324, 2.0 ** -54, 2.0 ** -55, 511.9, 512.0, 708.39, 708.4,
             745.1, 745.2, 1023.9, 1024.0, 1e300, math.inf, math.nan]
    near = edges[3:12]
    return np.concatenate([d2, edges, np.nextafter(near, 0), np.nextafter(near, 2e3)])


@pytest.fixture(params=_core.exp_widths(), ids=lambda w: f"width{w}")
def width(request):
    """Every width that passed the check at import, taken in turn."""
    before = _core.exp_width()
    _core.exp_width(request.param)
    yield request.param
    _core.exp_width(before)


@pytest.mark.parametrize("gamma", [1.0, 0.5, 1.0 / 123, 7.3, 1e-4])
def test_exp_of_a_column_is_the_libraries_bit_for_bit(gamma, width):
    d2 = _arguments(np.random.default_rng(int(gamma * 1000)))
    got = _core.exp_neg_array(d2, gamma)
    expected = np.array([math.exp(-gamma * x) for x in d2])
    np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))


def test_lengths_around_the_vector_width(width):
    """0 .. 20 values: the vector part and the scalar tail."""
    rng = np.random.default_rng(3)
    for m in range(21):
        d2 = rng.random(m) * 30.0
        expected = np.array([math.exp(-0.3 * x) for x in d2])
        np.testing.assert_array_equal(_core.exp_neg_array(d2, 0.3), expected)


def test_a_width_not_available_is_refused():
    with pytest.raises(ValueError, match="width"):
        _core.exp_width(3)
    assert _core.exp_width() in _core.exp_widths()


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("d", [1, 2, 5, 8, 9, 40])
def test_whole_kernel_columns_equal_the_reference(sparse, d, width):
    """Kernel columns over a store of 300 rows (the dense at-most-8-features path eight
    rows at a time, the general dense path, CSR's gather) equal the reference's
    ``Kernel.value`` pair by pair, bit for bit, near and far pairs and duplicates."""
    rng = np.random.RandomState(d)
    X = rng.randn(300, d) * 10.0 ** rng.randint(-3, 2, size=(300, 1))
    X[rng.rand(300, d) < 0.3] = 0.0
    X[11] = X[10]
    X[12] = X[10] + 1e-9
    M = to_csr(X) if sparse else X
    store = RowStore(d, sparse)
    for i in range(300):
        store.append(M, i)
    for gamma in (0.05, 1.0 / d, 3.0):
        ref = Kernel("rbf", gamma, 3, 0.0)
        twin = CKernel("rbf", gamma, 3, 0.0)
        rows = [get_row(M, i) for i in range(300)]
        for z in (0, 10, 299):
            expected = np.array([ref.value(rows[i], rows[z]) for i in range(300)])
            np.testing.assert_array_equal(twin.rows_pairs(store, z, np.arange(300)), expected)
            pos = np.random.RandomState(z).permutation(300)[:77]
            np.testing.assert_array_equal(twin.rows_pairs(store, z, pos), expected[pos])
            np.testing.assert_array_equal(twin.row(store, rows[z], many=True), expected)


def _glibc_with_the_table_exp():
    import platform

    lib, version = platform.libc_ver()
    try:
        major, minor = (int(v) for v in version.split(".")[:2])
    except ValueError:
        return False
    return lib == "glibc" and (major, minor) >= (2, 28)


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.mark.skipif(not _glibc_with_the_table_exp(),
                    reason="the vector forms reproduce glibc >= 2.28's exp")
def test_the_vector_forms_are_taken_where_they_reproduce_the_library():
    """On glibc >= 2.28 the check at import finds every result of each form the CPU can
    run equal, and the kernels take the widest (a wrong constant or step would turn a
    form off: this fails)."""
    flags = _cpu_flags()
    expected = ([8] if "avx512f" in flags else []) + ([4] if {"avx2", "fma"} <= flags else [])
    assert _core.exp_widths() == expected + [1]
    assert _core.exp_width() == (expected + [1])[0]
