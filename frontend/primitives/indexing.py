"""gather and scatter: indexing by integer arrays (take, take_along_axis, x[idx], x.at[idx]).

Parameters follow StableHLO's dimension numbers. Start indices are clamped so each
slice stays in bounds (XLA's semantics); tracehlo.numpy wraps negative indices first.
gather's `mode` is JAX's for its derivative: 'clip' sends an out-of-bounds slice's
cotangent to the clamped slice it read, 'promise_in_bounds' (x[idx]) drops it, as
XLA's scatter drops an out-of-bounds window.
"""
from __future__ import annotations

import enum
from typing import NamedTuple, Sequence

import numpy as np

from .. import ad, core, dtypes
from ..batching import axis_size, batch_at, moveaxis, not_mapped
from ..core import at_user_line, lift, type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define, scalars_to
from .elementwise import (add, bitwise_and, clamp, convert_element_type, div, eq, ge, gt,
                          le, mul, ne, neg, select, sub)
from .reductions import reduce_and, reduce_max
from .shape_ops import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota,
                        reshape)


def _field_list(name, dims):
    return f"{name} = [{', '.join(map(str, dims))}]"


# gather[offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
#        start_indices_batching_dims, index_vector_dim, slice_sizes, mode] operand, indices
_GATHER_MODES = ("clip", "promise_in_bounds")


def _gather_shape(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                  operand_batching_dims, start_indices_batching_dims, index_vector_dim,
                  slice_sizes, mode):
    if mode not in _GATHER_MODES:
        raise ValueError(f"gather mode must be one of {_GATHER_MODES}, got {mode!r}")
    if not dtypes.is_int(indices.dtype):
        raise TypeError(f"gather indices must be integers, got {indices}")
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= s <= n for s, n in zip(slice_sizes, operand.shape)):
        raise ValueError(f"gather slice_sizes {slice_sizes} do not fit {operand}")
    index_shape = list(indices.shape)
    if index_vector_dim == len(index_shape):
        index_shape.append(1)
    if index_shape[index_vector_dim] != len(start_index_map):
        raise ValueError("gather: the index vector length must equal len(start_index_map)")
    batch = [n for i, n in enumerate(index_shape) if i != index_vector_dim]
    removed = set(collapsed_slice_dims) | set(operand_batching_dims)
    offsets = [s for i, s in enumerate(slice_sizes) if i not in removed]
    if len(offsets) != len(offset_dims):
        raise ValueError("gather: offset_dims must name one output axis per kept slice axis")
    batch_it, offset_it = iter(batch), iter(offsets)
    shape = tuple(next(offset_it) if d in offset_dims else next(batch_it)
                  for d in range(len(batch) + len(offsets)))
    return ArrayType(shape, operand.dtype, operand.weak)


def _gather_lowering(ctx, eqn, operand, indices):
    p = eqn.params
    fields = [_field_list("offset_dims", p["offset_dims"]),
              _field_list("collapsed_slice_dims", p["collapsed_slice_dims"]),
              _field_list("operand_batching_dims", p["operand_batching_dims"]),
              _field_list("start_indices_batching_dims", p["start_indices_batching_dims"]),
              _field_list("start_index_map", p["start_index_map"]),
              f"index_vector_dim = {p['index_vector_dim']}"]
    return ctx.generic("stablehlo.gather", [operand, indices], [a.type for a in eqn.inputs],
                       [eqn.outputs[0].type], {
                           "dimension_numbers": f"#stablehlo.gather<{', '.join(fields)}>",
                           "slice_sizes": dims_attr(p["slice_sizes"]),
                           "indices_are_sorted": "false"})


def _plus1(dims):
    return tuple(d + 1 for d in dims)


