"""NumPy indexing (`x[...]`) and functional updates (`x.at[...].set(v)`).

Static ints and slices become slice/rev/reshape; a traced scalar index becomes
dynamic_slice; integer arrays become gather (scatter for updates), with NumPy's
rule for where the broadcast index axes go.
"""
from __future__ import annotations

import numpy as _np

from .. import dtypes, lax
from ..core import Tracer, at_user_line, type_of
from ..primitives.indexing import apply_per_count, gather_by_dims, scatter_by_dims
from .. import numpy as tnp
from ._sorting import _fill_value, _wrap_negative
from ._util import _broadcast_shapes, _promote_no_broadcast


def _is_int_scalar(i) -> bool:
    return isinstance(i, (int, _np.integer)) and not isinstance(i, (bool, _np.bool_))


def _normalize(x, index):
    """(x with None axes inserted, one entry per axis of that x: int | slice | array,
    the inserted axes)."""
    index = index if isinstance(index, tuple) else (index,)
    for i in index:
        if not (i is None or i is Ellipsis or isinstance(i, slice) or _is_int_scalar(i)
                or _is_bool_scalar(i) or _is_array_index(i)):
            raise IndexError(at_user_line(
                "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
                f"arrays are valid indices, got {type(i).__name__}"))
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError(at_user_line("an index can only have a single ellipsis ('...')"))
    real = [i for i in index if i is not None and i is not Ellipsis and not _is_bool_scalar(i)]
    consumed = sum(_np.ndim(i) if _is_bool_array(i) else 1 for i in real)
    if consumed > x.ndim:
        raise IndexError(at_user_line(f"too many indices for array: array is {x.ndim}-"
                                      f"dimensional, but {consumed} were indexed"))
    expanded = []
    for i in index:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - consumed))
        elif _is_bool_scalar(i):  # a new axis, indexed by [0] or []: NumPy's 0-d mask
            expanded.append(_ScalarBool(bool(i)))
        elif _is_bool_array(i):
            expanded.extend(_np.nonzero(_np.asarray(i)))  # static mask: concrete indices
        else:
            expanded.append(i)
    if not any(i is Ellipsis for i in index):
        expanded.extend([slice(None)] * (x.ndim - consumed))
    new_axes = [k for k, i in enumerate(expanded) if i is None or type(i) is _ScalarBool]
    if new_axes:
        x = lax.expand_dims(x, new_axes)
        expanded = [slice(None) if i is None else
                    _np.arange(int(i.value)) if type(i) is _ScalarBool else i for i in expanded]
    return x, expanded, new_axes


class _ScalarBool:
    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value


def _is_bool_scalar(i) -> bool:
    """A concrete 0-d boolean index (True, np.True_, a 0-d mask array)."""
    return isinstance(i, (bool, _np.bool_)) or (
        not isinstance(i, Tracer) and _is_array_index(i) and _np.ndim(i) == 0
        and _np.dtype(getattr(i, "dtype", None) or _np.asarray(i).dtype) == _np.bool_)


class NonConcreteBooleanIndexError(IndexError):
    """A traced boolean mask: the result's shape would depend on the mask's values."""


def _is_bool_array(i) -> bool:
    if isinstance(i, Tracer):
        if i.dtype == dtypes.bool_:
            raise NonConcreteBooleanIndexError(at_user_line(
                f"Array boolean indices must be concrete; got {type_of(i)}\n\n"
                "See https://docs.jax.dev/en/latest/errors.html"
                "#jax.errors.NonConcreteBooleanIndexError"))
        return False
    return (isinstance(i, list) or _is_array_index(i)) and _np.asarray(i).dtype == _np.bool_


def _is_array_index(i) -> bool:
    return isinstance(i, (Tracer, list, _np.ndarray)) or hasattr(i, "__jax_array__") or (
        hasattr(i, "shape") and hasattr(i, "dtype") and not _is_int_scalar(i))


