"""The framework-neutral part of topk.topk.

run() turns any array into the library's problem: the selected axis moved last,
the other axes flattened into `batch` rows read in place with row stride `ld`
when their layout allows (a copy is made otherwise), outputs allocated by the
array's own framework on the array's device, and the call enqueued on the
framework's current stream. Each framework supplies the few operations this needs
as an ArrayOps (_ndarray.py for NumPy and CuPy, _torch.py for PyTorch).
"""

import ctypes
import operator
from collections import namedtuple
from contextlib import AbstractContextManager
from typing import Any, Optional, Protocol, Sequence, Tuple

from . import _lib
from .errors import InvalidArgumentError, check

TopkResult = namedtuple("TopkResult", ["values", "indices"])
TopkResult.__doc__ = "(values, indices), like torch.return_types.topk."

# Every algorithm name, in topk_algo order ("auto", "sort", "cpu_select", ...).
ALGO_NAMES: Tuple[str, ...] = tuple(_lib.topk_algo_name(a).decode() for a in range(_lib.TOPK_ALGO_COUNT))


Launch = namedtuple("Launch", ["backend", "stream"])
Launch.__doc__ = "Where a call runs: TOPK_BACKEND_CPU or TOPK_BACKEND_CUDA, and the cudaStream_t (0: default)."


class ArrayOps(Protocol):
    """What run() needs from an array framework. `x` is an array of that framework."""

    def dtype(self, x: Any) -> int:
        """The topk_dtype of x; raises DtypeError for others."""

    def index_type(self, x: Any, spec: Any) -> int:
        """TOPK_INDEX_I64 or TOPK_INDEX_I32 for an index dtype (None: the framework's default)."""

    def layout(self, x: Any) -> Tuple[Tuple[int, ...], Optional[Tuple[int, ...]], int]:
        """(shape, strides in elements or None if not element-aligned, address of x's first element)."""

    def moveaxis(self, x: Any, source: int, destination: int) -> Any: ...

    def contiguous(self, x: Any) -> Any: ...

    def reshape(self, x: Any, shape: Tuple[int, ...]) -> Any: ...

    def empty(self, x: Any, shape: Tuple[int, ...], dtype: Any) -> Any:
        """A C-contiguous array on x's device; dtype is "values" (x's dtype), TOPK_INDEX_I64/I32, or "bytes"."""

    def is_output(self, x: Any, a: Any) -> bool:
        """True if `a` can receive a result of x: same framework and device."""

    def dtype_matches(self, x: Any, a: Any, dtype: Any) -> bool:
        """True if `a` has the dtype that empty(x, ..., dtype) would give it."""

    def copy_into(self, dst: Any, src: Any) -> None: ...

    def launch(self, x: Any) -> AbstractContextManager:
        """Makes x's device current for the call; yields a Launch."""


def wrap_dim(dim: int, ndim: int) -> int:
    """dim in [-ndim, ndim) made non-negative; a 0-d array accepts 0 and -1, as torch does."""
    dim = operator.index(dim)
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise InvalidArgumentError(
            _lib.TOPK_ERR_INVALID_ARGUMENT, f"dim={dim} is out of range for a {ndim}-d array"
        )
    return dim % size


def out_shape(shape: Sequence[int], k: int, dim: int) -> Tuple[int, ...]:
    """x.shape with the selected axis replaced by k (a 0-d array gives a 0-d result)."""
    if not shape:
        return ()
    return tuple(shape[:dim]) + (k,) + tuple(shape[dim + 1:])


def algo_code(algo: str) -> int:
    """The topk_algo for an algorithm name as topk_algo_name() prints it."""
    if algo not in ALGO_NAMES:
        raise InvalidArgumentError(
            _lib.TOPK_ERR_INVALID_ARGUMENT, f"unknown algorithm {algo!r}; one of: {', '.join(ALGO_NAMES)}"
        )
    return ALGO_NAMES.index(algo)


def row_stride(shape: Sequence[int], strides: Optional[Sequence[int]]) -> Optional[int]:
    """The library's `ld` if rows along the last axis can be read in place, else None.

    In place means: each row is unit-stride, and the leading axes (size-1 axes
    ignored) collapse into one axis of stride ld >= n, as a sliced 2-D matrix does.
    """
    n = shape[-1]
    if any(size == 0 for size in shape):
        return n  # nothing is read
    if strides is None or (n > 1 and strides[-1] != 1):
        return None
    ld = None
    expected = 0
    for size, stride in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        if size == 1:
            continue
        if ld is None:
            if stride < n:
                return None
            ld = stride
        elif stride != expected:
            return None
        expected = stride * size
    return n if ld is None else ld