def _gather_batch(values, dims, *, offset_dims, collapsed_slice_dims, start_index_map,
                  operand_batching_dims, start_indices_batching_dims, index_vector_dim,
                  slice_sizes, mode):
    """A batched operand is sliced whole along its batch axis (one more offset axis);
    batched indices are one more batch axis of the result; both batched pair up as a
    batching dimension of the gather. The batch axis ends up first in every case."""
    (x, indices), (dx, di) = values, dims
    if di is not_mapped:
        x = moveaxis(x, dx, 0)
        return [gather_by_dims(
            x, indices, offset_dims=(0,) + _plus1(offset_dims),
            collapsed_slice_dims=_plus1(collapsed_slice_dims),
            start_index_map=_plus1(start_index_map),
            operand_batching_dims=_plus1(operand_batching_dims),
            start_indices_batching_dims=start_indices_batching_dims,
            index_vector_dim=index_vector_dim,
            slice_sizes=(type_of(x).shape[0],) + slice_sizes, mode=mode)], [0]
    indices = moveaxis(indices, di, 0)
    if dx is not_mapped:
        return [gather_by_dims(
            x, indices, offset_dims=_plus1(offset_dims),
            collapsed_slice_dims=collapsed_slice_dims, start_index_map=start_index_map,
            operand_batching_dims=operand_batching_dims,
            start_indices_batching_dims=_plus1(start_indices_batching_dims),
            index_vector_dim=index_vector_dim + 1, slice_sizes=slice_sizes, mode=mode)], [0]
    return [gather_by_dims(
        moveaxis(x, dx, 0), indices, offset_dims=_plus1(offset_dims),
        collapsed_slice_dims=_plus1(collapsed_slice_dims),
        start_index_map=_plus1(start_index_map),
        operand_batching_dims=(0,) + _plus1(operand_batching_dims),
        start_indices_batching_dims=(0,) + _plus1(start_indices_batching_dims),
        index_vector_dim=index_vector_dim + 1, slice_sizes=(1,) + slice_sizes, mode=mode)], [0]


def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    return ([gather_p.bind(operand, indices, **params)],
            [gather_p.bind(ad.instantiate(tangents[0]), indices, **params)])


def _unbatched(indices, p):
    """Indices and dimension numbers of the same gather without batching dimensions: each
    batching dimension's position becomes an explicit index component (an iota), and
    the operand's batching dimension a collapsed one, so a scatter can undo it."""
    if not p["operand_batching_dims"]:
        return indices, p
    ivd = p["index_vector_dim"]
    if ivd == type_of(indices).ndim:
        indices = expand_dims(indices, (ivd,))
    t = type_of(indices)
    one = tuple(1 if d == ivd else n for d, n in enumerate(t.shape))
    iotas = [broadcasted_iota(t.dtype, one, d) for d in p["start_indices_batching_dims"]]
    return concatenate([indices, *iotas], ivd), dict(
        p, collapsed_slice_dims=tuple(sorted(p["collapsed_slice_dims"]
                                             + p["operand_batching_dims"])),
        start_index_map=p["start_index_map"] + p["operand_batching_dims"],
        operand_batching_dims=(), start_indices_batching_dims=())


def _as_scatter(indices, p):
    """The indices and params of the scatter that writes where the gather with params
    `p` reads, batching dimensions made explicit (see _unbatched)."""
    indices, p = _unbatched(indices, p)
    return indices, dict(update_window_dims=p["offset_dims"],
                         inserted_window_dims=p["collapsed_slice_dims"],
                         scatter_dims_to_operand_dims=p["start_index_map"],
                         index_vector_dim=p["index_vector_dim"])


def _clamped(indices, operand_shape, start_index_map, slice_sizes, ivd):
    """Start indices clamped as gather clamps them, so a scatter writes where gather read
    (scatter drops out-of-bounds windows instead)."""
    t = type_of(indices)
    hi = _upper_bounds(indices, operand_shape, start_index_map, slice_sizes, ivd)
    return clamp(broadcast_in_dim(core.lift(0, t.dtype), t.shape, ()), indices, hi)


def _upper_bounds(indices, operand_shape, start_index_map, slice_sizes, ivd):
    """The largest start index of each index vector component whose slice stays in
    bounds, shaped to compare with indices (index_vector_dim ivd)."""
    t = type_of(indices)
    most = np.iinfo(t.dtype).max  # a narrow index type cannot reach past it anyway
    upper = np.array([min(operand_shape[d] - slice_sizes[d], most) for d in start_index_map],
                     t.dtype)
    return (core.lift(upper.reshape(())) if ivd == t.ndim
            else broadcast_in_dim(core.lift(upper), t.shape, (ivd,)))


def _gather_vjp(cts, primals, outs, **params):
    """Scatter-add the cotangent back to where the slices came from: in mode 'clip' the
    clamped starts; else the starts as given, so out-of-bounds slices get nothing (as
    JAX transposes its default promise_in_bounds gather of x[idx])."""
    operand, indices = primals
    if params["mode"] == "clip":
        indices = _clamped(indices, type_of(operand).shape, params["start_index_map"],
                           params["slice_sizes"], params["index_vector_dim"])
    indices, p = _as_scatter(indices, params)
    return [scatter_p.bind(ad.zeros(type_of(operand)), indices, cts[0], **p, combiner="add",
                           indices_are_sorted=False, unique_indices=False), None]


