"""topk.topk on NumPy arrays (the CPU backend) against a NumPy reference of the
documented semantics; errors; and the ctypes mirror of include/topk.h.
Runs without a GPU and without torch."""

import ctypes
import re
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

import topk  # noqa: E402
from topk import _lib  # noqa: E402
from topk._ndarray import NUMPY  # noqa: E402

from _reference import assert_topk, assert_topk_any_ties, random_array, reference_indices  # noqa: E402

try:
    import ml_dtypes

    BFLOAT16 = [np.dtype(ml_dtypes.bfloat16)]
except ImportError:
    BFLOAT16 = []

DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.uint32, np.int64, np.uint64)] + BFLOAT16
CPU_ALGOS = ["auto", "sort", "cpu_select"]
# (shape, dim): vectors, rows, columns, a middle axis of a 3-d array, size-1 axes.
SHAPES = [((50,), -1), ((7, 33), -1), ((7, 33), 0), ((3, 4, 21), 1), ((5, 1, 9), 2), ((1, 64), 1)]
HEADER = Path(__file__).resolve().parents[2] / "include" / "topk.h"


@pytest.mark.parametrize("distribution", ["normal", "ties", "special"])
@pytest.mark.parametrize("is_sorted", [True, False], ids=["sorted", "unsorted"])
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_reference(dtype, largest, is_sorted, distribution):
    rng = np.random.default_rng(1234)
    for shape, dim in SHAPES:
        x = random_array(rng, shape, dtype, distribution)
        n = shape[dim]
        for k in sorted({1, n // 3, n}):
            for algo in CPU_ALGOS:
                values, indices = topk.topk(x, k, dim=dim, largest=largest, sorted=is_sorted, algo=algo)
                assert indices.dtype == np.int64
                assert_topk(x, k, dim, largest, is_sorted, values, indices)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint32], ids=str)
@pytest.mark.parametrize("algo", CPU_ALGOS)
def test_long_rows(dtype, algo):
    rng = np.random.default_rng(7)
    x = random_array(rng, (3, 100_000), dtype, "normal")
    for k in (1, 100, 5000):
        for largest in (True, False):
            values, indices = topk.topk(x, k, largest=largest, algo=algo)
            assert_topk(x, k, -1, largest, True, values, indices)


@pytest.mark.parametrize("algo", CPU_ALGOS)
def test_ties_keep_lowest_indices(algo):
    x = np.full((4, 1000), 7.0, dtype=np.float32)
    x[1, 500:] = 8.0  # the k largest of row 1 are the first k of its 8.0s
    for largest in (True, False):
        _, indices = topk.topk(x, 10, largest=largest, algo=algo)
        want = np.tile(np.arange(10), (4, 1))
        if largest:
            want[1] += 500
        np.testing.assert_array_equal(indices, want)
        _, indices = topk.topk(x, 10, largest=largest, sorted=False, algo=algo)
        np.testing.assert_array_equal(np.sort(indices, axis=1), want)


def test_nan_is_largest_and_negative_zero_below_positive_zero():
    x = np.array([1.0, np.nan, -0.0, np.inf, 0.0, -np.nan, -np.inf], dtype=np.float32)
    _, indices = topk.topk(x, 7)
    np.testing.assert_array_equal(indices, [1, 5, 3, 0, 4, 2, 6])
    _, indices = topk.topk(x, 7, largest=False)
    np.testing.assert_array_equal(indices, [6, 2, 4, 0, 3, 1, 5])


@pytest.mark.parametrize("algo", CPU_ALGOS)
def test_nondeterministic_returns_a_valid_choice(algo):
    rng = np.random.default_rng(3)
    x = random_array(rng, (6, 300), np.float32, "ties")
    for largest in (True, False):
        values, indices = topk.topk(x, 40, largest=largest, deterministic=False, algo=algo)
        assert_topk_any_ties(x, 40, -1, largest, values, indices)


def non_contiguous_views():
    rng = np.random.default_rng(11)
    base = random_array(rng, (12, 40), np.float32, "normal")
    cube = random_array(rng, (4, 5, 6), np.float64, "normal")
    return {
        "transposed": base.T,
        "row_slice": base[:, 5:30],
        "strided": base[::2, ::3],
        "reversed": base[::-1, ::-1],
        "broadcast": np.broadcast_to(base[0], (4, 40)),
        "fortran": np.asfortranarray(base),
        "permuted_3d": np.transpose(cube, (2, 0, 1)),
    }


