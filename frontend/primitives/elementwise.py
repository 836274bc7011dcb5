"""Elementwise primitives: arithmetic, math, bitwise, compare, select, clamp, converts.

Operands share one shape, except that rank-0 operands broadcast (`mul %x, 3.0:f32[]`
as in JAX's jaxprs); lowering inserts the broadcast_in_dim. The wrappers take JAX's
lax names; Python scalars adopt the other operands' dtype, as weak types do in JAX.
"""
from __future__ import annotations

import builtins
import operator

from .. import pytree as tree_util
import numpy as np

from .. import ad, dtypes
from ..batching import broadcasting_rule, moveaxis
from ..core import TracehloError, at_user_line, known_value, lift, type_of
from ..ir import ArrayType
from ..lowering import tensor_type
from . import common_dtype, define, scalars_to, unchanged


def _elementwise_shape(prim_name, types):
    shapes = {t.shape for t in types if t.shape != ()}
    if len(shapes) > 1:
        raise TypeError(f"{prim_name} needs operands of one shape (or rank 0), got "
                        + ", ".join(str(t) for t in types))
    return shapes.pop() if shapes else ()


def _same_dtype(prim_name, types):
    kinds = {t.dtype for t in types}
    if len(kinds) > 1:
        raise TypeError(f"{prim_name} needs operands of one dtype, got "
                        + ", ".join(str(t) for t in types))
    return types[0].dtype


_ACCEPTS = {  # what a primitive's operands may be, as its error message names it
    "float": dtypes.is_float, "inexact": dtypes.is_inexact, "complex": dtypes.is_complex,
    "f32 or f64": lambda d: d in (dtypes.float32, dtypes.float64),
    "f32, f64 or complex": lambda d: d in (dtypes.float32, dtypes.float64)
    or dtypes.is_complex(d),
    "signed": lambda d: dtypes.is_inexact(d) or d.kind == "i",
    "number": lambda d: d != dtypes.bool_,
    "real number": lambda d: d != dtypes.bool_ and not dtypes.is_complex(d),
    "int": dtypes.is_int,
    "intbool": lambda d: dtypes.is_int(d) or d == dtypes.bool_, "any": lambda d: True}


def _check_dtype(prim_name, dtype, allowed: str):
    if not _ACCEPTS[allowed](dtype):
        raise TypeError(f"{prim_name} does not accept {dtypes.SHORT_NAMES[dtype]} operands "
                        f"(it takes {allowed} dtypes)")


def _real_dtype(dtype):
    """The component dtype of a complex dtype (float32 for complex64); others unchanged."""
    return np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _operands_broadcast(ctx, eqn, operands, types=None):
    """Operand names with rank-0 operands broadcast to the result shape; `types`: the
    operands' own, where the rule computed one in place of an input."""
    out = eqn.outputs[0].type
    types = [a.type for a in eqn.inputs] if types is None else types
    return [ctx.broadcast(name, t, out) if t.shape == () and out.shape != () else name
            for name, t in zip(operands, types)]


def _signature(in_types, out_type) -> str:
    return f"({', '.join(tensor_type(t) for t in in_types)}) -> {tensor_type(out_type)}"


def _shape_rule(name, arity, allowed, out_dtype=lambda dtype: dtype):
    """The shape rule of an elementwise primitive. `out_dtype` maps the operands' dtype
    to the result's; the result is weak when all operands are (a bool one too, as in JAX)."""

    def shape_rule(*types):
        if len(types) != arity:
            raise TypeError(f"{name} takes {arity} operands, got {len(types)}")
        dtype = _same_dtype(name, types)
        _check_dtype(name, dtype, allowed)
        out = np.dtype(out_dtype(dtype))
        return ArrayType(_elementwise_shape(name, types), out, all(t.weak for t in types))
    return shape_rule


def _elementwise(name, mlir_op, arity, allowed, out_dtype=lambda dtype: dtype, deriv=None,
                 linear=None):
    """One elementwise primitive lowered to one op, and its wrapper. `deriv`: see
    _derivative_rules; `linear`: see ad.linear_in."""

    def lowering(ctx, eqn, *operands):
        operands = _operands_broadcast(ctx, eqn, operands)
        out = eqn.outputs[0].type
        in_types = [ArrayType(out.shape, a.type.dtype) for a in eqn.inputs]
        if mlir_op.startswith("chlo."):  # chlo has no uniform pretty syntax: use generic
            return ctx.op(f'"{mlir_op}"({", ".join(operands)}) : {_signature(in_types, out)}')
        return ctx.op(f"{mlir_op} {', '.join(operands)} : {_signature(in_types, out)}")

    prim = define(name, shape=_shape_rule(name, arity, allowed, out_dtype), lower=lowering,
                  **_derivative_rules(deriv, lambda *xs: prim.bind(*xs)),
                  batch=broadcasting_rule, linear=linear)
    return prim, _nary(prim)


def _derivative_rules(deriv, apply) -> dict:
    """The jvp and vjp rules of an elementwise primitive (`apply` binds it) from `deriv`:
    a dict of rules as define takes them, "zero" (the result does not change with the
    operands), or one function per operand,
    `scale(g, out, *operands)`, that multiplies a tangent g by the partial derivative
    (None for an operand that has none, such as select's predicate). Multiplying by a
    derivative is its own transpose, so the same functions scale cotangents, which a
    rank-0 operand then sums. An entry may be a pair (jvp scale, vjp scale) where JAX's
    vjp (its jvp transposed) associates the products otherwise, so that derivatives
    round as JAX's."""
    if deriv is None or isinstance(deriv, dict):
        return deriv or {}
    if deriv == "zero":
        return {"jvp": ad.zero_jvp}
    pairs = [s if isinstance(s, tuple) else (s, s) for s in deriv]

    def jvp(primals, tangents):
        out = apply(*primals)
        t_out = None
        for (scale, _), t in zip(pairs, tangents):
            if scale is not None and not ad.is_zero(t):
                term = scale(t, out, *primals)
                t_out = term if t_out is None else add(t_out, term)
        if t_out is None:
            return [out], [ad.Zero.like(out)]
        from .shape_ops import broadcast_in_dim
        shape = type_of(out).shape
        return [out], [t_out if type_of(t_out).shape == shape else
                       broadcast_in_dim(t_out, shape, ())]

    @ad.takes_needed
    def vjp(cts, primals, outs, needed):
        return [None if scale is None or not need or not dtypes.is_inexact(type_of(x).dtype)
                else _sum_to_rank0(scale(cts[0], outs[0], *primals), x)
                for (_, scale), x, need in zip(pairs, primals, needed)]
    return {"jvp": jvp, "vjp": vjp}


