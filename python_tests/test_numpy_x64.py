"""tracehlo.config.enable_x64: 64-bit defaults and no narrowing, against jax.numpy
with jax's x64 switched on for the same cases."""
import jax
import numpy as np
import pytest

import tracehlo
from numpy_helpers import check


X64_CASES = [
    ("arange", lambda m: m.arange(4)),
    ("zeros", lambda m: m.zeros(3)),
    ("linspace", lambda m: m.linspace(0, 1, 3)),
    ("f64 stays", lambda m, x: m.sin(x), np.array([0.5, 1.0])),
    ("i64 stays", lambda m, x: m.add(x, 1), np.array([2**40, 1], np.int64)),
    ("python float", lambda m, x: m.multiply(x, 1.5), np.array([1, 2], np.int64)),
    ("f32 * float stays f32", lambda m, x: m.multiply(x, 1.5), np.ones(2, np.float32)),
    ("i32 + i64", lambda m, x: m.add(x, np.int64(3)), np.ones(2, np.int32)),
    ("sum of i32 is i64", lambda m, x: m.sum(x), np.ones(3, np.int32)),
    ("mean of ints", lambda m, x: m.mean(x), np.arange(4)),
    ("argmax", lambda m, x: m.argmax(x), np.array([1.0, 3.0])),
    ("cumsum bool", lambda m, x: m.cumsum(x), np.array([True, True])),
    ("matmul", lambda m, x: m.matmul(x, x.T), np.ones((2, 3))),
]


@pytest.mark.parametrize("name,fn,args", [(c[0], c[1], c[2:]) for c in X64_CASES])
def test_x64(x64, name, fn, args):
    check(fn, *args)


def test_x64_index_results_are_int64(x64):
    """Indices and counts in JAX's default int (argpartition's stay int32: top_k's)."""
    check(lambda m, x: (m.nonzero(x, size=3), m.argwhere(x, size=2),
                        m.unique(x, size=3, return_index=True, return_inverse=True,
                                 return_counts=True),
                        m.bincount(m.ravel(x), length=3), m.argpartition(x[0], 1)),
          np.array([[1, 0, 2], [2, 0, 1]], np.int32), values="jnp", eager=False)


@pytest.fixture
def tracehlo_x64_only():
    assert not jax.config.jax_enable_x64
    tracehlo.config.update("enable_x64", True)
    try:
        yield
    finally:
        tracehlo.config.update("enable_x64", False)


@pytest.mark.parametrize("x", [np.array([0.1, 2.0**60 + 1.0]), np.array([2**40 + 1, -3], np.int64),
                               np.array([2**63 + 5], np.uint64), np.array([1 + 0.1j, 2j])],
                         ids=["f64", "i64", "u64", "c128"])
def test_x64_without_jax_x64_keeps_64_bit_inputs(tracehlo_x64_only, x):
    # jaxlib narrows 64-bit host data unless JAX's own x64 is on: the runtime must not
    out = tracehlo.jit(lambda v: v + v)(x)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(out), x + x)
