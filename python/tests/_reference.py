"""A NumPy reference for libtopk's documented semantics (include/topk.h), and checks.

Order: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN (every NaN is the largest);
the k selected are the first k of a stable sort best-first, so among equal
values the lowest indices win and sorted output orders them by index.
"""

import numpy as np

_BITS = {2: np.int16, 4: np.int32, 8: np.int64}
_UNSIGNED_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def order_keys(x: np.ndarray) -> np.ndarray:
    """int64 (uint64 for unsigned input) keys that order like libtopk orders x."""
    if is_float(x.dtype):
        signed = _BITS[x.dtype.itemsize]
        bits = np.ascontiguousarray(x).view(signed).astype(np.int64)
        # Negative floats are sign-magnitude: flipping the magnitude bits reverses their order.
        keys = np.where(bits < 0, bits ^ np.int64(np.iinfo(signed).max), bits)
        return np.where(np.isnan(x), np.iinfo(np.int64).max, keys)
    if x.dtype.kind == "u":
        return x.astype(np.uint64)
    return x.astype(np.int64)


def reference_indices(x: np.ndarray, k: int, dim: int = -1, largest: bool = True) -> np.ndarray:
    """Indices of the top k along dim, best first, ties by lowest index."""
    keys = order_keys(np.moveaxis(x, dim, -1))
    if largest:
        keys = ~keys  # monotone decreasing, without overflow
    order = np.argsort(keys, axis=-1, kind="stable")[..., :k]
    return np.moveaxis(order, -1, dim)


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of a, so that NaN payloads and -0.0 compare exactly."""
    if is_float(a.dtype):
        return np.ascontiguousarray(a).view(_UNSIGNED_BITS[a.dtype.itemsize])
    return a


def assert_topk(x: np.ndarray, k: int, dim: int, largest: bool, sorted: bool, values, indices) -> None:
    """values/indices are a correct deterministic top-k of x (exact order when sorted)."""
    expected = reference_indices(x, k, dim, largest)
    values, indices = np.asarray(values), np.asarray(indices)
    assert values.shape == expected.shape and indices.shape == expected.shape
    assert values.dtype == x.dtype
    if sorted:
        np.testing.assert_array_equal(indices, expected)
    else:
        np.testing.assert_array_equal(np.sort(indices, axis=dim), np.sort(expected, axis=dim))
    gathered = np.take_along_axis(x, indices.astype(np.int64), axis=dim)
    np.testing.assert_array_equal(bits(values), bits(gathered))


def assert_topk_any_ties(x: np.ndarray, k: int, dim: int, largest: bool, values, indices) -> None:
    """A correct top-k with any choice among the elements tied at the k-th value."""
    expected = reference_indices(x, k, dim, largest)
    values, indices = np.asarray(values), np.asarray(indices).astype(np.int64)
    ordered = np.sort(indices, axis=dim)
    assert np.all(np.diff(ordered, axis=dim) > 0), "indices repeat"
    np.testing.assert_array_equal(bits(values), bits(np.take_along_axis(x, indices, axis=dim)))
    want = np.sort(order_keys(np.take_along_axis(x, expected, axis=dim)), axis=dim)
    np.testing.assert_array_equal(np.sort(order_keys(values), axis=dim), want)


def random_array(rng: np.random.Generator, shape, dtype, distribution: str) -> np.ndarray:
    """Test data: "normal", "ties" (four distinct values) or "special" (NaN, +-inf, +-0.0 mixed in)."""
    dtype = np.dtype(dtype)
    if distribution == "ties":
        return rng.integers(0, 4, size=shape).astype(dtype)
    if is_float(dtype):
        x = rng.standard_normal(size=shape).astype(np.float32) * 100
        if distribution == "special":
            specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=np.float32)
            mask = rng.random(size=shape) < 0.2
            x = np.where(mask, specials[rng.integers(0, len(specials), size=shape)], x)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    if distribution == "special":
        return rng.choice(np.array([info.min, info.max, 0, 1], dtype=dtype), size=shape)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
