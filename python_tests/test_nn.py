"""tracehlo.nn against jax.nn (values and dtypes), eager and jitted: axes, keepdims,
integer inputs, infinities and large values (stability)."""
import jax.nn
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo.nn as tnn
from numpy_helpers import check, f32, i32

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _nn_check(fn, *args, **kwargs):
    """fn(nn, *args) with nn = jax.nn (the oracle, for values and dtypes) and tracehlo.nn."""
    def case(m, *a):
        return fn(tnn if m.__name__.startswith("tracehlo") else jax.nn, *a)
    check(case, *args, values="jnp", **kwargs)


ACTIVATIONS = ["relu", "sigmoid", "gelu", "silu", "softplus"]


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_activation(name, dtype):
    if name in ("sigmoid", "silu") and dtype == "i32":
        pytest.skip("jax.nn.sigmoid rejects ints (tracehlo.nn promotes them to float)")
    x = f32(2, 3, lo=-4, hi=4) if dtype == "f32" else i32(2, 3)
    _nn_check(lambda nn, x: getattr(nn, name)(x), x, rtol=1e-5, atol=1e-6)


def test_gelu_exact_and_extremes():
    x = np.array([-np.inf, -30, -1, 0, 1, 30, np.inf], np.float32)
    _nn_check(lambda nn, x: nn.gelu(x, approximate=False), x, rtol=1e-5, atol=1e-6)
    _nn_check(lambda nn, x: nn.sigmoid(x), x, rtol=1e-5, atol=1e-6)
    _nn_check(lambda nn, x: nn.relu(x), x)
    _nn_check(lambda nn, x: nn.softplus(x), x, rtol=1e-5, atol=1e-6)


NORMALIZERS = [
    ("softmax", lambda nn, x: nn.softmax(x)),
    ("softmax axis 0", lambda nn, x: nn.softmax(x, axis=0)),
    ("softmax axes", lambda nn, x: nn.softmax(x, axis=(0, -1))),
    ("log_softmax", lambda nn, x: nn.log_softmax(x)),
    ("log_softmax axis", lambda nn, x: nn.log_softmax(x, axis=-2)),
    ("logsumexp", lambda nn, x: nn.logsumexp(x)),
    ("logsumexp axis", lambda nn, x: nn.logsumexp(x, axis=-1)),
    ("logsumexp keepdims", lambda nn, x: nn.logsumexp(x, axis=(0, 2), keepdims=True)),
    ("logsumexp keepdims all", lambda nn, x: nn.logsumexp(x, keepdims=True)),
]


@pytest.mark.parametrize("name,fn", NORMALIZERS)
def test_normalizer(name, fn):
    _nn_check(fn, f32(2, 3, 4, lo=-3, hi=3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,fn", NORMALIZERS[::3])
def test_normalizer_stability(name, fn):
    """Large and infinite logits: no overflow to NaN where JAX gives numbers."""
    x = np.array([[1000, 1000, -1000, 0], [-np.inf, 0, 1, 2], [-np.inf, -np.inf, 3, 3]],
                 np.float32).reshape(3, 1, 4)
    _nn_check(fn, x, rtol=1e-5, atol=1e-6)


def test_normalizer_int_and_0d():
    _nn_check(lambda nn, x: nn.softmax(x), i32(2, 3), rtol=1e-5)
    _nn_check(lambda nn, x: nn.logsumexp(x), i32(4), rtol=1e-5)
    _nn_check(lambda nn, x: nn.logsumexp(x), np.float32(2.0), rtol=1e-5)
    _nn_check(lambda nn, x: nn.logsumexp(x, axis=0), np.array([-np.inf, -np.inf], np.float32))


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_half_precision_keeps_dtype(dtype):
    x = np.array([[1.5, -2.0, 0.25], [3.0, 10.0, -0.5]], dtype)
    for fn in (lambda nn, x: nn.gelu(x), lambda nn, x: nn.gelu(x, approximate=False),
               lambda nn, x: nn.softmax(x), lambda nn, x: nn.log_softmax(x),
               lambda nn, x: nn.logsumexp(x, axis=1), lambda nn, x: nn.relu(x)):
        _nn_check(fn, x, rtol=2e-2, atol=2e-2)


def test_one_hot():
    _nn_check(lambda nn, x: nn.one_hot(x, 4), np.array([0, 3, 1, 5, -1], np.int32))
    _nn_check(lambda nn, x: nn.one_hot(x, 3, dtype=np.int32), np.array([[0], [2]], np.int32))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_eager_softmax_and_broadcast_division_are_jaxs_bit_for_bit(dtype):
    """Eagerly, jnp.divide runs as one jitted program, where XLA multiplies by the
    broadcast reciprocal; tnp.divide of arrays that broadcast does too, so eager
    softmax (its exps over their sums) has JAX's bits, not a correctly rounded
    quotient an ulp away."""
    import tracehlo.numpy as tnp
    x = jnp.asarray(np.random.default_rng(0).normal(0, 3, (7, 33)), dtype)
    e, s = jnp.exp(x), jnp.sum(jnp.exp(x), axis=1, keepdims=True)
    for got, want in [(tnn.softmax(x), jax.nn.softmax(x)), (tnp.divide(e, s), jnp.divide(e, s)),
                      (tnp.divide(s, e), jnp.divide(s, e))]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
