"""Shows which libtopk the tests run against, in pytest's header.

Run from the repository without installing: PYTHONPATH=python, and TOPK_LIBRARY
naming the libtopk.so to test (else build/libtopk.so of this checkout is used).
"""

import topk
from topk import _lib


def pytest_report_header(config):
    return f"topk {topk.__version__}: {_lib.LIBRARY_PATH} ({topk.build_info()}; cuda_available={topk.cuda_available()})"