def _sum_to_rank0(ct, x):
    """The cotangent of an operand: summed if it is a rank-0 operand that broadcast."""
    from .reductions import reduce_sum
    ndim = type_of(ct).ndim
    if type_of(x).ndim == 0 and ndim:
        return reduce_sum(ct, tuple(range(ndim)))
    return ct


def _where_chosen(g, x, y, out):
    """g times the derivative of max/min wrt x, as JAX's g * (x == out) / (1 + (y ==
    out)): a tie splits g in halves and elsewhere g * 0 is -0 for a negative g. The
    quotient is exactly 0, 0.5 or 1, so the product is selected from g * 0.5, g and
    g * 0: the same bits, without a divide that the fusion passes keep as a kernel of
    its own (JAX's form cost the MLP training step two kernels)."""
    dtype = type_of(g).dtype
    return select(eq(x, out), select(eq(y, out), mul(g, np.full((), 0.5, dtype)), g),
                  mul(g, np.zeros((), dtype)))


def _nary(prim):
    def wrapper(*xs):
        return prim.bind(*scalars_to(common_dtype(xs), *xs))
    wrapper.__name__ = prim.name
    wrapper.__doc__ = f"The `{prim.name}` primitive, elementwise."
    return wrapper


def _square(x):
    """x * x as JAX's square primitive, whose derivative is g * (2 * x) (one product, not
    x * g + g * x), which integer_pow(x, 2) shares."""
    return integer_pow(x, 2)


def _plus_times(c, out):
    """c + c * out: tanh's vjp, JAX's jvp (g + g * out) * (1 - out) transposed."""
    return add(c, mul(c, out))


def _scaled_deriv(c, factor):
    """The deriv of a derivative c * factor(out, x) with a constant c (of x's dtype), as
    JAX writes it: c * (g * factor) forward, (c * ct) * factor transposed."""
    def const(x):
        return np.asarray(c, type_of(x).dtype)
    return [(lambda g, out, x: mul(const(x), mul(g, factor(out, x))),
             lambda g, out, x: mul(mul(const(x), g), factor(out, x)))]


# name, StableHLO/CHLO op, arity, dtypes accepted, derivative (see _derivative_rules)
neg_p, neg = _elementwise("neg", "stablehlo.negate", 1, "number",
    deriv=[lambda g, out, x: neg(g)], linear="all")
abs_p, abs = _elementwise("abs", "stablehlo.abs", 1, "signed", out_dtype=_real_dtype,
    deriv={"jvp": lambda xs, ts: _abs_jvp(xs[0], ts[0]),
           "vjp": lambda cts, xs, outs: [_abs_scale(cts[0], outs[0], xs[0])]})
floor_p, floor = _elementwise("floor", "stablehlo.floor", 1, "float", deriv="zero")
ceil_p, ceil = _elementwise("ceil", "stablehlo.ceil", 1, "float", deriv="zero")
exp_p, exp = _elementwise("exp", "stablehlo.exponential", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, out)])
log_p, log = _elementwise("log", "stablehlo.log", 1, "inexact",
    deriv=[lambda g, out, x: div(g, x)])
log1p_p, log1p = _elementwise("log1p", "stablehlo.log_plus_one", 1, "inexact",
    deriv=[lambda g, out, x: div(g, add(x, 1))])
expm1_p, expm1 = _elementwise("expm1", "stablehlo.exponential_minus_one", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, add(out, 1))])
sqrt_p, sqrt = _elementwise("sqrt", "stablehlo.sqrt", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, div(0.5, out))])
rsqrt_p, rsqrt = _elementwise("rsqrt", "stablehlo.rsqrt", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, mul(-0.5, div(out, x)))])
cbrt_p, cbrt = _elementwise("cbrt", "stablehlo.cbrt", 1, "float",
    deriv=[lambda g, out, x: mul(g, mul(1 / 3, integer_pow(out, -2)))])
sin_p, sin = _elementwise("sin", "stablehlo.sine", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, cos(x))])
cos_p, cos = _elementwise("cos", "stablehlo.cosine", 1, "inexact",
    deriv=[lambda g, out, x: neg(mul(g, sin(x)))])
tan_p, tan = _elementwise("tan", "stablehlo.tan", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, add(1, _square(out)))])
tanh_p, tanh = _elementwise("tanh", "stablehlo.tanh", 1, "inexact",
    deriv=[(lambda g, out, x: mul(add(g, mul(g, out)), sub(1, out)),
            lambda g, out, x: _plus_times(mul(g, sub(1, out)), out))])
asin_p, asin = _elementwise("asin", "chlo.asin", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, rsqrt(sub(1, _square(x))))])
acos_p, acos = _elementwise("acos", "chlo.acos", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, neg(rsqrt(sub(1, _square(x)))))])
atan_p, atan = _elementwise("atan", "chlo.atan", 1, "inexact",
    deriv=[lambda g, out, x: div(g, add(1, _square(x)))])
sinh_p, sinh = _elementwise("sinh", "chlo.sinh", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, cosh(x))])
cosh_p, cosh = _elementwise("cosh", "chlo.cosh", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, sinh(x))])
asinh_p, asinh = _elementwise("asinh", "chlo.asinh", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, rsqrt(add(_square(x), 1)))])
acosh_p, acosh = _elementwise("acosh", "chlo.acosh", 1, "inexact",
    deriv=[lambda g, out, x: mul(g, rsqrt(sub(_square(x), 1)))])
atanh_p, atanh = _elementwise("atanh", "chlo.atanh", 1, "inexact",
    deriv=[(lambda g, out, x: mul(integer_pow(add(1, x), -1), div(g, sub(1, x))),
            lambda g, out, x: div(mul(integer_pow(add(1, x), -1), g), sub(1, x)))])
erf_p, erf = _elementwise("erf", "chlo.erf", 1, "float",
    deriv=_scaled_deriv(2 / np.sqrt(np.pi), lambda out, x: exp(neg(_square(x)))))
erfc_p, erfc = _elementwise("erfc", "chlo.erfc", 1, "float",
    deriv=_scaled_deriv(-2 / np.sqrt(np.pi), lambda out, x: exp(neg(_square(x)))))
lgamma_p, lgamma = _elementwise("lgamma", "chlo.lgamma", 1, "float",
    deriv=[lambda g, out, x: mul(g, digamma(x))])
digamma_p, digamma = _elementwise("digamma", "chlo.digamma", 1, "float",
    deriv=[lambda g, out, x: mul(g, polygamma(1, x))])
is_finite_p, is_finite = _elementwise("is_finite", "stablehlo.is_finite", 1, "float",
                                      out_dtype=lambda dtype: dtypes.bool_, deriv="zero")
