"""Primitives that move data without arithmetic: iota, broadcast, reshape, transpose,
rev, squeeze, expand_dims, concatenate, pad, slice, dynamic_slice, dynamic_update_slice."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import ad, dtypes
from ..batching import axis_size, batch_at, moveaxis, not_mapped, shifted
from ..core import at_user_line, lift, type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define, scalars_to, unchanged
from .elementwise import add, clamp, convert_element_type, lt, select, sub


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


iota_p = define("iota", shape=_iota_shape, lower=_iota_lowering, jvp=ad.zero_jvp)


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


def _broadcast_in_dim_vjp(cts, xs, outs, *, shape, broadcast_dimensions):
    """Sum over the new axes and the axes of size 1 that broadcast."""
    from .reductions import reduce_sum
    t, ct = type_of(xs[0]), cts[0]
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if t.shape[i] == 1 != shape[d]]
    return [reshape(reduce_sum(ct, summed) if summed else ct, t.shape)]


def _broadcast_in_dim_batch(values, dims, *, shape, broadcast_dimensions):
    """The batch axis goes right after where the operand axis before it goes."""
    (x,), (d,) = values, dims
    out = broadcast_dimensions[d - 1] + 1 if d else 0
    moved = shifted(broadcast_dimensions, out)
    return [broadcast_in_dim_p.bind(
        x, shape=shape[:out] + (type_of(x).shape[d],) + shape[out:],
        broadcast_dimensions=moved[:d] + (out,) + moved[d:])], [out]


broadcast_in_dim_p = define("broadcast_in_dim", shape=_broadcast_in_dim_shape,
                            lower=_broadcast_in_dim_lowering,
                            jvp=ad.linear_jvp, vjp=_broadcast_in_dim_vjp,
                            batch=_broadcast_in_dim_batch)


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


def _reshape_batch(values, dims, *, new_sizes):
    (x,), (d,) = values, dims
    x = moveaxis(x, d, 0)
    return [reshape(x, (type_of(x).shape[0],) + new_sizes)], [0]


reshape_p = define("reshape", shape=_reshape_shape, lower=_reshape_lowering,
                   jvp=ad.linear_jvp,
                   vjp=lambda cts, xs, outs, *, new_sizes: [reshape(cts[0], type_of(xs[0]).shape)],
                   batch=_reshape_batch)


def reshape(x, new_sizes, dimensions=None):
    """JAX's lax.reshape: `dimensions` transposes x first."""
    if dimensions is not None:
        x = transpose(x, dimensions)
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


def _squeeze_batch(values, dims, *, dimensions):
    (x,), (d,) = values, dims
    return [squeeze(x, shifted(dimensions, d))], [d - sum(k < d for k in dimensions)]


squeeze_p = define("squeeze", shape=_squeeze_shape, lower=_reshape_lowering,
                   jvp=ad.linear_jvp,
                   vjp=lambda cts, xs, outs, *, dimensions: [expand_dims(cts[0], dimensions)],
                   batch=_squeeze_batch)


def squeeze(x, dimensions):
    return squeeze_p.bind(x, dimensions=tuple(sorted(dimensions)))

# expand_dims[dimensions]: insert size-1 axes at these result positions.
def _expand_dims_shape(x, *, dimensions):
    ndim = x.ndim + len(dimensions)
    _check_axes("expand_dims", dimensions, ndim)
    rest = iter(x.shape)
    shape = tuple(1 if i in dimensions else next(rest) for i in range(ndim))
    return ArrayType(shape, x.dtype, x.weak)


def _expand_dims_batch(values, dims, *, dimensions):
    """The batch axis goes right after the operand axis it followed (first if it was
    first: a leading batch axis stays leading, as XLA's batched dots like it)."""
    (x,), (d,) = values, dims
    rank = type_of(x).ndim - 1 + len(dimensions)
    kept = [i for i in range(rank) if i not in dimensions]  # where operand axes go
    out = kept[d - 1] + 1 if d else 0
    return [expand_dims(x, shifted(dimensions, out))], [out]


