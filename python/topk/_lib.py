"""ctypes mirror of include/topk.h, one to one.

Every constant, struct and function keeps its C name and value, section by section
as in the header, so that topk.h is the documentation of this module. C enums are
4-byte ints; `const char*` results come back as bytes.

The library is loaded from, in order:
  1. the copy installed inside this package (`pip install .` puts it there),
  2. the file named by the environment variable TOPK_LIBRARY,
  3. build/libtopk.so of the repository this file sits in (in-tree use).
"""

import ctypes
import os
import sys
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64, c_size_t, c_uint, c_void_p
from pathlib import Path
from typing import Any, Iterator

# --------------------------------------------------------------------------
# 1. Version, status codes, enums
# --------------------------------------------------------------------------

TOPK_SUCCESS = 0
TOPK_ERR_NULL_POINTER = 1
TOPK_ERR_INVALID_ARGUMENT = 2
TOPK_ERR_K_RANGE = 3
TOPK_ERR_DTYPE = 4
TOPK_ERR_INDEX_TYPE = 5
TOPK_ERR_STRIDE = 6
TOPK_ERR_OVERLAP = 7
TOPK_ERR_WORKSPACE = 8
TOPK_ERR_UNSUPPORTED = 9
TOPK_ERR_NO_DEVICE = 10
TOPK_ERR_CUDA = 11
TOPK_ERR_OUT_OF_MEMORY = 12
TOPK_ERR_BACKEND = 13
TOPK_ERR_INTERNAL = 14

# topk_dtype
TOPK_F32 = 0
TOPK_F16 = 1
TOPK_BF16 = 2
TOPK_F64 = 3
TOPK_I32 = 4
TOPK_U32 = 5
TOPK_I64 = 6
TOPK_U64 = 7
TOPK_DTYPE_COUNT = 8

# topk_index
TOPK_INDEX_I64 = 0
TOPK_INDEX_I32 = 1
TOPK_INDEX_NONE = 2

# flags
TOPK_SMALLEST = 1 << 0
TOPK_SORTED = 1 << 1
TOPK_NONDETERMINISTIC = 1 << 2
TOPK_FLAGS_ALL = TOPK_SMALLEST | TOPK_SORTED | TOPK_NONDETERMINISTIC

# topk_algo
TOPK_ALGO_AUTO = 0
TOPK_ALGO_SORT = 1
TOPK_ALGO_CPU_SELECT = 2
TOPK_ALGO_AIR_RADIX = 3
TOPK_ALGO_WARP_SELECT = 4
TOPK_ALGO_BLOCK_SELECT = 5
TOPK_ALGO_GRID_SELECT = 6
TOPK_ALGO_BITONIC = 7
TOPK_ALGO_BUCKET = 8
TOPK_ALGO_DRTOPK_RADIX = 9
TOPK_ALGO_DRTOPK_BUCKET = 10
TOPK_ALGO_DRTOPK_BITONIC = 11
TOPK_ALGO_RTOPK = 12
TOPK_ALGO_COUNT = 13

# topk_backend
TOPK_BACKEND_AUTO = 0
TOPK_BACKEND_CPU = 1
TOPK_BACKEND_CUDA = 2

topk_status = c_int
topk_dtype = c_int
topk_index = c_int
topk_algo = c_int
topk_backend = c_int

# --------------------------------------------------------------------------
# 2. The problem
# --------------------------------------------------------------------------


class topk_problem(Structure):
    _fields_ = [
        ("dtype", topk_dtype),
        ("batch", c_int64),
        ("n", c_int64),
        ("k", c_int64),
        ("ld", c_int64),
        ("row_offsets", POINTER(c_int64)),
        ("index_type", topk_index),
        ("flags", c_uint),
        ("algo", topk_algo),
        ("backend", topk_backend),
        ("max_iter", c_int32),  # 0: exact; > 0: RTop-K early stopping (approximate)
    ]


topk_stream = c_void_p  # cudaStream_t; None is the legacy default stream

# --------------------------------------------------------------------------
# 5. Device information
# --------------------------------------------------------------------------


class topk_device_props(Structure):
    _fields_ = [
        ("ordinal", c_int),
        ("name", c_char * 256),
        ("cc_major", c_int),
        ("cc_minor", c_int),
        ("sm_count", c_int),
        ("global_mem_bytes", c_int64),
        ("l2_bytes", c_int64),
        ("smem_per_block_optin", c_int64),
    ]


topk_plan_p = c_void_p  # topk_plan*, opaque
topk_event_p = c_void_p  # topk_event*, opaque

# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

LIBRARY_NAME = {"darwin": "libtopk.dylib", "win32": "topk.dll"}.get(sys.platform, "libtopk.so")