@pytest.mark.parametrize("name", list(non_contiguous_views()))
def test_non_contiguous_inputs(name):
    x = non_contiguous_views()[name]
    for dim in range(-1, x.ndim):
        k = max(1, x.shape[dim] // 2)
        values, indices = topk.topk(x, k, dim=dim)
        assert_topk(x, k, dim, True, True, values, indices)
        again = topk.topk(np.ascontiguousarray(x), k, dim=dim)
        np.testing.assert_array_equal(indices, again.indices)
        assert values.flags.c_contiguous and indices.flags.c_contiguous


def test_row_slices_are_read_in_place(monkeypatch):
    base = np.arange(600, dtype=np.float32).reshape(20, 30)[::-1].copy()
    view = base[2:18, 4:25]

    def no_copy(x):
        raise AssertionError("a sliced matrix should be read in place, with ld")

    monkeypatch.setattr(NUMPY, "contiguous", no_copy)
    values, indices = topk.topk(view, 5)
    assert_topk(view, 5, -1, True, True, values, indices)


def test_result_types_and_shapes():
    x = np.random.default_rng(0).standard_normal((3, 8, 5)).astype(np.float32)
    result = topk.topk(x, 2, dim=1)
    assert isinstance(result, topk.TopkResult) and isinstance(result, tuple)
    assert result.values.shape == (3, 2, 5) and result.indices.shape == (3, 2, 5)
    assert result.values.dtype == np.float32 and result.indices.dtype == np.int64
    for spec in ("int32", np.int32, np.dtype(np.int32)):
        assert topk.topk(x, 2, index_dtype=spec).indices.dtype == np.int32
    assert topk.topk(x, 2, index_dtype="int64").indices.dtype == np.int64


def test_empty_and_zero_k():
    x = np.ones((4, 5), dtype=np.float32)
    values, indices = topk.topk(x, 0)
    assert values.shape == (4, 0) and indices.shape == (4, 0)
    values, indices = topk.topk(np.ones((0, 5), dtype=np.float32), 3)
    assert values.shape == (0, 3) and indices.shape == (0, 3)
    values, indices = topk.topk(np.ones((4, 0), dtype=np.float32), 0)
    assert values.shape == (4, 0)
    values, indices = topk.topk(np.ones((2, 0, 3), dtype=np.float32), 2, dim=2)
    assert values.shape == (2, 0, 2)
    with pytest.raises(topk.KRangeError):
        topk.topk(np.ones((4, 0), dtype=np.float32), 1)


def test_zero_dimensional_input_like_torch():
    x = np.array(2.5, dtype=np.float32)
    for k in (0, 1):
        for dim in (0, -1):
            values, indices = topk.topk(x, k, dim=dim)
            assert values.shape == () and indices.shape == ()
            assert values == 2.5 and indices == 0
    with pytest.raises(topk.KRangeError):
        topk.topk(x, 2)
    with pytest.raises(topk.InvalidArgumentError):
        topk.topk(x, 1, dim=1)
    assert topk.topk(np.float64(4.0), 1).values == 4.0  # NumPy scalars are 0-d arrays


def test_out_arrays():
    rng = np.random.default_rng(5)
    x = random_array(rng, (6, 20), np.float32, "normal")
    values, indices = np.empty((6, 4), np.float32), np.empty((6, 4), np.int32)
    result = topk.topk(x, 4, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert_topk(x, 4, -1, True, True, values, indices)

    values, indices = np.empty((2, 20), np.float32), np.empty((2, 20), np.int64)
    result = topk.topk(x, 2, dim=0, out=(values, indices))
    assert result.values is values
    assert_topk(x, 2, 0, True, True, values, indices)

    strided = np.empty((6, 8), np.float32)[:, ::2], np.empty((6, 4), np.int64)
    topk.topk(x, 4, out=strided)
    assert_topk(x, 4, -1, True, True, *strided)


def test_out_errors():
    x = np.ones((6, 20), dtype=np.float32)
    with pytest.raises(topk.InvalidArgumentError, match="shape"):
        topk.topk(x, 4, out=(np.empty((6, 5), np.float32), np.empty((6, 5), np.int64)))
    with pytest.raises(TypeError, match="dtype"):
        topk.topk(x, 4, out=(np.empty((6, 4), np.float64), np.empty((6, 4), np.int64)))
    with pytest.raises(TypeError, match="int64 or int32"):
        topk.topk(x, 4, out=(np.empty((6, 4), np.float32), np.empty((6, 4), np.int16)))
    with pytest.raises(TypeError, match="index_dtype"):
        topk.topk(x, 4, index_dtype=np.int64, out=(np.empty((6, 4), np.float32), np.empty((6, 4), np.int32)))
    with pytest.raises(TypeError, match="pair"):
        topk.topk(x, 4, out=np.empty((6, 4), np.float32))
    square = np.ones((4, 4), dtype=np.float32)
    with pytest.raises(topk.OverlapError, match="TOPK_ERR_OVERLAP"):
        topk.topk(square, 4, out=(square, np.empty((4, 4), np.int64)))


def test_errors_carry_status_and_detail():
    x = np.ones((3, 5), dtype=np.float32)
    with pytest.raises(topk.KRangeError) as raised:
        topk.topk(x, 6)
    error = raised.value
    assert isinstance(error, ValueError) and isinstance(error, topk.TopkError)
    assert error.status == _lib.TOPK_ERR_K_RANGE and error.status_name == "TOPK_ERR_K_RANGE"
    assert "6" in error.detail and str(error).startswith("TOPK_ERR_K_RANGE: ")

    with pytest.raises(topk.InvalidArgumentError, match="TOPK_ERR_INVALID_ARGUMENT"):
        topk.topk(x, -1)
    with pytest.raises(topk.InvalidArgumentError, match="TOPK_ERR_INVALID_ARGUMENT.*dim=2"):
        topk.topk(x, 1, dim=2)
    with pytest.raises(ValueError, match="TOPK_ERR_INVALID_ARGUMENT.*'quick'"):
        topk.topk(x, 1, algo="quick")
    with pytest.raises(ValueError, match="TOPK_ERR_UNSUPPORTED.*max_iter"):
        topk.topk(x, 1, max_iter=4, algo="cpu_select")  # early stopping: rtopk only
    with pytest.raises(topk.InvalidArgumentError, match="TOPK_ERR_INVALID_ARGUMENT.*max_iter"):
        topk.topk(x, 1, max_iter=-1)
    with pytest.raises(topk.UnsupportedError, match="TOPK_ERR_UNSUPPORTED"):
        topk.topk(x, 1, algo="air_radix")  # a GPU algorithm: not built for the CPU backend
    with pytest.raises(topk.IndexTypeError, match="TOPK_ERR_INDEX_TYPE"):
        topk.topk(x, 1, index_dtype=np.int16)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        topk.topk([1.0, 2.0], 1)
    with pytest.raises(TypeError):
        topk.topk(x, 1.5)


def test_errors_pickle():
    import pickle

    error = pickle.loads(pickle.dumps(topk.KRangeError(_lib.TOPK_ERR_K_RANGE, "k=9 exceeds n=8")))
    assert type(error) is topk.KRangeError and str(error) == "TOPK_ERR_K_RANGE: k=9 exceeds n=8"


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.uint8, np.complex64, np.longdouble, ">f4"], ids=str)
def test_unsupported_dtypes(dtype):
    if np.dtype(dtype) == np.float64:
        pytest.skip("longdouble is float64 on this platform")
    with pytest.raises(topk.DtypeError, match="TOPK_ERR_DTYPE") as raised:
        topk.topk(np.zeros((2, 3), dtype=dtype), 1)
    assert isinstance(raised.value, TypeError)