not_p, bitwise_not = _elementwise("not", "stablehlo.not", 1, "intbool", deriv="zero")
population_count_p, population_count = _elementwise("population_count", "stablehlo.popcnt",
                                                     1, "int", deriv="zero")

add_p, add = _elementwise("add", "stablehlo.add", 2, "number",
    deriv=[lambda g, out, x, y: g, lambda g, out, x, y: g], linear="all")
sub_p, sub = _elementwise("sub", "stablehlo.subtract", 2, "number",
    deriv=[lambda g, out, x, y: g, lambda g, out, x, y: neg(g)], linear="all")
mul_p, mul = _elementwise("mul", "stablehlo.multiply", 2, "number",
    deriv=[lambda g, out, x, y: mul(g, y), lambda g, out, x, y: mul(x, g)], linear="each")
max_p, max = _elementwise("max", "stablehlo.maximum", 2, "any",
    deriv=[lambda g, out, x, y: _where_chosen(g, x, y, out),
           lambda g, out, x, y: _where_chosen(g, y, x, out)])
min_p, min = _elementwise("min", "stablehlo.minimum", 2, "any",
    deriv=[lambda g, out, x, y: _where_chosen(g, x, y, out),
           lambda g, out, x, y: _where_chosen(g, y, x, out)])
atan2_p, atan2 = _elementwise("atan2", "stablehlo.atan2", 2, "inexact",
    deriv=[lambda g, out, x, y: mul(g, div(y, add(_square(x), _square(y)))),
           lambda g, out, x, y: mul(g, div(neg(x), add(_square(x), _square(y))))])
polygamma_p, polygamma = _elementwise("polygamma", "chlo.polygamma", 2, "float",
    deriv=[lambda g, out, m, x: _polygamma_dm(),
           lambda g, out, m, x: mul(g, polygamma(add(m, 1), x))])
nextafter_p, nextafter = _elementwise("nextafter", "chlo.next_after", 2, "float", deriv="zero")
and_p, bitwise_and = _elementwise("and", "stablehlo.and", 2, "intbool", deriv="zero")
or_p, bitwise_or = _elementwise("or", "stablehlo.or", 2, "intbool", deriv="zero")
xor_p, bitwise_xor = _elementwise("xor", "stablehlo.xor", 2, "intbool", deriv="zero")
shift_left_p, shift_left = _elementwise("shift_left", "stablehlo.shift_left", 2, "int",
    deriv="zero")
shift_right_arithmetic_p, shift_right_arithmetic = _elementwise(
    "shift_right_arithmetic", "stablehlo.shift_right_arithmetic", 2, "int", deriv="zero")
shift_right_logical_p, shift_right_logical = _elementwise(
    "shift_right_logical", "stablehlo.shift_right_logical", 2, "int", deriv="zero")


def _polygamma_dm():
    """polygamma(m, x) is defined for integer m only: no derivative in m, as in JAX."""
    raise ValueError(at_user_line("polygamma gradient with respect to m is not supported"))


def _abs_scale(g, out, x):
    """g times d|x|/dx, as JAX defines it: for reals g where x >= 0 (1 at the kink,
    0 or -0), else -g (nan x too); conj(x)/|x| for complex x (whose tangent then keeps
    its real part, and whose real cotangent becomes complex)."""
    if not dtypes.is_complex(type_of(x).dtype):
        return select(ge(x, 0), g, neg(g))
    unit = div(conj(x), complex(select(eq(out, 0), 1, out), 0))
    return real(mul(g, unit)) if dtypes.is_complex(type_of(g).dtype) else mul(complex(g, 0), unit)


def _abs_jvp(x, t):
    out = abs(x)
    return [out], [_abs_scale(t, out, x)]


def _trunc(x):
    """x rounded toward zero."""
    return mul(sign(x), floor(abs(x)))


# pow: an inexact base, and an exponent of its dtype or of an integer dtype (lax.pow's
# `x ** n` for an array n of ints, which lowering converts to the base's dtype).
def _pow_shape(x, y):
    for position, t, accepted in ((0, x, "floating, complexfloating"),
                                  (1, y, "integer, floating, complexfloating")):
        if not (dtypes.is_inexact(t.dtype) or position and dtypes.is_int(t.dtype)):
            raise TypeError(f"pow does not accept dtype {t.dtype.name} at position {position}. "
                            f"Accepted dtypes at position {position} are subtypes of {accepted}.")
    if dtypes.is_inexact(y.dtype) and y.dtype != x.dtype:
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and the "
            "second argument must have an inexact or integer dtype, and two inexact dtypes "
            f"must match, but got {x.dtype.name} and {y.dtype.name} respectively.")
    return ArrayType(_elementwise_shape("pow", (x, y)), x.dtype, x.weak and y.weak)


def _pow_lowering(ctx, eqn, x, y):
    x, y = _operands_broadcast(ctx, eqn, (x, y))
    out = eqn.outputs[0].type
    exponent = ArrayType(out.shape, eqn.inputs[1].type.dtype)
    if exponent.dtype != out.dtype:
        y = ctx.op(f"stablehlo.convert {y} : {_signature([exponent], out)}")
    return ctx.op(f"stablehlo.power {x}, {y} : {_signature([out, out], out)}")


def _pow_dx(x, y):
    """d x**y / dx = y * x**(y - 1) as JAX's: for an integer y, 0 where y == 0 (not
    0 * inf at x == 0); for an inexact y, 0 * inf is nan there, as in JAX."""
    if not dtypes.is_int(type_of(y).dtype):
        return mul(y, pow(x, sub(y, 1)))
    y = convert_element_type(y, type_of(x).dtype)
    return select(eq(y, 0), 0, mul(select(eq(y, 0), 1, y), pow(x, sub(y, 1))))


pow_p = define("pow", shape=_pow_shape, lower=_pow_lowering, batch=broadcasting_rule,
               **_derivative_rules([lambda g, out, x, y: mul(g, _pow_dx(x, y)),
                                    lambda g, out, x, y: mul(g, mul(log(select(eq(x, 0), 1, x)),
                                                                    out))],
                                   lambda *xs: pow_p.bind(*xs)))


def pow(x, y):
    """The `pow` primitive, elementwise. A Python scalar operand as in JAX's lax.pow: a
    float takes the other operand's inexact dtype; an int keeps its default integer type,
    so `pow(x, 2)` is x to an integer power (whose derivative at y == 0 is 0)."""
    return pow_p.bind(_pow_operand(x, y), _pow_operand(y, x))


def _pow_operand(v, other):
    if not dtypes.is_python_scalar(v):
        return v
    dtype = dtypes.python_scalar_dtype(v)
    if (dtypes.is_inexact(dtype) and not dtypes.is_python_scalar(other)
            and dtypes.is_inexact(type_of(other).dtype)):
        dtype = type_of(other).dtype
    return lift(v, dtype, weak=dtypes.is_weak_scalar(v))