gather_p = define("gather", shape=_gather_shape, lower=_gather_lowering,
                  jvp=_gather_jvp, vjp=_gather_vjp,
                  batch=_gather_batch, linear="all")


def gather_by_dims(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                   slice_sizes, index_vector_dim, operand_batching_dims=(),
                   start_indices_batching_dims=(), mode="clip"):
    """The gather primitive by its parameters, as StableHLO's gather takes them (the
    index vector anywhere): what tracehlo.numpy's indexing and the rules bind. JAX's
    lax.gather is `gather` below."""
    return gather_p.bind(
        operand, indices, offset_dims=tuple(offset_dims),
        collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map),
        operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims),
        index_vector_dim=index_vector_dim, slice_sizes=tuple(slice_sizes), mode=mode)


# scatter[update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
#         index_vector_dim, combiner, indices_are_sorted, unique_indices]
#         operand, indices, updates
# combiner: 'set' (last write wins) | 'add' | 'mul' | 'min' | 'max'. Out-of-bounds
# updates are dropped (XLA's semantics). The two promises go to XLA as JAX passes them.
_SCATTER_COMBINERS = {"add": "stablehlo.add", "mul": "stablehlo.multiply",
                      "min": "stablehlo.minimum", "max": "stablehlo.maximum"}


def _check_dims(dims, rank, name):
    """JAX's checks of one sorted dimension list of a scatter, with its messages."""
    if list(dims) != sorted(dims):
        raise TypeError(f"{name} in scatter op must be sorted; got {dims}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in scatter op must not repeat; got: {dims}.")
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in scatter op; valid range is "
                            f"[0, {rank}); got: {d}.")


