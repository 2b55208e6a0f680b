"""PyTorch tensors, and the custom op torch.ops.topk.topk.

CPU tensors run on the CPU backend. CUDA tensors run on the CUDA backend, on the
tensor's device and torch.cuda.current_stream(); they are read in place where
their strides allow, and outputs and workspace come from torch's caching
allocator, which orders their reuse on that stream.

With torch >= 2.4, importing this module registers topk::topk as a torch.library
custom op with a fake (meta) implementation and an autograd formula. topk.topk goes
through it while torch.compile traces (so graphs call it, fullgraph included) and
when the input requires grad; other eager calls skip the dispatcher.
"""

from contextlib import contextmanager
from typing import Any, Iterator, Optional, Sequence, Tuple

import torch

from . import _lib
from ._core import Launch, TopkResult, algo_code, check_out, out_shape, run, wrap_dim
from .errors import DtypeError, IndexTypeError

_DTYPES = {
    torch.float32: _lib.TOPK_F32,
    torch.float16: _lib.TOPK_F16,
    torch.bfloat16: _lib.TOPK_BF16,
    torch.float64: _lib.TOPK_F64,
    torch.int32: _lib.TOPK_I32,
    torch.int64: _lib.TOPK_I64,
}
for _name, _code in (("uint32", _lib.TOPK_U32), ("uint64", _lib.TOPK_U64)):  # torch >= 2.3
    if hasattr(torch, _name):
        _DTYPES[getattr(torch, _name)] = _code
_INDEX_DTYPES = {_lib.TOPK_INDEX_I64: torch.int64, _lib.TOPK_INDEX_I32: torch.int32}


def index_type(spec: Any) -> int:
    """TOPK_INDEX_I64 (default) or TOPK_INDEX_I32 for torch.int64 / torch.int32 or their names."""
    if spec is None:
        return _lib.TOPK_INDEX_I64
    dtype = getattr(torch, spec, None) if isinstance(spec, str) else spec
    for code, candidate in _INDEX_DTYPES.items():
        if dtype == candidate:
            return code
    raise IndexTypeError(_lib.TOPK_ERR_INDEX_TYPE, f"index_dtype {spec!r} is not torch.int64 or torch.int32")


class TorchOps:
    """ArrayOps for torch tensors."""

    def dtype(self, x: torch.Tensor) -> int:
        code = _DTYPES.get(x.dtype)
        if code is None:
            supported = ", ".join(str(d) for d in _DTYPES)
            raise DtypeError(_lib.TOPK_ERR_DTYPE, f"dtype {x.dtype} is not supported; supported: {supported}")
        return code

    def index_type(self, x: torch.Tensor, spec: Any) -> int:
        return index_type(spec)

    def layout(self, x: torch.Tensor) -> Tuple[Tuple[int, ...], Optional[Tuple[int, ...]], int]:
        return tuple(x.shape), tuple(x.stride()), x.data_ptr()

    def moveaxis(self, x: torch.Tensor, source: int, destination: int) -> torch.Tensor:
        return x.movedim(source, destination)

    def contiguous(self, x: torch.Tensor) -> torch.Tensor:
        return x.contiguous()

    def reshape(self, x: torch.Tensor, shape: Tuple[int, ...]) -> torch.Tensor:
        return x.reshape(shape)

    def empty(self, x: torch.Tensor, shape: Tuple[int, ...], dtype: Any) -> torch.Tensor:
        if dtype == "values":
            torch_dtype = x.dtype
        elif dtype == "bytes":
            torch_dtype = torch.uint8
        else:
            torch_dtype = _INDEX_DTYPES[dtype]
        return torch.empty(shape, dtype=torch_dtype, device=x.device)

    def is_output(self, x: torch.Tensor, a: Any) -> bool:
        return isinstance(a, torch.Tensor) and a.device == x.device

    def dtype_matches(self, x: torch.Tensor, a: torch.Tensor, dtype: Any) -> bool:
        return a.dtype == (x.dtype if dtype == "values" else _INDEX_DTYPES[dtype])

    def copy_into(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        dst.copy_(src)

    @contextmanager
    def launch(self, x: torch.Tensor) -> Iterator[Launch]:
        if x.device.type == "cpu":
            yield Launch(_lib.TOPK_BACKEND_CPU, 0)
        elif x.device.type == "cuda":
            with torch.cuda.device(x.device):
                yield Launch(_lib.TOPK_BACKEND_CUDA, torch.cuda.current_stream(x.device).cuda_stream)
        else:
            raise TypeError(f"tensors on {x.device} are not supported (cpu and cuda are)")


TORCH = TorchOps()


def _register_op() -> Any:
    """Registers topk::topk; returns it, or None where torch is older than 2.4."""
    if not hasattr(torch.library, "custom_op"):
        return None

    @torch.library.custom_op("topk::topk", mutates_args=())
    def topk_op(
        x: torch.Tensor,
        k: int,
        dim: int,
        largest: bool,
        sorted: bool,
        algo: str,
        deterministic: bool,
        index_dtype: torch.dtype,
        max_iter: int = 0,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        values, indices = run(TORCH, x, k, dim, largest, sorted, algo, deterministic, index_dtype, None, max_iter)
        return values, indices

    @topk_op.register_fake
    def _(x, k, dim, largest, sorted, algo, deterministic, index_dtype, max_iter=0):
        TORCH.dtype(x)
        algo_code(algo)
        index_type(index_dtype)
        shape = out_shape(x.shape, k, wrap_dim(dim, x.dim()))
        return x.new_empty(shape), x.new_empty(shape, dtype=index_dtype)

    def setup_context(ctx, inputs, output):
        x, _, dim = inputs[:3]
        ctx.shape = x.shape
        ctx.dim = wrap_dim(dim, x.dim())
        ctx.save_for_backward(output[1])

    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        if len(ctx.shape) == 0:
            grad = grad_values.clone()
        else:
            grad = grad_values.new_zeros(ctx.shape).scatter_(ctx.dim, indices.long(), grad_values)
        return grad, None, None, None, None, None, None, None, None

    topk_op.register_autograd(backward, setup_context=setup_context)
    return topk_op


OP = _register_op()


def topk_torch(
    x: torch.Tensor,
    k: int,
    dim: int,
    largest: bool,
    sorted: bool,
    algo: str,
    deterministic: bool,
    index_dtype: Any,
    out: Optional[Sequence[torch.Tensor]],
    max_iter: int = 0,
) -> TopkResult:
    """topk.topk for a torch tensor."""
    if x.layout != torch.strided:
        raise TypeError(f"tensors of layout {x.layout} are not supported (torch.strided is)")
    x = x.resolve_neg()  # a negative-bit view reads differently from its memory
    if OP is None or not (torch.compiler.is_compiling() or (x.requires_grad and torch.is_grad_enabled())):
        return run(TORCH, x, k, dim, largest, sorted, algo, deterministic, index_dtype, out, max_iter)
    if out is not None:
        index_dtype = check_out(TORCH, x, out, out_shape(x.shape, k, wrap_dim(dim, x.dim())), index_dtype)
    values, indices = torch.ops.topk.topk(
        x, k, dim, largest, sorted, algo, deterministic, _INDEX_DTYPES[index_type(index_dtype)], max_iter
    )
    if out is None:
        return TopkResult(values, indices)
    out[0].copy_(values)
    out[1].copy_(indices)
    return TopkResult(out[0], out[1])