# complex numbers: parts, and a complex from its parts
# Their transposes as in JAX: real -> complex(ct, 0), imag -> complex(0, -ct).
real_p, real = _elementwise("real", "stablehlo.real", 1, "complex", out_dtype=_real_dtype,
    deriv={"jvp": ad.linear_jvp, "vjp": lambda cts, xs, outs: [complex(cts[0], 0)]})
imag_p, imag = _elementwise("imag", "stablehlo.imag", 1, "complex", out_dtype=_real_dtype,
    deriv={"jvp": ad.linear_jvp, "vjp": lambda cts, xs, outs: [complex(0, neg(cts[0]))]})
complex_p, complex = _elementwise("complex", "stablehlo.complex", 2, "f32 or f64",
                                  out_dtype=_complex_dtype, deriv={
    "jvp": ad.linear_jvp,
    "vjp": lambda cts, xs, outs: [_sum_to_rank0(real(cts[0]), xs[0]),
                                  _sum_to_rank0(neg(imag(cts[0])), xs[1])]})


# conj: the complex conjugate; a real operand becomes complex, as in JAX.
def _conj_shape(x):
    _check_dtype("conj", x.dtype, "f32, f64 or complex")
    return ArrayType(x.shape, _complex_dtype(x.dtype), x.weak)


def _conj_lowering(ctx, eqn, x):
    return lower_conj(ctx, x, eqn.inputs[0].type)


def lower_conj(ctx, x, src: ArrayType) -> str:
    """StableHLO has no conjugate op: (re, -im) of x, of type src (a real x: (x, 0))."""
    out = ArrayType(src.shape, _complex_dtype(src.dtype))
    part = ArrayType(out.shape, _real_dtype(out.dtype))
    if dtypes.is_complex(src.dtype):
        re = ctx.op(f"stablehlo.real {x} : {_signature([src], part)}")
        im = ctx.op(f"stablehlo.imag {x} : {_signature([src], part)}")
        im = ctx.op(f"stablehlo.negate {im} : {tensor_type(part)}")
    else:
        re, im = x, ctx.constant(0, part.dtype, part.shape)
    return ctx.op(f"stablehlo.complex {re}, {im} : {_signature([part, part], out)}")


conj_p = define("conj", shape=_conj_shape, lower=_conj_lowering,
                jvp=ad.linear_jvp, vjp=lambda cts, xs, outs: [
                    conj(cts[0]) if dtypes.is_complex(type_of(xs[0]).dtype) else real(cts[0])],
                batch=broadcasting_rule)
conj = _nary(conj_p)


# exp2 has no StableHLO op: exp(x * ln 2), as JAX lowers it.
def _exp2_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    ln2 = ctx.broadcast(ctx.constant(np.log(2.0), t.dtype), ArrayType((), t.dtype), t) \
        if t.shape else ctx.constant(np.log(2.0), t.dtype)
    scaled = ctx.op(f"stablehlo.multiply {x}, {ln2} : {tensor_type(t)}")
    return ctx.op(f"stablehlo.exponential {scaled} : {tensor_type(t)}")


exp2_p = define("exp2", shape=_shape_rule("exp2", 1, "inexact"), lower=_exp2_lowering,
                **_derivative_rules(_scaled_deriv(np.log(2), lambda out, x: out),
                                    lambda x: exp2_p.bind(x)),
                batch=broadcasting_rule)
exp2 = _nary(exp2_p)


# logistic as JAX lowers it on every platform, 1 / (1 + exp(-x)), not stablehlo.logistic:
# XLA expands that op its own way (bf16 sigmoid differed from JAX's jit by an ulp), and
# XLA CPU's loop emitter cannot fuse it.
def _logistic_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    one = ctx.constant(1, t.dtype)
    ones = ctx.broadcast(one, ArrayType((), t.dtype), t) if t.shape else one
    negated = ctx.op(f"stablehlo.negate {x} : {tensor_type(t)}")
    exp_negated = ctx.op(f"stablehlo.exponential {negated} : {tensor_type(t)}")
    denominator = ctx.op(f"stablehlo.add {ones}, {exp_negated} : {tensor_type(t)}")
    return ctx.op(f"stablehlo.divide {ones}, {denominator} : {tensor_type(t)}")


logistic_p = define("logistic", shape=_shape_rule("logistic", 1, "inexact"),
                    lower=_logistic_lowering,
                    **_derivative_rules([lambda g, out, x: mul(g, mul(out, sub(1, out)))],
                                        lambda x: logistic_p.bind(x)),
                    batch=broadcasting_rule)
logistic = _nary(logistic_p)


# erf_inv is the polynomial chlo.erf_inv legalizes to in jaxlib's XLA (StableHLO's
# ChloLegalizeToStablehlo, erfInv32 and erfInv64): Giles' single-precision one for f32,
# and for f16 and bf16 computed in f32, his double-precision one for f64, with chlo's
# constants and multiply-adds. As plain StableHLO our passes fuse it into its
# neighbours' kernel, where XLA contracts the multiply-adds into FMAs as in JAX's jitted
# program, bit for bit (normal samples); left as chlo, XLA expanded it into one kernel
# per op, unfused and uncontracted. chlo selects each coefficient between the
# branches' (f32: w < 5 or not; f64: w < 6.25, w < 16 or not, the shorter polynomials
# skipping the last steps); we evaluate each branch's polynomial and select once, the
# same arithmetic per element, because a fused select reads its on_true operand from
# outside the fusion (passes/capability.py) and the coefficient selects were as many
# materialized broadcasts.
_ERF_INV_W_SMALL = 5.0  # w = -log1p(-x*x) below it: polynomial in w - 2.5, else sqrt(w) - 3
_ERF_INV_F32 = [  # coefficients (w small, w large), highest degree first
    (2.81022636e-08, -0.000200214257), (3.43273939e-07, 0.000100950558),
    (-3.5233877e-06, 0.00134934322), (-4.39150654e-06, -0.00367342844),
    (0.00021858087, 0.00573950773), (-0.00125372503, -0.0076224613),
    (-0.00417768164, 0.00943887047), (0.246640727, 1.00167406),
    (1.50140941, 2.83297682)]
# f64 coefficients, highest degree first: w < 6.25 (a polynomial in w - 3.125), w < 16
# (in sqrt(w) - 3.25), else (in sqrt(w) - 5)
_ERF_INV_F64 = (
    [-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356],
    [2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635],
    [-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221])