expand_dims_p = define("expand_dims", shape=_expand_dims_shape, lower=_reshape_lowering,
                       jvp=ad.linear_jvp,
                       vjp=lambda cts, xs, outs, *, dimensions: [squeeze(cts[0], dimensions)],
                       batch=_expand_dims_batch)


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


def _transpose_batch(values, dims, *, permutation):
    (x,), (d,) = values, dims
    return [transpose(x, (d,) + shifted(permutation, d))], [0]


transpose_p = define("transpose", shape=_transpose_shape, lower=_transpose_lowering,
                     jvp=ad.linear_jvp,
                     vjp=lambda cts, xs, outs, *, permutation: [transpose(
                         cts[0], sorted(range(len(permutation)), key=permutation.__getitem__))],
                     batch=_transpose_batch)


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


def _rev_batch(values, dims, *, dimensions):
    (x,), (d,) = values, dims
    return [rev(x, shifted(dimensions, d))], [d]


rev_p = define("rev", shape=_rev_shape, lower=_rev_lowering, jvp=ad.linear_jvp,
               vjp=lambda cts, xs, outs, *, dimensions: [rev(cts[0], dimensions)],
               batch=_rev_batch)


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


def _concatenate_batch(values, dims, *, dimension):
    """Every operand batched where the first batched one is (unbatched ones broadcast)."""
    size = axis_size(values, dims)
    out = next(d for d in dims if d is not not_mapped)
    xs = [batch_at(x, d, size, out) for x, d in zip(values, dims)]
    return [concatenate(xs, dimension + (dimension >= out))], [out]


def _concatenate_vjp(cts, xs, outs, *, dimension):
    """Each operand's part of the cotangent."""
    parts, start = [], 0
    for x in xs:
        size = type_of(x).shape[dimension]
        parts.append(slice_in_dim(cts[0], start, start + size, axis=dimension))
        start += size
    return parts


concatenate_p = define("concatenate", shape=_concatenate_shape, lower=_concatenate_lowering,
                       jvp=ad.linear_jvp, vjp=_concatenate_vjp,
                       batch=_concatenate_batch)


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
    return ArrayType(tuple(shape), x.dtype, x.weak and value.weak)  # JAX: weak if both are


def _pad_lowering(ctx, eqn, x, value):
    cfg = eqn.params["padding_config"]
    return _simple(ctx, eqn, "stablehlo.pad", [x, value], {
        "edge_padding_low": dims_attr([c[0] for c in cfg]),
        "edge_padding_high": dims_attr([c[1] for c in cfg]),
        "interior_padding": dims_attr([c[2] for c in cfg])})


def _pad_batch(values, dims, *, padding_config):
    """A padding value per example: pad with any value, then select by a mask of the
    padding (as JAX does)."""
    (x, value), (dx, dv) = values, dims
    if dv is not_mapped:
        config = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
        return [pad_p.bind(x, value, padding_config=config)], [dx]
    size = axis_size(values, dims)
    x = batch_at(x, dx, size, 0)
    t = type_of(x)
    padded = pad(x, 0, ((0, 0, 0),) + padding_config)
    is_x = pad(broadcast_in_dim(lift(True), t.shape[1:], ()), False, padding_config)
    shape = type_of(padded).shape
    return [select(broadcast_in_dim(is_x, shape, range(1, len(shape))), padded,
                   broadcast_in_dim(value, shape, (0,)))], [0]


