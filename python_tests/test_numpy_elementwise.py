"""tracehlo.numpy elementwise functions against NumPy (values) and jax.numpy (dtypes),
eager and jitted: float32, int32 and bool inputs, broadcasting, 0-d arrays and weak
Python scalars."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from numpy_helpers import bools, check, check_in_child, check_raises, f32, i32, sample

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's nan warnings

FLOAT_UNARY = ["exp", "exp2", "log", "log1p", "expm1", "sqrt", "cbrt", "sin", "cos", "tan",
               "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "reciprocal"]
ANY_UNARY = ["negative", "abs", "absolute", "sign", "square", "floor", "ceil", "round",
             "isfinite", "isnan", "isinf", "logical_not"]


@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_unary(name):
    check(lambda m, x: getattr(m, name)(x), f32(2, 3, lo=0.1, hi=0.9), rtol=1e-5)


def test_float_unary_promotes_ints():
    """Every float function at once on int32 (one compile): the result is float32."""
    # jnp.reciprocal promotes ints to float; NumPy's truncates, so JAX gives the values
    check(lambda m, x: tuple(getattr(m, n)(x) for n in FLOAT_UNARY), i32(2, 3, lo=1, hi=4),
          rtol=1e-5, values="jnp")


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "tanh", "arctan"])
def test_float_unary_bool_and_0d(name):
    # NumPy computes float ops on bool in float16; JAX (and we) in float32
    check(lambda m, x: getattr(m, name)(x), bools(4), rtol=1e-5, values="jnp")
    check(lambda m, x: getattr(m, name)(x), np.float32(0.5), rtol=1e-5)


def test_float_unary_nan_domain():
    x = np.array([-1.0, 0.0, 2.0, np.inf, -np.inf, np.nan], np.float32)
    for name in ["log", "sqrt", "arcsin", "arccos", "log1p"]:
        check(lambda m, x: getattr(m, name)(x), x, rtol=1e-5)


@pytest.mark.parametrize("name", ANY_UNARY)
@pytest.mark.parametrize("dtype", ["f32", "i32", "bool"])
def test_any_unary(name, dtype):
    if dtype == "bool" and name in ("negative", "sign", "square", "round"):
        pytest.skip("NumPy or JAX rejects it for bool")
    x = sample(dtype, 2, 3)
    if dtype == "f32":
        x = np.concatenate([x, [[np.nan, np.inf, -np.inf], [-0.5, 0.5, 2.5]]]).astype(
            np.float32)
    check(lambda m, x: getattr(m, name)(x), x)


def test_round_decimals():
    x = np.array([1.234, -5.678, 0.5, 1.5, 2.5, -0.5], np.float32)
    check(lambda m, x: m.round(x, 2), x, rtol=1e-6)
    check(lambda m, x: m.round(x), x)


BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "remainder",
          "power", "maximum", "minimum", "arctan2", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor"]


def _binary_operands(name, dtype):
    x, y = sample(dtype, 2, 3), sample(dtype, 3)  # broadcasting (2, 3) with (3,)
    if name in ("floor_divide", "mod", "remainder", "divide") and dtype == "i32":
        y = np.array([-3, 2, 5], np.int32)
    if name == "power" and dtype == "i32":
        x, y = i32(2, 3, lo=-3, hi=4), np.array([0, 1, 3], np.int32)
    if name == "power" and dtype == "f32":
        x = np.abs(x) + 0.1
    return x, y


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["f32", "i32", "bool"])
def test_binary(name, dtype):
    if dtype == "bool" and name in ("subtract", "divide", "floor_divide", "mod", "remainder",
                                    "power", "arctan2"):
        pytest.skip("not defined for bool in NumPy/JAX")
    x, y = _binary_operands(name, dtype)
    check(lambda m, x, y: getattr(m, name)(x, y), x, y, rtol=1e-5)


@pytest.mark.parametrize("name", ["add", "multiply", "divide", "power", "maximum", "less"])
def test_binary_0d_and_scalar_arrays(name):
    x = f32(4, lo=0.5, hi=2)
    check(lambda m, x, y: getattr(m, name)(x, y), x, np.float32(1.5), rtol=1e-5)
    check(lambda m, x, y: getattr(m, name)(x, y), np.float32(1.5), x, rtol=1e-5)
    check(lambda m, x, y: getattr(m, name)(x, y), np.float32(0.7), np.float32(1.5), rtol=1e-5)


def test_float_base_integer_exponent_array_broadcasts():
    """f32[3] ** u32[2, 1] broadcasts as jnp.power's (it was refused: fuzz seed 6109)."""
    check(lambda m, x, y: m.power(x, y), f32(3, lo=0.5, hi=2),
          np.array([[1], [2]], np.uint32), rtol=1e-6)