def _erf_inv_lowering(ctx, eqn, x):
    out = eqn.outputs[0].type
    t = ArrayType(out.shape, dtypes.float64 if out.dtype == dtypes.float64
                  else dtypes.float32)
    tt, b = tensor_type(t), ArrayType(out.shape, dtypes.bool_)
    if out.dtype != t.dtype:
        x = ctx.op(f"stablehlo.convert {x} : {_signature([out], t)}")

    def const(value):  # a scalar broadcast, as JAX writes constants: fusions take it in
        scalar = ctx.constant(value, t.dtype)
        return ctx.broadcast(scalar, ArrayType((), t.dtype), t) if t.shape else scalar

    def op(name, *operands):
        return ctx.op(f"stablehlo.{name} {', '.join(operands)} : {tt}")

    def compare(direction, a, c):
        return ctx.op(f"stablehlo.compare {direction}, {a}, {const(c)}, FLOAT : "
                      f"{_signature([t, t], b)}")

    def select(p, a, c):
        return ctx.op(f"stablehlo.select {p}, {a}, {c} : ({tensor_type(b)}, {tt}, {tt}) -> {tt}")

    def horner(coeffs, v):  # c0 v^n + ... + cn as c_k + p * v, chlo's operand order
        p = const(coeffs[0])
        for c in coeffs[1:]:
            p = op("add", const(c), op("multiply", p, v))
        return p

    at_pole = compare("EQ", op("abs", x), 1.0)
    infinite = op("multiply", x, const(np.inf))
    w = op("negate", op("log_plus_one", op("multiply", x, op("negate", x))))
    if t.dtype == dtypes.float64:
        small, medium = compare("LT", w, 6.25), compare("LT", w, 16.0)
        lo, mid, hi = _ERF_INV_F64
        root = op("sqrt", w)
        p = select(small, horner(lo, op("subtract", w, const(3.125))),
                   select(medium, horner(mid, op("subtract", root, const(3.25))),
                          horner(hi, op("subtract", root, const(5.0)))))
    else:
        small = compare("LT", w, _ERF_INV_W_SMALL)
        lo, hi = zip(*_ERF_INV_F32)
        p = select(small, horner(lo, op("subtract", w, const(2.5))),
                   horner(hi, op("subtract", op("sqrt", w), const(3.0))))
    y = select(at_pole, infinite, op("multiply", p, x))
    if out.dtype != t.dtype:
        y = ctx.op(f"stablehlo.convert {y} : {_signature([t], out)}")
    return y


erf_inv_p = define("erf_inv", shape=_shape_rule("erf_inv", 1, "float"),
                   lower=_erf_inv_lowering, **_derivative_rules(
                       _scaled_deriv(np.sqrt(np.pi) / 2, lambda out, x: exp(_square(out))),
                       lambda x: erf_inv_p.bind(x)),
                   batch=broadcasting_rule)
erf_inv = _nary(erf_inv_p)


# div and rem. XLA's constant folder dies (SIGFPE) on an integer division by zero or of
# INT_MIN by -1, so no such divisor reaches it: it becomes 1, and the result is what XLA
# computes at run time: x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN (= x / 1),
# INT_MIN % -1 = 0 (= x % 1). A constant divisor that is neither needs no guard (x // 4
# in unravel_index: the guard's ops were most of nonzero's program).
def _division_lowering(mlir_op, remainder):
    def lowering(ctx, eqn, x, y):
        x, y = _operands_broadcast(ctx, eqn, (x, y))
        t = eqn.outputs[0].type
        tt = tensor_type(t)
        divisor = ctx.splat_value(y)
        if not dtypes.is_int(t.dtype) or (
                divisor is not None and divisor != 0 and (t.dtype.kind == "u" or divisor != -1)):
            return ctx.op(f"{mlir_op} {x}, {y} : {tt}")
        b = ArrayType(t.shape, dtypes.bool_)
        tb = tensor_type(b)

        def const(value):
            return ctx.constant(np.asarray(value).astype(t.dtype), t.dtype, t.shape)

        def equal(a, value):
            return ctx.op(f"stablehlo.compare EQ, {a}, {const(value)}, "
                          f"{compare_type(t.dtype)} : {_signature([t, t], b)}")

        by_zero = unsafe = equal(y, 0)
        if t.dtype.kind == "i":
            overflow = ctx.op(f"stablehlo.and {equal(x, np.iinfo(t.dtype).min)}, "
                              f"{equal(y, -1)} : {tb}")
            unsafe = ctx.op(f"stablehlo.or {by_zero}, {overflow} : {tb}")
        select_type = f"({tb}, {tt}, {tt}) -> {tt}"
        y = ctx.op(f"stablehlo.select {unsafe}, {const(1)}, {y} : {select_type}")
        result = ctx.op(f"{mlir_op} {x}, {y} : {tt}")
        return ctx.op(f"stablehlo.select {by_zero}, {x if remainder else const(-1)}, "
                      f"{result} : {select_type}")
    return lowering


div_p = define("div", shape=_shape_rule("div", 2, "number"),
               lower=_division_lowering("stablehlo.divide", remainder=False),
               **_derivative_rules([lambda g, out, x, y: div(g, y), (
                   lambda g, out, x, y: mul(mul(neg(g), x), integer_pow(y, -2)),
                   lambda g, out, x, y: neg(mul(mul(g, integer_pow(y, -2)), x)))],
                                   lambda *xs: div_p.bind(*xs)),
               batch=broadcasting_rule, linear=(0,))
div = _nary(div_p)
rem_p = define("rem", shape=_shape_rule("rem", 2, "real number"),
               lower=_division_lowering("stablehlo.remainder", remainder=True),
               **_derivative_rules([lambda g, out, x, y: g,
                                    lambda g, out, x, y: neg(mul(g, _trunc(div(x, y))))],
                                   lambda *xs: rem_p.bind(*xs)),
               batch=broadcasting_rule)
rem = _nary(rem_p)


# sign: stablehlo.sign takes no unsigned type, where the sign is min(x, 1).
def _sign_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    if dtypes.is_unsigned(t.dtype):
        one = ctx.constant(1, t.dtype, t.shape)
        return ctx.op(f"stablehlo.minimum {x}, {one} : {tensor_type(t)}")
    return ctx.op(f"stablehlo.sign {x} : {tensor_type(t)}")


sign_p = define("sign", shape=_shape_rule("sign", 1, "number"), lower=_sign_lowering,
                jvp=ad.zero_jvp,
                batch=broadcasting_rule)
sign = _nary(sign_p)


# integer_pow[y]: x ** y for a static integer y, as JAX's lax.integer_pow: multiplies by
# repeated squaring (one over that for y < 0); its derivative y * x ** (y - 1) is one
# integer_pow, so derivatives round and overflow as JAX's do (cbrt's second derivative
# at 0 is -inf, not 0 * inf; x ** 3's gradient is 3 * x ** 2, not a product rule sum).
def _integer_pow_shape(x, *, y):
    t = _shape_rule("integer_pow", 1, "number")(x)
    if y < 0 and not dtypes.is_inexact(t.dtype):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({np.dtype(t.dtype).name}{list(t.shape)}, {y})")
    return t