def _check_scatter(operand, indices, updates, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, index_vector_dim, operand_batching_dims=(),
                   scatter_indices_batching_dims=()):
    """JAX's lax scatter shape and dtype checks, in its words: the primitive's (without
    batching dimensions) and lax.scatter_*'s on the user's dimension numbers."""
    if not dtypes.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    if updates.dtype != operand.dtype:
        raise TypeError(f"lax.scatter requires arguments to have the same dtypes, got "
                        f"{operand.dtype.name}, {updates.dtype.name}.")
    if not 0 <= index_vector_dim <= indices.ndim:
        raise TypeError(f"Scatter index leaf dimension must be within [0, rank(indices) + "
                        f"1). rank(indices) is {indices.ndim} and scatter index leaf "
                        f"dimension is {index_vector_dim}.")
    index_shape = list(indices.shape) + [1] * (index_vector_dim == indices.ndim)
    rank = len(index_shape) - 1 + len(update_window_dims)
    if updates.ndim != rank:
        raise TypeError(f"Updates tensor must be of rank {rank}; got {updates.ndim}.")
    _check_dims(update_window_dims, updates.ndim, "update_window_dims")
    _check_dims(inserted_window_dims, operand.ndim, "inserted_window_dims")
    _check_dims(operand_batching_dims, operand.ndim, "operand_batching_dims")
    if not set(inserted_window_dims).isdisjoint(operand_batching_dims):
        raise TypeError(f"inserted_window_dims and operand_batching_dims in scatter op must "
                        f"be disjoint; got: {inserted_window_dims} and "
                        f"{operand_batching_dims}.")
    if not set(scatter_dims_to_operand_dims).isdisjoint(operand_batching_dims):
        raise TypeError(f"scatter_dims_to_operand_dims and operand_batching_dims in scatter "
                        f"op must be disjoint; got: {scatter_dims_to_operand_dims} and "
                        f"{operand_batching_dims}.")
    if len(set(scatter_indices_batching_dims)) != len(scatter_indices_batching_dims):
        raise TypeError(f"scatter_indices_batching_dims in scatter op must not repeat; got: "
                        f"{scatter_indices_batching_dims}.")
    for d in scatter_indices_batching_dims:
        if not 0 <= d < indices.ndim:
            raise TypeError(f"Invalid scatter_indices_batching_dims set in scatter op; "
                            f"valid range is [0, {indices.ndim}); got: {d}.")
    if index_vector_dim in scatter_indices_batching_dims:
        raise TypeError(f"Scatter op cannot have the index vector dimension as a batching "
                        f"dimension; got {scatter_indices_batching_dims}.")
    if len(operand_batching_dims) != len(scatter_indices_batching_dims):
        raise TypeError(f"Scatter op requires equal numbers of operand_batching_dims and "
                        f"scatter_indices_batching_dims, got {operand_batching_dims} and "
                        f"{scatter_indices_batching_dims}.")
    operand_batch = tuple(operand.shape[d] for d in operand_batching_dims)
    indices_batch = tuple(index_shape[d] for d in scatter_indices_batching_dims)
    if operand_batch != indices_batch:
        raise TypeError(f"Scatter op requires operand batching dimensions and indices "
                        f"batching dimensions to have the same shape, got {operand_batch} "
                        f"and {indices_batch}.")
    window = len(update_window_dims) + len(inserted_window_dims) + len(operand_batching_dims)
    if window != operand.ndim:
        raise TypeError(f"Scatter op has window of size {window}; doesn't match operand "
                        f"of rank {operand.ndim}.")
    if len(scatter_dims_to_operand_dims) != index_shape[index_vector_dim]:
        raise TypeError(f"Scatter op has {len(scatter_dims_to_operand_dims)} elements in "
                        f"scatter_dims_to_operand_dims and the bound of dimension "
                        f"index_vector_dim={index_vector_dim} of indices is "
                        f"{index_shape[index_vector_dim]}. These two numbers must be equal")
    for i, d in enumerate(scatter_dims_to_operand_dims):
        if not 0 <= d < operand.ndim:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is "
                            f"[0, {operand.ndim}), got: {i}->{d}.")
    if len(set(scatter_dims_to_operand_dims)) != len(scatter_dims_to_operand_dims):
        raise TypeError(f"scatter_dims_to_operand_dims in scatter op must not repeat; got: "
                        f"{scatter_dims_to_operand_dims}.")
    removed = set(inserted_window_dims) | set(operand_batching_dims)
    bounds = [n for d, n in enumerate(operand.shape) if d not in removed]
    for d, bound in zip(update_window_dims, bounds):
        if updates.shape[d] > bound:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed "
                            f"the bounds of the corresponding dimensions of operand. For "
                            f"dimension {d}, updates bound is {updates.shape[d]}, operand "
                            f"bound is {bound}.")
    scatter_bounds = iter(n for d, n in enumerate(index_shape) if d != index_vector_dim)
    for d in range(updates.ndim):
        if d not in update_window_dims and updates.shape[d] != (n := next(scatter_bounds)):
            raise TypeError(f"Bounds of the scatter dimensions of updates must be the same "
                            f"as the bounds of the corresponding dimensions of scatter "
                            f"indices. For scatter dimension {d}, updates bound is "
                            f"{updates.shape[d]}, indices bound is {n}.")


def _scatter_shape(operand, indices, updates, *, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, index_vector_dim, combiner,
                   indices_are_sorted, unique_indices):
    if combiner != "set" and combiner not in _SCATTER_COMBINERS:
        raise ValueError(f"scatter combiner must be 'set' or one of "
                         f"{sorted(_SCATTER_COMBINERS)}, got {combiner!r}")
    if operand.dtype == dtypes.bool_ and combiner in ("add", "mul"):
        raise TypeError(f"{combiner} does not accept dtype bool at position 0. Accepted "
                        "dtypes at position 0 are subtypes of integer, floating, "
                        "complexfloating.")
    _check_scatter(operand, indices, updates, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, index_vector_dim)
    return ArrayType(operand.shape, operand.dtype, operand.weak)


def _scatter_lowering(ctx, eqn, operand, indices, updates):
    p = eqn.params
    scalar = ArrayType((), eqn.inputs[0].type.dtype)
    t = tensor_type(scalar)
    if p["combiner"] == "set":
        body = ctx.region([scalar, scalar], [scalar], lambda old, new: new)
    else:
        body = ctx.region([scalar, scalar], [scalar], lambda old, new: ctx.op(
            f"{_SCATTER_COMBINERS[p['combiner']]} {old}, {new} : {t}"))
    fields = [_field_list("update_window_dims", p["update_window_dims"]),
              _field_list("inserted_window_dims", p["inserted_window_dims"]),
              _field_list("scatter_dims_to_operand_dims", p["scatter_dims_to_operand_dims"]),
              f"index_vector_dim = {p['index_vector_dim']}"]
    return ctx.generic("stablehlo.scatter", [operand, indices, updates],
                       [a.type for a in eqn.inputs], [eqn.outputs[0].type], {
                           "scatter_dimension_numbers":
                               f"#stablehlo.scatter<{', '.join(fields)}>",
                           "indices_are_sorted": str(p["indices_are_sorted"]).lower(),
                           "unique_indices": str(p["unique_indices"]).lower()}, [body])


