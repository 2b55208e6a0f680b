"""Exceptions named after the library's statuses.

Each carries the status value (`status`), its C name (`status_name`, e.g.
"TOPK_ERR_K_RANGE") and the reason the library gave (`detail`, from
topk_error_detail()). Argument errors are ValueError or TypeError as well, so
code written for torch.topk-style validation catches them.
"""

from typing import Dict, Type

from . import _lib


class TopkError(Exception):
    """A call into libtopk failed; str() is "STATUS_NAME: detail"."""

    def __init__(self, status: int, detail: str = "") -> None:
        self.status = status
        self.status_name = _lib.topk_status_name(status).decode()
        self.detail = detail or _lib.topk_status_message(status).decode()
        super().__init__(f"{self.status_name}: {self.detail}")

    def __reduce__(self):  # pickles (for multiprocessing) as the arguments __init__ takes
        return type(self), (self.status, self.detail)


class NullPointerError(TopkError, ValueError):
    """TOPK_ERR_NULL_POINTER"""


class InvalidArgumentError(TopkError, ValueError):
    """TOPK_ERR_INVALID_ARGUMENT: negative size, unknown flag, algorithm name or dim."""


class KRangeError(TopkError, ValueError):
    """TOPK_ERR_K_RANGE: k is larger than the row length."""


class DtypeError(TopkError, TypeError):
    """TOPK_ERR_DTYPE: an element type the library does not handle."""


class IndexTypeError(TopkError, TypeError):
    """TOPK_ERR_INDEX_TYPE"""


class StrideError(TopkError, ValueError):
    """TOPK_ERR_STRIDE"""


class OverlapError(TopkError, ValueError):
    """TOPK_ERR_OVERLAP: an output overlaps the input or the other output."""


class WorkspaceError(TopkError, ValueError):
    """TOPK_ERR_WORKSPACE"""


class UnsupportedError(TopkError, ValueError):
    """TOPK_ERR_UNSUPPORTED: the algorithm is not built or does not handle this problem."""


class NoDeviceError(TopkError, RuntimeError):
    """TOPK_ERR_NO_DEVICE: no usable CUDA device, or libtopk was built without CUDA."""


class CudaError(TopkError, RuntimeError):
    """TOPK_ERR_CUDA"""


class OutOfMemoryError(TopkError, MemoryError):
    """TOPK_ERR_OUT_OF_MEMORY"""


class BackendError(TopkError, ValueError):
    """TOPK_ERR_BACKEND: host memory given to the CUDA backend or the reverse."""


class InternalError(TopkError, RuntimeError):
    """TOPK_ERR_INTERNAL"""


ERRORS: Dict[int, Type[TopkError]] = {
    _lib.TOPK_ERR_NULL_POINTER: NullPointerError,
    _lib.TOPK_ERR_INVALID_ARGUMENT: InvalidArgumentError,
    _lib.TOPK_ERR_K_RANGE: KRangeError,
    _lib.TOPK_ERR_DTYPE: DtypeError,
    _lib.TOPK_ERR_INDEX_TYPE: IndexTypeError,
    _lib.TOPK_ERR_STRIDE: StrideError,
    _lib.TOPK_ERR_OVERLAP: OverlapError,
    _lib.TOPK_ERR_WORKSPACE: WorkspaceError,
    _lib.TOPK_ERR_UNSUPPORTED: UnsupportedError,
    _lib.TOPK_ERR_NO_DEVICE: NoDeviceError,
    _lib.TOPK_ERR_CUDA: CudaError,
    _lib.TOPK_ERR_OUT_OF_MEMORY: OutOfMemoryError,
    _lib.TOPK_ERR_BACKEND: BackendError,
    _lib.TOPK_ERR_INTERNAL: InternalError,
}


def error(status: int, detail: str = "") -> TopkError:
    """The exception for a status (TopkError itself for a status this module does not know)."""
    return ERRORS.get(status, TopkError)(status, detail)


def check(status: int) -> None:
    """Raises the status's exception, with topk_error_detail(), unless status is TOPK_SUCCESS.

    Call it right after the failing call, on the same thread: the detail is thread-local.
    """
    if status != _lib.TOPK_SUCCESS:
        raise error(status, _lib.topk_error_detail().decode())