def _static_slices(x, entries):
    """Apply every static slice and int; returns (x, remaining entries)."""
    shape = x.shape
    start, limit, stride, flip, drop = [], [], [], [], []
    out_entries = []
    for axis, (i, n) in enumerate(zip(entries, shape)):
        if isinstance(i, slice):
            if any(isinstance(v, Tracer) for v in (i.start, i.stop, i.step)):
                raise IndexError(at_user_line(
                    "slice bounds must be static; for a traced start use "
                    "tracehlo.lax.dynamic_slice"))
            lo, hi, st = i.indices(n)
            if st < 0:  # reverse, then slice forward
                count = len(range(lo, hi, st))
                lo, hi, st = n - 1 - lo, n - 1 - lo + (count - 1) * -st + 1 if count else \
                    n - 1 - lo, -st
                flip.append(axis)
            hi = max(lo, hi)
            start.append(lo), limit.append(hi), stride.append(st)
            out_entries.append(slice(None))
        elif _is_int_scalar(i) and not any(_is_array_index(e) for e in entries):
            k = int(i)
            if not -n <= k < n:
                raise IndexError(at_user_line(f"index {k} is out of bounds for axis {axis} "
                                              f"with size {n}"))
            k %= n
            start.append(k), limit.append(k + 1), stride.append(1)
            drop.append(axis)
            out_entries.append(slice(None))
        else:
            start.append(0), limit.append(n), stride.append(1)
            out_entries.append(i)
    if flip:
        x = lax.rev(x, flip)
    if (start, limit, stride) != ([0] * len(shape), list(shape), [1] * len(shape)):
        x = lax.slice(x, start, limit, stride)
    if drop:
        x = lax.squeeze(x, drop)
        out_entries = [e for k, e in enumerate(out_entries) if k not in drop]
    return x, out_entries


def _advanced_plan(x, entries):
    """Indices for gather/scatter over the array-indexed axes: (axes, stacked indices,
    batch shape, position of the batch axes in the result)."""
    axes = [k for k, i in enumerate(entries) if not isinstance(i, slice)]
    arrays = []
    for k in axes:
        idx = entries[k]
        idx = tnp.asarray(idx) if not isinstance(idx, Tracer) and not hasattr(idx, "dtype") \
            else idx
        if _is_int_scalar(idx):
            idx = tnp.asarray(idx)
        if isinstance(idx, Tracer) and not dtypes.is_int(idx.dtype) or (
                hasattr(idx, "dtype") and not dtypes.is_int(type_of(idx).dtype)):
            raise IndexError(at_user_line(
                "only integers, slices, None, ..., and integer or boolean arrays are valid "
                f"indices (got {dtypes.SHORT_NAMES.get(type_of(idx).dtype, '?')})"))
        arrays.append(_wrap_negative(idx, x.shape[k]))
    batch = _broadcast_shapes(*[tnp.shape(a) for a in arrays])
    arrays = [tnp.astype(tnp.broadcast_to(a, batch), tnp.int32) for a in arrays]
    stacked = tnp.stack(arrays, axis=-1) if arrays else None
    contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
    batch_pos = axes[0] if contiguous else 0
    return axes, stacked, batch, batch_pos


def _as_tracer_like(x):
    return x if isinstance(x, Tracer) or hasattr(x, "dtype") else tnp.asarray(x)


def getitem(x, index, mode="promise_in_bounds"):
    """x[index]; `mode` is the gather's (primitives/indexing.py): JAX's x[idx] promises
    in-bounds indices, so an out-of-bounds one reads the clamped element but gets no
    cotangent; x.at[idx].get(mode='clip') gives it to the clamped element."""
    x = _as_tracer_like(x)
    x, entries, _ = _normalize(x, index)
    x, entries = _static_slices(x, entries)
    dynamic = [k for k, i in enumerate(entries) if not isinstance(i, slice)]
    if not dynamic:
        return x
    if all(isinstance(entries[k], Tracer) and entries[k].shape == () for k in dynamic):
        return _dynamic_scalar_index(x, entries, dynamic)
    axes, stacked, batch, batch_pos = _advanced_plan(x, entries)
    rest = [k for k in range(x.ndim) if k not in axes]
    offset_dims = [p if p < batch_pos else p + len(batch) for p in range(len(rest))]
    return gather_by_dims(x, stacked, offset_dims=offset_dims, collapsed_slice_dims=axes,
                          start_index_map=axes,
                          slice_sizes=[1 if k in axes else n for k, n in enumerate(x.shape)],
                          index_vector_dim=len(batch), mode=mode)


def _dynamic_scalar_index(x, entries, dynamic):
    starts, sizes = [], []
    for k, n in enumerate(x.shape):
        if k in dynamic:
            starts.append(tnp.astype(entries[k], tnp.int32))  # lax wraps negatives
            sizes.append(1)
        else:
            starts.append(0)
            sizes.append(n)
    return lax.squeeze(lax.dynamic_slice(x, starts, sizes), dynamic)


