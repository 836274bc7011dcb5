"""Primitives that move data without arithmetic: iota, broadcast, reshape, transpose,
rev, squeeze, expand_dims, concatenate, pad, slice, dynamic_slice, dynamic_update_slice."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define, scalars_to, unchanged
from .elementwise import add, lt, select


def _simple(ctx, eqn, name, operands, attrs=None):
    return ctx.generic(name, operands, [a.type for a in eqn.inputs],
                       [v.type for v in eqn.outputs], attrs)


def _check_axes(name, axes, ndim):
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {tuple(axes)} are out of range or repeated for rank {ndim}")


# iota[dtype, shape, dimension]
def _iota_shape(*, dtype, shape, dimension):
    if np.dtype(dtype) == dtypes.bool_:
        raise TypeError("iota does not accept bool (count in an integer dtype)")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension {dimension} out of range for shape {shape}")
    return ArrayType(tuple(shape), np.dtype(dtype))


def _iota_lowering(ctx, eqn):
    return ctx.op(f"stablehlo.iota dim = {eqn.params['dimension']} : "
                  f"{tensor_type(eqn.outputs[0].type)}")


iota_p = define("iota", shape=_iota_shape, lower=_iota_lowering)


def iota(dtype, size: int):
    return iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=(size,), dimension=0)


def broadcasted_iota(dtype, shape, dimension: int):
    return iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=tuple(shape),
                       dimension=dimension)


# broadcast_in_dim[shape, broadcast_dimensions]: operand dim i goes to result dim dims[i].
def _broadcast_in_dim_shape(x, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if len(dims) != x.ndim or any(
            not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)
    ) or list(dims) != sorted(set(dims)):
        raise TypeError(f"cannot broadcast {x} to shape {tuple(shape)} with "
                        f"broadcast_dimensions={tuple(dims)}")
    return ArrayType(tuple(shape), x.dtype, x.weak)


def _broadcast_in_dim_lowering(ctx, eqn, x):
    return ctx.broadcast(x, eqn.inputs[0].type, eqn.outputs[0].type,
                         eqn.params["broadcast_dimensions"])


broadcast_in_dim_p = define("broadcast_in_dim", shape=_broadcast_in_dim_shape,
                            lower=_broadcast_in_dim_lowering)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if type_of(x).shape == shape and dims == tuple(range(len(shape))):
        return unchanged(x)
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(x, sizes):
    """Prepend axes of the given sizes (lax.broadcast)."""
    t = type_of(x)
    return broadcast_in_dim(x, tuple(sizes) + t.shape,
                            tuple(range(len(sizes), len(sizes) + t.ndim)))


def _reshape_lowering(ctx, eqn, x):
    return ctx.op(f"stablehlo.reshape {x} : ({tensor_type(eqn.inputs[0].type)}) -> "
                  f"{tensor_type(eqn.outputs[0].type)}")


# reshape[new_sizes]
def _reshape_shape(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise TypeError(f"cannot reshape {x} ({x.size} elements) to shape {tuple(new_sizes)}")
    return ArrayType(tuple(new_sizes), x.dtype, x.weak)


reshape_p = define("reshape", shape=_reshape_shape, lower=_reshape_lowering)


def reshape(x, new_sizes):
    new_sizes = tuple(int(n) for n in new_sizes)
    if type_of(x).shape == new_sizes:
        return unchanged(x)
    return reshape_p.bind(x, new_sizes=new_sizes)

# squeeze[dimensions]: drop size-1 axes (a reshape, kept distinct so the IR reads as written).
def _squeeze_shape(x, *, dimensions):
    _check_axes("squeeze", dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ValueError(f"squeeze: cannot remove axes {tuple(dimensions)} of {x}: "
                         "only axes of size 1 can be squeezed")
    shape = tuple(n for i, n in enumerate(x.shape) if i not in dimensions)
    return ArrayType(shape, x.dtype, x.weak)


squeeze_p = define("squeeze", shape=_squeeze_shape, lower=_reshape_lowering)


def squeeze(x, dimensions):
    return squeeze_p.bind(x, dimensions=tuple(sorted(dimensions)))

# expand_dims[dimensions]: insert size-1 axes at these result positions.
def _expand_dims_shape(x, *, dimensions):
    ndim = x.ndim + len(dimensions)
    _check_axes("expand_dims", dimensions, ndim)
    rest = iter(x.shape)
    shape = tuple(1 if i in dimensions else next(rest) for i in range(ndim))
    return ArrayType(shape, x.dtype, x.weak)


expand_dims_p = define("expand_dims", shape=_expand_dims_shape, lower=_reshape_lowering)


def expand_dims(x, dimensions):
    return expand_dims_p.bind(x, dimensions=tuple(sorted(dimensions)))

# transpose[permutation]
def _transpose_shape(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose permutation {tuple(permutation)} is not a permutation of "
                         f"the axes of {x}")
    return ArrayType(tuple(x.shape[p] for p in permutation), x.dtype, x.weak)


def _transpose_lowering(ctx, eqn, x):
    return _simple(ctx, eqn, "stablehlo.transpose", [x],
                   {"permutation": dims_attr(eqn.params["permutation"])})


transpose_p = define("transpose", shape=_transpose_shape, lower=_transpose_lowering)


def transpose(x, permutation):
    permutation = tuple(permutation)
    if permutation == tuple(range(len(permutation))):
        return unchanged(x)
    return transpose_p.bind(x, permutation=permutation)

# rev[dimensions]: reverse the order of elements along these axes.
def _rev_shape(x, *, dimensions):
    _check_axes("rev", dimensions, x.ndim)
    return x


def _rev_lowering(ctx, eqn, x):
    return _simple(ctx, eqn, "stablehlo.reverse", [x],
                   {"dimensions": dims_attr(eqn.params["dimensions"])})


rev_p = define("rev", shape=_rev_shape, lower=_rev_lowering)


def rev(x, dimensions):
    return rev_p.bind(x, dimensions=tuple(dimensions))

# concatenate[dimension]
def _concatenate_shape(*xs, dimension):
    if not xs:
        raise ValueError("concatenate needs at least one operand")
    first = xs[0]
    if not 0 <= dimension < first.ndim:
        raise ValueError(f"concatenate dimension {dimension} out of range for {first}")
    for x in xs[1:]:
        if x.dtype != first.dtype or x.ndim != first.ndim or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("concatenate operands must agree in dtype and in every dimension "
                            f"but {dimension}: " + ", ".join(map(str, xs)))
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ArrayType(tuple(shape), first.dtype, all(x.weak for x in xs))


def _concatenate_lowering(ctx, eqn, *xs):
    return _simple(ctx, eqn, "stablehlo.concatenate", xs,
                   {"dimension": f"{eqn.params['dimension']} : i64"})


concatenate_p = define("concatenate", shape=_concatenate_shape, lower=_concatenate_lowering)


def concatenate(operands, dimension: int):
    if len(operands) == 1:
        return unchanged(operands[0])
    return concatenate_p.bind(*operands, dimension=dimension)

# pad[padding_config=((low, high, interior), ...)] operand, padding_value (rank 0)
def _pad_shape(x, value, *, padding_config):
    if value.shape != () or value.dtype != x.dtype or len(padding_config) != x.ndim:
        raise TypeError(f"pad needs a rank-0 padding value of the operand's dtype and one "
                        f"(low, high, interior) per axis; got {x}, {value}, {padding_config}")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError("pad: interior padding must be >= 0")
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            raise ValueError(f"pad: negative padding {padding_config} empties {x}")
        shape.append(size)
    return ArrayType(tuple(shape), x.dtype, x.weak)


def _pad_lowering(ctx, eqn, x, value):
    cfg = eqn.params["padding_config"]
    return _simple(ctx, eqn, "stablehlo.pad", [x, value], {
        "edge_padding_low": dims_attr([c[0] for c in cfg]),
        "edge_padding_high": dims_attr([c[1] for c in cfg]),
        "interior_padding": dims_attr([c[2] for c in cfg])})


pad_p = define("pad", shape=_pad_shape, lower=_pad_lowering)


def pad(x, padding_value, padding_config):
    (padding_value,) = scalars_to(type_of(x).dtype, padding_value)
    return pad_p.bind(x, padding_value, padding_config=tuple(tuple(c) for c in padding_config))

# slice[start_indices, limit_indices, strides]
def _slice_shape(x, *, start_indices, limit_indices, strides):
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice of {x} needs {x.ndim} start, limit and stride values")
    shape = []
    for n, lo, hi, st in zip(x.shape, start_indices, limit_indices, strides):
        if not (0 <= lo <= hi <= n) or st < 1:
            raise ValueError(f"slice [{lo}:{hi}:{st}] is out of bounds for an axis of size {n}")
        shape.append(-(-(hi - lo) // st))
    return ArrayType(tuple(shape), x.dtype, x.weak)


def _slice_lowering(ctx, eqn, x):
    p = eqn.params
    return _simple(ctx, eqn, "stablehlo.slice", [x], {
        "start_indices": dims_attr(p["start_indices"]),
        "limit_indices": dims_attr(p["limit_indices"]),
        "strides": dims_attr(p["strides"])})


slice_p = define("slice", shape=_slice_shape, lower=_slice_lowering)


def slice(x, start_indices, limit_indices, strides=None):
    strides = tuple(strides) if strides is not None else (1,) * len(start_indices)
    return slice_p.bind(x, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices), strides=strides)


def slice_in_dim(x, start_index, limit_index, stride: int = 1, axis: int = 0):
    """x[..., start:limit:stride] along `axis`, as JAX's: None means the axis' end and
    negative indices count from it."""
    t = type_of(x)
    n = t.shape[axis]
    start = 0 if start_index is None else start_index + n * (start_index < 0)
    limit = n if limit_index is None else limit_index + n * (limit_index < 0)
    starts, limits, strides = [0] * t.ndim, list(t.shape), [1] * t.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(x, starts, limits, strides)

# dynamic_slice[slice_sizes] operand, *start_indices (rank-0 integers; clamped into range)
def _check_start_indices(name, x, indices):
    if len(indices) != x.ndim or any(i.shape != () or not dtypes.is_int(i.dtype)
                                     for i in indices):
        raise TypeError(f"{name} of {x} needs {x.ndim} rank-0 integer start indices")


def _dynamic_slice_shape(x, *indices, slice_sizes):
    _check_start_indices("dynamic_slice", x, indices)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise ValueError(f"dynamic_slice sizes {tuple(slice_sizes)} do not fit {x}")
    return ArrayType(tuple(slice_sizes), x.dtype, x.weak)


def _dynamic_slice_lowering(ctx, eqn, x, *indices):
    return _simple(ctx, eqn, "stablehlo.dynamic_slice", [x, *indices],
                   {"slice_sizes": dims_attr(eqn.params["slice_sizes"])})


dynamic_slice_p = define("dynamic_slice", shape=_dynamic_slice_shape,
                         lower=_dynamic_slice_lowering)


def _start_indices(indices, shape):
    """Rank-0 start indices; negative ones count from the end, as in JAX
    (allow_negative_indices), and then clamp into range like any other."""
    out = []
    for i, n in zip(indices, shape):
        if dtypes.is_python_scalar(i):
            out.extend(scalars_to(dtypes.int32, i + n if i < 0 else i))
        elif dtypes.is_unsigned(type_of(i).dtype):
            out.append(i)
        else:
            out.append(select(lt(i, 0), add(i, n), i))
    return out


def dynamic_slice(x, start_indices, slice_sizes):
    return dynamic_slice_p.bind(x, *_start_indices(start_indices, type_of(x).shape),
                                slice_sizes=tuple(slice_sizes))

# dynamic_update_slice operand, update, *start_indices
def _dynamic_update_slice_shape(x, update, *indices):
    _check_start_indices("dynamic_update_slice", x, indices)
    if update.dtype != x.dtype or update.ndim != x.ndim or any(
            u > n for u, n in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update {update} does not fit operand {x}")
    return ArrayType(x.shape, x.dtype, x.weak)


def _dynamic_update_slice_lowering(ctx, eqn, x, update, *indices):
    return _simple(ctx, eqn, "stablehlo.dynamic_update_slice", [x, update, *indices])


dynamic_update_slice_p = define("dynamic_update_slice", shape=_dynamic_update_slice_shape,
                                lower=_dynamic_update_slice_lowering)


def dynamic_update_slice(x, update, start_indices):
    return dynamic_update_slice_p.bind(x, update,
                                       *_start_indices(start_indices, type_of(x).shape))
