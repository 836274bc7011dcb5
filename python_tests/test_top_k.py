"""lax.top_k against jax.lax.top_k bit for bit (NaN signs, -0.0, ties, every dtype JAX
orders), eagerly and under jit, with its derivatives, batching and errors. One compiled
function per dtype or transformation, to keep the compiles few."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tracehlo
import tracehlo.lax as tlax
import tracehlo.numpy as tnp
from numpy_helpers import check_raises

RNG = np.random.default_rng(0)
# NaN on both sides (NaN and -NaN differ in bits and rank), infinities, 0.0 and -0.0
# (ranked apart), and ties of 1.0 and of NaN that must come out in index order
SPECIAL = np.array([1.0, np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan, 1.0, 0.0, -0.0,
                    2.0, np.nan], np.float32)


def _operands(dtype):
    """A rank-1 operand of specials and ties, and a rank-3 one with ties."""
    if np.dtype(dtype).kind == "f":
        rank3 = np.round(RNG.normal(size=(2, 3, 5)) * 2) / 2  # halves: ties in each row
        rank3[0, 1, 2] = np.nan
        return SPECIAL.astype(dtype), rank3.astype(dtype)
    if dtype == np.bool_:
        return RNG.random(12) < 0.5, RNG.random((2, 3, 5)) < 0.5
    return (RNG.integers(-3, 4, 12).astype(dtype),
            RNG.integers(-3, 4, (2, 3, 5)).astype(dtype))


def _calls(lax, x1, x3):
    """k = 1 and k = n on both ranks, another axis, and top_k among fused neighbours."""
    neighbours = lax.top_k(lax.neg(x1), 4)[0] if x1.dtype != np.bool_ else ()
    return (lax.top_k(x1, 1), lax.top_k(x1, x1.shape[0]), lax.top_k(x3, 1),
            lax.top_k(x3, 5), lax.top_k(x3, 2, axis=1), neighbours)


def _assert_bits_equal(got, want):
    got, want = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (k, g.shape, g.dtype, w.dtype)
        if g.dtype.itemsize:  # float0 tangents have no bits
            np.testing.assert_array_equal(g.view(f"u{g.dtype.itemsize}"),
                                          w.view(f"u{w.dtype.itemsize}"), err_msg=f"output {k}")


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16, np.int32,
                                   np.uint8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_values_and_indices_are_jaxs_bit_for_bit(dtype):
    x1, x3 = _operands(dtype)
    want = jax.jit(lambda a, b: _calls(jax.lax, a, b))(x1, x3)
    _assert_bits_equal(tracehlo.jit(lambda a, b: _calls(tlax, a, b))(x1, x3), want)
    if dtype in (np.float32, np.int32):  # eager: one compile per call, so two dtypes
        _assert_bits_equal(_calls(tlax, x1, x3), want)


def _weighted_top(lax, np_, k):
    weights = np.linspace(-1.0, 2.0, 2 * 3 * k, dtype=np.float32).reshape(2, 3, k)
    return lambda x: np_.sum(lax.top_k(x, k)[0] * weights)


def test_grad_scatters_to_the_chosen_indices():
    x = _operands(np.float32)[1]
    want = jax.grad(_weighted_top(jax.lax, jnp, 3))(x)
    grad = tracehlo.grad(_weighted_top(tlax, tnp, 3))
    _assert_bits_equal(tracehlo.jit(grad)(x), want)
    _assert_bits_equal(grad(x), want)


def test_jvp_gathers_the_tangent():
    x, t = _operands(np.float32)[1], RNG.normal(size=(2, 3, 5)).astype(np.float32)
    want = jax.jvp(lambda y: jax.lax.top_k(y, 3, axis=1), (x,), (t,))
    eager = tracehlo.jvp(lambda y: tlax.top_k(y, 3, axis=1), (x,), (t,))
    _assert_bits_equal(eager, want)  # the indices' tangent is float0, as JAX's
    jitted = tracehlo.jit(lambda x, t: tracehlo.jvp(
        lambda y: tlax.top_k(y, 3, axis=1), (x,), (t,)))(x, t)
    _assert_bits_equal(jitted, want)


def test_vmap_over_leading_and_trailing_axes():
    x = _operands(np.float32)[1]

    def batched(vmap, lax, x):
        return [vmap(lambda y: lax.top_k(y, 2), in_axes=a)(x) for a in (0, -1)]
    _assert_bits_equal(tracehlo.jit(lambda x: batched(tracehlo.vmap, tlax, x))(x),
                       batched(jax.vmap, jax.lax, x))


@pytest.mark.parametrize("operand,k", [
    (SPECIAL, -1), (SPECIAL, 13), (np.float32(1.0), 1), (SPECIAL.astype(np.complex64), 2)],
    ids=["negative", "too_large", "rank0", "complex"])
def test_bad_operands_raise_as_jax_does(operand, k):
    with pytest.raises(ValueError) as jax_error:
        jax.lax.top_k(operand, k)
    check_raises(lambda m, x: tlax.top_k(x, k), operand, exc=ValueError,
                 match=re.escape(str(jax_error.value)))


def test_a_float_k_raises():
    """JAX's check caches on k == 2, so its TypeError for 2.0 comes only on a first call."""
    check_raises(lambda m, x: tlax.top_k(x, 2.0), SPECIAL, exc=TypeError,
                 match="k argument to top_k must be an integer, got 2.0")