_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _check_mode(method, mode):
    mode = getattr(mode, "name", mode)  # a GatherScatterMode-like enum
    mode = mode.lower() if isinstance(mode, str) else mode
    if mode not in _MODES:
        raise ValueError(at_user_line(
            f"x.at[...].{method}(mode={mode!r}): expected one of 'promise_in_bounds', "
            "'clip', 'drop', 'fill' or None"))
    return mode


class IndexUpdateRef:
    """`x.at[index]`: functional updates, as in JAX (x itself never changes).

    Out-of-bounds indices follow JAX's modes: updates are dropped (None, 'drop',
    'fill') or clamped into range ('clip', 'promise_in_bounds'); get clamps (None,
    'clip', 'promise_in_bounds') or fills ('fill', 'drop'). Repeated indices
    accumulate (add, multiply, min, max); for set, one of the writes wins.
    indices_are_sorted and unique_indices are accepted as in JAX; they are only
    promises that allow faster code, so ignoring them is always correct."""

    def __init__(self, x, index):
        self.x, self.index = x, index

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False,
            unique_indices=False):
        """As x[index]; mode='fill' puts fill_value (JAX's default: NaN, INT_MIN, True)
        where an index is out of bounds, instead of clamping."""
        mode = _check_mode("get", mode)
        x, entries, _ = _normalize(_as_tracer_like(self.x), self.index)
        if mode not in ("fill", "drop"):
            return getitem(x, tuple(_clip_static(x, entries)), mode or "promise_in_bounds")
        entries, padding = _past_the_end(x, _oob_ints_as_arrays(x, entries))
        fill = _fill_value(x.dtype) if fill_value is None else fill_value
        return getitem(lax.pad(x, tnp.asarray(fill, x.dtype), padding), tuple(entries))

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter(values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter(values, "add", mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None):
        return self._scatter(tnp.negative(values), "add", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None):
        return self._scatter(values, "mul", mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x / (ones with values multiplied in at index), as JAX: true division, so an
        integer x gives floats."""
        return tnp.divide(self.x, self._factors(values, mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return tnp.power(self.x, self._factors(values, mode))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter(values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter(values, "max", mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """func (elementwise) applied at index, once per occurrence of a position, as
        XLA's scatter applies it: a loop over the repeat count."""
        x = _as_tracer_like(self.x)
        counts = IndexUpdateRef(tnp.zeros(x.shape, tnp.int32), self.index)._scatter(
            1, "add", mode)
        return apply_per_count(x, counts, func, unique_indices)

    def _factors(self, values, mode):
        ones = tnp.ones_like(_as_tracer_like(self.x))
        return IndexUpdateRef(ones, self.index)._scatter(values, "mul", mode)

    def _scatter(self, values, combiner, mode):
        mode = _check_mode(combiner, mode)
        x, entries, new_axes = _normalize(_as_tracer_like(self.x), self.index)
        values = values if hasattr(values, "dtype") else tnp.asarray(values)
        dtype, weak = type_of(x).dtype, type_of(x).weak
        if combiner in ("add", "mul"):
            # as JAX: combined in the promoted dtype, then cast back, so an int's
            # .at[i].multiply(0.5) halves it (not times int(0.5) = 0), bools add as ints
            x, values = _promote_no_broadcast([x, values])
        else:  # set, min, max: casting first gives the same (the cast is monotone)
            values = tnp.astype(values, dtype)
        if mode in ("clip", "promise_in_bounds"):
            entries = _clip_arrays(x, _clip_static(x, entries))
        else:
            entries = _oob_ints_as_arrays(x, entries)
        steps = all(i.step in (None, 1) for i in entries if isinstance(i, slice))
        scalars = all(isinstance(i, slice) or _is_int_scalar(i) or (
            mode in ("clip", "promise_in_bounds") and isinstance(i, Tracer) and i.shape == ())
            for i in entries)
        if steps and scalars:
            out = _update_block(x, entries, values, combiner)
        elif any(isinstance(i, slice) and i != slice(None) for i in entries) or all(
                isinstance(i, slice) for i in entries):
            out = _scatter_flat(x, entries, values, combiner)
        else:
            out = _scatter_arrays(x, entries, values, combiner)
        out = lax.convert_element_type(out, dtype, weak)
        return lax.squeeze(out, new_axes) if new_axes else out  # undo the None axes


def _clip_static(x, entries):
    """Static int indices clamped into range (JAX's 'clip' and default get)."""
    return [min(max(int(i) + n if i < 0 else int(i), 0), n - 1) if _is_int_scalar(i) else i
            for i, n in zip(entries, x.shape)]


def _clip_arrays(x, entries):
    return [tnp.clip(_wrap_negative(i, n), 0, n - 1) if _is_array_index(i) else i
            for i, n in zip(entries, x.shape)]


def _oob_ints_as_arrays(x, entries):
    """Out-of-bounds static ints as 0-d index arrays, which scatter drops (and
    get with mode='fill' fills) as JAX does, instead of NumPy's IndexError."""
    return [_np.asarray(i) if _is_int_scalar(i) and not -n <= i < n else i
            for i, n in zip(entries, x.shape)]


def _scatter_arrays(x, entries, values, combiner):
    """x.at[index arrays and whole-axis slices]: one scatter of slices of x."""
    axes, stacked, batch, batch_pos = _advanced_plan(x, entries)
    rest = [k for k in range(x.ndim) if k not in axes]
    upd_shape = list(x.shape[k] for k in rest)
    upd_shape[batch_pos:batch_pos] = batch
    values = tnp.broadcast_to(values, tuple(upd_shape))
    window_dims = [p if p < batch_pos else p + len(batch) for p in range(len(rest))]
    return scatter_by_dims(x, stacked, values, update_window_dims=window_dims,
                           inserted_window_dims=axes, scatter_dims_to_operand_dims=axes,
                           index_vector_dim=len(batch), combiner=combiner)


_COMBINE = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}


def _update_block(x, entries, values, combiner):
    """x.at[ints and unit-step slices]: one rectangular block, a dynamic_update_slice
    (whose start clamps: in-bounds ints, or mode='clip' for traced ones)."""
    starts, block, view = [], [], []
    for i, n in zip(entries, x.shape):
        if isinstance(i, slice):
            lo, hi, _ = i.indices(n)
            starts.append(lo), block.append(max(hi - lo, 0)), view.append(max(hi - lo, 0))
        else:
            starts.append(int(i) % n if _is_int_scalar(i) else tnp.astype(i, tnp.int32))
            block.append(1)
    values = tnp.reshape(tnp.broadcast_to(values, tuple(view)), tuple(block))
    if combiner != "set":
        current = lax.dynamic_slice(x, starts, block)
        values = _COMBINE[combiner](current, values)
    out = lax.dynamic_update_slice(x, values, starts)
    # as weak as x, as JAX's scatter is (dynamic_update_slice is weak only if all are)
    return lax.convert_element_type(out, type_of(x).dtype, type_of(x).weak)


def _scatter_flat(x, entries, values, combiner):
    """The general x.at[...] (stepped slices, slices mixed with index arrays): index the
    flat positions of x exactly as x would be indexed, then scatter into the flat array.
    Out-of-bounds indices pick a sentinel position past the end, which scatter drops,
    as JAX drops them."""
    positions = lax.reshape(lax.iota(dtypes.int32, x.size), x.shape)
    entries, padding = _past_the_end(x, entries)
    positions = getitem(lax.pad(positions, x.size, padding), tuple(entries))
    values = tnp.broadcast_to(values, positions.shape)
    flat = scatter_by_dims(lax.reshape(x, (x.size,)),
                           lax.expand_dims(positions, (positions.ndim,)), values,
                           update_window_dims=(), inserted_window_dims=(0,),
                           scatter_dims_to_operand_dims=(0,), index_vector_dim=positions.ndim,
                           combiner=combiner)
    return lax.reshape(flat, x.shape)


def _past_the_end(x, entries):
    """(entries with each out-of-bounds array index moved to its axis' end, the padding
    that adds that one position to those axes): index the padded x and an out-of-bounds
    index lands on the padding value."""
    entries, padding = list(entries), [(0, 0, 0)] * x.ndim
    for k, (i, n) in enumerate(zip(entries, x.shape)):
        if _is_array_index(i):
            i = _wrap_negative(i, n)
            entries[k] = tnp.where(tnp.logical_and(tnp.greater_equal(i, 0), tnp.less(i, n)),
                                   i, n)
            padding[k] = (0, 1, 0)
    return entries, padding