def _scatter_batch(values, dims, *, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, index_vector_dim, **kinds):
    """Operand and updates batched along axis 0. With shared indices the batch axis is
    one more window axis; with batched indices each index vector gets the example's
    number as a leading component, addressing the operand's batch axis."""
    (x, indices, updates), (dx, di, du) = values, dims
    size = axis_size(values, dims)
    x, updates = batch_at(x, dx, size), batch_at(updates, du, size)
    if di is not_mapped:
        return [scatter_by_dims(
            x, indices, updates, update_window_dims=(0,) + _plus1(update_window_dims),
            inserted_window_dims=_plus1(inserted_window_dims),
            scatter_dims_to_operand_dims=_plus1(scatter_dims_to_operand_dims),
            index_vector_dim=index_vector_dim, **kinds)], [0]
    indices = moveaxis(indices, di, 0)
    vector_dim = index_vector_dim + 1
    if vector_dim == type_of(indices).ndim:  # an implicit trailing vector of one index
        indices = expand_dims(indices, (vector_dim,))
    shape = list(type_of(indices).shape)
    shape[vector_dim] = 1
    counter = broadcasted_iota(type_of(indices).dtype, shape, 0)
    return [scatter_by_dims(
        x, concatenate([counter, indices], vector_dim), updates,
        update_window_dims=_plus1(update_window_dims),
        inserted_window_dims=(0,) + _plus1(inserted_window_dims),
        scatter_dims_to_operand_dims=(0,) + _plus1(scatter_dims_to_operand_dims),
        index_vector_dim=vector_dim, **kinds)], [0]


def _window_sizes(operand_type, updates_type, params):
    """The size along each operand axis of the window one index vector addresses."""
    pos = iter(params["update_window_dims"])
    return [1 if d in params["inserted_window_dims"] else updates_type.shape[next(pos)]
            for d in range(operand_type.ndim)]


class _Targets:
    """Where a scatter's update elements go, for its derivative rules: `back(x)` reads
    x at each update element's target (a gather, shaped as the updates), `to(u)`
    scatters per-update values with another combiner, and `masked(x)` zeroes the
    update elements the scatter drops (gather clamps where scatter drops, so a
    cotangent read back for a dropped element must be masked)."""

    def __init__(self, operand, indices, updates, params):
        self.indices, self.params = indices, params
        self.operand_type, self.updates_type = type_of(operand), type_of(updates)
        self.sizes = _window_sizes(self.operand_type, self.updates_type, params)

    def back(self, x):
        p = self.params
        return gather_by_dims(x, self.indices, offset_dims=p["update_window_dims"],
                              collapsed_slice_dims=p["inserted_window_dims"],
                              start_index_map=p["scatter_dims_to_operand_dims"],
                              slice_sizes=self.sizes, index_vector_dim=p["index_vector_dim"])

    def to(self, u, combiner, onto=None):
        """u scattered with `combiner` onto zeros of the operand's type (or onto)."""
        onto = ad.zeros(ArrayType(self.operand_type.shape, type_of(u).dtype)) \
            if onto is None else onto
        return scatter_p.bind(onto, self.indices, u, **dict(self.params, combiner=combiner))

    def masked(self, x):
        p, it, ut = self.params, type_of(self.indices), self.updates_type
        ivd = p["index_vector_dim"]
        upper = _upper_bounds(self.indices, self.operand_type.shape,
                              p["scatter_dims_to_operand_dims"], self.sizes, ivd)
        ok = bitwise_and(ge(self.indices, np.zeros((), it.dtype)), le(self.indices, upper))
        if ivd < it.ndim:
            ok = reduce_and(ok, (ivd,))
        kept = broadcast_in_dim(ok, ut.shape, tuple(
            d for d in range(ut.ndim) if d not in p["update_window_dims"]))
        return select(kept, x, ad.zeros(type_of(x)))


def _set_winners(targets, updates):
    """True for each update element that a 'set' scatter keeps: of repeated indices the
    one XLA writes last, as JAX's rule finds it (each element's number is scattered and
    read back at its target)."""
    ut = type_of(updates)
    ids = add(reshape(iota(dtypes.int32, ut.size), ut.shape), np.int32(1))
    return eq(targets.back(targets.to(ids, "set")), ids)