def _integer_pow_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    tt, y = tensor_type(t), eqn.params["y"]
    if y == 0:
        return ctx.constant(1, t.dtype, t.shape)
    result, k = None, builtins.abs(y)
    while k:
        if k & 1:
            result = x if result is None else ctx.op(f"stablehlo.multiply {result}, {x} : {tt}")
        k >>= 1
        if k:
            x = ctx.op(f"stablehlo.multiply {x}, {x} : {tt}")
    if y < 0:
        result = ctx.op(f"stablehlo.divide {ctx.constant(1, t.dtype, t.shape)}, {result} : {tt}")
    return result


def _integer_pow_scale(g, x, y):
    """g times d x**y / dx, with JAX's cases: g for y == 1, g * (2 * x) for y == 2."""
    if y == 1:
        return g
    return mul(g, mul(np.asarray(y, type_of(x).dtype), x if y == 2 else integer_pow(x, y - 1)))


def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow(x, y)
    if y == 0 or ad.is_zero(t):
        return [out], [ad.Zero.like(out)]
    return [out], [_integer_pow_scale(t, x, y)]


@ad.takes_needed
def _integer_pow_vjp(cts, primals, outs, needed, *, y):
    (x,), (ct,) = primals, cts
    if not needed[0] or not dtypes.is_inexact(type_of(x).dtype):
        return [None]
    return [None if y == 0 else _integer_pow_scale(ct, x, y)]


integer_pow_p = define("integer_pow", shape=_integer_pow_shape, lower=_integer_pow_lowering,
                       jvp=_integer_pow_jvp, vjp=_integer_pow_vjp, batch=broadcasting_rule)


def integer_pow(x, y):
    return integer_pow_p.bind(x, y=operator.index(y))


# round[method]: 'away_from_zero' (lax.round's default) or 'to_nearest_even' (np.round).
def _round_shape(x, *, method):
    if method not in ("away_from_zero", "to_nearest_even"):
        raise ValueError(f"round method must be 'away_from_zero' or 'to_nearest_even', "
                         f"got {method!r}")
    return _shape_rule("round", 1, "float")(x)


def _round_lowering(ctx, eqn, x):
    op = {"away_from_zero": "round_nearest_afz", "to_nearest_even": "round_nearest_even"}
    t = tensor_type(eqn.outputs[0].type)
    return ctx.op(f"stablehlo.{op[eqn.params['method']]} {x} : {t}")


round_p = define("round", shape=_round_shape, lower=_round_lowering, jvp=ad.zero_jvp,
                 batch=broadcasting_rule)


def round(x, rounding_method="away_from_zero"):
    return round_p.bind(x, method=rounding_method)


# compare[direction]: EQ NE LT LE GT GE; the comparison type follows the dtype.
_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_shape(x, y, *, direction):
    if direction not in _DIRECTIONS:
        raise ValueError(f"compare direction must be one of {_DIRECTIONS}, got {direction!r}")
    dtype = _same_dtype("compare", [x, y])
    if dtypes.is_complex(dtype) and direction not in ("EQ", "NE"):
        raise TypeError(f"compare {direction} does not accept complex operands: they have "
                        "no order (compare their real parts or absolute values)")
    return ArrayType(_elementwise_shape("compare", [x, y]), dtypes.bool_, x.weak and y.weak)


def compare_type(dtype) -> str:
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    return "SIGNED" if dtype.kind == "i" else "UNSIGNED"


def _compare_lowering(ctx, eqn, x, y):
    x, y = _operands_broadcast(ctx, eqn, (x, y))
    out = eqn.outputs[0].type
    operand = ArrayType(out.shape, eqn.inputs[0].type.dtype)
    return ctx.op(f"stablehlo.compare {eqn.params['direction']}, {x}, {y}, "
                  f"{compare_type(operand.dtype)} : {_signature([operand, operand], out)}")


compare_p = define("compare", shape=_compare_shape, lower=_compare_lowering,
                   jvp=ad.zero_jvp,
                   batch=broadcasting_rule)


def _compare(direction):
    def wrapper(x, y):
        x, y = scalars_to(common_dtype((x, y)), x, y)
        return compare_p.bind(x, y, direction=direction)
    wrapper.__name__ = direction.lower()
    return wrapper


eq, ne, lt, le, gt, ge = map(_compare, _DIRECTIONS)


