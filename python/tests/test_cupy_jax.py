"""topk.topk on CuPy and JAX arrays: small checks of their paths against the NumPy
reference. Each test skips where its framework (or a GPU) is absent."""

import pytest

np = pytest.importorskip("numpy")

import topk  # noqa: E402

from _reference import assert_topk  # noqa: E402


def host_data(shape=(24, 5000), dtype=np.float32, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def cupy_with_device():
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        count = 0
    if count == 0:
        pytest.skip("no CUDA device")
    return cupy


def jax_gpus(jax):
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


# ---------------------------------------------------------------- CuPy


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.uint64], ids=str)
def test_cupy_matches_reference(dtype):
    cupy = cupy_with_device()
    host = host_data() * 1000
    host = (np.abs(host) if np.dtype(dtype).kind == "u" else host).astype(dtype)
    x = cupy.asarray(host)
    for dim, k in ((-1, 50), (0, 5)):
        for largest in (True, False):
            values, indices = topk.topk(x, k, dim=dim, largest=largest)
            assert isinstance(values, cupy.ndarray) and isinstance(indices, cupy.ndarray)
            assert values.device == x.device and indices.dtype == np.int64
            assert_topk(host, k, dim, largest, True, cupy.asnumpy(values), cupy.asnumpy(indices))


def test_cupy_views_out_and_index_dtype():
    cupy = cupy_with_device()
    host = host_data()
    x = cupy.asarray(host)
    for view, host_view in ((x[:, 100:4000], host[:, 100:4000]), (x.T, host.T), (x[::3, ::2], host[::3, ::2])):
        values, indices = topk.topk(view, 7)
        assert_topk(host_view, 7, -1, True, True, cupy.asnumpy(values), cupy.asnumpy(indices))
    out = cupy.empty((24, 9), cupy.float32), cupy.empty((24, 9), cupy.int32)
    result = topk.topk(x, 9, out=out)
    assert result.values is out[0]
    assert_topk(host, 9, -1, True, True, cupy.asnumpy(out[0]), cupy.asnumpy(out[1]))
    assert topk.topk(x, 9, index_dtype=cupy.int32).indices.dtype == np.int32


def test_cupy_runs_on_the_current_stream():
    cupy = cupy_with_device()
    host = host_data((512, 8192))
    x = cupy.asarray(host)
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = x * 2  # enqueued on `stream`; the selection must be ordered after it
        values, indices = topk.topk(y, 64)
    stream.synchronize()
    assert_topk(host * 2, 64, -1, True, True, cupy.asnumpy(values), cupy.asnumpy(indices))


# ---------------------------------------------------------------- JAX


def test_jax_cpu_arrays():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    cpu = jax.devices("cpu")[0]
    host = host_data((16, 700))
    x = jax.device_put(host, cpu)
    values, indices = topk.topk(x, 20)
    assert isinstance(values, jax.Array) and values.devices() == {cpu}
    assert indices.dtype == (np.int64 if jax.config.jax_enable_x64 else np.int32)
    assert_topk(host, 20, -1, True, True, np.asarray(values), np.asarray(indices))

    x16 = jax.device_put(jnp.asarray(host, dtype=jnp.bfloat16), cpu)
    values, indices = topk.topk(x16, 3, dim=0, largest=False)
    assert values.dtype == jnp.bfloat16
    assert_topk(np.asarray(x16), 3, 0, False, True, np.asarray(values), np.asarray(indices))


def test_jax_gpu_arrays():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    gpus = jax_gpus(jax)
    if not gpus:
        pytest.skip("JAX sees no GPU")
    host = host_data()
    for dtype in (jnp.float32, jnp.bfloat16):
        x = jax.device_put(jnp.asarray(host, dtype=dtype), gpus[0])
        for dim, k in ((-1, 40), (0, 4)):
            for largest in (True, False):
                values, indices = topk.topk(x, k, dim=dim, largest=largest)
                assert isinstance(values, jax.Array) and values.devices() == {gpus[0]}
                assert values.dtype == dtype
                assert_topk(np.asarray(x), k, dim, largest, True, np.asarray(values), np.asarray(indices))
    # The results feed JAX computations directly.
    x = jax.device_put(host, gpus[0])
    values, _ = topk.topk(x * 3, 10)
    np.testing.assert_allclose(np.asarray(values / 3), np.sort(host, axis=1)[:, ::-1][:, :10], rtol=1e-6)


def test_jax_refuses_tracers_and_out():
    jax = pytest.importorskip("jax")
    x = jax.numpy.arange(10.0)
    with pytest.raises(TypeError, match="jax.jit"):
        jax.jit(lambda a: topk.topk(a, 2).values)(x)
    with pytest.raises(TypeError, match="immutable"):
        topk.topk(x, 2, out=(x, x))