def test_floor_divide_and_mod_signs():
    x = np.array([7, -7, 7, -7, 0, 6], np.int32)
    y = np.array([2, 2, -2, -2, 3, -3], np.int32)
    for name in ("floor_divide", "mod", "remainder", "fmod"):
        check(lambda m, x, y: getattr(m, name)(x, y), x, y)
        check(lambda m, x, y: getattr(m, name)(x, y), x.astype(np.float32),
              y.astype(np.float32))
    check(lambda m, x, y: m.divmod(x, y), x, y)


def test_division_by_zero_and_inf():
    """Float x // 0 is ±inf and x // inf floors (CPython's float divmod); int x % 0 is 0."""
    x = np.array([1.5, -2.0, 0.0, np.inf, -0.0, 3.0], np.float32)
    for y in (0.0, np.inf, -np.inf):
        check(lambda m, x: m.floor_divide(x, y), x, values="jnp")
        check(lambda m, x: m.remainder(x, y), x, values="jnp")
    check(lambda m, x: m.remainder(x, np.array([0, 2, 0], np.int32)),
          np.array([5, -3, 0], np.int32), values="jnp")


def test_bool_and_unsigned_special_cases():
    check(lambda m, x: m.square(x), bools(4))  # bool arithmetic without a bool form: int
    check(lambda m, x: m.power(x, 2), bools(4))
    check(lambda m, x: m.sign(x), np.array([0, 3, 255], np.uint8))
    check_raises(lambda m, x: m.round(x, -1), i32(3), exc=NotImplementedError,
                 match="decimals < 0")


def test_float_floor_divide_exact_multiples():
    x = np.array([1.0, -1.0, 0.3, -0.3, 6.0, 5.5], np.float32)
    y = np.array([0.1, 0.1, 0.1, 0.1, 3.0, -2.0], np.float32)
    check(lambda m, x, y: m.floor_divide(x, y), x, y)


# ------------------------------------------------------------- promotion with weak scalars

WEAK_CASES = [
    ("f32 * int", lambda m, x: m.multiply(x, 2), f32(3)),
    ("f32 + float", lambda m, x: m.add(x, 1.5), f32(3)),
    ("i32 + float", lambda m, x: m.add(x, 1.5), i32(3)),
    ("i32 * int", lambda m, x: m.multiply(x, 3), i32(3)),
    ("bool + int", lambda m, x: m.add(x, 1), bools(3)),
    ("bool * float", lambda m, x: m.multiply(x, 2.5), bools(3)),
    ("int - i32", lambda m, x: m.subtract(10, x), i32(3)),
    ("float / i32", lambda m, x: m.divide(1.0, x), np.array([1, 2, 4], np.int32)),
    ("i32 ** float", lambda m, x: m.power(x, 0.5), np.array([1, 4, 9], np.int32)),
    ("f32 ** int", lambda m, x: m.power(x, 3), f32(3)),
    ("f32 ** -2", lambda m, x: m.power(x, -2), f32(3, lo=0.5, hi=2)),
    ("i32 ** 0", lambda m, x: m.power(x, 0), i32(3)),
    ("f32 max int", lambda m, x: m.maximum(x, 0), f32(3)),
    ("f32 < int", lambda m, x: m.less(x, 1), f32(3)),
    ("i8 + int", lambda m, x: m.add(x, 1), np.array([1, 2, 3], np.int8)),
    ("i8 + f32", lambda m, x: m.add(x, np.float32(1)), np.array([1, 2, 3], np.int8)),
    ("i32 + f32 array", lambda m, x: m.add(x, np.ones(3, np.float32)), i32(3)),
    ("u8 + i8", lambda m, x: m.add(x, np.int8(-1)), np.array([1, 2, 3], np.uint8)),
    ("f16 * float", lambda m, x: m.multiply(x, 2.0), np.array([1, 2], np.float16)),
    ("0-d i32 + float", lambda m, x: m.add(x, 0.5), np.int32(3)),
    ("f64 narrowed", lambda m, x: m.add(x, 1), np.array([1.5, 2.5], np.float64)),
    ("i64 narrowed", lambda m, x: m.add(x, 1), np.array([1, 2], np.int64)),
    # NumPy scalars are strong, though np.float64 subclasses float: f16 + f32 is f32
    ("f16 + np.float64", lambda m, x: m.add(x, np.float64(2)), np.array([1, 2], np.float16)),
    ("f16 * np.complex128", lambda m, x: m.multiply(x, np.complex128(2j)),
     np.array([1, 2], np.float16)),
]


