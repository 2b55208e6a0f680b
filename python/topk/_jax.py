"""JAX arrays, through DLPack.

A CPU array runs on the CPU backend through a NumPy view of its buffer; the
results are copied into new JAX arrays on the same device. A GPU array is viewed
as a torch tensor (or, without torch, a CuPy array) through DLPack, without a
copy, and runs on that framework's current stream; the results go back to JAX
through DLPack the same way. DLPack's stream handshake orders both hand-overs:
the exporter makes the importer's stream wait for the data to be ready (JAX
waits for its computation of the input; torch or CuPy records an event after
the selection that JAX's stream waits on), so the host is never synchronised.

Indices are int64 when jax_enable_x64 is on, else int32 (JAX's own index type).
Arrays sharded over several devices and tracers (calls inside jax.jit) are refused.
"""

from typing import Any, Optional, Sequence

import jax
import jax.dlpack
import numpy as np

from ._core import TopkResult, run
from ._ndarray import NUMPY


def topk_jax(
    x: jax.Array,
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
    """topk.topk for a JAX array."""
    if out is not None:
        raise TypeError("out= cannot be used with JAX arrays: they are immutable")
    if isinstance(x, getattr(jax.core, "Tracer", ())):
        raise TypeError("topk.topk takes concrete JAX arrays; it cannot be traced by jax.jit or other transforms")
    devices = x.devices()
    if len(devices) != 1:
        raise TypeError(f"topk.topk takes a JAX array on one device; this one is sharded over {len(devices)}")
    (device,) = devices
    if index_dtype is None:
        index_dtype = "int64" if jax.config.jax_enable_x64 else "int32"
    args = (k, dim, largest, sorted, algo, deterministic, index_dtype, None, max_iter)

    if device.platform == "cpu":
        values, indices = run(NUMPY, np.asarray(x), *args)
        return TopkResult(jax.device_put(values, device), jax.device_put(indices, device))

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        from ._torch import topk_torch

        values, indices = topk_torch(torch.from_dlpack(x), *args)
    else:
        import cupy

        from ._ndarray import cupy_ops

        values, indices = run(cupy_ops(), cupy.from_dlpack(x), *args)
    return TopkResult(jax.dlpack.from_dlpack(values), jax.dlpack.from_dlpack(indices))