def run(
    ops: ArrayOps,
    x: Any,
    k: int,
    dim: int,
    largest: bool,
    sorted: bool,
    algo: str,
    deterministic: bool,
    index_dtype: Any,
    out: Optional[Sequence[Any]],
    max_iter: int = 0,
) -> TopkResult:
    """topk.topk for one framework's arrays: validates, runs the library, shapes the results."""
    k = operator.index(k)
    max_iter = operator.index(max_iter)
    dtype = ops.dtype(x)
    shape = tuple(x.shape)
    ndim = len(shape)
    dim = wrap_dim(dim, ndim)
    algo_value = algo_code(algo)
    if out is not None:
        index_dtype = check_out(ops, x, out, out_shape(shape, k, dim), index_dtype)
    index_type = ops.index_type(x, index_dtype)
    flags = 0 if largest else _lib.TOPK_SMALLEST
    flags |= _lib.TOPK_SORTED if sorted else 0
    flags |= 0 if deterministic else _lib.TOPK_NONDETERMINISTIC

    with ops.launch(x) as launch:
        if ndim == 0:
            # torch.topk returns a 0-d array's element for k = 0 as well as for k = 1.
            rows = ops.reshape(x, (1,))
            k_run = 1 if k == 0 else k
        else:
            rows = x if dim == ndim - 1 else ops.moveaxis(x, dim, -1)
            k_run = k
        row_shape, strides, address = ops.layout(rows)
        ld = row_stride(row_shape, strides)
        if ld is None:
            rows = ops.contiguous(rows)
            row_shape, _, address = ops.layout(rows)
            ld = row_shape[-1]
        batch = 1
        for size in row_shape[:-1]:
            batch *= size
        problem = _lib.topk_problem(
            dtype=dtype, batch=batch, n=row_shape[-1], k=k_run, ld=ld, index_type=index_type, flags=flags,
            algo=algo_value, backend=launch.backend, max_iter=max_iter,
        )
        workspace_bytes = ctypes.c_size_t(0)
        # Validates the problem before anything is allocated.
        check(_lib.topk_workspace_size(ctypes.byref(problem), ctypes.byref(workspace_bytes)))

        # The library writes (batch, k) row-major. That is the result's own layout when the
        # selected axis is the last one, so C-contiguous `out` arrays are then written in place.
        direct = out is not None and ndim > 0 and dim == ndim - 1 and all(_is_c_contiguous(ops, a) for a in out)
        if direct:
            values, indices = out
        else:
            select_shape = tuple(row_shape[:-1]) + (k_run,)
            values, indices = ops.empty(x, select_shape, "values"), ops.empty(x, select_shape, index_type)
        workspace = ops.empty(x, (workspace_bytes.value,), "bytes") if workspace_bytes.value else None
        check(
            _lib.topk_select(
                ctypes.byref(problem),
                address,
                ops.layout(values)[2],
                ops.layout(indices)[2],
                None if workspace is None else ops.layout(workspace)[2],
                workspace_bytes.value,
                launch.stream,
            )
        )
        if direct:
            return TopkResult(values, indices)
        if ndim == 0:
            values, indices = ops.reshape(values, ()), ops.reshape(indices, ())
        elif dim != ndim - 1:
            values = ops.contiguous(ops.moveaxis(values, -1, dim))
            indices = ops.contiguous(ops.moveaxis(indices, -1, dim))
        if out is None:
            return TopkResult(values, indices)
        ops.copy_into(out[0], values)
        ops.copy_into(out[1], indices)
        return TopkResult(out[0], out[1])


def _is_c_contiguous(ops: ArrayOps, a: Any) -> bool:
    shape, strides, _ = ops.layout(a)
    if strides is None:
        return False
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def check_out(ops: ArrayOps, x: Any, out: Sequence[Any], shape: Tuple[int, ...], index_dtype: Any) -> Any:
    """Checks out=(values, indices) for a result of `shape`; returns the index dtype they imply."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("out must be a (values, indices) pair of arrays")
    for name, a in zip(("values", "indices"), out):
        if not ops.is_output(x, a):
            raise TypeError(f"out {name} must be an array of the input's kind on the input's device")
        if tuple(a.shape) != tuple(shape):
            raise InvalidArgumentError(
                _lib.TOPK_ERR_INVALID_ARGUMENT, f"out {name} has shape {tuple(a.shape)}, expected {tuple(shape)}"
            )
    if not ops.dtype_matches(x, out[0], "values"):
        raise TypeError("out values must have the input's dtype")
    implied = [t for t in (_lib.TOPK_INDEX_I64, _lib.TOPK_INDEX_I32) if ops.dtype_matches(x, out[1], t)]
    if not implied:
        raise TypeError("out indices must be int64 or int32")
    if index_dtype is not None and ops.index_type(x, index_dtype) != implied[0]:
        raise TypeError("out indices do not have the dtype index_dtype asks for")
    return out[1].dtype