def test_numpy_scalar_argument_is_strong():
    h = np.array([1, 2], np.float16)
    check(lambda m, h, s: m.add(h, s), h, np.float64(2.5), rtol=1e-3)


@pytest.mark.parametrize("name,fn,x", WEAK_CASES)
def test_weak_scalar_promotion(name, fn, x):
    check(fn, x, rtol=1e-3 if x.dtype == np.float16 else 1e-6)


def test_ops_on_python_scalars_stay_weak():
    """tnp.multiply(2, 3.0) is a weak f32, so adding it to f16 stays f16 (under jit;
    eager results are committed arrays and lose weakness, see eager.py)."""
    h = np.array([1, 2], np.float16)
    check(lambda m, h: m.add(m.multiply(2, 3.0), h), h, eager=False, rtol=1e-3)
    check(lambda m, h: m.maximum(m.sin(0.5), h), h, eager=False, rtol=1e-3)


def test_weak_types_found_by_the_fuzzer():
    """As JAX's promote_dtypes: a weak operand joined with another is converted to the
    result's weak type, so where() of two weak bools is a strong bool; hypot of weak
    scalars stays weak; padding a 0-d array returns it; a pad value takes the array's
    weak type (fuzz jit 576, 626, 663, 748); the logical ops promote before they
    compare with 0, so a 0-d int32 and a Python float give a weak bool (1154)."""
    def fn(m, x):
        return (m.where(x > 0, (x != x) > 0, (x == x) > 0), m.hypot(x[0] * 0.5, x[1] * 0.5),
                m.hypot(3, x > 0), m.logical_not(3), m.reciprocal(m.pad(x[0] * 0.5, 1)),
                m.pad(x * 0.5, 1, constant_values=np.float32(2)), m.logical_or(x[0], 2.0),
                m.logical_and(x, True), m.logical_xor(x[0] * 0.5, 0))
    x = i32(3)
    check(fn, x, eager=False)
    got = tracehlo.jit(lambda x: fn(tnp, x))(x)
    want = jax.eval_shape(lambda x: fn(jnp, x), x)
    assert [g.weak_type for g in got] == [w.weak_type for w in want] == [
        False, True, False, True, True, True, True, False, True]


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "abs", "clip",
                                  "negative", "sin"])
def test_python_scalar_operand(name):
    """A Python scalar through a no-op (floor of an int) still comes back an array."""
    check(lambda m: getattr(m, name)(3), rtol=1e-6)
    check(lambda m: getattr(m, name)(-2.5), rtol=1e-6)


# ------------------------------------------------------------- bitwise and shifts

@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", ["i32", "bool"])
def test_bitwise(name, dtype):
    check(lambda m, x, y: getattr(m, name)(x, y), sample(dtype, 2, 3), sample(dtype, 1, 3))


@pytest.mark.parametrize("dtype", ["i32", "bool", "u8"])
def test_invert(dtype):
    x = np.array([0, 1, 7, 200], np.uint8) if dtype == "u8" else sample(dtype, 4)
    check(lambda m, x: m.invert(x), x)
    check(lambda m, x: m.bitwise_not(x), x)


def test_shifts():
    x = np.array([1, -8, 255, 3], np.int32)
    s = np.array([0, 1, 3, 4], np.int32)
    check(lambda m, x, s: m.left_shift(x, s), x, s)
    check(lambda m, x, s: m.right_shift(x, s), x, s)
    check(lambda m, x: m.right_shift(x, 1), np.array([255, 128], np.uint8))


def test_bitwise_rejects_float():
    check_raises(lambda m, x: m.bitwise_and(x, x), f32(3), exc=TypeError,
                 match="bitwise_and needs integer or bool")


# ------------------------------------------------------------- where, clip and friends