def _mul_others(targets, updates):
    """For each update element, the product of the other updates that land where it
    does (its partial derivative in a 'mul' scatter, over the operand there), without
    dividing by zero: the product of the nonzero ones, divided by the element itself
    if it is not zero, and zero where another zero lands too."""
    ut = type_of(updates)
    zero, one = ad.zeros(ut), lift(1, ut.dtype)
    nonzero = ne(updates, zero)
    product = targets.back(targets.to(select(nonzero, updates, one), "mul",
                                      onto=add(ad.zeros(targets.operand_type), one)))
    zeros = targets.back(targets.to(select(nonzero, zero, one), "add"))
    return select(nonzero, select(eq(zeros, zero), div(product, updates), zero),
                  select(eq(zeros, one), product, zero))


def _extremal_coefficients(targets, operand, updates, out):
    """JAX's scatter min/max derivative: the result's tangent at a position is the mean
    of the tangents of the values that tie for the result there (the operand's and the
    updates'). Returns per update element (its coefficient, the operand's coefficient
    at its target divided by the number of updates landing there)."""
    ut = type_of(updates)
    one, zero = lift(1, ut.dtype), ad.zeros(ut)
    target = targets.back(out)
    won = eq(updates, target)
    kept = eq(targets.back(operand), target)
    winners = targets.back(targets.to(select(won, one, zero), "add"))
    refs = targets.back(targets.to(add(zero, one), "add"))
    share = div(one, select(kept, add(winners, one), winners))
    update_coef = select(won, share, zero)
    operand_coef = div(sub(select(kept, share, zero), one), refs)
    return update_coef, operand_coef


def _scatter_jvp(primals, tangents, **params):
    """'add' and 'set' are linear in (operand, updates); 'mul' is linear in the operand
    and multiplies an update's tangent by the other factors at its target; 'min' and
    'max' pass on the tangents of the values that won (see _extremal_coefficients)."""
    operand, indices, updates = primals
    out = scatter_p.bind(operand, indices, updates, **params)
    t_operand, _, t_updates = map(ad.instantiate, tangents)
    combiner = params["combiner"]
    if combiner in ("add", "set"):
        return [out], [scatter_p.bind(t_operand, indices, t_updates, **params)]
    targets = _Targets(operand, indices, updates, params)
    if combiner == "mul":
        return [out], [add(scatter_p.bind(t_operand, indices, updates, **params), mul(
            operand, targets.to(mul(t_updates, _mul_others(targets, updates)), "add")))]
    update_coef, operand_coef = _extremal_coefficients(targets, operand, updates, out)
    return [out], [targets.to(add(mul(targets.back(t_operand), operand_coef),
                                  mul(t_updates, update_coef)), "add", onto=t_operand)]


@ad.takes_needed
def _scatter_vjp(cts, primals, outs, *, needed, **params):
    """The transposes of the JVP's maps: an update's cotangent is read back from its
    target (zero if the scatter dropped it); 'set' hides the operand there and only
    the winner of repeated indices gets the cotangent, as in JAX."""
    operand, indices, updates = primals
    ct, combiner = cts[0], params["combiner"]
    targets = _Targets(operand, indices, updates, params)
    no_updates = ad.zeros(type_of(updates))
    if combiner == "add":
        return [ct, None, targets.masked(targets.back(ct)) if needed[2] else None]
    if combiner == "set":
        return [targets.to(no_updates, "set", onto=ct) if needed[0] else None, None,
                select(_set_winners(targets, updates), targets.back(ct), no_updates)
                if needed[2] else None]
    if combiner == "mul":
        return [scatter_p.bind(ct, indices, updates, **params) if needed[0] else None, None,
                targets.masked(mul(targets.back(mul(ct, operand)),
                                   _mul_others(targets, updates))) if needed[2] else None]
    update_coef, operand_coef = _extremal_coefficients(targets, operand, updates, outs[0])
    back = targets.back(ct)
    return [targets.to(mul(back, operand_coef), "add", onto=ct) if needed[0] else None, None,
            targets.masked(mul(back, update_coef)) if needed[2] else None]


scatter_p = define("scatter", shape=_scatter_shape, lower=_scatter_lowering,
                   jvp=_scatter_jvp, vjp=_scatter_vjp,
                   batch=_scatter_batch, linear=lambda combiner, **_: {
                       "set": "all", "add": "all", "mul": "each"}.get(combiner))


