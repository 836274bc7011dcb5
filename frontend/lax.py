"""tracehlo.lax: one function per primitive, with JAX's lax names and strictness.

Operands must already agree in dtype (Python scalars adopt the other operand's
dtype, as weak types do in JAX) and in shape (rank-0 operands broadcast).
tracehlo.numpy builds NumPy's broadcasting and promotion on top of these.
Each function lives beside its primitive in tracehlo's primitives package.
"""
from .primitives.elementwise import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitcast_convert_type,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, complex, conj,
    convert_element_type, cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2, expm1,
    floor, ge, gt, imag, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max,
    min, mul, ne, neg, nextafter, optimization_barrier, polygamma, population_count, pow,
    real, reduce_precision, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, sub, tan, tanh)
from .primitives.conv import (
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_transpose, conv_with_general_padding, padtype_to_pads)
from .primitives.fft import FftType, fft
from .primitives.indexing import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter,
    scatter_add, scatter_apply, scatter_max, scatter_min, scatter_mul, scatter_sub)
from .primitives.linalg import dot, dot_general
from .primitives.reductions import (
    argmax, argmin, cumlogsumexp, cummax, cummin, cumprod, cumsum, reduce_and, reduce_max,
    reduce_min, reduce_or, reduce_prod, reduce_sum)
from .primitives.shape_ops import (
    broadcast, broadcast_in_dim, broadcasted_iota, collapse, concatenate,
    dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, expand_dims, index_in_dim, iota, pad, reshape, rev, slice,
    slice_in_dim, squeeze, transpose)
from .primitives.sort import sort, top_k
from .primitives.windowed import reduce_window
from .ad import stop_gradient
from .control_flow import associative_scan, cond, fori_loop, map, scan, switch, while_loop
from . import lax_linalg as linalg  # also importable as tracehlo.lax.linalg

__all__ = [
    "abs", "acos", "acosh", "add", "argmax", "argmin", "asin", "asinh", "associative_scan",
    "atan", "atan2", "atanh", "bitcast_convert_type", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "broadcast", "broadcast_in_dim", "broadcasted_iota",
    "cbrt", "ceil", "clamp", "collapse", "complex", "concatenate", "cond", "conj", "conv",
    "conv_dimension_numbers", "conv_general_dilated", "conv_transpose",
    "conv_with_general_padding", "ConvDimensionNumbers", "convert_element_type", "cos",
    "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma", "div",
    "dot", "dot_general", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq", "erf", "erf_inv", "erfc",
    "exp", "exp2", "expand_dims", "expm1", "fft", "FftType", "floor", "fori_loop", "gather",
    "GatherDimensionNumbers", "GatherScatterMode", "ge", "gt", "imag", "index_in_dim",
    "integer_pow", "iota", "is_finite", "le", "lgamma", "linalg", "log", "log1p", "logistic",
    "lt", "map", "max", "min", "mul", "ne", "neg", "nextafter", "optimization_barrier", "pad",
    "padtype_to_pads", "polygamma", "population_count", "pow", "real", "reduce_and",
    "reduce_max", "reduce_min", "reduce_or", "reduce_precision", "reduce_prod",
    "reduce_sum", "reduce_window", "rem", "reshape", "rev", "round", "rsqrt", "scan",
    "scatter", "scatter_add", "scatter_apply", "scatter_max", "scatter_min", "scatter_mul",
    "scatter_sub", "ScatterDimensionNumbers", "select", "select_n", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "slice",
    "slice_in_dim", "sort", "sqrt", "squeeze", "stop_gradient", "sub", "switch", "tan",
    "tanh", "top_k", "transpose", "while_loop"]
