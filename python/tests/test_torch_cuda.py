"""topk.topk on torch tensors against torch.topk, on CUDA (skipped without a device)
and on the CPU; the torch.library custom op under torch.compile and autograd;
streams and CUDA graphs.

Reference for ties: torch.sort(stable=True), whose first k are the documented
choice (lowest indices among equal values, ordered by index). torch orders -0.0
and +0.0 as equal where libtopk puts -0.0 first, so data compared that way has no
-0.0 (a separate test checks libtopk's order).
"""

import math
import zlib

import pytest

torch = pytest.importorskip("torch")

import topk  # noqa: E402

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64]
BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}


def has_custom_op():
    from topk import _torch

    return _torch.OP is not None


needs_custom_op = pytest.mark.skipif(not has_custom_op(), reason="torch.library.custom_op needs torch >= 2.4")


def bits(t):
    """The raw bits of t, so that NaN and -0.0 compare exactly."""
    return t.view(BITS[t.dtype]) if t.dtype in BITS else t


def make(shape, dtype, device, distribution, gen):
    """Data of a distribution: normal; ties (four distinct values); special (NaN, +-inf, +0.0; ints: extremes)."""
    if distribution == "ties":
        return torch.randint(0, 4, shape, generator=gen).to(dtype).to(device)
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=gen) * 100
        if distribution == "special":
            specials = torch.tensor([math.nan, math.inf, -math.inf, 0.0])
            mask = torch.rand(shape, generator=gen) < 0.2
            x = torch.where(mask, specials[torch.randint(0, len(specials), shape, generator=gen)], x)
        return x.to(dtype).to(device)
    info = torch.iinfo(dtype)
    if distribution == "special":
        extremes = torch.tensor([info.min, info.max, 0, 1], dtype=dtype)
        return extremes[torch.randint(0, 4, shape, generator=gen)].to(device)
    return torch.randint(info.min, info.max, shape, generator=gen, dtype=dtype).to(device)