def scatter_by_dims(operand, indices, updates, *, update_window_dims, inserted_window_dims,
                    scatter_dims_to_operand_dims, index_vector_dim, combiner="set",
                    indices_are_sorted=False, unique_indices=False):
    """The scatter primitive by its parameters (see gather_by_dims). JAX's lax.scatter
    and lax.scatter_* are below."""
    return scatter_p.bind(
        operand, indices, updates, update_window_dims=tuple(update_window_dims),
        inserted_window_dims=tuple(inserted_window_dims),
        scatter_dims_to_operand_dims=tuple(scatter_dims_to_operand_dims),
        index_vector_dim=index_vector_dim, combiner=combiner,
        indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices))


# ------------------------------------------ JAX's lax.gather and lax.scatter* functions

class GatherDimensionNumbers(NamedTuple):
    """JAX's: the index vector is always the last axis of the indices."""
    offset_dims: Sequence[int]
    collapsed_slice_dims: Sequence[int]
    start_index_map: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    start_indices_batching_dims: Sequence[int] = ()


class ScatterDimensionNumbers(NamedTuple):
    """JAX's: the index vector is always the last axis of the indices."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """JAX's out-of-bounds modes. A scatter drops an out-of-bounds window in every mode
    but CLIP, which first clamps the indices so that the window fits."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, enum.Enum) and s.name in GatherScatterMode.__members__:
            return GatherScatterMode[s.name]  # ours or JAX's
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """JAX's lax.gather. Out-of-bounds starts are clamped (mode None, 'clip',
    'promise_in_bounds'), or their slices are fill_value ('fill': NaN, the least signed
    or greatest unsigned integer, True by default), masked after a clamping gather as
    JAX lowers it. unique_indices only speaks of the derivative's scatter, which adds
    up every slice's cotangent in any case."""
    del unique_indices, indices_are_sorted  # hints for XLA, which ours need not give
    try:
        mode = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                else GatherScatterMode.from_any(mode))
        if mode is GatherScatterMode.ONE_HOT:
            raise NotImplementedError("lax.gather with mode one_hot")
        dims = _fields_of(dimension_numbers, GatherDimensionNumbers)
    except (NotImplementedError, TypeError, ValueError) as e:
        raise type(e)(at_user_line(str(e))) from None
    ivd = type_of(start_indices).ndim - 1
    gathered = gather_by_dims(
        operand, start_indices, **dims, slice_sizes=slice_sizes, index_vector_dim=ivd,
        mode="clip" if mode is GatherScatterMode.CLIP else "promise_in_bounds")
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return gathered
    return _filled_out_of_bounds(gathered, type_of(operand), start_indices, dims,
                                 slice_sizes, fill_value)


def _fields_of(dimension_numbers, kind) -> dict:
    """The dimension numbers' fields (tuples) by name; a TypeError for anything that
    lacks them (JAX's AttributeError, from deep inside it)."""
    try:
        return {f: tuple(getattr(dimension_numbers, f)) for f in kind._fields}
    except (AttributeError, TypeError):
        raise TypeError(f"dimension_numbers must be a {kind.__name__}, got "
                        f"{dimension_numbers!r}") from None


def _filled_out_of_bounds(gathered, operand_type, start_indices, dims, slice_sizes,
                          fill_value):
    """JAX's FILL_OR_DROP gather: fill_value wherever a slice starts out of bounds
    (below 0, or too near the end for slice_sizes to fit), in int32 indices as JAX
    compares them for an operand whose dimensions int32 holds."""
    dtype = operand_type.dtype
    if fill_value is None:
        fill_value = (np.nan if dtypes.is_inexact(dtype) else True if dtype == dtypes.bool_
                      else np.iinfo(dtype).max if dtypes.is_unsigned(dtype)
                      else np.iinfo(dtype).min)
    index_dtype = (dtypes.int32 if max(operand_type.shape, default=0) < 2**31
                   else dtypes.int64)
    indices = convert_element_type(start_indices, index_dtype)
    t = type_of(indices)
    upper = np.array([operand_type.shape[d] - slice_sizes[d] for d in dims["start_index_map"]],
                     index_dtype)
    in_bounds = bitwise_and(
        ge(indices, broadcast_in_dim(core.lift(0, index_dtype), t.shape, ())),
        le(indices, broadcast_in_dim(core.lift(upper), t.shape, (t.ndim - 1,))))
    in_bounds = reduce_and(in_bounds, (t.ndim - 1,))
    out = type_of(gathered)
    batch_dims = tuple(d for d in range(out.ndim) if d not in dims["offset_dims"])
    fill = broadcast_in_dim(core.lift(fill_value, dtype), out.shape, ())
    return select(broadcast_in_dim(in_bounds, out.shape, batch_dims), gathered, fill)