def _candidates() -> Iterator[Path]:
    here = Path(__file__).resolve().parent
    yield here / LIBRARY_NAME
    env = os.environ.get("TOPK_LIBRARY")
    if env:
        yield Path(env)
    yield here.parent.parent / "build" / LIBRARY_NAME


def _load() -> "tuple[ctypes.CDLL, Path]":
    tried = []
    for path in _candidates():
        if path.is_file():
            return ctypes.CDLL(str(path)), path
        tried.append(str(path))
    raise ImportError(
        "topk: cannot find libtopk; tried " + ", ".join(tried)
        + ". Install the package with `pip install .`, build the library (`make`) in the repository,"
        " or set TOPK_LIBRARY to the path of libtopk"
    )


_dll, LIBRARY_PATH = _load()


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    try:
        f = getattr(_dll, name)
    except AttributeError:
        raise ImportError(f"topk: {LIBRARY_PATH} has no symbol {name}; it is older than include/topk.h, rebuild it") from None
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


# 1. Version, status codes, enums
topk_version_number = _fn("topk_version_number", c_uint)
topk_version_string = _fn("topk_version_string", c_char_p)
topk_status_name = _fn("topk_status_name", c_char_p, topk_status)
topk_status_message = _fn("topk_status_message", c_char_p, topk_status)
topk_error_detail = _fn("topk_error_detail", c_char_p)
topk_dtype_size = _fn("topk_dtype_size", c_size_t, topk_dtype)
topk_dtype_name = _fn("topk_dtype_name", c_char_p, topk_dtype)
topk_dtype_parse = _fn("topk_dtype_parse", c_int, c_char_p, POINTER(topk_dtype))
topk_algo_name = _fn("topk_algo_name", c_char_p, topk_algo)
topk_algo_parse = _fn("topk_algo_parse", c_int, c_char_p, POINTER(topk_algo))
topk_cuda_available = _fn("topk_cuda_available", c_int)

# 3. One-shot selection
topk_workspace_size = _fn("topk_workspace_size", topk_status, POINTER(topk_problem), POINTER(c_size_t))
topk_select = _fn(
    "topk_select", topk_status, POINTER(topk_problem), c_void_p, c_void_p, c_void_p, c_void_p, c_size_t, topk_stream
)

# 4. Plans
topk_plan_create = _fn("topk_plan_create", topk_status, POINTER(topk_plan_p), POINTER(topk_problem))
topk_plan_workspace_size = _fn("topk_plan_workspace_size", topk_status, topk_plan_p, POINTER(c_size_t))
topk_plan_algo = _fn("topk_plan_algo", topk_algo, topk_plan_p)
topk_plan_explain = _fn("topk_plan_explain", c_char_p, topk_plan_p)
topk_plan_run = _fn(
    "topk_plan_run",
    topk_status,
    topk_plan_p,
    c_void_p,
    POINTER(c_int64),
    c_void_p,
    c_void_p,
    c_void_p,
    c_size_t,
    topk_stream,
)
topk_plan_destroy = _fn("topk_plan_destroy", None, topk_plan_p)

# 5. Device information
topk_device_count = _fn("topk_device_count", c_int)
topk_device_get_props = _fn("topk_device_get_props", topk_status, c_int, POINTER(topk_device_props))
topk_measure_read_bandwidth = _fn("topk_measure_read_bandwidth", topk_status, POINTER(c_double))
topk_build_info = _fn("topk_build_info", c_char_p)

# 6. Helpers for tools and language bindings
topk_device_malloc = _fn("topk_device_malloc", topk_status, POINTER(c_void_p), c_size_t)
topk_device_free = _fn("topk_device_free", topk_status, c_void_p)
topk_memcpy_to_device = _fn("topk_memcpy_to_device", topk_status, c_void_p, c_void_p, c_size_t)
topk_memcpy_to_host = _fn("topk_memcpy_to_host", topk_status, c_void_p, c_void_p, c_size_t)
topk_memset_device = _fn("topk_memset_device", topk_status, c_void_p, c_int, c_size_t, topk_stream)
topk_device_synchronize = _fn("topk_device_synchronize", topk_status)
topk_event_create = _fn("topk_event_create", topk_status, POINTER(topk_event_p))
topk_event_record = _fn("topk_event_record", topk_status, topk_event_p, topk_stream)
topk_event_elapsed_ms = _fn("topk_event_elapsed_ms", topk_status, topk_event_p, topk_event_p, POINTER(c_float))
topk_event_destroy = _fn("topk_event_destroy", None, topk_event_p)
topk_stream_create = _fn("topk_stream_create", topk_status, POINTER(topk_stream))
topk_stream_destroy = _fn("topk_stream_destroy", None, topk_stream)
topk_stream_synchronize = _fn("topk_stream_synchronize", topk_status, topk_stream)
