"""topk: the k largest (or smallest) elements along an axis, with their indices,
on NVIDIA GPUs and the CPU.

topk.topk is a drop-in for torch.topk that also takes CuPy, JAX and NumPy
arrays; it returns arrays of the input's kind, on the input's device. It is a
thin layer over libtopk's C API (include/topk.h, mirrored by topk._lib).
"""

import importlib
import operator
import sys
from typing import Any, Optional, Sequence

from . import _lib
from ._core import ALGO_NAMES, TopkResult, run
from .errors import (
    BackendError,
    CudaError,
    DtypeError,
    IndexTypeError,
    InternalError,
    InvalidArgumentError,
    KRangeError,
    NoDeviceError,
    NullPointerError,
    OutOfMemoryError,
    OverlapError,
    StrideError,
    TopkError,
    UnsupportedError,
    WorkspaceError,
)

__version__: str = _lib.topk_version_string().decode()

ALGORITHMS = ALGO_NAMES
"""The names `algo` accepts, in topk_algo order: "auto", "sort", "cpu_select", ..."""

__all__ = [
    "ALGORITHMS",
    "BackendError",
    "CudaError",
    "DtypeError",
    "IndexTypeError",
    "InternalError",
    "InvalidArgumentError",
    "KRangeError",
    "NoDeviceError",
    "NullPointerError",
    "OutOfMemoryError",
    "OverlapError",
    "StrideError",
    "TopkError",
    "TopkResult",
    "UnsupportedError",
    "WorkspaceError",
    "__version__",
    "build_info",
    "cuda_available",
    "maxk",
    "topk",
]


def topk(
    x: Any,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    algo: str = "auto",
    deterministic: bool = True,
    max_iter: Optional[int] = None,
    index_dtype: Any = None,
    out: Optional[Sequence[Any]] = None,
) -> TopkResult:
    """The k largest (or smallest) elements of `x` along `dim`, and their indices.

    Called and answering as torch.topk: returns (values, indices) with x's shape,
    `dim` replaced by k, of x's kind (torch.Tensor, cupy.ndarray, jax.Array or
    numpy.ndarray) on x's device. CUDA work is enqueued on the framework's current
    stream and never synchronises the host; CPU arrays are computed before return.

    Semantics are libtopk's: NaN is the largest value; -0.0 < +0.0; with
    `deterministic` (the default) the elements tied at the k-th value that are
    returned are those of lowest index, and `sorted` orders equal values by index.

    Args:
      x: the input; float32, float16, bfloat16, float64, int32, uint32, int64 or uint64.
      k: results per row, 0 <= k <= x.shape[dim].
      dim: the axis to select along.
      largest: the k largest (True) or the k smallest (False).
      sorted: results ordered best first (else in an order the algorithm chooses).
      algo: an algorithm name from topk.ALGORITHMS; "auto" chooses.
      deterministic: False lets the algorithm return any of the elements tied at
        the k-th value (TOPK_NONDETERMINISTIC), where that is faster.
      max_iter: None or 0 (default): exact. A positive number: RTop-K's early
        stopping (paper 001, Algorithm 2) after at most max_iter binary-search
        steps: APPROXIMATE, each row gets k distinct elements of the row, not
        always the k best. Only algo "rtopk" (or "auto", which then picks it on
        CUDA) honours it; another algo raises UnsupportedError.
      index_dtype: int64 (default; int32 for JAX without x64) or int32.
      out: (values, indices) arrays to write the results into.

    Raises:
      TopkError subclasses, named after the library's statuses and carrying its
      explanation: ValueError ones for arguments out of range (KRangeError, ...),
      TypeError ones for element types (DtypeError, IndexTypeError); TypeError for
      an array of another kind.
    """
    max_iter = 0 if max_iter is None else operator.index(max_iter)
    args = (k, dim, largest, sorted, algo, deterministic, index_dtype, out, max_iter)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        from ._torch import topk_torch

        return topk_torch(x, *args)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(x, (numpy.ndarray, numpy.generic)):
        from ._ndarray import NUMPY

        return run(NUMPY, numpy.asarray(x), *args)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        from ._ndarray import cupy_ops

        return run(cupy_ops(), x, *args)
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.Array):
        from ._jax import topk_jax

        return topk_jax(x, *args)
    raise TypeError(f"topk.topk takes a torch.Tensor, cupy.ndarray, jax.Array or numpy.ndarray, not {type(x).__name__}")


def maxk(x: Any, k: int, dim: int = -1, *, max_iter: Optional[int] = None, algo: str = "auto") -> Any:
    """The MaxK nonlinearity (MaxK-GNN): x with all but the k largest of each row along
    `dim` set to zero; same shape, dtype and device as x.

    The selection is topk(x, k, dim, sorted=False, algo=algo, max_iter=max_iter); the
    kept elements are scattered into zeros (torch: differentiable, the gradient flows
    to the kept elements). max_iter > 0 uses RTop-K's early stopping: approximate (see
    topk). Takes torch tensors and NumPy arrays.
    """
    values, indices = topk(x, k, dim, largest=True, sorted=False, algo=algo, max_iter=max_iter)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return torch.zeros_like(x).scatter(dim, indices.long(), values)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(x, (numpy.ndarray, numpy.generic)):
        x = numpy.asarray(x)
        result = numpy.zeros_like(x)
        if x.ndim == 0:
            return x.copy() if k else result
        numpy.put_along_axis(result, indices, values, axis=dim)
        return result
    raise TypeError(f"topk.maxk takes a torch.Tensor or numpy.ndarray, not {type(x).__name__}")


def cuda_available() -> bool:
    """True if libtopk was built with CUDA and a device is usable (topk_cuda_available)."""
    return bool(_lib.topk_cuda_available())


def build_info() -> str:
    """libtopk's build options, e.g. "cuda=13.0 archs=90" (topk_build_info)."""
    return _lib.topk_build_info().decode()


if "torch" in sys.modules:
    importlib.import_module("._torch", __name__)  # registers torch.ops.topk.topk now, for code calling it directly
