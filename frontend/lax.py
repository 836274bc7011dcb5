"""tracehlo.lax: one function per primitive, with JAX's lax names and strictness.

Operands must already agree in dtype (Python scalars adopt the other operand's
dtype, as weak types do in JAX) and in shape (rank-0 operands broadcast).
tracehlo.numpy builds NumPy's broadcasting and promotion on top of these.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from . import runtime
from .core import Literal, Tracer, concrete_value, current_builder, type_of
from .ir import ArrayType
from .primitives import elementwise as ew
from .primitives import indexing, linalg, reductions, shape_ops, sort as sort_mod

_PY_SCALARS = (bool, int, float, complex)


def _unchanged(x):
    """The result of a no-op: outside a trace a host operand still comes back as a
    device array, as every eager result does."""
    if current_builder() is None and not isinstance(x, (Tracer, Literal)) and \
            not runtime.is_device_array(x):
        return runtime.to_device(concrete_value(x), runtime.device())
    return x


def _scalars_to(dtype, *xs):
    """Python scalars as weakly typed literals of `dtype`; other operands unchanged."""
    return [Literal(np.asarray(x, dtype), ArrayType((), np.dtype(dtype), True))
            if isinstance(x, _PY_SCALARS) else x for x in xs]


def _common_dtype(xs):
    for x in xs:
        if not isinstance(x, _PY_SCALARS):
            return type_of(x).dtype
    return type_of(xs[0]).dtype


def _nary(prim):
    def fn(*xs):
        return prim.bind(*_scalars_to(_common_dtype(xs), *xs))
    fn.__name__ = prim.name
    fn.__doc__ = f"The `{prim.name}` primitive, elementwise."
    return fn


neg, abs, sign, floor, ceil = map(_nary, (ew.neg_p, ew.abs_p, ew.sign_p, ew.floor_p, ew.ceil_p))
exp, exp2, log, log1p, expm1 = map(_nary, (ew.exp_p, ew.exp2_p, ew.log_p, ew.log1p_p,
                                           ew.expm1_p))
sqrt, rsqrt, cbrt = map(_nary, (ew.sqrt_p, ew.rsqrt_p, ew.cbrt_p))
sin, cos, tan, asin, acos, atan = map(_nary, (ew.sin_p, ew.cos_p, ew.tan_p, ew.asin_p,
                                              ew.acos_p, ew.atan_p))
sinh, cosh, tanh, asinh, acosh, atanh = map(_nary, (ew.sinh_p, ew.cosh_p, ew.tanh_p,
                                                    ew.asinh_p, ew.acosh_p, ew.atanh_p))
logistic, erf, erfc, erf_inv, lgamma, digamma = map(_nary, (
    ew.logistic_p, ew.erf_p, ew.erfc_p, ew.erf_inv_p, ew.lgamma_p, ew.digamma_p))
is_finite, bitwise_not, population_count = map(_nary, (ew.is_finite_p, ew.not_p,
                                                       ew.population_count_p))
add, sub, mul, div, rem, pow = map(_nary, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p,
                                           ew.pow_p))
max, min, atan2, nextafter = map(_nary, (ew.max_p, ew.min_p, ew.atan2_p, ew.nextafter_p))
bitwise_and, bitwise_or, bitwise_xor = map(_nary, (ew.and_p, ew.or_p, ew.xor_p))
shift_left, shift_right_arithmetic, shift_right_logical = map(_nary, (
    ew.shift_left_p, ew.shift_right_arithmetic_p, ew.shift_right_logical_p))
clamp = _nary(ew.clamp_p)


def round(x, rounding_method="away_from_zero"):
    return ew.round_p.bind(x, method=rounding_method)


def _compare(direction):
    def fn(x, y):
        x, y = _scalars_to(_common_dtype((x, y)), x, y)
        return ew.compare_p.bind(x, y, direction=direction)
    fn.__name__ = direction.lower()
    return fn


eq, ne, lt, le, gt, ge = map(_compare, ("EQ", "NE", "LT", "LE", "GT", "GE"))


def select(pred, on_true, on_false):
    on_true, on_false = _scalars_to(_common_dtype((on_true, on_false)), on_true, on_false)
    return ew.select_p.bind(pred, on_true, on_false)


def convert_element_type(x, new_dtype, weak_type=False):
    new_dtype = dtypes.canonicalize(new_dtype)
    t = type_of(x)
    if t.dtype == new_dtype and t.weak == weak_type:
        return _unchanged(x)
    return ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def bitcast_convert_type(x, new_dtype):
    return ew.bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize(new_dtype))


def iota(dtype, size: int):
    return shape_ops.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=(size,), dimension=0)


def broadcasted_iota(dtype, shape, dimension: int):
    return shape_ops.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=tuple(shape),
                 dimension=dimension)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if type_of(x).shape == shape and dims == tuple(range(len(shape))):
        return _unchanged(x)
    return shape_ops.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(x, sizes):
    """Prepend axes of the given sizes (lax.broadcast)."""
    t = type_of(x)
    return broadcast_in_dim(x, tuple(sizes) + t.shape,
                            tuple(range(len(sizes), len(sizes) + t.ndim)))


def reshape(x, new_sizes):
    new_sizes = tuple(int(n) for n in new_sizes)
    if type_of(x).shape == new_sizes:
        return _unchanged(x)
    return shape_ops.reshape_p.bind(x, new_sizes=new_sizes)


def squeeze(x, dimensions):
    return shape_ops.squeeze_p.bind(x, dimensions=tuple(sorted(dimensions)))


def expand_dims(x, dimensions):
    return shape_ops.expand_dims_p.bind(x, dimensions=tuple(sorted(dimensions)))


def transpose(x, permutation):
    permutation = tuple(permutation)
    if permutation == tuple(range(len(permutation))):
        return _unchanged(x)
    return shape_ops.transpose_p.bind(x, permutation=permutation)


def rev(x, dimensions):
    return shape_ops.rev_p.bind(x, dimensions=tuple(dimensions))


def concatenate(operands, dimension: int):
    if len(operands) == 1:
        return _unchanged(operands[0])
    return shape_ops.concatenate_p.bind(*operands, dimension=dimension)


def pad(x, padding_value, padding_config):
    (padding_value,) = _scalars_to(type_of(x).dtype, padding_value)
    return shape_ops.pad_p.bind(x, padding_value,
                 padding_config=tuple(tuple(c) for c in padding_config))


def slice(x, start_indices, limit_indices, strides=None):
    strides = tuple(strides) if strides is not None else (1,) * len(start_indices)
    return shape_ops.slice_p.bind(x, start_indices=tuple(start_indices),
                 limit_indices=tuple(limit_indices), strides=strides)


def _start_indices(indices, shape):
    """Rank-0 start indices; negative ones count from the end, as in JAX
    (allow_negative_indices), and then clamp into range like any other."""
    out = []
    for i, n in zip(indices, shape):
        if isinstance(i, _PY_SCALARS):
            out.extend(_scalars_to(dtypes.int32, i + n if i < 0 else i))
        elif dtypes.is_unsigned(type_of(i).dtype):
            out.append(i)
        else:
            out.append(select(lt(i, 0), add(i, n), i))
    return out


def dynamic_slice(x, start_indices, slice_sizes):
    return shape_ops.dynamic_slice_p.bind(x,
                 *_start_indices(start_indices, type_of(x).shape),
                 slice_sizes=tuple(slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    return shape_ops.dynamic_update_slice_p.bind(x, update,
                 *_start_indices(start_indices, type_of(x).shape))


def _reducer(prim):
    def fn(x, axes):
        return prim.bind(x, axes=tuple(sorted(axes)))
    fn.__name__ = prim.name
    return fn


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = map(_reducer, (
    reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p,
    reductions.reduce_min_p, reductions.reduce_and_p, reductions.reduce_or_p))


def argmax(x, axis: int, index_dtype=dtypes.int32):
    return reductions.argmax_p.bind(x, axes=(axis,),
                 index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x, axis: int, index_dtype=dtypes.int32):
    return reductions.argmin_p.bind(x, axes=(axis,),
                 index_dtype=dtypes.canonicalize(index_dtype))


def _cumulative(prim):
    def fn(x, axis: int = 0, reverse: bool = False):
        return prim.bind(x, axis=axis, reverse=reverse)
    fn.__name__ = prim.name
    return fn


cumsum, cumprod, cummax, cummin = map(_cumulative, (
    reductions.cumsum_p, reductions.cumprod_p, reductions.cummax_p, reductions.cummin_p))


def dot_general(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=(
        (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))


def dot(lhs, rhs):
    """Matrix/vector product contracting lhs's last axis with rhs's first."""
    return dot_general(lhs, rhs, (((type_of(lhs).ndim - 1,), (0,)), ((), ())))


def sort(operands, dimension: int = -1, num_keys: int = 1):
    single = not isinstance(operands, (list, tuple))
    operands = [operands] if single else list(operands)
    ndim = type_of(operands[0]).ndim
    dimension = dimension % ndim if ndim else dimension  # rank 0: the shape rule says why
    out = sort_mod.sort_p.bind(*operands, dimension=dimension, num_keys=num_keys)
    return out[0] if single else out


def gather(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
           slice_sizes, index_vector_dim, operand_batching_dims=(),
           start_indices_batching_dims=()):
    return indexing.gather_p.bind(
        operand, indices, offset_dims=tuple(offset_dims),
        collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map),
        operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims),
        index_vector_dim=index_vector_dim, slice_sizes=tuple(slice_sizes))


def scatter(operand, indices, updates, *, update_window_dims, inserted_window_dims,
            scatter_dims_to_operand_dims, index_vector_dim, combiner="set"):
    return indexing.scatter_p.bind(
        operand, indices, updates, update_window_dims=tuple(update_window_dims),
        inserted_window_dims=tuple(inserted_window_dims),
        scatter_dims_to_operand_dims=tuple(scatter_dims_to_operand_dims),
        index_vector_dim=index_vector_dim, combiner=combiner)


def slice_in_dim(x, start: int, limit: int, axis: int = 0):
    t = type_of(x)
    starts = [0] * t.ndim
    limits = list(t.shape)
    starts[axis], limits[axis] = start, limit
    return slice(x, starts, limits)