def check(x, k, dim, largest, sorted, values, indices):
    """values/indices equal torch.topk's values and the documented index choice."""
    case = f"shape={tuple(x.shape)} stride={x.stride()} dtype={x.dtype} dim={dim} k={k} largest={largest} sorted={sorted}"
    reference = torch.topk(x, k, dim=dim, largest=largest, sorted=sorted)
    assert values.shape == reference.values.shape and indices.shape == reference.indices.shape, case
    assert values.dtype == x.dtype and values.device == x.device and indices.device == x.device, case
    assert torch.equal(bits(x.gather(dim, indices.long())), bits(values)), f"indices do not gather to the values: {case}"
    expected = torch.sort(x, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
    if x.is_cuda and x.dtype.is_floating_point and bool(x.isnan().any()):
        # Values come from torch.topk on the CPU for inputs with NaN: on the H100 (torch 2.11),
        # torch.topk on CUDA returned +inf ahead of NaN for some shapes (bf16 and its float32
        # upcast), against its own NaN-is-largest rule that the CPU kernel follows.
        cpu = torch.topk(x.cpu(), k, dim=dim, largest=largest, sorted=sorted)
        reference = torch.return_types.topk((cpu.values.to(x.device), cpu.indices.to(x.device)))
        expected = torch.sort(x.cpu(), dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k).to(x.device)
    if sorted:
        torch.testing.assert_close(values, reference.values, rtol=0, atol=0, equal_nan=True, msg=case)
        assert torch.equal(indices.long(), expected), f"ties are not resolved by lowest index: {case}"
    else:
        # Multisets compared by sorting on the CPU, in float64 (exact for every input dtype but
        # int64): after torch.topk on CUDA misordered NaN and inf (see above), torch's CUDA
        # kernels are not used as the oracle for them.
        def multiset(t):
            t = t.cpu()
            return (t.double() if t.dtype.is_floating_point else t).sort(dim).values

        torch.testing.assert_close(multiset(values), multiset(reference.values), rtol=0, atol=0, equal_nan=True, msg=case)
        assert torch.equal(indices.long().sort(dim).values, expected.sort(dim).values), case


def random_cases(seed, count=8, max_n=3000):
    """(shape, dim, k) for random 1-3 d shapes, any dim, k from 0 to n."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(count):
        ndim = int(torch.randint(1, 4, (1,), generator=gen))
        shape = [int(torch.randint(1, 9, (1,), generator=gen)) for _ in range(ndim)]
        dim = int(torch.randint(-ndim, ndim, (1,), generator=gen))
        shape[dim] = int(torch.randint(1, max_n, (1,), generator=gen))
        k = int(torch.randint(0, shape[dim] + 1, (1,), generator=gen))
        yield tuple(shape), dim, k


@pytest.mark.parametrize("distribution", ["normal", "ties", "special"])
@pytest.mark.parametrize("is_sorted", [True, False], ids=["sorted", "unsorted"])
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_matches_torch_topk(device, dtype, largest, is_sorted, distribution):
    gen = torch.Generator().manual_seed(2024)
    for shape, dim, k in random_cases(seed=zlib.crc32(f"{dtype} {largest} {is_sorted} {distribution}".encode())):
        x = make(shape, dtype, device, distribution, gen)
        values, indices = topk.topk(x, k, dim=dim, largest=largest, sorted=is_sorted)
        assert indices.dtype == torch.int64
        check(x, k, dim, largest, is_sorted, values, indices)


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
@pytest.mark.parametrize("batch,n,k", [(1, 1 << 20, 64), (1, 1 << 20, 4096), (64, 32768, 1024), (4096, 1024, 32)])
def test_large_problems_cuda(dtype, batch, n, k):
    gen = torch.Generator().manual_seed(batch + n + k)
    x = make((batch, n), dtype, "cuda", "normal", gen)
    for largest in (True, False):
        values, indices = topk.topk(x, k, largest=largest)
        check(x, k, -1, largest, True, values, indices)


@pytest.mark.parametrize("device", DEVICES)
def test_ties_keep_lowest_indices(device):
    x = torch.full((4, 10000), 7.0, device=device)
    x[1, 5000:] = 8.0
    want = torch.arange(100, device=device).repeat(4, 1)
    for largest in (True, False):
        expected = want.clone()
        if largest:
            expected[1] += 5000
        assert torch.equal(topk.topk(x, 100, largest=largest).indices, expected)
        unsorted = topk.topk(x, 100, largest=largest, sorted=False).indices
        assert torch.equal(unsorted.sort(dim=1).values, expected)


@pytest.mark.parametrize("device", DEVICES)
def test_nan_is_largest_and_negative_zero_below_positive_zero(device):
    x = torch.tensor([1.0, math.nan, -0.0, math.inf, 0.0, -math.nan, -math.inf], device=device)
    assert topk.topk(x, 7).indices.tolist() == [1, 5, 3, 0, 4, 2, 6]
    assert topk.topk(x, 7, largest=False).indices.tolist() == [6, 2, 4, 0, 3, 1, 5]


@pytest.mark.parametrize("device", DEVICES)
def test_nondeterministic_returns_a_valid_choice(device):
    gen = torch.Generator().manual_seed(9)
    x = make((16, 5000), torch.float32, device, "ties", gen)
    for largest in (True, False):
        values, indices = topk.topk(x, 300, largest=largest, deterministic=False)
        assert torch.equal(x.gather(1, indices), values)
        ordered = indices.sort(dim=1).values
        assert bool((ordered[:, 1:] > ordered[:, :-1]).all()), "indices repeat"
        reference = torch.topk(x, 300, largest=largest)
        assert torch.equal(values.sort(dim=1).values, reference.values.sort(dim=1).values)


def non_contiguous_views(device):
    gen = torch.Generator().manual_seed(4)
    base = torch.randn(48, 1000, generator=gen).to(device)
    return {
        "transposed": base.t(),
        "row_slice": base[:, 100:900],
        "strided": base[::2, ::3],
        "expanded": base[0].expand(8, 1000),
        "permuted_3d": torch.randn(6, 7, 300, generator=gen).to(device).permute(2, 0, 1),
        "channels_last": torch.randn(2, 16, 9, 9, generator=gen).to(device).to(memory_format=torch.channels_last),
    }


@pytest.mark.parametrize("name", ["transposed", "row_slice", "strided", "expanded", "permuted_3d", "channels_last"])
@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_inputs(device, name):
    x = non_contiguous_views(device)[name]
    for dim in range(-1, x.dim()):
        k = max(1, x.shape[dim] // 3)
        values, indices = topk.topk(x, k, dim=dim)
        check(x, k, dim, True, True, values, indices)
        assert values.is_contiguous() and indices.is_contiguous()


@pytest.mark.parametrize("device", DEVICES)
def test_row_slices_are_read_in_place(device, monkeypatch):
    from topk import _torch

    x = torch.randn(64, 4096, device=device)[8:40, 100:3000]

    def no_copy(t):
        raise AssertionError("a sliced matrix should be read in place, with ld")

    monkeypatch.setattr(_torch.TORCH, "contiguous", no_copy)
    values, indices = topk.topk(x, 50)
    check(x, 50, -1, True, True, values, indices)


@needs_cuda
def test_runs_on_the_current_stream():
    x = torch.randn(512, 8192, device="cuda")
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(100_000_000)  # keeps `stream` busy: work on another stream would race with y
        y = x * 2
        values, indices = topk.topk(y, 64)
    stream.synchronize()
    reference = torch.topk(x * 2, 64)
    assert torch.equal(values, reference.values)
    assert torch.equal(x.gather(1, indices) * 2, values)


@needs_cuda
@pytest.mark.skipif(CUDA and torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensor_on_another_device():
    x = torch.randn(32, 4000, device="cuda:1")
    with torch.cuda.device(0):
        values, indices = topk.topk(x, 16)
    assert values.device == x.device and indices.device == x.device
    check(x, 16, -1, True, True, values, indices)


@pytest.mark.parametrize("device", DEVICES)
def test_index_dtype_and_out(device):
    x = torch.randn(10, 300, device=device)
    values, indices = topk.topk(x, 5, index_dtype=torch.int32)
    assert indices.dtype == torch.int32
    check(x, 5, -1, True, True, values, indices)
    assert topk.topk(x, 5, index_dtype="int32").indices.dtype == torch.int32

    out = torch.empty(10, 5, device=device), torch.empty(10, 5, dtype=torch.int64, device=device)
    result = topk.topk(x, 5, out=out)
    assert result.values is out[0] and result.indices is out[1]
    check(x, 5, -1, True, True, *out)
    out = torch.empty(3, 300, device=device), torch.empty(3, 300, dtype=torch.int32, device=device)
    topk.topk(x, 3, dim=0, out=out)
    check(x, 3, 0, True, True, *out)


@pytest.mark.parametrize("device", DEVICES)
def test_zero_dimensional_and_empty(device):
    x = torch.tensor(2.5, device=device)
    for k in (0, 1):
        values, indices = topk.topk(x, k)
        reference = torch.topk(x, k)
        assert values.shape == reference.values.shape == () and float(values) == 2.5 and int(indices) == 0
    values, indices = topk.topk(torch.randn(4, 7, device=device), 0)
    assert values.shape == (4, 0) and indices.shape == (4, 0)
    values, indices = topk.topk(torch.randn(0, 7, device=device), 3)
    assert values.shape == (0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = torch.randn(3, 5, device=device)
    with pytest.raises(topk.KRangeError, match="TOPK_ERR_K_RANGE"):
        topk.topk(x, 6)
    with pytest.raises(ValueError, match="TOPK_ERR_INVALID_ARGUMENT"):
        topk.topk(x, -1)
    with pytest.raises(TypeError, match="TOPK_ERR_DTYPE"):
        topk.topk(x > 0, 1)
    with pytest.raises(TypeError, match="TOPK_ERR_DTYPE"):
        topk.topk(x.to(torch.complex64), 1)
    with pytest.raises(ValueError, match="dim=2"):
        topk.topk(x, 1, dim=2)
    with pytest.raises(TypeError, match="meta"):
        topk.topk(torch.empty(3, 5, device="meta"), 1)


@needs_cuda
def test_unsigned_dtypes_cuda():
    np = pytest.importorskip("numpy")
    from _reference import assert_topk

    if not hasattr(torch, "uint32"):
        pytest.skip("torch.uint32 needs torch >= 2.3")
    rng = np.random.default_rng(8)
    for np_dtype in (np.uint32, np.uint64):
        host = rng.integers(0, np.iinfo(np_dtype).max, size=(16, 3000), dtype=np_dtype, endpoint=True)
        x = torch.from_numpy(host).cuda()
        for largest in (True, False):
            values, indices = topk.topk(x, 40, largest=largest)
            assert_topk(host, 40, -1, largest, True, values.cpu().numpy(), indices.cpu().numpy())


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_matches_torch_topk(device):
    x = torch.randperm(20 * 300, device=device).reshape(20, 300).float()  # distinct: one right answer
    for dim in (1, 0):
        ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
        values = topk.topk(ours, 7, dim=dim).values
        weights = torch.randn(values.shape, device=device)
        (values * weights).sum().backward()
        (torch.topk(theirs, 7, dim=dim).values * weights).sum().backward()
        assert torch.equal(ours.grad, theirs.grad)


@needs_cuda
@needs_custom_op
def test_custom_op_opcheck():
    x = torch.randn(8, 500, device="cuda")
    torch.library.opcheck(torch.ops.topk.topk.default, (x, 10, -1, True, True, "auto", True, torch.int64))
    torch.library.opcheck(torch.ops.topk.topk.default, (x.t(), 3, 0, False, False, "auto", True, torch.int32))


@needs_cuda
@needs_custom_op
def test_torch_compile_fullgraph():
    torch._dynamo.reset()

    def through_topk(x):
        values, indices = topk.topk(x, 8, dim=1)
        return values * 2, indices

    def through_op(x):
        values, indices = torch.ops.topk.topk(x, 8, -1, False, True, "auto", True, torch.int64)
        return values + 1, indices

    for fn in (through_topk, through_op):
        compiled = torch.compile(fn, fullgraph=True)
        for shape in ((64, 1000), (32, 3000)):
            x = torch.randn(shape, device="cuda")
            got, want = compiled(x), fn(x)
            assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


@needs_cuda
def test_cuda_graph_capture():
    x = torch.randn(256, 5000, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            topk.topk(x, 32)  # warm-up outside capture, as torch.cuda.graph asks
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        values, indices = topk.topk(x, 32)
    x.copy_(torch.randn(256, 5000, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    check(x, 32, -1, True, True, values, indices)


@needs_cuda
def test_library_sees_the_gpu():
    assert topk.cuda_available(), f"libtopk does not see the GPU torch sees ({topk.build_info()})"
