"""NumPy and CuPy arrays: one ArrayOps for both, as CuPy mirrors NumPy's API.

NumPy arrays run on the CPU backend. CuPy arrays run on the CUDA backend, on the
array's device and CuPy's current stream, read in place (zero-copy) where their
strides allow; outputs and workspace come from CuPy's stream-ordered memory pool.
"""

import functools
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Tuple

import numpy as np

from . import _lib
from ._core import Launch
from .errors import DtypeError, IndexTypeError

# (kind, itemsize) -> topk_dtype; bfloat16 (ml_dtypes, kind "V") is matched by name.
_DTYPES = {
    ("f", 4): _lib.TOPK_F32,
    ("f", 2): _lib.TOPK_F16,
    ("f", 8): _lib.TOPK_F64,
    ("i", 4): _lib.TOPK_I32,
    ("u", 4): _lib.TOPK_U32,
    ("i", 8): _lib.TOPK_I64,
    ("u", 8): _lib.TOPK_U64,
}
_INDEX_DTYPES = {_lib.TOPK_INDEX_I64: np.dtype(np.int64), _lib.TOPK_INDEX_I32: np.dtype(np.int32)}

SUPPORTED = "float32, float16, bfloat16 (ml_dtypes), float64, int32, uint32, int64, uint64"


def dtype_code(dt: np.dtype) -> int:
    """The topk_dtype of a NumPy dtype; raises DtypeError for the others."""
    code = _DTYPES.get((dt.kind, dt.itemsize))
    if dt.name == "bfloat16" and dt.itemsize == 2:
        code = _lib.TOPK_BF16
    if code is None or not dt.isnative:
        shown = dt if dt.isnative else f"{dt} (non-native byte order)"
        raise DtypeError(_lib.TOPK_ERR_DTYPE, f"dtype {shown} is not supported; supported: {SUPPORTED}")
    return code


def index_type(spec: Any) -> int:
    """TOPK_INDEX_I64 (default) or TOPK_INDEX_I32 for anything np.dtype() accepts."""
    if spec is None:
        return _lib.TOPK_INDEX_I64
    try:
        dt = np.dtype(spec)
    except TypeError:
        dt = None
    for code, candidate in _INDEX_DTYPES.items():
        if dt == candidate:
            return code
    raise IndexTypeError(_lib.TOPK_ERR_INDEX_TYPE, f"index_dtype {spec!r} is not int64 or int32")


class NdarrayOps:
    """ArrayOps over a NumPy-like module `xp` (numpy or cupy)."""

    def __init__(self, xp: ModuleType, address: Callable[[Any], int], launch: Callable[[Any], Any]) -> None:
        self.xp = xp
        self._address = address
        self.launch = launch

    def dtype(self, x: Any) -> int:
        return dtype_code(x.dtype)

    def index_type(self, x: Any, spec: Any) -> int:
        return index_type(spec)

    def layout(self, x: Any) -> Tuple[Tuple[int, ...], Optional[Tuple[int, ...]], int]:
        address = self._address(x)
        item = x.itemsize
        if address % item or any(s % item for s in x.strides):
            return x.shape, None, address
        return x.shape, tuple(s // item for s in x.strides), address

    def moveaxis(self, x: Any, source: int, destination: int) -> Any:
        return self.xp.moveaxis(x, source, destination)

    def contiguous(self, x: Any) -> Any:
        return self.xp.ascontiguousarray(x)

    def reshape(self, x: Any, shape: Tuple[int, ...]) -> Any:
        return x.reshape(shape)

    def empty(self, x: Any, shape: Tuple[int, ...], dtype: Any) -> Any:
        if dtype == "values":
            return self.xp.empty(shape, x.dtype)
        if dtype == "bytes":
            return self.xp.empty(shape, np.uint8)
        return self.xp.empty(shape, _INDEX_DTYPES[dtype])

    def is_output(self, x: Any, a: Any) -> bool:
        return isinstance(a, self.xp.ndarray) and getattr(a, "device", None) == getattr(x, "device", None)

    def dtype_matches(self, x: Any, a: Any, dtype: Any) -> bool:
        return a.dtype == (x.dtype if dtype == "values" else _INDEX_DTYPES[dtype])

    def copy_into(self, dst: Any, src: Any) -> None:
        dst[...] = src


@contextmanager
def _numpy_launch(x: Any) -> Iterator[Launch]:
    yield Launch(_lib.TOPK_BACKEND_CPU, 0)


NUMPY = NdarrayOps(np, lambda x: x.ctypes.data, _numpy_launch)


@functools.lru_cache(maxsize=None)
def cupy_ops() -> NdarrayOps:
    """The ArrayOps for CuPy arrays (imports cupy)."""
    import cupy

    @contextmanager
    def launch(x: Any) -> Iterator[Launch]:
        with x.device:
            yield Launch(_lib.TOPK_BACKEND_CUDA, cupy.cuda.get_current_stream().ptr)

    return NdarrayOps(cupy, lambda x: x.data.ptr, launch)
