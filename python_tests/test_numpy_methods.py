"""Python operators, attributes and NumPy-style methods on Tracers (under tracehlo.jit),
against NumPy's values and jax.numpy's dtypes, with weak Python scalars."""
import numpy as np
import pytest

import tracehlo
from numpy_helpers import bools, check, f32, i32, sample

OPERATORS = [
    ("+", lambda x, y: x + y), ("-", lambda x, y: x - y), ("*", lambda x, y: x * y),
    ("/", lambda x, y: x / y), ("//", lambda x, y: x // y), ("%", lambda x, y: x % y),
    ("**", lambda x, y: x ** y), ("==", lambda x, y: x == y), ("!=", lambda x, y: x != y),
    ("<", lambda x, y: x < y), ("<=", lambda x, y: x <= y), (">", lambda x, y: x > y),
    (">=", lambda x, y: x >= y),
]
INT_OPERATORS = [("&", lambda x, y: x & y), ("|", lambda x, y: x | y),
                 ("^", lambda x, y: x ^ y), ("<<", lambda x, y: x << y),
                 (">>", lambda x, y: x >> y)]


def _operands(dtype):
    if dtype == "f32":
        return f32(2, 3, lo=0.5, hi=2), f32(3, lo=0.5, hi=2)
    return i32(2, 3, lo=1, hi=5), np.array([1, 2, 3], np.int32)


@pytest.mark.parametrize("name,op", OPERATORS + INT_OPERATORS)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_binary_operator(name, op, dtype):
    if dtype == "f32" and (name, op) in INT_OPERATORS:
        pytest.skip("bitwise operators take ints and bools")
    x, y = _operands(dtype)
    check(lambda m, x, y: op(x, y), x, y, eager=False, rtol=1e-5)


@pytest.mark.parametrize("name,op", OPERATORS + INT_OPERATORS[:3])
def test_operator_with_python_scalars(name, op):
    """x_f32 * 2 stays f32; int32 array + 1.5 -> f32; reflected forms (2 - x)."""
    x, _ = _operands("i32")
    check(lambda m, x: op(x, 2), x, eager=False, rtol=1e-5)
    check(lambda m, x: op(3, x), x, eager=False, rtol=1e-5)
    if (name, op) not in INT_OPERATORS:
        check(lambda m, x: op(x, 1.5), x, eager=False, rtol=1e-5)
        check(lambda m, x: op(2.5, x.astype(np.float32)), x, eager=False, rtol=1e-5)


def test_operators_with_host_arrays():
    """NumPy arrays on either side defer to the Tracer (__array_priority__)."""
    x, c = f32(2, 3), f32(3)
    check(lambda m, x: c + x, x, eager=False)
    check(lambda m, x: x - c, x, eager=False)
    check(lambda m, x: c @ x.T, x, eager=False, rtol=1e-5)


def test_bool_operators():
    x, y = bools(4), bools(4)
    for op in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y,
               lambda x, y: ~x, lambda x, y: x == y, lambda x, y: x + y):
        check(lambda m, x, y: op(x, y), x, y, eager=False)


@pytest.mark.parametrize("dtype", ["f32", "i32", "bool"])
def test_unary_operators(dtype):
    x = sample(dtype, 2, 3)
    if dtype != "bool":
        check(lambda m, x: -x, x, eager=False)
        check(lambda m, x: +x, x, eager=False)
    check(lambda m, x: abs(x), x, eager=False)
    if dtype != "f32":
        check(lambda m, x: ~x, x, eager=False)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 2, 3), (3,)),
                                   ((3,), (3,))])
def test_matmul_operator(sa, sb):
    check(lambda m, a, b: a @ b, f32(*sa), f32(*sb), eager=False, rtol=1e-5)


def test_attributes():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x),
                    T=x.T.shape)
        return x

    tracehlo.jit(f)(np.zeros((2, 3, 4), np.int32))
    assert seen == dict(shape=(2, 3, 4), dtype=np.int32, ndim=3, size=24, len=2, T=(4, 3, 2))


METHODS = [
    ("reshape", lambda x: x.reshape(3, 8)),
    ("reshape tuple", lambda x: x.reshape((4, -1))),
    ("astype", lambda x: x.astype(np.int32)),
    ("astype bool", lambda x: x.astype(bool)),
    ("sum", lambda x: x.sum()),
    ("sum axis", lambda x: x.sum(axis=-1, keepdims=True)),
    ("mean", lambda x: x.mean(0)),
    ("max", lambda x: x.max(axis=(0, 2))),
    ("min", lambda x: x.min(keepdims=True)),
    ("prod", lambda x: x.prod(1)),
    ("argmax", lambda x: x.argmax()),
    ("argmin axis", lambda x: x.argmin(axis=-2)),
    ("transpose", lambda x: x.transpose()),
    ("transpose axes", lambda x: x.transpose(1, 0, 2)),
    ("transpose tuple", lambda x: x.transpose((2, 0, 1))),
    (".T", lambda x: x.T),
    ("squeeze", lambda x: x[:, :1].squeeze(1)),
    ("squeeze all", lambda x: x[:1, :1].squeeze()),
    ("ravel", lambda x: x.ravel()),
    ("flatten", lambda x: x.flatten()),
    ("var std", lambda x: (x.var(), x.std(axis=1))),
    ("cumsum", lambda x: x.cumsum(axis=1)),
    ("clip", lambda x: x.clip(0, 10)),
    ("any all", lambda x: ((x > 3).any(), (x > 3).all(axis=0))),
    ("iteration", lambda x: [row.sum() for row in x]),
]


@pytest.mark.parametrize("name,method", METHODS)
def test_method(name, method):
    check(lambda m, x: method(x), np.arange(24, dtype=np.float32).reshape(2, 3, 4),
          eager=False, rtol=1e-5)


def test_int_methods_keep_jax_dtypes():
    x = np.array([[1, 2], [3, 4]], np.int8)
    check(lambda m, x: (x.sum(), x.prod(), x.max(), x.mean()), x, eager=False, values="jnp")
