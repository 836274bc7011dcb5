"""Elementwise primitives: arithmetic, math, bitwise, compare, select, clamp, converts.

Operands share one shape, except that rank-0 operands broadcast (`mul %x, 3.0:f32[]`
as in JAX's jaxprs); lowering inserts the broadcast_in_dim.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import lowering_rules, primitive, shape_rules
from ..ir import ArrayType
from ..lowering import tensor_type


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


def _check_dtype(prim_name, dtype, allowed: str):
    ok = {"float": dtypes.is_inexact, "int": dtypes.is_int,
          "intbool": lambda d: dtypes.is_int(d) or d == dtypes.bool_,
          "number": lambda d: d != dtypes.bool_, "any": lambda d: True}[allowed]
    if not ok(dtype):
        raise TypeError(f"{prim_name} does not accept {dtypes.SHORT_NAMES[dtype]} operands "
                        f"(it takes {allowed} dtypes)")


def _operands_broadcast(ctx, eqn, operands):
    """Operand names with rank-0 operands broadcast to the result shape."""
    out = eqn.outputs[0].type
    return [ctx.broadcast(name, a.type, out) if a.type.shape == () and out.shape != () else name
            for name, a in zip(operands, eqn.inputs)]


def _signature(in_types, out_type) -> str:
    return f"({', '.join(tensor_type(t) for t in in_types)}) -> {tensor_type(out_type)}"


def _define(name, mlir_op, arity, allowed, out_dtype=None):
    """Register one elementwise primitive: shape rule and lowering side by side."""
    prim = primitive(name)

    def shape_rule(*types):
        if len(types) != arity:
            raise TypeError(f"{name} takes {arity} operands, got {len(types)}")
        dtype = _same_dtype(name, types)
        _check_dtype(name, dtype, allowed)
        return ArrayType(_elementwise_shape(name, types), out_dtype or dtype,
                         all(t.weak for t in types) and out_dtype is None)

    def lowering(ctx, eqn, *operands):
        operands = _operands_broadcast(ctx, eqn, operands)
        out = eqn.outputs[0].type
        in_types = [ArrayType(out.shape, a.type.dtype) for a in eqn.inputs]
        if mlir_op.startswith("chlo."):  # chlo has no uniform pretty syntax: use generic
            return ctx.op(f'"{mlir_op}"({", ".join(operands)}) : {_signature(in_types, out)}')
        return ctx.op(f"{mlir_op} {', '.join(operands)} : {_signature(in_types, out)}")

    shape_rules[prim] = shape_rule
    lowering_rules[prim] = lowering
    return prim


# name, StableHLO/CHLO op, dtypes accepted
neg_p = _define("neg", "stablehlo.negate", 1, "number")
abs_p = _define("abs", "stablehlo.abs", 1, "number")
sign_p = _define("sign", "stablehlo.sign", 1, "number")
floor_p = _define("floor", "stablehlo.floor", 1, "float")
ceil_p = _define("ceil", "stablehlo.ceil", 1, "float")
exp_p = _define("exp", "stablehlo.exponential", 1, "float")
log_p = _define("log", "stablehlo.log", 1, "float")
log1p_p = _define("log1p", "stablehlo.log_plus_one", 1, "float")
expm1_p = _define("expm1", "stablehlo.exponential_minus_one", 1, "float")
sqrt_p = _define("sqrt", "stablehlo.sqrt", 1, "float")
rsqrt_p = _define("rsqrt", "stablehlo.rsqrt", 1, "float")
cbrt_p = _define("cbrt", "stablehlo.cbrt", 1, "float")
sin_p = _define("sin", "stablehlo.sine", 1, "float")
cos_p = _define("cos", "stablehlo.cosine", 1, "float")
tan_p = _define("tan", "stablehlo.tan", 1, "float")
tanh_p = _define("tanh", "stablehlo.tanh", 1, "float")
logistic_p = _define("logistic", "stablehlo.logistic", 1, "float")
asin_p = _define("asin", "chlo.asin", 1, "float")
acos_p = _define("acos", "chlo.acos", 1, "float")
atan_p = _define("atan", "chlo.atan", 1, "float")
sinh_p = _define("sinh", "chlo.sinh", 1, "float")
cosh_p = _define("cosh", "chlo.cosh", 1, "float")
asinh_p = _define("asinh", "chlo.asinh", 1, "float")
acosh_p = _define("acosh", "chlo.acosh", 1, "float")
atanh_p = _define("atanh", "chlo.atanh", 1, "float")
erf_p = _define("erf", "chlo.erf", 1, "float")
erfc_p = _define("erfc", "chlo.erfc", 1, "float")
erf_inv_p = _define("erf_inv", "chlo.erf_inv", 1, "float")
lgamma_p = _define("lgamma", "chlo.lgamma", 1, "float")
digamma_p = _define("digamma", "chlo.digamma", 1, "float")
is_finite_p = _define("is_finite", "stablehlo.is_finite", 1, "float", out_dtype=dtypes.bool_)
not_p = _define("not", "stablehlo.not", 1, "intbool")
population_count_p = _define("population_count", "stablehlo.popcnt", 1, "int")

add_p = _define("add", "stablehlo.add", 2, "any")
sub_p = _define("sub", "stablehlo.subtract", 2, "number")
mul_p = _define("mul", "stablehlo.multiply", 2, "any")
div_p = _define("div", "stablehlo.divide", 2, "number")
rem_p = _define("rem", "stablehlo.remainder", 2, "number")
pow_p = _define("pow", "stablehlo.power", 2, "number")
max_p = _define("max", "stablehlo.maximum", 2, "any")
min_p = _define("min", "stablehlo.minimum", 2, "any")
atan2_p = _define("atan2", "stablehlo.atan2", 2, "float")
nextafter_p = _define("nextafter", "chlo.next_after", 2, "float")
and_p = _define("and", "stablehlo.and", 2, "intbool")
or_p = _define("or", "stablehlo.or", 2, "intbool")
xor_p = _define("xor", "stablehlo.xor", 2, "intbool")
shift_left_p = _define("shift_left", "stablehlo.shift_left", 2, "int")
shift_right_arithmetic_p = _define("shift_right_arithmetic",
                                   "stablehlo.shift_right_arithmetic", 2, "int")
shift_right_logical_p = _define("shift_right_logical", "stablehlo.shift_right_logical", 2, "int")


# exp2 has no StableHLO op: exp(x * ln 2), as JAX lowers it.
exp2_p = primitive("exp2")
shape_rules[exp2_p] = shape_rules[exp_p]


def _exp2_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    ln2 = ctx.broadcast(ctx.constant(np.log(2.0), t.dtype), ArrayType((), t.dtype), t) \
        if t.shape else ctx.constant(np.log(2.0), t.dtype)
    scaled = ctx.op(f"stablehlo.multiply {x}, {ln2} : {tensor_type(t)}")
    return ctx.op(f"stablehlo.exponential {scaled} : {tensor_type(t)}")


lowering_rules[exp2_p] = _exp2_lowering


# round[method]: 'away_from_zero' (lax.round's default) or 'to_nearest_even' (np.round).
round_p = primitive("round")


def _round_shape(x, *, method):
    if method not in ("away_from_zero", "to_nearest_even"):
        raise ValueError(f"round method must be 'away_from_zero' or 'to_nearest_even', "
                         f"got {method!r}")
    return shape_rules[floor_p](x)


def _round_lowering(ctx, eqn, x):
    op = {"away_from_zero": "round_nearest_afz", "to_nearest_even": "round_nearest_even"}
    t = tensor_type(eqn.outputs[0].type)
    return ctx.op(f"stablehlo.{op[eqn.params['method']]} {x} : {t}")


shape_rules[round_p] = _round_shape
lowering_rules[round_p] = _round_lowering


# compare[direction]: EQ NE LT LE GT GE; the comparison type follows the dtype.
compare_p = primitive("compare")
_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_shape(x, y, *, direction):
    if direction not in _DIRECTIONS:
        raise ValueError(f"compare direction must be one of {_DIRECTIONS}, got {direction!r}")
    _same_dtype("compare", [x, y])
    return ArrayType(_elementwise_shape("compare", [x, y]), dtypes.bool_)


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


shape_rules[compare_p] = _compare_shape
lowering_rules[compare_p] = _compare_lowering


# select(pred, on_true, on_false): pred is bool, of the result's shape or rank 0.
select_p = primitive("select")


def _select_shape(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_:
        raise TypeError(f"select needs a bool predicate, got {pred}")
    dtype = _same_dtype("select", [on_true, on_false])
    shape = _elementwise_shape("select", [pred, on_true, on_false])
    return ArrayType(shape, dtype, on_true.weak and on_false.weak)


def _select_lowering(ctx, eqn, pred, on_true, on_false):
    out = eqn.outputs[0].type
    pred, on_true, on_false = _operands_broadcast(ctx, eqn, (pred, on_true, on_false))
    pred_type = ArrayType(out.shape, dtypes.bool_)
    return ctx.op(f"stablehlo.select {pred}, {on_true}, {on_false} : "
                  f"{_signature([pred_type, out, out], out)}")


shape_rules[select_p] = _select_shape
lowering_rules[select_p] = _select_lowering


# clamp(min, x, max)
clamp_p = primitive("clamp")


def _clamp_shape(lo, x, hi):
    _same_dtype("clamp", [lo, x, hi])
    return ArrayType(_elementwise_shape("clamp", [lo, x, hi]), x.dtype, x.weak)


def _clamp_lowering(ctx, eqn, lo, x, hi):
    out = eqn.outputs[0].type
    lo, x, hi = _operands_broadcast(ctx, eqn, (lo, x, hi))
    return ctx.op(f"stablehlo.clamp {lo}, {x}, {hi} : {_signature([out] * 3, out)}")


shape_rules[clamp_p] = _clamp_shape
lowering_rules[clamp_p] = _clamp_lowering


# convert_element_type[new_dtype]
convert_element_type_p = primitive("convert_element_type")


def _convert_shape(x, *, new_dtype, weak_type=False):
    return ArrayType(x.shape, np.dtype(new_dtype), weak_type)


def _convert_lowering(ctx, eqn, x):
    src, dst = eqn.inputs[0].type, eqn.outputs[0].type
    if dtypes.is_float(src.dtype) and dst.dtype == dtypes.bool_:
        # StableHLO's float->i1 convert truncates; NumPy means x != 0.
        zero = ctx.constant(0, src.dtype, src.shape)
        return ctx.op(f"stablehlo.compare NE, {x}, {zero}, FLOAT : "
                      f"{_signature([src, src], dst)}")
    return ctx.op(f"stablehlo.convert {x} : {_signature([src], dst)}")


shape_rules[convert_element_type_p] = _convert_shape
lowering_rules[convert_element_type_p] = _convert_lowering


# bitcast_convert_type[new_dtype]: reinterpret bits of the same width.
bitcast_convert_type_p = primitive("bitcast_convert_type")


def _bitcast_shape(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if new_dtype.itemsize != x.dtype.itemsize:
        raise TypeError(f"bitcast_convert_type between dtypes of different widths "
                        f"({dtypes.SHORT_NAMES[x.dtype]} -> {dtypes.SHORT_NAMES[new_dtype]}) "
                        "is not supported")
    return ArrayType(x.shape, new_dtype)


def _bitcast_lowering(ctx, eqn, x):
    return ctx.op(f"stablehlo.bitcast_convert {x} : "
                  f"{_signature([eqn.inputs[0].type], eqn.outputs[0].type)}")


shape_rules[bitcast_convert_type_p] = _bitcast_shape
lowering_rules[bitcast_convert_type_p] = _bitcast_lowering