def _scatter_as(combiner, operand, scatter_indices, updates, dimension_numbers,
                indices_are_sorted, unique_indices, mode):
    """JAX's lax.scatter_{combiner} on the scatter primitive: batching dimensions become
    explicit index components and mode 'clip' clamps the indices first, as JAX lowers
    it, so the derivative and batching rules see a plain scatter."""
    try:
        mode = GatherScatterMode.from_any(mode)
        dims = list(_fields_of(dimension_numbers, ScatterDimensionNumbers).values())
        (updates,) = scalars_to(type_of(operand).dtype, updates)
        operand_type, indices_type = type_of(operand), type_of(scatter_indices)
        ivd = indices_type.ndim - 1
        _check_scatter(operand_type, indices_type, type_of(updates), *dims[:3], ivd,
                       *dims[3:])
    except core.TracehloError:
        raise  # it names the user's line already
    except (TypeError, ValueError) as e:
        raise type(e)(at_user_line(str(e))) from None
    indices, params = _as_scatter(scatter_indices, dict(
        offset_dims=dims[0], collapsed_slice_dims=dims[1], start_index_map=dims[2],
        operand_batching_dims=dims[3], start_indices_batching_dims=dims[4],
        index_vector_dim=ivd))
    if mode is GatherScatterMode.CLIP:
        indices = _clamped(indices, operand_type.shape, params["scatter_dims_to_operand_dims"],
                           _window_sizes(operand_type, type_of(updates), params), ivd)
    return scatter_by_dims(operand, indices, updates, **params, combiner=combiner,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _scatter_function(combiner, doc):
    def wrapper(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter_as(combiner, operand, scatter_indices, updates, dimension_numbers,
                           indices_are_sorted, unique_indices, mode)
    wrapper.__name__ = wrapper.__qualname__ = (
        "scatter" if combiner == "set" else f"scatter_{combiner}")
    wrapper.__doc__ = doc
    return wrapper


scatter = _scatter_function(
    "set", "JAX's lax.scatter: of duplicate indices, one update wins (which one is XLA's "
    "choice, as in JAX).")
scatter_add = _scatter_function("add", "JAX's lax.scatter_add: duplicate indices add up.")
scatter_mul = _scatter_function(
    "mul", "JAX's lax.scatter_mul. Its derivative in the updates is the exact one for "
    "duplicate indices too, where JAX's raises NotImplementedError unless unique_indices.")
scatter_min = _scatter_function(
    "min", "JAX's lax.scatter_min; the derivative splits evenly among the tied values.")
scatter_max = _scatter_function(
    "max", "JAX's lax.scatter_max; the derivative splits evenly among the tied values.")


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """JAX's lax.scatter_sub, as scatter_add of the negated updates: the same bits for
    every dtype (negation wraps as subtraction does) and the same derivative."""
    if type_of(operand).dtype == dtypes.bool_:
        raise TypeError(at_user_line(
            "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 "
            "are subtypes of integer, floating, complexfloating."))
    (updates,) = scalars_to(type_of(operand).dtype, updates)
    return _scatter_as("add", operand, scatter_indices, neg(updates), dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """JAX's lax.scatter_apply: func (elementwise) applied at each index, once per
    occurrence, as XLA's scatter applies it: how often each element is addressed is
    counted by a scatter_add, then apply_per_count applies func that many times."""
    counts = scatter_add(broadcast_in_dim(np.int32(0), type_of(operand).shape, ()),
                         scatter_indices, broadcast_in_dim(np.int32(1), update_shape, ()),
                         dimension_numbers, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    return apply_per_count(operand, counts, func, unique_indices)


def apply_per_count(operand, counts, func, unique_indices=False):
    """`operand` with elementwise `func` applied counts[i] times to element i: a scatter
    of func (lax.scatter_apply, .at[].apply), which XLA applies once per occurrence of an
    index, as a loop up to the largest count (one step when indices are unique)."""
    from ..control_flow import fori_loop

    def body(k, y):
        return select(gt(counts, k), func(y), y)
    if unique_indices:
        return body(np.int32(0), operand)
    return fori_loop(np.int32(0), reduce_max(counts, tuple(range(type_of(operand).ndim))),
                     body, operand)