def _pad_vjp(cts, xs, outs, *, padding_config):
    """The operand's elements of the cotangent (negative padding removes the edges, a
    strided slice the interior); the padding value gets the sum of the rest."""
    from .reductions import reduce_sum
    ct = cts[0]
    unpadded = pad(ct, 0, [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    t = type_of(unpadded)
    ct_x = slice(unpadded, [0] * t.ndim, t.shape, [i + 1 for _, _, i in padding_config])
    every = tuple(range(t.ndim))
    return [ct_x, sub(reduce_sum(ct, every), reduce_sum(ct_x, every))]


pad_p = define("pad", shape=_pad_shape, lower=_pad_lowering, jvp=ad.linear_jvp, vjp=_pad_vjp,
               batch=_pad_batch)


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


def _slice_batch(values, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = values, dims
    size = type_of(x).shape[d]
    return [slice(x, start_indices[:d] + (0,) + start_indices[d:],
                  limit_indices[:d] + (size,) + limit_indices[d:],
                  strides[:d] + (1,) + strides[d:])], [d]


def _slice_vjp(cts, xs, outs, *, start_indices, limit_indices, strides):
    """The cotangent padded back to the operand's shape: zeros between strided elements."""
    shape, out_shape = type_of(xs[0]).shape, type_of(outs[0]).shape
    config = [(lo, n - (lo + (m - 1) * st + 1 if m else lo), st - 1)
              for n, m, lo, st in zip(shape, out_shape, start_indices, strides)]
    return [pad(cts[0], 0, config)]


slice_p = define("slice", shape=_slice_shape, lower=_slice_lowering, jvp=ad.linear_jvp,
                 vjp=_slice_vjp,
                 batch=_slice_batch)


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


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """JAX's: operand[..., index] along `axis` for a static index (negative counts from
    the end; out of range is JAX's IndexError), that axis kept or dropped."""
    index, axis = operator.index(index), int(axis)
    n = type_of(operand).shape[axis]
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(at_user_line(
            f"index {index} is out of bounds for axis {axis} with size {n}"))
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis % type_of(operand).ndim,))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """JAX's: the axes [start_dimension, stop_dimension) raveled into one, a reshape."""
    shape = type_of(operand).shape
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(at_user_line(f"Invalid dimension range passed to collapse: {shape}"
                                      f"[{start_dimension}:{stop_dimension}]"))
    return reshape(operand, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


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


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *indices = primals
    return ([dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)],
            [dynamic_slice_p.bind(ad.instantiate(tangents[0]), *indices, slice_sizes=slice_sizes)])


def _dynamic_slice_vjp(cts, primals, outs, *, slice_sizes):
    x, *indices = primals
    zeros = ad.zeros(type_of(x))
    return [dynamic_update_slice_p.bind(zeros, cts[0], *indices)] + [None] * len(indices)


def _index_vectors(indices, dims, size):
    """Rank-0 start indices, some batched, as one (size, len(indices)) array."""
    kinds = {type_of(i).dtype for i in indices}
    dtype = kinds.pop() if len(kinds) == 1 else dtypes.int32
    columns = [expand_dims(batch_at(convert_element_type(i, dtype), d, size), (1,))
               for i, d in zip(indices, dims)]
    return concatenate(columns, 1)


def _dynamic_slice_batch(values, dims, *, slice_sizes):
    """Batched start indices make a gather (which clamps them as dynamic_slice does)."""
    (x, *indices), (dx, *di) = values, dims
    size = axis_size(values, dims)
    n = len(indices)
    if all(d is not_mapped for d in di):
        zero = lift(0, type_of(indices[0]).dtype if indices else dtypes.int32)
        return [dynamic_slice_p.bind(x, *indices[:dx], zero, *indices[dx:],
                                     slice_sizes=slice_sizes[:dx] + (size,) + slice_sizes[dx:])
                ], [dx]
    from .indexing import gather_by_dims  # indexing's rules use this module's wrappers
    starts = _index_vectors(indices, di, size)
    if dx is not_mapped:
        out = gather_by_dims(x, starts, offset_dims=range(1, n + 1), collapsed_slice_dims=(),
                             start_index_map=range(n), slice_sizes=slice_sizes,
                             index_vector_dim=1)
    else:
        out = gather_by_dims(moveaxis(x, dx, 0), starts, offset_dims=range(1, n + 1),
                             collapsed_slice_dims=(), start_index_map=range(1, n + 1),
                             slice_sizes=(1,) + slice_sizes, index_vector_dim=1,
                             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    return [out], [0]


dynamic_slice_p = define("dynamic_slice", shape=_dynamic_slice_shape,
                         lower=_dynamic_slice_lowering,
                         jvp=_dynamic_slice_jvp, vjp=_dynamic_slice_vjp,
                         batch=_dynamic_slice_batch, linear="all")


def _start_indices(indices, shape):
    """Rank-0 start indices; negative ones count from the end, as in JAX
    (allow_negative_indices), and then clamp into range like any other. Signed ones come
    out strong, as JAX's do, which makes a dynamic_update_slice result strong."""
    out = []
    for i, n in zip(indices, shape):
        if dtypes.is_python_scalar(i):
            out.append(lift(i + n if i < 0 else i, dtypes.int32))
        elif dtypes.is_unsigned(type_of(i).dtype):
            out.append(i)
        else:
            out.append(select(lt(i, 0), add(i, lift(n, type_of(i).dtype)), i))
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
    # JAX's standard rule: weak if all operands are (start indices included)
    return ArrayType(x.shape, x.dtype, all(t.weak for t in (x, update, *indices)))


def _dynamic_update_slice_lowering(ctx, eqn, x, update, *indices):
    return _simple(ctx, eqn, "stablehlo.dynamic_update_slice", [x, update, *indices])


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *indices = primals
    tx, tu = map(ad.instantiate, tangents[:2])
    return ([dynamic_update_slice_p.bind(x, update, *indices)],
            [dynamic_update_slice_p.bind(tx, tu, *indices)])


def _dynamic_update_slice_vjp(cts, primals, outs):
    x, update, *indices = primals
    ut = type_of(update)
    return [dynamic_update_slice_p.bind(cts[0], ad.zeros(ut), *indices),
            dynamic_slice_p.bind(cts[0], *indices, slice_sizes=ut.shape)] + [None] * len(indices)


def _dynamic_update_slice_batch(values, dims):
    """Batched start indices make a scatter; they are clamped first, as
    dynamic_update_slice clamps them (a scatter would drop the update instead)."""
    (x, update, *indices), (dx, du, *di) = values, dims
    size = axis_size(values, dims)
    x, update = batch_at(x, dx, size), batch_at(update, du, size)
    if all(d is not_mapped for d in di):
        zero = lift(0, type_of(indices[0]).dtype if indices else dtypes.int32)
        return [dynamic_update_slice_p.bind(x, update, zero, *indices)], [0]
    from .indexing import scatter_by_dims  # indexing's rules use this module's wrappers
    shape, update_shape = type_of(x).shape[1:], type_of(update).shape[1:]
    indices = [clamp(0, i, n - u) for i, n, u in zip(indices, shape, update_shape)]
    starts = _index_vectors(indices, di, size)
    counter = broadcasted_iota(type_of(starts).dtype, (size, 1), 0)
    n = len(indices)
    return [scatter_by_dims(x, concatenate([counter, starts], 1), update,
                            update_window_dims=range(1, n + 1), inserted_window_dims=(0,),
                            scatter_dims_to_operand_dims=range(n + 1), index_vector_dim=1)], [0]


dynamic_update_slice_p = define("dynamic_update_slice", shape=_dynamic_update_slice_shape,
                                lower=_dynamic_update_slice_lowering,
                                jvp=_dynamic_update_slice_jvp, vjp=_dynamic_update_slice_vjp,
                                batch=_dynamic_update_slice_batch, linear="all")


def dynamic_update_slice(x, update, start_indices):
    return dynamic_update_slice_p.bind(x, update,
                                       *_start_indices(start_indices, type_of(x).shape))


def dynamic_slice_in_dim(x, start_index, slice_size: int, axis: int = 0):
    """dynamic_slice along one axis, the others whole (JAX's)."""
    t = type_of(x)
    axis = axis % t.ndim
    starts = [0] * t.ndim
    starts[axis] = start_index
    return dynamic_slice(x, starts, [slice_size if i == axis else n
                                     for i, n in enumerate(t.shape)])


def dynamic_index_in_dim(x, index, axis: int = 0, keepdims: bool = True):
    """The slice at `index` along one axis (JAX's), that axis kept or dropped."""
    axis = axis % type_of(x).ndim
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(x, update, start_index, axis: int):
    """dynamic_update_slice at `start_index` along one axis, 0 along the others (JAX's)."""
    t = type_of(x)
    axis = axis % t.ndim
    starts = [0] * t.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)