# select(pred, on_true, on_false): pred is bool or an integer (JAX's select_n case
# index), of the result's shape or rank 0.
def _select_shape(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_ and not dtypes.is_int(pred.dtype):
        raise TypeError(f"select needs a bool or integer predicate, got {pred}")
    dtype = _same_dtype("select", [on_true, on_false])
    shape = _elementwise_shape("select", [pred, on_true, on_false])
    return ArrayType(shape, dtype, on_true.weak and on_false.weak)


def _select_lowering(ctx, eqn, pred, on_true, on_false):
    """An integer `pred` selects as JAX's select_n lowers it: on_true where pred >= 1."""
    out = eqn.outputs[0].type
    index_type = eqn.inputs[0].type
    bool_type = ArrayType(index_type.shape, dtypes.bool_)
    if index_type.dtype != dtypes.bool_:
        one = ctx.constant(1, index_type.dtype)
        if index_type.shape != ():
            one = ctx.broadcast(one, ArrayType((), index_type.dtype), index_type)
        pred = ctx.op(f"stablehlo.compare GE, {pred}, {one}, "
                      f"{compare_type(index_type.dtype)} : "
                      f"{_signature([index_type, index_type], bool_type)}")
    pred, on_true, on_false = _operands_broadcast(
        ctx, eqn, (pred, on_true, on_false), (bool_type, eqn.inputs[1].type, eqn.inputs[2].type))
    pred_type = ArrayType(out.shape, dtypes.bool_)
    return ctx.op(f"stablehlo.select {pred}, {on_true}, {on_false} : "
                  f"{_signature([pred_type, out, out], out)}")


def _is_case(index_pred, index: int):
    """Where an integer predicate chose case `index` (0: on_false, 1: on_true), for the
    derivative: JAX transposes select_n into select(which == index, g, 0), so a
    predicate outside 0 and 1 passes no derivative to either case, though its value is
    on_true's (at or above 1) or on_false's."""
    return eq(index_pred, np.full((), index, type_of(index_pred).dtype))


def _select_on_true(g, out, p, x, y):
    return select(p if type_of(p).dtype == dtypes.bool_ else _is_case(p, 1), g, 0)


def _select_on_false(g, out, p, x, y):
    return select(p, 0, g) if type_of(p).dtype == dtypes.bool_ else select(_is_case(p, 0), g, 0)


select_p = define("select", shape=_select_shape, lower=_select_lowering,
                  **_derivative_rules([None, _select_on_true, _select_on_false],
                                      lambda *xs: select_p.bind(*xs)),
                  batch=broadcasting_rule, linear=(1, 2))


def select(pred, on_true, on_false):
    on_true, on_false = scalars_to(common_dtype((on_true, on_false)), on_true, on_false)
    return select_p.bind(pred, on_true, on_false)


# select_n(which, *cases): JAX's select_n of three or more cases (an integer which, of
# the cases' shape or rank 0); two cases are select's, one is itself.
def _check_select_n(which, cases):
    """JAX's select_n checks and messages, shapes before dtypes as JAX checks them."""
    if builtins.any(c.shape != cases[0].shape for c in cases):
        raise TypeError("select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    if builtins.any(c.dtype != cases[0].dtype for c in cases):
        raise TypeError("lax.select requires arguments to have the same dtypes, got "
                        f"{', '.join(c.dtype.name for c in cases)}. (Tip: jnp.where is a "
                        "similar function that does automatic type promotion on inputs).")
    if which.dtype != dtypes.bool_ and not dtypes.is_int(which.dtype):
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which.dtype.name}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")


def _select_n_shape(which, *cases):
    _check_select_n(which, cases)
    return ArrayType(cases[0].shape, cases[0].dtype, builtins.all(c.weak for c in cases))


def _select_n_lowering(ctx, eqn, which, *cases):
    """JAX's: a tree of selects, `which < offset + mid` choosing between the halves."""
    out = eqn.outputs[0].type
    which_type = eqn.inputs[0].type
    (which,) = _operands_broadcast(ctx, eqn, [which], [which_type])
    which_type = ArrayType(out.shape, which_type.dtype)
    pred_type = ArrayType(out.shape, dtypes.bool_)

    def tree(offset, cases):
        if len(cases) == 1:
            return cases[0]
        mid = len(cases) // 2
        bound = ctx.constant(offset + mid, which_type.dtype, which_type.shape)
        pred = ctx.op(f"stablehlo.compare LT, {which}, {bound}, "
                      f"{compare_type(which_type.dtype)} : "
                      f"{_signature([which_type, which_type], pred_type)}")
        return ctx.op(f"stablehlo.select {pred}, {tree(offset, cases[:mid])}, "
                      f"{tree(offset + mid, cases[mid:])} : "
                      f"{_signature([pred_type, out, out], out)}")
    return tree(0, list(cases))


def _select_n_jvp(primals, tangents):
    """JAX's: the tangents selected as the values are (a which out of range takes the
    nearest case's, though that case's cotangent below is zero)."""
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if builtins.all(ad.is_zero(t) for t in tangents[1:]):
        return [out], [ad.Zero.like(out)]
    return [out], [select_n_p.bind(which, *map(ad.instantiate, tangents[1:]))]


@ad.takes_needed
def _select_n_vjp(cts, primals, outs, needed):
    which, *cases = primals
    return [None] + [select(_is_case(which, k), cts[0], 0)
                     if need and dtypes.is_inexact(type_of(c).dtype) else None
                     for k, (c, need) in enumerate(zip(cases, needed[1:]))]


select_n_p = define("select_n", shape=_select_n_shape, lower=_select_n_lowering,
                    jvp=_select_n_jvp, vjp=_select_n_vjp, batch=broadcasting_rule,
                    linear=lambda **_: range(1, 2 ** 31))


def select_n(which, *cases):
    """JAX's lax.select_n: cases[which], elementwise; `which` is bool for up to two
    cases, else an integer, of the cases' shape or rank 0."""
    if not cases:
        raise ValueError(at_user_line("select_n() must have at least one case"))
    cases = scalars_to(common_dtype(cases), *cases)
    which_type, case_types = type_of(which), [type_of(c) for c in cases]
    try:
        _check_select_n(which_type, case_types)
    except TypeError as e:
        raise TypeError(at_user_line(str(e))) from None
    if len(cases) == 1:
        return unchanged(cases[0])
    if len(cases) == 2:
        return select_p.bind(which, cases[1], cases[0])
    return select_n_p.bind(which, *cases)


# reduce_precision[exponent_bits, mantissa_bits]: x rounded to the nearest value of a
# float format with those bit counts, as XLA's ReducePrecision; linear, so that (as in
# JAX) tangents and cotangents are rounded the same way.
def _reduce_precision_shape(x, *, exponent_bits, mantissa_bits):
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got "
                         f"{exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision does not accept dtype {x.dtype.name}. Accepted "
                        "dtypes are subtypes of floating.")
    return x


def _reduce_precision_lowering(ctx, eqn, x):
    p = eqn.params
    return ctx.op(f"stablehlo.reduce_precision {x}, format = "
                  f"e{p['exponent_bits']}m{p['mantissa_bits']} : "
                  f"{tensor_type(eqn.outputs[0].type)}")


reduce_precision_p = define(
    "reduce_precision", shape=_reduce_precision_shape, lower=_reduce_precision_lowering,
    jvp=ad.linear_jvp, vjp=lambda cts, primals, outs, **p: [reduce_precision_p.bind(
        cts[0], **p)], batch=broadcasting_rule)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    try:
        bits = dict(exponent_bits=operator.index(exponent_bits),
                    mantissa_bits=operator.index(mantissa_bits))
    except TracehloError:
        raise  # a traced bit count: it names the user's line already
    except TypeError as e:
        raise TypeError(at_user_line(str(e))) from None
    (operand,) = scalars_to(common_dtype([operand]), operand)
    return reduce_precision_p.bind(operand, **bits)


# clamp(min, x, max)
def _clamp_shape(lo, x, hi):
    _same_dtype("clamp", [lo, x, hi])
    return ArrayType(_elementwise_shape("clamp", [lo, x, hi]), x.dtype,
                     lo.weak and x.weak and hi.weak)  # JAX: weak if all three are


def _clamp_lowering(ctx, eqn, lo, x, hi):
    out = eqn.outputs[0].type
    lo, x, hi = _operands_broadcast(ctx, eqn, (lo, x, hi))
    return ctx.op(f"stablehlo.clamp {lo}, {x}, {hi} : {_signature([out] * 3, out)}")


clamp_p = define("clamp", shape=_clamp_shape, lower=_clamp_lowering, **_derivative_rules([
    lambda g, out, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)), g, 0),
    lambda g, out, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, 0),
    lambda g, out, lo, x, hi: select(lt(hi, x), g, 0)], lambda *xs: clamp_p.bind(*xs)),
                 batch=broadcasting_rule)