WHERE_CASES = """
c, x = bools(2, 3), f32(3)
check(lambda m, c, x: m.where(c, x, 0), c, x, eager=EAGER, jit=not EAGER)
check(lambda m, c, x: m.where(c, x, np.int32(7)), c, x, eager=EAGER, jit=not EAGER)
check(lambda m, x: m.where(x > 0, x, -x), f32(2, 3), eager=EAGER, jit=not EAGER)
check(lambda m, c: m.where(c, 1, 2.5), c, eager=EAGER, jit=not EAGER)
check(lambda m, c: m.where(c, 1, 0), bools(3), eager=EAGER, jit=not EAGER)
check(lambda m, x: m.where(x, 1.0, 0.0), i32(4), eager=EAGER, jit=not EAGER)  # x != 0
"""


def test_where_broadcasts_and_promotes():
    exec(WHERE_CASES, {**globals(), "EAGER": True})


def test_where_broadcasts_and_promotes_jit():
    """In a child process: XLA CPU has aborted (`Check failed: has_layout()`) on the
    fused select of a broadcast operand and a broadcast constant."""
    check_in_child("import numpy as np\nEAGER = False\n" + WHERE_CASES,
                   "XLA aborts on the fused where-of-broadcasts module (passes)")


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_clip(dtype):
    x = sample(dtype, 2, 4)
    check(lambda m, x: m.clip(x, -1, 1), x)
    check(lambda m, x: m.clip(x, None, 0), x)
    check(lambda m, x: m.clip(x, np.zeros(4, x.dtype), 1), x)


def test_clip_nan():
    x = np.array([np.nan, -3, 3, 0.5], np.float32)
    check(lambda m, x: m.clip(x, -1, 1), x)


def test_maximum_minimum_nan():
    x = np.array([np.nan, 1, 2], np.float32)
    y = np.array([0, np.nan, 1], np.float32)
    check(lambda m, x, y: m.maximum(x, y), x, y)
    # bools computed in the kernel (not loaded from a byte that holds 2): JAX's add and
    # multiply are `or` and `and`, where XLA's i1 add would wrap True + True to False
    check(lambda m, x: (m.greater_equal(x, x) + m.greater_equal(x, x),
                        m.greater_equal(x, x) * m.less(x, x)), i32(4))
    check(lambda m, x, y: m.minimum(x, y), x, y)


def test_isinf_isnan_isfinite_ints():
    for name in ("isinf", "isnan", "isfinite"):
        check(lambda m, x: getattr(m, name)(x), i32(2, 2))


def test_bool_arithmetic():
    x, y = bools(5), bools(5)
    check(lambda m, x, y: m.add(x, y), x, y)
    check(lambda m, x, y: m.multiply(x, y), x, y)
    check(lambda m, x, y: m.maximum(x, y), x, y)
    # bools computed in the kernel (not loaded from a byte that holds 2): JAX's add and
    # multiply are `or` and `and`, where XLA's i1 add would wrap True + True to False
    check(lambda m, x: (m.greater_equal(x, x) + m.greater_equal(x, x),
                        m.greater_equal(x, x) * m.less(x, x)), i32(4))


def test_misc_math():
    x, y = f32(5), f32(5)
    check(lambda m, x, y: m.hypot(x, y), x, y, rtol=1e-5)
    check(lambda m, x, y: m.copysign(x, y), x, y)
    check(lambda m, x: m.log2(m.abs(x)), x, rtol=1e-5)
    check(lambda m, x: m.log10(m.abs(x)), x, rtol=1e-5)
    check(lambda m, x: m.trunc(x), x)
    check(lambda m, x: m.signbit(x), np.array([-0.0, 0.0, -1, 1], np.float32))
    check(lambda m, x: m.deg2rad(x), x, rtol=1e-6)
    check(lambda m, x, y: m.logaddexp(x, y), x, y, rtol=1e-5)


def test_broadcast_error():
    check_raises(lambda m, x, y: m.add(x, y), f32(2, 3), f32(4), exc=ValueError,
                 match=r"shapes \(2, 3\), \(4,\) cannot be broadcast")


def test_int_negative_power_error():
    check_raises(lambda m, x: m.power(x, -1), i32(3), exc=TypeError,
                 match=r"Integers cannot be raised to negative powers, got "
                       r"integer_pow\(int32\[3\], -1\)")  # JAX's words


def test_non_array_operand_error():
    check_raises(lambda m, x: m.add(x, "a"), f32(3), exc=TypeError,
                 match="str is not an array")