def test_reference_itself():
    x = np.array([[3, 1, 3, 2]], dtype=np.int32)
    np.testing.assert_array_equal(reference_indices(x, 3), [[0, 2, 3]])
    np.testing.assert_array_equal(reference_indices(x, 3, largest=False), [[1, 3, 0]])


def test_version_and_library():
    major, minor, patch = (int(part) for part in topk.__version__.split("."))
    assert _lib.topk_version_number() == major * 10000 + minor * 100 + patch
    assert Path(_lib.LIBRARY_PATH).is_file()
    assert topk.ALGORITHMS[:3] == ("auto", "sort", "cpu_select")
    assert isinstance(topk.cuda_available(), bool) and topk.build_info()


# ---------------------------------------------------------------- the mirror of topk.h


def header_text() -> str:
    if not HEADER.is_file():
        pytest.skip("include/topk.h is not beside this checkout (tests run from an installed package)")
    return HEADER.read_text()


def test_lib_mirrors_statuses():
    statuses = re.findall(r"X\((\w+),\s*(\d+),", header_text())
    assert statuses, "TOPK_STATUS_LIST not found"
    for name, value in statuses:
        assert getattr(_lib, "TOPK_" + name) == int(value)
        assert _lib.topk_status_name(int(value)).decode() == "TOPK_" + name
        assert int(value) == _lib.TOPK_SUCCESS or int(value) in topk.errors.ERRORS


def test_lib_mirrors_enums_and_macros():
    text = header_text()
    enumerators = re.findall(r"^\s*(TOPK_\w+)\s*=\s*(\d+)(u\s*<<\s*(\d+))?", text, re.MULTILINE)
    assert len(enumerators) > 20
    for name, value, shift, amount in enumerators:
        assert getattr(_lib, name) == (int(value) << int(amount) if shift else int(value)), name
    for name, value in re.findall(r"#define (TOPK_\w+_COUNT) (\d+)", text):
        assert getattr(_lib, name) == int(value)


def test_lib_mirrors_topk_problem():
    body = re.search(r"typedef struct topk_problem \{(.*?)\} topk_problem;", header_text(), re.DOTALL).group(1)
    fields = re.findall(r"^\s*([\w ]+?\*?)\s*(\w+);", body, re.MULTILINE)
    c_types = {
        "topk_dtype": ctypes.c_int,
        "topk_index": ctypes.c_int,
        "topk_algo": ctypes.c_int,
        "topk_backend": ctypes.c_int,
        "int64_t": ctypes.c_int64,
        "int32_t": ctypes.c_int32,
        "unsigned": ctypes.c_uint,
        "const int64_t*": ctypes.POINTER(ctypes.c_int64),
    }
    assert [(name, c_types[c_type.strip()]) for c_type, name in fields] == list(_lib.topk_problem._fields_)


def test_lib_binds_every_function():
    names = set(re.findall(r"TOPK_API[^;(]*?\b(topk_\w+)\s*\(", header_text()))
    assert len(names) > 30
    assert sorted(name for name in names if not hasattr(_lib, name)) == []