clamp = _nary(clamp_p)


# convert_element_type[new_dtype, weak_type]
def _convert_shape(x, *, new_dtype, weak_type=False):
    return ArrayType(x.shape, np.dtype(new_dtype), weak_type)


def _convert_lowering(ctx, eqn, x):
    src, dst = eqn.inputs[0].type, eqn.outputs[0].type
    if src.dtype == dst.dtype:  # only the weak flag changes: nothing for XLA to do
        return x
    if dtypes.is_float(src.dtype) and dst.dtype == dtypes.bool_:
        # StableHLO's float->i1 convert truncates; NumPy means x != 0.
        zero = ctx.constant(0, src.dtype, src.shape)
        return ctx.op(f"stablehlo.compare NE, {x}, {zero}, FLOAT : "
                      f"{_signature([src, src], dst)}")
    return ctx.op(f"stablehlo.convert {x} : {_signature([src], dst)}")


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if ad.is_zero(t) or not dtypes.is_inexact(new_dtype):
        return [out], [ad.Zero.like(out)]
    return [out], [convert_element_type(t, new_dtype, weak_type)]


def _convert_vjp(cts, primals, outs, *, new_dtype, weak_type=False):
    dtype = type_of(primals[0]).dtype
    return [convert_element_type(cts[0], dtype, type_of(cts[0]).weak)
            if dtypes.is_inexact(dtype) else None]


convert_element_type_p = define("convert_element_type", shape=_convert_shape,
                                lower=_convert_lowering,
                                jvp=_convert_jvp, vjp=_convert_vjp,
                                batch=broadcasting_rule, linear="all")


def convert_element_type(x, new_dtype, weak_type=False):
    new_dtype = dtypes.canonicalize(new_dtype)
    t = type_of(x)
    if t.dtype == new_dtype and t.weak == weak_type:
        return unchanged(x)
    if t.dtype == new_dtype and t.shape == ():
        # a scalar known while tracing (an inline literal) changes only its weak type:
        # a new literal, as JAX converts a concrete value without an equation
        value = known_value(x)
        if value is not None:
            return lift(value, new_dtype, weak_type)
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


# bitcast_convert_type[new_dtype]: reinterpret the bits. To a narrower dtype a minor axis
# of the width ratio appears; to a wider one the minor axis of that size goes (as in XLA).
def _bitcast_shape(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    old_size, new_size = x.dtype.itemsize, new_dtype.itemsize
    if x.dtype != new_dtype and any(d == dtypes.bool_ or dtypes.is_complex(d)
                                    for d in (x.dtype, new_dtype)):
        raise TypeError(f"bitcast_convert_type of bool or complex values needs the same "
                        f"dtype on both sides, got {dtypes.SHORT_NAMES[x.dtype]} -> "
                        f"{dtypes.SHORT_NAMES[new_dtype]}")
    if new_size < old_size:
        return ArrayType(x.shape + (old_size // new_size,), new_dtype)
    if new_size > old_size and x.shape[-1:] != (new_size // old_size,):
        raise TypeError(f"bitcast_convert_type from {x} to the wider "
                        f"{dtypes.SHORT_NAMES[new_dtype]} needs a minor axis of size "
                        f"{new_size // old_size}")
    return ArrayType(x.shape[:-1] if new_size > old_size else x.shape, new_dtype)


def _bitcast_lowering(ctx, eqn, x):
    return ctx.op(f"stablehlo.bitcast_convert {x} : "
                  f"{_signature([eqn.inputs[0].type], eqn.outputs[0].type)}")


def _bitcast_batch(values, dims, *, new_dtype):
    """A width change adds or removes the minor axis: the batch axis must not be it."""
    (x,), (d,) = values, dims
    if d == type_of(x).ndim - 1:
        x, d = moveaxis(x, d, 0), 0
    return [bitcast_convert_type_p.bind(x, new_dtype=new_dtype)], [d]


bitcast_convert_type_p = define("bitcast_convert_type", shape=_bitcast_shape,
                                lower=_bitcast_lowering, jvp=ad.zero_jvp,
                                batch=_bitcast_batch)


def bitcast_convert_type(x, new_dtype):
    return bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize(new_dtype))


# stop_gradient: the identity, with a zero derivative (tracehlo.lax.stop_gradient).
stop_gradient_p = define("stop_gradient", shape=lambda x: x, lower=lambda ctx, eqn, x: x,
                         jvp=ad.zero_jvp,
                         batch=broadcasting_rule)


# name[name=...]: the identity, naming a value for checkpoint's policies
# (tracehlo.ad_checkpoint.checkpoint_name; checkpoint_policies.save_only_these_names).
name_p = define("name", shape=lambda x, *, name: x, lower=lambda ctx, eqn, x: x,
                jvp=ad.linear_jvp, vjp=lambda cts, primals, outs, *, name: [cts[0]],
                batch=broadcasting_rule)


def checkpoint_name(x, name: str):
    """x (a pytree of arrays), each leaf named `name` for checkpoint's policies, as
    JAX's ad_checkpoint.checkpoint_name."""
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# optimization_barrier(*xs): the identity, which XLA does not look through: what is
# computed from its results is neither merged with nor moved before what is computed
# from its operands. checkpoint's recomputation starts from it (so CSE cannot undo it).
def _optimization_barrier_lowering(ctx, eqn, *xs):
    return ctx.generic("stablehlo.optimization_barrier", list(xs),
                       [a.type for a in eqn.inputs], [o.type for o in eqn.outputs])


def _optimization_barrier_jvp(primals, tangents):
    """Primals and (nonzero) tangents each through a barrier, as in JAX."""
    t_outs = [ad.Zero.like(x) for x in primals]
    nonzero = [i for i, t in enumerate(tangents) if not ad.is_zero(t)]
    if nonzero:
        for i, t in zip(nonzero, optimization_barrier_p.bind(*[tangents[i] for i in nonzero])):
            t_outs[i] = t
    return optimization_barrier_p.bind(*primals), t_outs


optimization_barrier_p = define(
    "optimization_barrier", shape=lambda *xs: list(xs), lower=_optimization_barrier_lowering,
    multiple_results=True, jvp=_optimization_barrier_jvp, linear="all",
    vjp=lambda cts, primals, outs: [c if dtypes.is_inexact(type_of(x).dtype) else None
                                    for c, x in zip(cts, primals)],
    batch=lambda values, dims: (optimization_barrier_p.bind(*values), list(dims)))


def optimization_barrier(operand):
    """operand (a pytree of arrays) through one barrier, as JAX's lax.optimization_barrier."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves) if leaves else [])
